// chart.h - a stacked area chart as data, for its two renderers: gnuplot
// (gnuplot.h: PNG or SVG files) and svg_chart.h (inline SVG written by the
// tool itself, for HTML pages), and the colours both give its bands. Knows
// nothing of traces.
#ifndef MINNOW_CHART_H
#define MINNOW_CHART_H

#include <stdbool.h>
#include <stddef.h>

// Bands are stacked in order: band 0 at the bottom. y[i * n_bands + b] is
// band b's height at x[i]; x increases.
typedef struct StackedChart {
  const char *title, *xlabel, *ylabel;  // drawn as given (no enhanced-text markup)
  size_t n_points, n_bands;
  const double *x;
  const double *y;
  const char *const *names;             // n_bands legend entries
  bool y_bytes;                         // y counts bytes: axis labelled "1.5 MiB" (chart_bytes_unit)
} StackedChart;

// The unit an axis shows its values in: value / scale, then the suffix.
typedef struct ChartUnit {
  double scale;
  const char *suffix;   // with its leading space: " MiB"
} ChartUnit;

// Bytes in binary units, the tool's one convention (B, KiB, MiB, GiB, TiB,
// PiB: powers of 1024): the largest unit that `max` holds at least once.
ChartUnit chart_bytes_unit(double max);

// The colour of band b of n ("#rrggbb"): a palette bottom up; the last band
// of several (the rest) grey.
const char *chart_band_colour(size_t band, size_t n_bands);

#endif
