// lifetimes.c - `memtrace lifetimes FILE`: per allocation site (function,
// file), the share of its sampled blocks promoted and how long its blocks
// lived: quantiles of lifetime in time, in bytes allocated meanwhile, and the
// minor collections that this approximates (README.md shows the layout).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "commands.h"
#include "output.h"

static const ToolUsage usage = {
    "lifetimes",
    "usage: memtrace lifetimes [--by site|function|file] [-n N] [--json] FILE\n"
    "Per allocation site of the trace FILE (\"-\": stdin), largest first: bytes\n"
    "allocated, sampled blocks, the share of sampled blocks born in the minor heap\n"
    "that were promoted (survived a minor collection; 95 % Wilson interval), the\n"
    "share still alive at the end, and quantiles (p50, p90; p99 in JSON) of the\n"
    "lifetime of the bytes allocated there: in time, in bytes allocated by the\n"
    "whole program meanwhile, and that divided by the minor heap's size (from the\n"
    "trace's runtime parameters): about how many minor collections they lived\n"
    "through. \"alive\": longer than the trace (still alive at its end).\n"
    "  --by KEY   site (default), function or file\n"
    "  -n N       show N rows (default 20; 0: all)\n"
    "  --json     JSON (schema: tools/memtrace_cli/README.md)\n",
};

typedef struct Options {
  ProfileBy by;
  uint32_t rows;
  bool json;
  const char *path;
} Options;

static int parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.by = PROFILE_BY_SITE, .rows = 20};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    if ((strcmp(a, "--by") == 0 || strcmp(a, "-n") == 0) && !value)
      return tool_usage_error(&usage, "%s needs a value", a);
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage.text, stdout);
      return 0;
    } else if (strcmp(a, "--json") == 0) o->json = true;
    else if (strcmp(a, "--by") == 0) {
      if (!analysis_parse_by(value, &o->by) || o->by == PROFILE_BY_STACK)
        return tool_usage_error(&usage, "bad --by '%s' (site, function or file)", value);
      i++;
    } else if (strcmp(a, "-n") == 0) {
      if (!analysis_parse_count(value, &o->rows)) return tool_usage_error(&usage, "bad -n '%s'", value);
      i++;
    } else if (a[0] == '-' && a[1] != '\0') return tool_usage_error(&usage, "unknown option '%s'", a);
    else if (o->path) return tool_usage_error(&usage, "one trace file expected, got '%s' and '%s'", o->path, a);
    else o->path = a;
  }
  if (!o->path) return tool_usage_error(&usage, "no trace file given");
  return TOOL_CONTINUE;
}

// ---------------------------------------------------------------- rows

typedef struct Row {
  const ProfileGroup *group;
  ProfileLifetimes hist;   // summed over the group's sites
} Row;

