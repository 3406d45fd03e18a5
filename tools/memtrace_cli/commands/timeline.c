// timeline.c - `memtrace timeline FILE`: the estimated live heap over time,
// the top N sites (or functions, or files) as stacked bands and the rest as
// one, drawn by gnuplot (gnuplot.h) or printed as CSV. One pass: the series
// are recorded while the profile takes the events in (live_series.h says
// how the moments are chosen).
#include <stdlib.h>
#include <string.h>

#include "../analysis/live_series.h"
#include "../analysis/output.h"
#include "../base/text.h"
#include "../base/xalloc.h"
#include "../cli/load.h"
#include "../cli/options.h"
#include "../cli/outfile.h"
#include "../render/gnuplot.h"
#include "commands.h"

static const ToolUsage usage = {
    "timeline",
    "usage: memtrace timeline [OPTIONS] FILE\n"
    "The estimated live heap of the trace FILE (\"-\": stdin) over time: at evenly\n"
    "spaced moments, the bytes of the blocks allocated and not yet collected\n"
    "(samples x word bytes / sampling rate, headers included), for the top N sites\n"
    "by peak and the rest together.\n"
    "  -o OUT        OUT ending in .svg or .png: draw the chart with gnuplot; in\n"
    "                .csv (or .json): write the series there instead of stdout\n"
    "  --csv         with a chart: the series as CSV on stdout too: time_s, one\n"
    "                column per top site (bytes), rest, total (the default output)\n"
    "  --json        the series as JSON (schema: tools/memtrace_cli/README.md)\n"
    "  --top N       bands for the N groups of highest peak (default 8)\n"
    "  --by WHAT     group by site (default), function or file\n"
    "  --points N    at most N moments (default 400; 4 to 10000)\n"
    "On a damaged or truncated trace: the series up to the damage (the chart's title\n"
    "says PARTIAL, the CSV ends with a comment line saying so), then the error on\n"
    "stderr; exit status 1.\n",
};

typedef struct Options {
  const char *file, *chart;
  bool csv, json;
  uint32_t top, max_points;
  ProfileBy by;
} Options;

// ---------------------------------------------------------------- options

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n > k && strcmp(s + n - k, suffix) == 0;
}

static int parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.top = 8, .max_points = 400, .by = PROFILE_BY_SITE};
  const char *out = NULL;
  const ToolOption options[] = {
      TOOL_OPTION_OUTPUT(&out),
      {"--csv", NULL, &o->csv, NULL, NULL, 0, 0},
      TOOL_OPTION_JSON(&o->json),
      {"--top", "N", &o->top, tool_parse_count, "a count from 0 to 1000", 0, 1000},
      LOAD_OPTION_BY_NO_STACK(&o->by),
      {"--points", "N", &o->max_points, tool_parse_count, "a count from 4 to 10000", 4, 10000},
  };
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 1, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  o->file = args.files[0];
  if (out && gnuplot_format(out)) {
    if (!(o->chart = outfile_begin(usage.name, out))) return 1;  // gnuplot draws into a temporary (outfile.h)
    out = NULL;
  } else if (out && strcmp(out, "-") != 0 && !ends_with(out, ".csv") && !ends_with(out, ".json")) {
    return tool_usage_error(&usage, "option -o: '%s' is not a chart (.svg, .png) nor a series (.csv, .json)", out);
  }
  if (out && ends_with(out, ".csv") && o->json) return tool_usage_error(&usage, "--json and -o X.csv exclude each other");
  if (out && ends_with(out, ".json")) o->json = true;
  if (o->json && o->csv) return tool_usage_error(&usage, "--csv and --json exclude each other");
  if (!o->chart && !o->json) o->csv = true;
  if (o->max_points % 2) o->max_points++;  // halving keeps the even points: an even capacity
  return tool_output_to(&usage, out) ? TOOL_CONTINUE : 1;
}

// ---------------------------------------------------------------- output

