// leaks.c - `memtrace leaks FILE`: the allocation sites whose live bytes
// keep growing over the run, ranked by growth rate, each with its callstack.
//
// The test (profile.h, "Leak windows", gives the data):
// 1. The run is cut into K windows of equal allocation. At the end of window
//    k (time x_k), a site's series y_k counts the samples of its blocks that
//    the trace proves reachable then (they survived a minor collection, or a
//    major one, at or after x_k) and that were born before the end of window
//    k - 1: a site's churn of short-lived blocks does not count, nor garbage
//    that no collection has reclaimed yet, only what collections kept.
// 2. The trend is the least-squares slope b = Σ a_k y_k over k = 2..K, with
//    a_k = (x_k - x̄) / Σ (x_i - x̄)². Its sampling variance is exact under the
//    model: a sampled block with n samples, born in window j and proven
//    reachable into window d, adds n to y_(j+1) .. y_(d-1), so it adds
//    n × S_jd to b, S_jd = Σ_(k=j+1..d-1) a_k; blocks are sampled
//    independently, n is Poisson-like, so Var(b) = Σ_blocks n × S_jd² (the
//    same block counted at several checkpoints is one random term, not
//    several: the series is cumulative, its points are not independent, and
//    this is why).
// 3. A site leaks when z = b / sd(b) >= LEAK_Z over the whole run (a growth
//    sampling noise would give with probability under 3e-5 per site), and
//    it keeps growing: over the second half of the checkpoints alone the
//    slope is also significant (z >= LEAK_Z_HALF) and at least LEAK_HALF_SHARE
//    of the whole run's (a structure built once and then kept, or freed, is
//    not a leak: its second half is flat or falling).
// Sampling noise is all the z test rules out: a program whose reachable data
// really grow until its end (a cache filling up) is reported, and the
// figures say by how much. Growth per second is in the trace's time (wall
// clock: a loaded machine slows it).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "commands.h"
#include "output.h"

enum { LEAK_WINDOWS = 16 };
static const double LEAK_Z = 4.0, LEAK_Z_HALF = 2.0, LEAK_HALF_SHARE = 1.0 / 3;

static const ToolUsage usage = {
    "leaks",
    "usage: memtrace leaks [--by site|function|file] [-n N] [--json] [--all] FILE\n"
    "Names the allocation sites of the trace FILE (\"-\": stdin) whose live bytes keep\n"
    "growing over the run: cut into 16 windows of equal allocation, the bytes of\n"
    "each site that collections kept (promoted, or surviving a major collection)\n"
    "at the end of each window, blocks younger than a window ignored, must show a\n"
    "trend that sampling noise cannot explain (z >= 4), still growing over the\n"
    "second half of the run (z >= 2, at least a third of the whole run's rate).\n"
    "Ranked by growth rate, each with its 95 % interval, live bytes at the end and\n"
    "callstack. Prints one line saying so when no site qualifies.\n"
    "  --by KEY   site (default), function or file\n"
    "  -n N       show N leaks (default 10; 0: all)\n"
    "  --all      also list the sites tested that did not qualify, with their figures\n"
    "  --json     JSON (schema: tools/memtrace_cli/README.md)\n",
};

typedef struct Options {
  ProfileBy by;
  uint32_t rows;
  bool json, all;
  const char *path;
} Options;

static int parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.by = PROFILE_BY_SITE, .rows = 10};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    if ((strcmp(a, "--by") == 0 || strcmp(a, "-n") == 0) && !value)
      return tool_usage_error(&usage, "%s needs a value", a);
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage.text, stdout);
      return 0;
    } else if (strcmp(a, "--json") == 0) o->json = true;
    else if (strcmp(a, "--all") == 0) o->all = true;
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

// ---------------------------------------------------------------- the test

typedef struct Trend {
  double slope, sd;     // samples per µs, and its standard deviation
  double z;             // slope / sd (0 when sd = 0)
} Trend;