static int by_samples(const void *a, const void *b) {
  const ProfileGroup *x = ((const Row *)a)->group, *y = ((const Row *)b)->group;
  if (x->counts.samples != y->counts.samples) return x->counts.samples > y->counts.samples ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static void add_hist(ProfileLifetimes *to, const ProfileLifetimes *from) {
  for (uint32_t i = 0; i < PROFILE_HIST_BUCKETS; i++) to->time_us[i] += from->time_us[i], to->clock[i] += from->clock[i];
  to->died_young_blocks += from->died_young_blocks;
  to->died_young_samples += from->died_young_samples;
}

static Row *make_rows(const Profile *p, const ProfileGroups *g) {
  Row *rows = calloc((size_t)g->n + 1, sizeof *rows);
  if (!rows) return NULL;
  for (uint32_t i = 0; i < g->n; i++) rows[i].group = &g->rows[i];
  for (ProfileSiteId s = 0; s < profile_n_sites(p); s++) {
    const ProfileLifetimes *l = profile_site_lifetimes(p, s);
    if (l && g->of_site[s] != PROFILE_NONE) add_hist(&rows[g->of_site[s]].hist, l);
  }
  qsort(rows, g->n, sizeof *rows, by_samples);
  return rows;
}

// The q-quantile of a histogram (weights: samples): the value its bucket
// stands for; INFINITY when it falls among the blocks alive at the end; NAN
// for an empty histogram.
static double quantile(const uint64_t *hist, double q) {
  uint64_t total = 0, seen = 0;
  for (uint32_t i = 0; i < PROFILE_HIST_BUCKETS; i++) total += hist[i];
  if (!total) return NAN;
  for (uint32_t i = 0; i < PROFILE_HIST_BUCKETS; i++) {
    seen += hist[i];
    if ((double)seen >= q * (double)total) return profile_hist_value(i);
  }
  return INFINITY;
}

typedef struct Figures {
  double time_us[3], alloc_bytes[3], minor_gcs[3];   // p50, p90, p99
  double promoted_share, alive_share;
  Interval promoted;
  uint64_t minor_blocks;
} Figures;

static const double QUANTILES[3] = {0.5, 0.9, 0.99};

static Figures figures(const Profile *p, const Row *r) {
  Figures f;
  const ProfileCounts *c = &r->group->counts;
  double minor_bytes = (double)profile_summary(p)->minor_heap_words * profile_word_bytes(p);
  for (int i = 0; i < 3; i++) {
    f.time_us[i] = quantile(r->hist.time_us, QUANTILES[i]);
    f.alloc_bytes[i] = quantile(r->hist.clock, QUANTILES[i]) * profile_sample_bytes(p);
    f.minor_gcs[i] = minor_bytes > 0 ? floor(f.alloc_bytes[i] / minor_bytes) : NAN;
  }
  f.minor_blocks = c->blocks - c->major_blocks;
  f.promoted_share = f.minor_blocks ? (double)c->promoted_blocks / (double)f.minor_blocks : NAN;
  f.promoted = stats_proportion_interval(c->promoted_blocks, f.minor_blocks);
  f.alive_share = c->samples ? (double)r->hist.time_us[PROFILE_HIST_ALIVE] / (double)c->samples : NAN;
  return f;
}

// ---------------------------------------------------------------- text

static void print_percent(double share, int width) {
  if (isnan(share)) printf(" %*s", width, "-");
  else printf(" %*.0f%%", width - 1, 100 * share);
}

static void print_duration(double us) {
  char b[OUT_TEXT_MAX];
  printf(" %8s", isnan(us) ? "-" : out_duration(b, us));
}

// Bytes allocated meanwhile: the clock counts samples, so bucket 0 means
// "under one sample's worth".
static void print_alloc(const Profile *p, double bytes) {
  char b[OUT_TEXT_MAX], text[OUT_TEXT_MAX + 2];
  if (isnan(bytes)) snprintf(text, sizeof text, "-");
  else if (isinf(bytes)) snprintf(text, sizeof text, "alive");
  else if (bytes == 0) snprintf(text, sizeof text, "<%s", out_bytes(b, profile_sample_bytes(p)));
  else snprintf(text, sizeof text, "%s", out_bytes(b, bytes));
  printf(" %10s", text);
}

static void print_gcs(double gcs) {
  if (isnan(gcs)) printf(" %5s", "-");
  else if (isinf(gcs)) printf(" %5s", "alive");
  else printf(" %5.0f", gcs);
}

static void print_table(const Loaded *l, const Options *o, const ProfileGroups *g, const Row *rows) {
  const Profile *p = l->profile;
  const ProfileSummary *s = profile_summary(p);
  char a[OUT_TEXT_MAX];
  printf("%s: %llu samples at rate %g, %s of trace\n", l->path, (unsigned long long)profile_totals(p)->samples,
         profile_rate(p), out_duration(a, (double)s->last_us));
  if (s->minor_heap_words)
    printf("minor heap: %llu words (the trace's runtime parameters)\n", (unsigned long long)s->minor_heap_words);
  else
    printf("minor heap: size unknown (not in the trace's runtime parameters): no ~GCs\n");
  analysis_print_partial(stdout, l);
  printf("lifetimes by %s, largest allocators first. promoted: share of the sampled blocks born in the minor\n"
         "heap that survived a minor collection [95%% interval]; at end: share of the bytes still alive at the\n"
         "end; quantiles of the bytes' lifetime in time, in bytes allocated meanwhile by the program, and that\n"
         "over the minor heap's size (~GCs: about how many minor collections they lived through)\n\n",
         out_by_name(o->by));
  printf("rank  allocated  sampled  promoted [95%%]      at end  time p50      p90  alloc p50        p90 ~GCs p50  p90  %s\n",
         out_by_name(o->by));
  uint32_t shown = o->rows && o->rows < g->n ? o->rows : g->n;
  for (uint32_t i = 0; i < shown; i++) {
    const Row *r = &rows[i];
    Figures f = figures(p, r);
    printf("%4u %10s %8llu", i + 1, out_bytes(a, profile_tally(p, r->group->counts.samples).bytes),
           (unsigned long long)r->group->counts.blocks);
    print_percent(f.promoted_share, 5);
    if (f.minor_blocks) printf(" [%3.0f%%, %3.0f%%]", 100 * f.promoted.lo, 100 * f.promoted.hi);
    else printf(" %12s", "");
    print_percent(f.alive_share, 6);
    print_duration(f.time_us[0]);
    print_duration(f.time_us[1]);
    print_alloc(p, f.alloc_bytes[0]);
    print_alloc(p, f.alloc_bytes[1]);
    print_gcs(f.minor_gcs[0]);
    print_gcs(f.minor_gcs[1]);
    printf("  ");
    out_group_key(stdout, p, o->by, r->group->first);
    putchar('\n');
  }
  if (shown < g->n) printf("(%u more rows: -n 0 shows all)\n", g->n - shown);
  if (g->n == 0) printf("(no samples)\n");
}

// ---------------------------------------------------------------- JSON

// A quantile: a number, "alive" when it falls among the blocks alive at the
// end, null when undefined (no collected nor surviving block, no minor heap size).
static void json_quantiles(Json *j, const char *key, const double v[3]) {
  static const char *const names[3] = {"p50", "p90", "p99"};
  json_object(j, key);
  for (int i = 0; i < 3; i++) {
    if (isinf(v[i])) json_string(j, names[i], "alive");
    else json_number(j, names[i], v[i]);
  }
  json_end_object(j);
}

static void print_json(const Loaded *l, const Options *o, const ProfileGroups *g, const Row *rows) {
  const Profile *p = l->profile;
  Json j;
  json_init(&j, stdout);
  json_object(&j, NULL);
  json_string(&j, "command", "lifetimes");
  json_trace(&j, l->path, p);
  json_bool(&j, "partial", l->partial);
  if (l->partial) json_string(&j, "error", l->error);
  else json_null(&j, "error");
  json_string(&j, "by", out_by_name(o->by));
  uint64_t minor = profile_summary(p)->minor_heap_words;
  if (minor) json_uint(&j, "minor_heap_words", minor);
  else json_null(&j, "minor_heap_words");
  json_number(&j, "clock_resolution_bytes", profile_sample_bytes(p));
  uint32_t shown = o->rows && o->rows < g->n ? o->rows : g->n;
  json_array(&j, "rows");
  for (uint32_t i = 0; i < shown; i++) {
    const Row *r = &rows[i];
    const ProfileCounts *c = &r->group->counts;
    Figures f = figures(p, r);
    json_object(&j, NULL);
    json_uint(&j, "rank", i + 1);
    json_group_key(&j, p, o->by, r->group->first);
    json_number(&j, "bytes", profile_tally(p, c->samples).bytes);
    json_uint(&j, "samples", c->samples);
    json_uint(&j, "sampled_blocks", c->blocks);
    json_uint(&j, "minor_blocks", f.minor_blocks);
    json_uint(&j, "promoted_blocks", c->promoted_blocks);
    json_number(&j, "promoted_share", f.promoted_share);
    json_interval(&j, "promoted_interval", f.promoted.lo, f.promoted.hi);
    json_uint(&j, "died_young_blocks", r->hist.died_young_blocks);
    json_number(&j, "alive_at_end_share", f.alive_share);
    json_quantiles(&j, "lifetime_us", f.time_us);
    json_quantiles(&j, "lifetime_alloc_bytes", f.alloc_bytes);
    json_quantiles(&j, "minor_gcs_estimate", f.minor_gcs);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_uint(&j, "rows_omitted", g->n - shown);
  json_end_object(&j);
  json_finish(&j);
}

int cmd_lifetimes(int argc, char **argv) {
  Options o;
  int status = parse_options(argc, argv, &o);
  if (status != TOOL_CONTINUE) return status;
  ProfileOptions popts = {.lifetimes = true};
  Loaded l;
  if (analysis_load(&usage, o.path, &popts, NULL, &l)) return 1;
  ProfileGroups *g = profile_group(l.profile, o.by);
  Row *rows = g ? make_rows(l.profile, g) : NULL;
  if (!rows) {
    fprintf(stderr, "memtrace lifetimes: out of memory\n");
    status = 1;
  } else {
    if (o.json) print_json(&l, &o, g, rows);
    else print_table(&l, &o, g, rows);
    status = analysis_status(&usage, &l);
  }
  free(rows);
  profile_groups_free(g);
  analysis_close(&l);
  return status;
}
