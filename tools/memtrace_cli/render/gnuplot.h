// gnuplot.h - draws a stacked area chart (chart.h) to an SVG or PNG file by
// running gnuplot (from PATH) on a script and data written to its standard
// input. Knows nothing of traces.
#ifndef MINNOW_GNUPLOT_H
#define MINNOW_GNUPLOT_H

#include "chart.h"


// The terminal for `path`: "svg" for *.svg, "png" for *.png, or NULL.
const char *gnuplot_format(const char *path);

// Draws `chart` into `path` (format from its extension), a file that exists
// and takes writes (the caller creates it: gnuplot replaces its contents,
// nothing here creates or truncates a file). Returns 0, or -1
// with the reason in err[0 .. err_size): unknown extension, gnuplot missing
// or failing (its own messages went to stderr), or fewer than 2 points.
int gnuplot_stacked(const StackedChart *chart, const char *path, char *err, size_t err_size);

#endif
