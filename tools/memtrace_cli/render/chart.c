// chart.c - the bands' colours (chart.h).
#include "chart.h"

static const char *const PALETTE[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                      "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8"};

const char *chart_band_colour(size_t band, size_t n_bands) {
  if (band + 1 == n_bands && n_bands > 1) return "#bab0ac";
  return PALETTE[band % (sizeof PALETTE / sizeof PALETTE[0])];
}
