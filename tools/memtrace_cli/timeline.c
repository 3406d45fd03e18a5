// timeline.c - `memtrace timeline FILE`: the estimated live heap over time,
// the top N sites (or functions, or files) as stacked bands and the rest as
// one, drawn by gnuplot (gnuplot.h) or printed as CSV.
//
// One pass. While the profile (profile.h) takes the events in, the live
// samples of every site are recorded at time points k × Δ (µs since the
// trace's start): the point at t holds the events of times <= t. At most
// max_points are kept: when full, every other point is dropped and Δ
// doubles (Δ starts at 1 µs), so a trace of any length ends with between
// max_points / 2 and max_points evenly spaced points, plus one at its last
// event. Memory: max_points doubles per site that was live at some point.
// The top bands are the groups of highest peak; a point's rest is the total
// live minus the top groups'.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "commands.h"
#include "gnuplot.h"
#include "output.h"
#include "progress.h"
#include "text.h"

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

typedef struct Series {
  uint32_t max_points, n_points;
  double interval_us;   // Δ
  double next_us;       // the time of the next point
  double *times_us;     // [max_points]
  double *total;        // [max_points]: live samples of every site
  double **of_site;     // per site: NULL, or [max_points] live samples (exact to 2^53)
  uint32_t n_sites;
} Series;

static void out_of_memory(void) {
  fputs("memtrace timeline: out of memory\n", stderr);
  exit(1);
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) out_of_memory();
  return p;
}

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
    else if (!strcmp(a, "--top") && (!analysis_parse_count(v, &o->top) || o->top > 1000))
      return tool_usage_error(&usage, "--top: '%s' is not a count from 0 to 1000", v);
    else if (!strcmp(a, "--points") && (!analysis_parse_count(v, &o->max_points) || o->max_points < 4 ||
                                         o->max_points > 10000))
      return tool_usage_error(&usage, "--points: '%s' is not a count from 4 to 10000", v);
    else if (!strcmp(a, "--by") && (!analysis_parse_by(v, &o->by) || o->by == PROFILE_BY_STACK))
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

// ---------------------------------------------------------------- series

static void series_init(Series *s, uint32_t max_points) {
  *s = (Series){.max_points = max_points, .interval_us = 1};
  s->times_us = xcalloc(max_points, sizeof *s->times_us);
  s->total = xcalloc(max_points, sizeof *s->total);
}

static void series_free(Series *s) {
  for (uint32_t i = 0; i < s->n_sites; i++) free(s->of_site[i]);
  free(s->of_site);
  free(s->times_us);
  free(s->total);
}

// Keeps the points of even index (times 0, 2Δ, 4Δ, ...) and doubles Δ.
static void series_halve(Series *s) {
  uint32_t kept = (s->n_points + 1) / 2;
  for (uint32_t k = 0; k < kept; k++) {
    s->times_us[k] = s->times_us[2 * k];
    s->total[k] = s->total[2 * k];
    for (uint32_t i = 0; i < s->n_sites; i++)
      if (s->of_site[i]) s->of_site[i][k] = s->of_site[i][2 * k];
  }
  s->n_points = kept;
  s->interval_us *= 2;
  s->next_us = kept * s->interval_us;
}

static void record(Series *s, const Profile *p, double time_us) {
  if (s->n_points == s->max_points) series_halve(s);
  uint32_t n_sites = profile_n_sites(p), k = s->n_points++;
  if (n_sites > s->n_sites) {
    s->of_site = realloc(s->of_site, n_sites * sizeof *s->of_site);
    if (!s->of_site) out_of_memory();
    memset(s->of_site + s->n_sites, 0, (n_sites - s->n_sites) * sizeof *s->of_site);
    s->n_sites = n_sites;
  }
  for (ProfileSiteId i = 0; i < n_sites; i++) {
    uint64_t live = profile_site(p, i)->counts.live_samples;
    if (live && !s->of_site[i]) s->of_site[i] = xcalloc(s->max_points, sizeof **s->of_site);
    if (s->of_site[i]) s->of_site[i][k] = (double)live;
  }
  s->times_us[k] = time_us;
  s->total[k] = (double)profile_totals(p)->live_samples;
}

// The points due before an event at `time_us` (which they do not hold).
static void series_before(Series *s, const Profile *p, uint64_t time_us) {
  while ((double)time_us > s->next_us) {
    double t = s->next_us;
    record(s, p, t);  // may halve: Δ and next_us change
    if (s->next_us <= t) s->next_us = t + s->interval_us;
  }
}

// The last point: at the last event, unless a point is there already.
static void series_end(Series *s, const Profile *p) {
  double last = (double)profile_summary(p)->last_us;
  if (s->n_points == 0 || s->times_us[s->n_points - 1] < last) record(s, p, last);
}

// ---------------------------------------------------------------- reading

static uint64_t file_size(const char *path) {
  struct stat st;
  return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
}

// Reads the trace into l->profile and s; 0, or 1 when nothing could be read.
static int read_trace(const Options *o, Series *s, Loaded *l) {
  *l = (Loaded){.path = o->file, .file_bytes = file_size(o->file)};
  if (!(l->reader = tool_open(&usage, o->file))) return 1;
  ProfileOptions popts = {0};
  if (!(l->profile = profile_new(l->reader, &popts))) out_of_memory();
  Progress progress;
  progress_init(&progress, usage.name, o->file, l->file_bytes);
  TraceEvent ev;
  TraceReaderStatus status;
  uint64_t events = 0;
  while ((status = trace_reader_next(l->reader, &ev)) == TRACE_READER_EVENT) {
    series_before(s, l->profile, ev.dtime_us);
    profile_event(l->profile, &ev);
    if ((++events & 0xffff) == 0) progress_update(&progress, ev.offset, events);
  }
  progress_done(&progress);
  if (!profile_ok(l->profile)) out_of_memory();
  profile_finish(l->profile);
  series_end(s, l->profile);
  if (status == TRACE_READER_ERROR) {
    l->partial = true;
    snprintf(l->error, sizeof l->error, "%s", trace_reader_error(l->reader)->message);
  }
  return 0;
}

