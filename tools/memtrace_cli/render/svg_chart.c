// svg_chart.c - stacked area charts as inline SVG (svg_chart.h).
#include "svg_chart.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../base/text.h"

enum { LEFT = 92, RIGHT = 24, TOP = 34, AXIS_GAP = 56, LEGEND_LINE = 18, NAME_CHARS = 150 };

// A round step for about `ticks` intervals over [0, span]: 1, 2, 2.5 or 5
// times a power of ten.
static double nice_step(double span, double ticks) {
  double raw = span / ticks, mag = pow(10, floor(log10(raw))), norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag;
}

static ChartUnit time_unit(double span_s) {
  if (span_s < 1e-3) return (ChartUnit){1e-6, " us"};
  if (span_s < 1) return (ChartUnit){1e-3, " ms"};
  return (ChartUnit){1, " s"};
}

// A tick's value: exact in the axis' unit (ticks are round numbers of it).
static void put_value(FILE *out, double v, ChartUnit u) { fprintf(out, "%g%s", round(v / u.scale * 1e6) / 1e6, u.suffix); }

// A measured value: three significant digits, in its own unit.
static void put_measure(FILE *out, const StackedChart *c, double v) {
  ChartUnit u = c->y_bytes ? chart_bytes_unit(v) : (ChartUnit){1, ""};
  fprintf(out, "%.3g%s", v / u.scale, u.suffix);
}

// The top of band b at point i: the sum of bands 0..b.
static double stacked(const StackedChart *c, size_t i, size_t b) {
  double sum = 0;
  for (size_t k = 0; k <= b; k++) sum += c->y[i * c->n_bands + k];
  return sum;
}

typedef struct Frame {
  double x0, x1, ymax, ystep;   // data ranges; ymax a multiple of the y ticks' step
  double left, top, w, h;       // the plot's box in px
} Frame;

static double px_x(const Frame *f, double x) { return f->left + (x - f->x0) / (f->x1 - f->x0) * f->w; }
static double px_y(const Frame *f, double y) { return f->top + f->h - y / f->ymax * f->h; }

static void put_axes(FILE *out, const StackedChart *c, const Frame *f) {
  ChartUnit yu = c->y_bytes ? chart_bytes_unit(f->ymax) : (ChartUnit){1, ""};
  double ystep = f->ystep;
  fprintf(out, "<g class=\"axis\" stroke=\"#ddd\" stroke-width=\"1\">\n");
  for (double v = 0; v <= f->ymax * (1 + 1e-9); v += ystep)
    fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", f->left, f->left + f->w, px_y(f, v),
            px_y(f, v));
  fprintf(out, "</g>\n<g class=\"ticks\" text-anchor=\"end\">\n");
  for (double v = 0; v <= f->ymax * (1 + 1e-9); v += ystep) {
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", f->left - 6, px_y(f, v) + 4);
    put_value(out, v, yu);
    fputs("</text>\n", out);
  }
  ChartUnit xu = time_unit(f->x1 - f->x0);
  double xstep = nice_step((f->x1 - f->x0) / xu.scale, 8) * xu.scale;
  fputs("</g>\n<g class=\"ticks\" text-anchor=\"middle\">\n", out);
  for (double v = ceil(f->x0 / xstep) * xstep; v <= f->x1 * (1 + 1e-9) + 1e-12; v += xstep) {
    fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>", px_x(f, v), px_x(f, v),
            f->top + f->h, f->top + f->h + 5);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", px_x(f, v), f->top + f->h + 18);
    put_value(out, v, xu);
    fputs("</text>\n", out);
  }
  fprintf(out, "</g>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n",
          f->left, f->top, f->w, f->h);
  fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", f->left + f->w / 2,
          f->top + f->h + 38);
  text_put_xml(out, c->xlabel ? c->xlabel : "", SIZE_MAX);
  fprintf(out, "</text>\n<text class=\"label\" x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
          "transform=\"rotate(-90 14 %.1f)\">", f->top + f->h / 2, f->top + f->h / 2);
  text_put_xml(out, c->ylabel ? c->ylabel : "", SIZE_MAX);
  fputs("</text>\n", out);
}

static double band_peak(const StackedChart *c, size_t b) {
  double peak = 0;
  for (size_t i = 0; i < c->n_points; i++)
    if (c->y[i * c->n_bands + b] > peak) peak = c->y[i * c->n_bands + b];
  return peak;
}

static void put_bands(FILE *out, const StackedChart *c, const Frame *f) {
  for (size_t b = 0; b < c->n_bands; b++) {
    fputs("<path d=\"", out);
    for (size_t i = 0; i < c->n_points; i++)
      fprintf(out, "%s%.1f,%.1f", i ? " L" : "M", px_x(f, c->x[i]), px_y(f, stacked(c, i, b)));
    for (size_t i = c->n_points; i-- > 0;)
      fprintf(out, " L%.1f,%.1f", px_x(f, c->x[i]), px_y(f, b ? stacked(c, i, b - 1) : 0));
    fprintf(out, " Z\" fill=\"%s\" fill-opacity=\"0.9\"><title>", chart_band_colour(b, c->n_bands));
    text_put_xml(out, c->names[b], SIZE_MAX);
    fputs(": peak ", out);
    put_measure(out, c, band_peak(c, b));
    fputs("</title></path>\n", out);
  }
  fputs("<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"1.2\" points=\"", out);
  for (size_t i = 0; i < c->n_points; i++)
    fprintf(out, "%s%.1f,%.1f", i ? " " : "", px_x(f, c->x[i]), px_y(f, stacked(c, i, c->n_bands - 1)));
  fputs("\"/>\n", out);
}