typedef struct Leak {
  const ProfileGroup *group;
  ProfileStackId stack;        // its stack with the most samples alive at the end
  uint64_t *m;                 // (K + 2)² window matrix summed over the group's sites
  double series[LEAK_WINDOWS + 1];  // y_k, samples, k = 1..K
  Trend whole, half;
  bool leaks;
} Leak;

// The trend of y_k over checkpoints from..K (profile.h's windows).
static Trend trend(const Profile *p, const uint64_t *m, const double *y, uint32_t from) {
  uint32_t k_max = profile_windows(p), side = k_max + 2;
  double x[LEAK_WINDOWS + 1], a[LEAK_WINDOWS + 2] = {0}, mean = 0, sxx = 0;
  uint32_t n = k_max - from + 1;
  for (uint32_t k = from; k <= k_max; k++) mean += x[k] = (double)profile_checkpoint_time(p, k);
  mean /= n;
  for (uint32_t k = from; k <= k_max; k++) sxx += (x[k] - mean) * (x[k] - mean);
  Trend t = {0, 0, 0};
  if (sxx <= 0) return t;
  for (uint32_t k = from; k <= k_max; k++) t.slope += (a[k] = (x[k] - mean) / sxx) * y[k];
  // Prefix sums of a: S_jd = A[d - 1] - A[j].
  double A[LEAK_WINDOWS + 2] = {0};
  for (uint32_t k = 1; k <= k_max; k++) A[k] = A[k - 1] + a[k];
  double var = 0;
  for (uint32_t j = 1; j <= k_max; j++)
    for (uint32_t d = j + 2; d <= k_max + 1; d++) {
      uint64_t n_jd = m[j * side + d];
      if (!n_jd) continue;
      double s = A[d - 1] - A[j];
      var += (double)n_jd * s * s;
    }
  t.sd = sqrt(var);
  t.z = t.sd > 0 ? t.slope / t.sd : 0;
  return t;
}

static void series(const Profile *p, const uint64_t *m, double *y) {
  uint32_t k_max = profile_windows(p), side = k_max + 2;
  for (uint32_t k = 0; k <= k_max; k++) y[k] = 0;
  for (uint32_t j = 1; j <= k_max; j++)
    for (uint32_t d = j + 2; d <= k_max + 1; d++)
      for (uint32_t k = j + 1; k <= d - 1; k++) y[k] += (double)m[j * side + d];
}

static void judge(const Profile *p, Leak *l) {
  uint32_t k_max = profile_windows(p);
  series(p, l->m, l->series);
  l->whole = trend(p, l->m, l->series, 2);
  l->half = trend(p, l->m, l->series, k_max / 2 + 1);
  l->leaks = l->whole.z >= LEAK_Z && l->half.z >= LEAK_Z_HALF && l->half.slope >= LEAK_HALF_SHARE * l->whole.slope;
}

// Leaks first, by growth rate; then the others by z.
static int by_growth(const void *a, const void *b) {
  const Leak *x = a, *y = b;
  if (x->leaks != y->leaks) return x->leaks ? -1 : 1;
  double kx = x->leaks ? x->whole.slope : x->whole.z, ky = y->leaks ? y->whole.slope : y->whole.z;
  if (kx != ky) return kx > ky ? -1 : 1;
  return x->group->key < y->group->key ? -1 : x->group->key > y->group->key;
}

typedef struct Analysis {
  Leak *leaks;          // the groups with a window matrix (tested)
  uint32_t n, n_leaking;
} Analysis;

static void analysis_free(Analysis *a) {
  for (uint32_t i = 0; i < a->n; i++) free(a->leaks[i].m);
  free(a->leaks);
}

