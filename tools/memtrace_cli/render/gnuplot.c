// gnuplot.c - stacked area charts through gnuplot (gnuplot.h). The script
// holds the data inline ($data << EOD): column 1 is x, column b + 2 the sum
// of bands 0..b, and band b is filled between columns b + 1 (0 for band 0)
// and b + 2. PNG uses pngcairo where this gnuplot has it (gnuplot-nox
// usually does), else libgd's png.
#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "../base/text.h"
#include "../base/xalloc.h"

enum { LEGEND_BYTES = 64 };

const char *gnuplot_format(const char *path) {
  size_t n = strlen(path);
  if (n > 4 && strcmp(path + n - 4, ".svg") == 0) return "svg";
  if (n > 4 && strcmp(path + n - 4, ".png") == 0) return "png";
  return NULL;
}

// s as a gnuplot single-quoted string (no escapes but '' for a quote),
// cleaned (text.h) and cut to fewer than max_bytes bytes; "]]>" as "]] >":
// gnuplot's SVG terminal escapes < and & but not >, and XML text may not
// hold "]]>".
static void put_quoted(FILE *out, const char *s, size_t max_bytes) {
  size_t n = strlen(s) + 1;  // cleaning never lengthens a string
  char *clean = xrealloc(NULL, n < max_bytes ? n : max_bytes);
  text_clean(clean, n < max_bytes ? n : max_bytes, s);
  putc('\'', out);
  for (const char *p = clean; *p; p++) {
    if (*p == '\'') putc('\'', out);
    if (*p == '>' && p - clean >= 2 && p[-1] == ']' && p[-2] == ']') putc(' ', out);
    putc(*p, out);
  }
  putc('\'', out);
  free(clean);
}

// A file name, bytes as they are (gnuplot passes them on to fopen).
static void put_path(FILE *out, const char *path) {
  putc('\'', out);
  for (const char *p = path; *p; p++) {
    if (*p == '\'') putc('\'', out);
    putc(*p, out);
  }
  putc('\'', out);
}

static void put_terminal(FILE *out, const char *format, const char *path) {
  if (strcmp(format, "svg") == 0)
    fputs("set terminal svg size 1200,600 dynamic noenhanced font 'sans,11'\n", out);
  else
    fputs("if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {\n"
          "  set terminal pngcairo size 1200,600 noenhanced font 'sans,10'\n"
          "} else {\n"
          "  set terminal png size 1200,600 noenhanced\n"
          "}\n", out);
  fputs("set output ", out);
  put_path(out, path);
  putc('\n', out);
}

// The y values' unit: binary units for bytes (chart_bytes_unit) by the
// highest stack, so that tick labels read "1.5 MiB" as every other output of
// the tool does; the data is written divided by its scale.
static ChartUnit y_unit(const StackedChart *c) {
  if (!c->y_bytes) return (ChartUnit){1, ""};
  double max = 0;
  for (size_t i = 0; i < c->n_points; i++) {
    double sum = 0;
    for (size_t b = 0; b < c->n_bands; b++) sum += c->y[i * c->n_bands + b];
    if (sum > max) max = sum;
  }
  return chart_bytes_unit(max);
}

static void put_settings(FILE *out, const StackedChart *c, ChartUnit u) {
  fputs("set title ", out);
  put_quoted(out, c->title ? c->title : "", SIZE_MAX);
  fputs("\nset xlabel ", out);
  put_quoted(out, c->xlabel ? c->xlabel : "", SIZE_MAX);
  fputs("\nset ylabel ", out);
  put_quoted(out, c->ylabel ? c->ylabel : "", SIZE_MAX);
  fputs("\nset key outside right top vertical Left reverse noenhanced\n"
        "set grid ytics\n"
        "set style fill solid 0.9 noborder\n"
        "set yrange [0:*]\n", out);
  if (c->y_bytes) fprintf(out, "set format y '%%g%s'\n", u.suffix);
  fprintf(out, "set xrange [%.17g:%.17g]\n", c->x[0], c->x[c->n_points - 1]);
}

static void put_data(FILE *out, const StackedChart *c, ChartUnit u) {
  fputs("$data << EOD\n", out);
  for (size_t i = 0; i < c->n_points; i++) {
    fprintf(out, "%.17g", c->x[i]);
    double sum = 0;
    for (size_t b = 0; b < c->n_bands; b++) {
      sum += c->y[i * c->n_bands + b];
      fprintf(out, " %.17g", sum / u.scale);
    }
    putc('\n', out);
  }
  fputs("EOD\n", out);
}

// The top band first, so the legend reads in the order of the stack.
static void put_plot(FILE *out, const StackedChart *c) {
  fputs("plot", out);
  for (size_t k = c->n_bands; k-- > 0;) {
    const char *colour = chart_band_colour(k, c->n_bands);
    if (k == 0) fprintf(out, " $data using 1:(0):%zu", k + 2);
    else fprintf(out, " $data using 1:%zu:%zu", k + 1, k + 2);
    fprintf(out, " with filledcurves lc rgb '%s' title ", colour);
    put_quoted(out, c->names[k], LEGEND_BYTES);
    fputs(k ? ", \\\n    " : "\n", out);
  }
}

int gnuplot_stacked(const StackedChart *chart, const char *path, char *err, size_t err_size) {
  const char *format = gnuplot_format(path);
  if (!format) {
    snprintf(err, err_size, "%s: the output must end in .svg or .png", path);
    return -1;
  }
  if (strchr(path, '\n')) {
    snprintf(err, err_size, "the output's name has a newline, which gnuplot cannot take");
    return -1;
  }
  if (chart->n_points < 2 || chart->n_bands < 1) {
    snprintf(err, err_size, "nothing to draw: %zu time points, %zu bands (at least 2 and 1 needed)",
             chart->n_points, chart->n_bands);
    return -1;
  }
  // gnuplot would draw on its stdout when it cannot open the file: it must
  // exist (the caller made it: outfile_begin) and take writes.
  int probe = open(path, O_WRONLY | O_CLOEXEC);
  if (probe < 0) {
    snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
    return -1;
  }
  close(probe);
  fflush(stdout);
  FILE *gp = popen("exec gnuplot >/dev/null", "w");  // its messages on our stderr, nothing on our stdout
  if (!gp) {
    snprintf(err, err_size, "cannot run gnuplot: %s", strerror(errno));
    return -1;
  }
  void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);  // gnuplot missing or dying: a write error, not a signal
  put_terminal(gp, format, path);
  ChartUnit u = y_unit(chart);
  put_settings(gp, chart, u);
  put_data(gp, chart, u);
  put_plot(gp, chart);
  fputs("unset output\n", gp);
  int write_failed = fflush(gp) != 0 || ferror(gp);
  int status = pclose(gp);
  signal(SIGPIPE, old_pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || write_failed) {
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
      snprintf(err, err_size, "gnuplot not found on PATH (Debian: apt-get install gnuplot-nox)");
    else
      snprintf(err, err_size, "gnuplot failed writing %s (its messages are above)", path);
    return -1;
  }
  return 0;
}