// A CSV field: always quoted, quotes doubled, cleaned (text.h).
static void put_csv_name(const char *s) {
  size_t n = strlen(s) + 1;
  char *clean = malloc(n);
  if (!clean) xalloc_fail();
  text_clean(clean, n, s);
  putchar('"');
  for (const char *c = clean; *c; c++) {
    if (*c == '"') putchar('"');
    putchar(*c);
  }
  putchar('"');
  free(clean);
}

static void print_csv(const LiveBands *b, const Loaded *l) {
  fputs("time_s", stdout);
  for (uint32_t t = 0; t <= b->n_top; t++) putchar(','), put_csv_name(b->names[t]);
  fputs(",total\n", stdout);
  uint32_t width = b->n_top + 1;
  for (uint32_t k = 0; k < b->n_points; k++) {
    printf("%.6f", b->x_s[k]);
    double total = 0;
    for (uint32_t t = 0; t < width; t++) {
      total += b->y[(size_t)k * width + t];
      printf(",%.0f", b->y[(size_t)k * width + t]);
    }
    printf(",%.0f\n", total);
  }
  if (l->partial) printf("# PARTIAL: the trace is damaged (%s); the series stops there\n", l->error);
}

static void print_json(const Options *o, const LiveBands *b, const Loaded *l) {
  Json j;
  load_json_begin(&j, stdout, "timeline", l);
  json_string(&j, "by", out_by_name(o->by));
  json_array(&j, "bands");
  for (uint32_t t = 0; t <= b->n_top; t++) json_string(&j, NULL, b->names[t]);
  json_end_array(&j);
  json_array(&j, "points");
  uint32_t width = b->n_top + 1;
  for (uint32_t k = 0; k < b->n_points; k++) {
    json_object(&j, NULL);
    json_number(&j, "time_s", b->x_s[k]);
    json_array(&j, "bytes");
    double total = 0;
    for (uint32_t t = 0; t < width; t++) {
      total += b->y[(size_t)k * width + t];
      json_number(&j, NULL, b->y[(size_t)k * width + t]);
    }
    json_end_array(&j);
    json_number(&j, "total_bytes", total);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_end_object(&j);
  json_finish(&j);
}

static int draw(const Options *o, const LiveBands *b, const Loaded *l) {
  char title[512 + TRACE_READER_ERROR_MAX];
  const Profile *p = l->profile;
  int n = snprintf(title, sizeof title, "Live heap (estimated), top %u %ss: %s (rate %g)", b->n_top,
                   o->by == PROFILE_BY_SITE ? "site" : o->by == PROFILE_BY_FUNCTION ? "function" : "file", o->file,
                   profile_rate(p));
  if (l->partial && n > 0 && (size_t)n < sizeof title)
    snprintf(title + n, sizeof title - (size_t)n, " - PARTIAL: the trace is damaged after %.3f s",
             b->x_s[b->n_points - 1]);
  StackedChart c = {title, "time since the trace's start (s)", "live bytes", b->n_points, b->n_top + 1,
                    b->x_s, b->y, (const char *const *)b->names, true};
  char err[512];
  if (gnuplot_stacked(&c, o->chart, err, sizeof err) == 0) return 0;
  fprintf(stderr, "memtrace timeline: %s\n", err);
  outfile_discard();
  return 1;
}

int cmd_timeline(int argc, char **argv) {
  Options o;
  int status = parse_options(argc, argv, &o);
  if (status != TOOL_CONTINUE) return status;
  LiveSeries s;
  live_series_init(&s, o.max_points);
  ProfileOptions popts = {.before_event = live_series_hook, .hook_ctx = &s};
  Loaded l;
  if (load_trace(&usage, o.file, &popts, NULL, &l) != 0) {
    live_series_free(&s);
    return 1;
  }
  live_series_end(&s, l.profile);
  LiveBands b;
  live_bands_make(&b, l.profile, &s, o.by, o.top);
  if (o.csv) print_csv(&b, &l);
  if (o.json) print_json(&o, &b, &l);
  status = o.chart ? draw(&o, &b, &l) : 0;
  live_bands_free(&b);
  live_series_free(&s);
  int trace_status = load_status(&usage, &l);
  load_close(&l);
  return status ? status : trace_status;
}