static bool analyse(const Profile *p, const ProfileGroups *g, Analysis *out) {
  uint32_t side = profile_windows(p) + 2;
  *out = (Analysis){calloc((size_t)g->n + 1, sizeof *out->leaks), 0, 0};
  uint32_t *slot = malloc(((size_t)g->n + 1) * sizeof *slot);  // group -> index in leaks, or NONE
  if (!out->leaks || !slot) return free(slot), false;
  for (uint32_t i = 0; i < g->n; i++) slot[i] = PROFILE_NONE;
  for (ProfileSiteId s = 0; s < profile_n_sites(p); s++) {
    const uint64_t *m = profile_site_windows(p, s);
    uint32_t row = g->of_site[s];
    if (!m || row == PROFILE_NONE) continue;
    if (slot[row] == PROFILE_NONE) {
      Leak *l = &out->leaks[out->n];
      *l = (Leak){.group = &g->rows[row], .stack = g->rows[row].first, .m = calloc((size_t)side * side, sizeof *l->m)};
      if (!l->m) return free(slot), false;
      slot[row] = out->n++;
    }
    uint64_t *to = out->leaks[slot[row]].m;
    for (uint32_t i = 0; i < side * side; i++) to[i] += m[i];
  }
  // Name each by its stack with the most samples alive at the end.
  for (ProfileStackId s = 0; s < profile_n_stacks(p); s++) {
    uint32_t row = g->of_stack[s];
    if (slot[row] == PROFILE_NONE) continue;
    Leak *l = &out->leaks[slot[row]];
    if (profile_stack(p, s)->counts.live_samples > profile_stack(p, l->stack)->counts.live_samples) l->stack = s;
  }
  free(slot);
  for (uint32_t i = 0; i < out->n; i++) {
    judge(p, &out->leaks[i]);
    out->n_leaking += out->leaks[i].leaks;
  }
  qsort(out->leaks, out->n, sizeof *out->leaks, by_growth);
  return true;
}

// ---------------------------------------------------------------- output

// Bytes per second from samples per µs.
static double per_second(const Profile *p, double samples_per_us) {
  return samples_per_us * profile_sample_bytes(p) * 1e6;
}

static void print_leak(const Profile *p, const Options *o, const Leak *l, uint32_t rank) {
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX], d[OUT_TEXT_MAX];
  double rate = per_second(p, l->whole.slope), half = 1.959963984540054 * per_second(p, l->whole.sd);
  uint32_t k = profile_windows(p);
  char e[OUT_TEXT_MAX];
  printf("%3u. %s/s [%s/s, %s/s]  z = %.1f (second half: %s/s, z = %.1f)  live at the end %s\n    ", rank,
         out_bytes(a, rate), out_bytes(b, rate - half), out_bytes(c, rate + half), l->whole.z,
         out_bytes(d, per_second(p, l->half.slope)), l->half.z, out_bytes(e, l->series[k] * profile_sample_bytes(p)));
  out_group_key(stdout, p, o->by, l->stack);
  putchar('\n');
  out_callers(stdout, p, l->stack, "      ", 16);
  printf("    kept live at each window's end:");
  for (uint32_t i = 2; i <= k; i++) printf(" %s", out_bytes(a, l->series[i] * profile_sample_bytes(p)));
  putchar('\n');
}

static void print_text(const Loaded *ld, const Options *o, const Analysis *an) {
  const Profile *p = ld->profile;
  char a[OUT_TEXT_MAX];
  printf("%s: %llu samples at rate %g, %s of trace, %u windows\n", ld->path,
         (unsigned long long)profile_totals(p)->samples, profile_rate(p),
         out_duration(a, (double)profile_summary(p)->last_us), profile_windows(p));
  analysis_print_partial(stdout, ld);
  if (!an->n_leaking)
    printf("no leak: no %s's live bytes keep growing beyond sampling noise (%u with blocks older than a window "
           "tested)\n", out_by_name(o->by), an->n);
  else
    printf("%u %s%s whose live bytes keep growing (of %u tested), fastest first: growth per second [95%%]\n\n",
           an->n_leaking, out_by_name(o->by), an->n_leaking > 1 ? "s" : "", an->n);
  uint32_t shown = o->rows && o->rows < an->n_leaking ? o->rows : an->n_leaking;
  for (uint32_t i = 0; i < shown; i++) print_leak(p, o, &an->leaks[i], i + 1);
  if (shown < an->n_leaking) printf("(%u more: -n 0 shows all)\n", an->n_leaking - shown);
  if (!o->all) return;
  printf("\nnot leaking (z over the run, over its second half):\n");
  for (uint32_t i = an->n_leaking; i < an->n; i++) {
    const Leak *l = &an->leaks[i];
    printf("  z %6.1f  %6.1f  %s/s  ", l->whole.z, l->half.z, out_bytes(a, per_second(p, l->whole.slope)));
    out_group_key(stdout, p, o->by, l->stack);
    putchar('\n');
  }
}