static void put_marker(FILE *out, const SvgChartOptions *opt, const Frame *f) {
  if (!opt->marker || !(opt->marker_x >= f->x0 && opt->marker_x <= f->x1)) return;
  double x = px_x(f, opt->marker_x);
  fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#b00\" stroke-dasharray=\"4 3\"/>\n", x,
          x, f->top, f->top + f->h);
  if (!opt->marker_label) return;
  bool right_half = x > f->left + f->w / 2;
  fprintf(out, "<text class=\"marker\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"#b00\">", right_half ? x - 4 : x + 4,
          f->top + 14, right_half ? "end" : "start");
  text_put_xml(out, opt->marker_label, SIZE_MAX);
  fputs("</text>\n", out);
}

static void put_ticks(FILE *out, const SvgChartOptions *opt, const Frame *f) {
  for (size_t i = 0; i < opt->n_ticks; i++) {
    if (!(opt->ticks[i] >= f->x0 && opt->ticks[i] <= f->x1)) continue;
    double x = px_x(f, opt->ticks[i]);
    fprintf(out, "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#36c\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"1 3\">", x, x, f->top, f->top + f->h);
    if (opt->tick_labels) {
      fputs("<title>", out);
      text_put_xml(out, opt->tick_labels[i], SIZE_MAX);
      fputs("</title>", out);
    }
    fputs("</line>\n", out);
  }
}

static void put_line(FILE *out, const StackedChart *c, const SvgChartOptions *opt, const Frame *f) {
  if (opt->n_line == 0) return;
  fputs("<g class=\"floor\"><polyline fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\" stroke-dasharray=\"5 2\" "
        "points=\"", out);
  for (size_t i = 0; i < opt->n_line; i++)
    fprintf(out, "%s%.1f,%.1f", i ? " " : "", px_x(f, opt->line_x[i]), px_y(f, fmin(opt->line_y[i], f->ymax)));
  fputs("\"/>\n", out);
  for (size_t i = 0; i < opt->n_line; i++) {
    fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#000\"><title>", px_x(f, opt->line_x[i]),
            px_y(f, fmin(opt->line_y[i], f->ymax)));
    if (opt->line_label) text_put_xml(out, opt->line_label, SIZE_MAX), fputs(": ", out);
    put_measure(out, c, opt->line_y[i]);
    fputs("</title></circle>\n", out);
  }
  fputs("</g>\n", out);
}

static void put_legend(FILE *out, const StackedChart *c, const SvgChartOptions *opt, const Frame *f) {
  double y = f->top + f->h + AXIS_GAP;
  if (opt->n_line) {
    fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"1.5\" "
            "stroke-dasharray=\"5 2\"/>", f->left, f->left + 12, y + 6, y + 6);
    fprintf(out, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", f->left + 18, y + 10);
    text_put_xml(out, opt->line_label ? opt->line_label : "", NAME_CHARS);
    fputs("</text>\n", out);
    y += LEGEND_LINE;
  }
  for (size_t k = c->n_bands; k-- > 0; y += LEGEND_LINE) {  // the top band first: the stack's order
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", f->left, y,
            chart_band_colour(k, c->n_bands));
    fprintf(out, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", f->left + 18, y + 10);
    text_put_xml(out, c->names[k], NAME_CHARS);
    fputs(" (peak ", out);
    put_measure(out, c, band_peak(c, k));
    fputs(")</text>\n", out);
  }
}

int svg_chart_write(const StackedChart *c, const SvgChartOptions *opt, FILE *out) {
  unsigned width = opt->width_px ? opt->width_px : 1100, plot_h = opt->plot_height_px ? opt->plot_height_px : 300;
  const char *cls = opt->css_class ? opt->css_class : "chart";
  if (c->n_points < 2 || c->n_bands < 1) {
    fprintf(out, "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"40\" "
            "viewBox=\"0 0 %u 40\"><text x=\"10\" y=\"24\">nothing to draw: %zu moment%s in the series</text></svg>",
            cls, width, width, c->n_points, c->n_points == 1 ? "" : "s");
    return ferror(out) ? -1 : 0;
  }
  Frame f = {c->x[0], c->x[c->n_points - 1], 0, 0, LEFT, TOP, width - LEFT - RIGHT, plot_h};
  if (!(f.x1 > f.x0)) f.x1 = f.x0 + 1e-6;
  double top = 0;
  for (size_t i = 0; i < c->n_points; i++)
    if (stacked(c, i, c->n_bands - 1) > top) top = stacked(c, i, c->n_bands - 1);
  if (!(top > 0)) top = 1;
  ChartUnit yu = c->y_bytes ? chart_bytes_unit(top) : (ChartUnit){1, ""};
  f.ystep = nice_step(top / yu.scale, 5) * yu.scale;
  f.ymax = ceil(top / f.ystep * (1 - 1e-12)) * f.ystep;
  unsigned height = (unsigned)(TOP + plot_h + AXIS_GAP + LEGEND_LINE * (c->n_bands + (opt->n_line ? 1 : 0)) + 6);
  fprintf(out, "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\">\n",
          cls, width, height, width, height);
  fprintf(out, "<text class=\"title\" x=\"%u\" y=\"20\" text-anchor=\"middle\">", width / 2);
  text_put_xml(out, c->title ? c->title : "", SIZE_MAX);
  fputs("</text>\n", out);
  put_axes(out, c, &f);
  put_bands(out, c, &f);
  put_marker(out, opt, &f);
  put_ticks(out, opt, &f);
  put_line(out, c, opt, &f);
  put_legend(out, c, opt, &f);
  fputs("</svg>", out);
  return ferror(out) ? -1 : 0;
}
