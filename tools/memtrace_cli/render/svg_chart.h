// svg_chart.h - draws a stacked area chart (chart.h) as an SVG element for
// an HTML page, written by the tool itself (no gnuplot): axes with round
// ticks (bytes in binary units when y_bytes; x in s or ms), each band a
// filled path with its name and peak as a tooltip (<title>), the total as a
// line on top, an optional marked moment (a dashed line and its label),
// moments ticked (a dotted line each, its label as a tooltip: snapshots),
// an optional line of points over the bands (live floors), and a legend
// under the plot. Knows nothing of traces.
//
// Contract
// 1. Every string (title, labels, band names) is written escaped
//    (text_put_xml): nothing in it can open or close markup.
// 2. The element uses no id (a page may hold several) and the class
//    opt->css_class (may be NULL); it is an <svg> with xmlns, width, height
//    and viewBox; it ends with its closing tag, no newline after (so that
//    a page can keep it off a line of its own: a flame graph's </svg> is).
// 3. With fewer than 2 points there is nothing to draw: a small SVG says so.
#ifndef MINNOW_SVG_CHART_H
#define MINNOW_SVG_CHART_H

#include <stdio.h>

#include "chart.h"

typedef struct SvgChartOptions {
  unsigned width_px;        // 0: 1100
  unsigned plot_height_px;  // 0: 300
  const char *css_class;    // the <svg>'s class, or NULL
  bool marker;              // draw the marked moment
  double marker_x;          // its x
  const char *marker_label; // its label (NULL: none)
  const double *ticks;      // n_ticks moments ticked (their x), or NULL
  const char *const *tick_labels;  // their tooltips (NULL: none)
  size_t n_ticks;
  // A line of points over the bands (the live floors): n_line points (x,
  // y in the chart's units), each a dot with its value as a tooltip; its
  // name in the legend. n_line 0: none.
  const double *line_x, *line_y;
  size_t n_line;
  const char *line_label;
} SvgChartOptions;

// Returns 0, or -1 when writing failed.
int svg_chart_write(const StackedChart *c, const SvgChartOptions *opt, FILE *out);

#endif