// ---------------------------------------------------------------- bands

// The chart's data: bands[b][k] in bytes, b < n_top the top groups, then
// the rest; names[b] their labels.
typedef struct Bands {
  uint32_t n_top, n_points;
  double *x_s;       // [n_points] seconds
  double *y;         // [n_points][n_top + 1] bytes
  char **names;      // [n_top + 1]
} Bands;

static char *group_name(const Profile *p, ProfileBy by, ProfileStackId first) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) out_of_memory();
  out_group_key(f, p, by, first);
  if (fclose(f) != 0 || !text) out_of_memory();
  return text;
}

// Sums the site series into one per group: [n_groups][n_points].
static double *group_series(const Series *s, const ProfileGroups *g, double bytes) {
  double *v = xcalloc((size_t)g->n * s->n_points, sizeof *v);
  for (uint32_t i = 0; i < s->n_sites; i++) {
    if (!s->of_site[i] || g->of_site[i] == PROFILE_NONE) continue;
    double *row = v + (size_t)g->of_site[i] * s->n_points;
    for (uint32_t k = 0; k < s->n_points; k++) row[k] += s->of_site[i][k] * bytes;
  }
  return v;
}

// The groups of highest peak (ties: first appearance), at most n of them
// and only groups live at some point; *count says how many.
static uint32_t *top_groups(const double *v, uint32_t n_groups, uint32_t n_points, uint32_t n, uint32_t *count) {
  double *peak = xcalloc(n_groups, sizeof *peak);
  for (uint32_t g = 0; g < n_groups; g++)
    for (uint32_t k = 0; k < n_points; k++)
      if (v[(size_t)g * n_points + k] > peak[g]) peak[g] = v[(size_t)g * n_points + k];
  uint32_t *order = xcalloc(n, sizeof *order);
  bool *taken = xcalloc(n_groups, sizeof *taken);
  for (*count = 0; *count < n; ++*count) {  // n is small (--top): selection, O(n × groups)
    uint32_t best = UINT32_MAX;
    for (uint32_t g = 0; g < n_groups; g++)
      if (!taken[g] && peak[g] > 0 && (best == UINT32_MAX || peak[g] > peak[best])) best = g;
    if (best == UINT32_MAX) break;
    taken[best] = true;
    order[*count] = best;
  }
  free(peak);
  free(taken);
  return order;
}

static void fill_bands(Bands *b, const Series *s, const double *v, const uint32_t *order, double bytes) {
  uint32_t width = b->n_top + 1;
  for (uint32_t k = 0; k < s->n_points; k++) {
    double rest = s->total[k] * bytes;
    b->x_s[k] = s->times_us[k] / 1e6;
    for (uint32_t t = 0; t < b->n_top; t++) {
      double y = v[(size_t)order[t] * s->n_points + k];
      b->y[(size_t)k * width + t] = y;
      rest -= y;
    }
    b->y[(size_t)k * width + b->n_top] = rest > 0 ? rest : 0;  // float sums: never below 0
  }
}

static void make_bands(const Options *o, const Loaded *l, const Series *s, Bands *b) {
  const Profile *p = l->profile;
  double bytes = profile_sample_bytes(p);
  ProfileGroups *g = profile_group(p, o->by);
  if (!g) out_of_memory();
  double *v = group_series(s, g, bytes);
  *b = (Bands){0, s->n_points, xcalloc(s->n_points, sizeof(double)), NULL, NULL};
  uint32_t *order = top_groups(v, g->n, s->n_points, o->top < g->n ? o->top : g->n, &b->n_top);
  b->y = xcalloc((size_t)s->n_points * (b->n_top + 1), sizeof *b->y);
  b->names = xcalloc(b->n_top + 1, sizeof *b->names);
  for (uint32_t t = 0; t < b->n_top; t++) b->names[t] = group_name(p, o->by, g->rows[order[t]].first);
  if (!(b->names[b->n_top] = strdup("rest"))) out_of_memory();
  fill_bands(b, s, v, order, bytes);
  free(order);
  free(v);
  profile_groups_free(g);
}

static void free_bands(Bands *b) {
  for (uint32_t t = 0; b->names && t <= b->n_top; t++) free(b->names[t]);
  free(b->names);
  free(b->x_s);
  free(b->y);
}

// ---------------------------------------------------------------- output

// A CSV field: always quoted, quotes doubled, cleaned (text.h).
static void put_csv_name(const char *s) {
  size_t n = strlen(s) + 1;
  char *clean = malloc(n);
  if (!clean) out_of_memory();
  text_clean(clean, n, s);
  putchar('"');
  for (const char *c = clean; *c; c++) {
    if (*c == '"') putchar('"');
    putchar(*c);
  }
  putchar('"');
  free(clean);
}

static void print_csv(const Bands *b, const Loaded *l) {
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

static int draw(const Options *o, const Bands *b, const Loaded *l) {
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
  Series s;
  series_init(&s, o.max_points);
  Loaded l;
  if (read_trace(&o, &s, &l) != 0) {
    series_free(&s);
    return 1;
  }
  Bands b;
  make_bands(&o, &l, &s, &b);
  if (o.csv) print_csv(&b, &l);
  status = o.out ? draw(&o, &b, &l) : 0;
  free_bands(&b);
  series_free(&s);
  int trace_status = analysis_status(&usage, &l);
  analysis_close(&l);
  return status ? status : trace_status;
}
