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
#include "../render/gnuplot.h"
#include "commands.h"

static const ToolUsage usage = {
    "timeline",
    "usage: memtrace timeline [OPTIONS] FILE\n"
    "The estimated live heap of the trace FILE (\"-\": stdin) over time: at evenly\n"
    "spaced moments, the bytes of the blocks allocated and not yet collected\n"
    "(samples x word bytes / sampling rate, headers included), for the top N sites\n"
    "by peak and the rest together.\n"
    "  -o OUT        draw it with gnuplot into OUT, ending in .svg or .png\n"
    "  --csv         print the series as CSV on stdout: time_s, one column per top\n"
    "                site (bytes), rest, total (the default without -o)\n"
    "  --top N       bands for the N groups of highest peak (default 8)\n"
    "  --by WHAT     group by site (default), function or file\n"
    "  --points N    at most N moments (default 400; 4 to 10000)\n"
    "On a damaged or truncated trace: the series up to the damage (the chart's title\n"
    "says PARTIAL, the CSV ends with a comment line saying so), then the error on\n"
    "stderr; exit status 1.\n",
};

typedef struct Options {
  const char *file, *out;
  bool csv;
  uint32_t top, max_points;
  ProfileBy by;
} Options;

// ---------------------------------------------------------------- options

static int parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.top = 8, .max_points = 400, .by = PROFILE_BY_SITE};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return fputs(usage.text, stdout), 0;
    if (strcmp(a, "--csv") == 0) {
      o->csv = true;
      continue;
    }
    bool takes_value = !strcmp(a, "-o") || !strcmp(a, "--top") || !strcmp(a, "--by") || !strcmp(a, "--points");
    if (takes_value && i + 1 >= argc) return tool_usage_error(&usage, "%s needs a value", a);
    const char *v = takes_value ? argv[++i] : NULL;
    if (!strcmp(a, "-o")) o->out = v;
    else if (!strcmp(a, "--top") && (!load_parse_count(v, &o->top) || o->top > 1000))
      return tool_usage_error(&usage, "--top: '%s' is not a count from 0 to 1000", v);
    else if (!strcmp(a, "--points") && (!load_parse_count(v, &o->max_points) || o->max_points < 4 ||
                                         o->max_points > 10000))
      return tool_usage_error(&usage, "--points: '%s' is not a count from 4 to 10000", v);
    else if (!strcmp(a, "--by") && (!load_parse_by(v, &o->by) || o->by == PROFILE_BY_STACK))
      return tool_usage_error(&usage, "--by: '%s' is not site, function or file", v);
    else if (takes_value) continue;
    else if (a[0] == '-' && a[1] != '\0') return tool_usage_error(&usage, "unknown option '%s'", a);
    else if (o->file) return tool_usage_error(&usage, "one trace file expected, got '%s' and '%s'", o->file, a);
    else o->file = a;
  }
  if (!o->file) return tool_usage_error(&usage, "no trace file given");
  if (o->out && !gnuplot_format(o->out)) return tool_usage_error(&usage, "-o %s: the chart must be .svg or .png", o->out);
  if (!o->out) o->csv = true;
  if (o->max_points % 2) o->max_points++;  // halving keeps the even points: an even capacity
  return TOOL_CONTINUE;
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
  if (gnuplot_stacked(&c, o->out, err, sizeof err) == 0) return 0;
  fprintf(stderr, "memtrace timeline: %s\n", err);
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
  if (load_load(&usage, o.file, &popts, NULL, &l) != 0) {
    live_series_free(&s);
    return 1;
  }
  live_series_end(&s, l.profile);
  LiveBands b;
  live_bands_make(&b, l.profile, &s, o.by, o.top);
  if (o.csv) print_csv(&b, &l);
  status = o.out ? draw(&o, &b, &l) : 0;
  live_bands_free(&b);
  live_series_free(&s);
  int trace_status = load_status(&usage, &l);
  load_close(&l);
  return status ? status : trace_status;
}