static void json_leak(Json *j, const Profile *p, const Options *o, const Leak *l, uint32_t rank) {
  double sd = per_second(p, l->whole.sd), rate = per_second(p, l->whole.slope);
  json_object(j, NULL);
  json_uint(j, "rank", rank);
  json_bool(j, "leaks", l->leaks);
  json_group_key(j, p, o->by, l->stack);
  json_stack(j, "stack", p, l->stack);
  json_number(j, "growth_bytes_per_s", rate);
  json_interval(j, "growth_interval", rate - 1.959963984540054 * sd, rate + 1.959963984540054 * sd);
  json_number(j, "z", l->whole.z);
  json_number(j, "second_half_growth_bytes_per_s", per_second(p, l->half.slope));
  json_number(j, "z_second_half", l->half.z);
  json_number(j, "live_bytes_end", l->series[profile_windows(p)] * profile_sample_bytes(p));
  json_array(j, "series_bytes");
  for (uint32_t k = 1; k <= profile_windows(p); k++) json_number(j, NULL, l->series[k] * profile_sample_bytes(p));
  json_end_array(j);
  json_end_object(j);
}

static void print_json(const Loaded *ld, const Options *o, const Analysis *an) {
  const Profile *p = ld->profile;
  Json j;
  json_init(&j, stdout);
  json_object(&j, NULL);
  json_string(&j, "command", "leaks");
  json_trace(&j, ld->path, p);
  json_bool(&j, "partial", ld->partial);
  if (ld->partial) json_string(&j, "error", ld->error);
  else json_null(&j, "error");
  json_string(&j, "by", out_by_name(o->by));
  json_uint(&j, "windows", profile_windows(p));
  json_array(&j, "checkpoints_s");
  for (uint32_t k = 1; k <= profile_windows(p); k++) json_number(&j, NULL, (double)profile_checkpoint_time(p, k) / 1e6);
  json_end_array(&j);
  json_object(&j, "criteria");
  json_number(&j, "z_min", LEAK_Z);
  json_number(&j, "z_second_half_min", LEAK_Z_HALF);
  json_number(&j, "second_half_share_min", LEAK_HALF_SHARE);
  json_end_object(&j);
  json_uint(&j, "tested", an->n);
  uint32_t shown = o->rows && o->rows < an->n_leaking ? o->rows : an->n_leaking;
  json_array(&j, "leaks");
  for (uint32_t i = 0; i < shown; i++) json_leak(&j, p, o, &an->leaks[i], i + 1);
  json_end_array(&j);
  json_uint(&j, "leaks_omitted", an->n_leaking - shown);
  if (o->all) {
    json_array(&j, "not_leaking");
    for (uint32_t i = an->n_leaking; i < an->n; i++) json_leak(&j, p, o, &an->leaks[i], i + 1);
    json_end_array(&j);
  }
  json_end_object(&j);
  json_finish(&j);
}

int cmd_leaks(int argc, char **argv) {
  Options o;
  int status = parse_options(argc, argv, &o);
  if (status != TOOL_CONTINUE) return status;
  ProfileOptions popts = {.windows = LEAK_WINDOWS};
  Loaded l;
  if (analysis_load(&usage, o.path, &popts, NULL, &l)) return 1;
  ProfileGroups *g = profile_group(l.profile, o.by);
  Analysis an = {0};
  if (!g || !analyse(l.profile, g, &an)) {
    fprintf(stderr, "memtrace leaks: out of memory\n");
    status = 1;
  } else {
    if (o.json) print_json(&l, &o, &an);
    else print_text(&l, &o, &an);
    status = analysis_status(&usage, &l);
  }
  analysis_free(&an);
  profile_groups_free(g);
  analysis_close(&l);
  return status;
}
