// chart.c - the bands' colours and the unit of byte axes (chart.h).
#include "chart.h"

static const char *const PALETTE[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                      "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8"};

const char *chart_band_colour(size_t band, size_t n_bands) {
  if (band + 1 == n_bands && n_bands > 1) return "#bab0ac";
  return PALETTE[band % (sizeof PALETTE / sizeof PALETTE[0])];
}

ChartUnit chart_bytes_unit(double max) {
  static const char *const names[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB"};
  ChartUnit u = {1, names[0]};
  for (size_t i = 1; i < sizeof names / sizeof names[0] && max >= 1024 * u.scale; i++) u.scale *= 1024, u.suffix = names[i];
  return u;
}
