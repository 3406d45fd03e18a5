// leaks.c - `memtrace leaks FILE`: the allocation sites whose live bytes
// keep growing over the run, ranked by growth rate, each with its callstack.
//
// The test (profile.h, "Leak windows", gives the data):
// 1. The run is cut into K windows of equal allocation. At the end of window
//    k, a site's series y_k counts the samples of its blocks that the trace
//    proves reachable then (a minor collection promoted them, or they lived
//    through a major one, at or after that checkpoint) and that were born
//    before the end of window k - 1: a site's churn of short-lived blocks
//    does not count, nor garbage that no collection has reclaimed yet, only
//    what collections kept. Past the last major collection seen nothing old
//    can be proven reachable (profile_proof_horizon): the series is judged
//    up to the last checkpoint before it.
// 2. The trend is the least-squares slope b of y_k on x_k, the allocation
//    clock at checkpoint k (so b is the share of the bytes allocated that
//    the site keeps, and the same seed gives the same answer on a loaded
//    machine): b = Σ a_k y_k, a_k = (x_k - x̄) / Σ (x_i - x̄)². Its sampling
//    variance is exact under the model: a sampled block with n samples, born
//    in window j and proven reachable into window d, adds n to y_(j+1) ..
//    y_(d-1), so it adds n × S_jd to b, S_jd = Σ_(k=j+1..d-1) a_k; blocks
//    are sampled independently, n is Poisson-like, so Var(b) = Σ_blocks n ×
//    S_jd² (one block counted at several checkpoints is one random term, not
//    several: the series is cumulative, its points are not independent, and
//    this is why).
// 3. A site leaks when z = b / sd(b) >= LEAK_Z over the judged run (a growth
//    sampling noise gives with probability under 3e-5 per site) and it grows
//    all along: over each third of the judged checkpoints the slope is
//    positive (z >= LEAK_Z_PART) and at least LEAK_PART_SHARE of the whole
//    run's. A structure built in one phase and then kept or freed is not a
//    leak: its series is flat in the other thirds.
// Sampling noise is all the z test rules out: a program whose reachable data
// really grow all along (a cache filling up) is reported, and the figures
// say by how much. Growth per second converts b at the run's allocation
// rate (wall clock: a loaded machine slows it).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "commands.h"
#include "output.h"

enum { LEAK_WINDOWS = 24, LEAK_MIN_POINTS = 7 };
static const double LEAK_Z = 4.0, LEAK_Z_PART = 1.0, LEAK_PART_SHARE = 0.25;

static const ToolUsage usage = {
    "leaks",
    "usage: memtrace leaks [--by site|function|file] [-n N] [--json] [--all] FILE\n"
    "Names the allocation sites of the trace FILE (\"-\": stdin) whose live bytes keep\n"
    "growing over the run. The run is cut into 24 windows of equal allocation; at\n"
    "each window's end a site's bytes that collections kept (promoted, or surviving\n"
    "a major collection) count, blocks younger than a window ignored, up to the\n"
    "last major collection seen. A leak is a trend that sampling noise cannot\n"
    "explain (z >= 4) and that holds in each third of the run. Ranked by growth:\n"
    "the share of the bytes allocated that the site keeps (95 % interval), also per\n"
    "second, with the live bytes at each window's end and the callstack. Prints one\n"
    "line saying so when no site qualifies.\n"
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
  Trend whole, part[3];   // over the judged checkpoints, and each third of them
  bool leaks;
} Leak;

// The trend of y_k over checkpoints from..to (profile.h's windows). The
// slope is computed block by block, as its variance is: a block counted at
// every checkpoint of the range adds exactly 0 to both (A[from - 1] = A[to]
// = 0 exactly), where Σ a_k y_k would leave rounding noise that a variance
// just as tiny would turn into a huge z.
static Trend trend(const Profile *p, const uint64_t *m, uint32_t from, uint32_t to) {
  uint32_t k_max = profile_windows(p), side = k_max + 2;
  double x[LEAK_WINDOWS + 1], a[LEAK_WINDOWS + 2] = {0}, mean = 0, sxx = 0;
  Trend t = {0, 0, 0};
  if (to < from + 1) return t;
  for (uint32_t k = from; k <= to; k++) mean += x[k] = (double)profile_checkpoint_clock(p, k);
  mean /= to - from + 1;
  for (uint32_t k = from; k <= to; k++) sxx += (x[k] - mean) * (x[k] - mean);
  if (sxx <= 0) return t;
  for (uint32_t k = from; k <= to; k++) a[k] = (x[k] - mean) / sxx;
  // A[k] = Σ_(i <= k) a_i: 0 before the range, 0 from its end on (Σ a = 0).
  double A[LEAK_WINDOWS + 2] = {0};
  for (uint32_t k = from; k < to; k++) A[k] = A[k - 1] + a[k];
  double slope = 0, var = 0;
  for (uint32_t j = 1; j <= k_max; j++)
    for (uint32_t d = j + 2; d <= k_max + 1; d++) {
      uint64_t n_jd = m[j * side + d];
      if (!n_jd) continue;
      double s = A[d - 1] - A[j];  // Σ a_k over the checkpoints j+1 .. d-1 where the block counts
      slope += (double)n_jd * s;
      var += (double)n_jd * s * s;
    }
  t.slope = slope;
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

// The last checkpoint at or before the proof horizon: the series is judged
// over 2..last_judged (profile_proof_horizon says why not further).
static uint32_t last_judged(const Profile *p) {
  uint32_t k = profile_windows(p);
  uint64_t horizon = profile_proof_horizon(p);
  while (k > 1 && profile_checkpoint_time(p, k) > horizon) k--;
  return k;
}

// The judged checkpoints 2..to in three overlapping parts: [2, b1], [b1, b2], [b2, to].
static void thirds(uint32_t to, uint32_t bounds[4]) {
  uint32_t span = to - 2;
  bounds[0] = 2;
  bounds[1] = 2 + span / 3;
  bounds[2] = 2 + (2 * span + 2) / 3;
  bounds[3] = to;
}

static void judge(const Profile *p, Leak *l) {
  uint32_t to = last_judged(p), b[4];
  thirds(to, b);
  series(p, l->m, l->series);
  l->whole = trend(p, l->m, 2, to);
  l->leaks = to >= LEAK_MIN_POINTS + 1 && l->whole.z >= LEAK_Z;
  for (int i = 0; i < 3; i++) {
    l->part[i] = trend(p, l->m, b[i], b[i + 1]);
    l->leaks = l->leaks && l->part[i].z >= LEAK_Z_PART && l->part[i].slope >= LEAK_PART_SHARE * l->whole.slope;
  }
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

static const double Z95 = 1.959963984540054;

// Bytes allocated per second over the judged checkpoints (0 if no time passed).
static double allocation_rate(const Profile *p) {
  uint32_t to = last_judged(p);
  double us = (double)(profile_checkpoint_time(p, to) - profile_checkpoint_time(p, 2));
  double bytes = (double)(profile_checkpoint_clock(p, to) - profile_checkpoint_clock(p, 2)) * profile_sample_bytes(p);
  return us > 0 ? bytes / us * 1e6 : 0;
}

static void print_leak(const Profile *p, const Options *o, const Leak *l, uint32_t rank) {
  char a[OUT_TEXT_MAX];
  uint32_t to = last_judged(p);
  printf("%3u. keeps %.3g%% of the bytes allocated [%.3g%%, %.3g%%] (%s/s), z = %.1f; thirds: %.3g%% %.3g%% %.3g%%\n    ",
         rank, 100 * l->whole.slope, 100 * (l->whole.slope - Z95 * l->whole.sd),
         100 * (l->whole.slope + Z95 * l->whole.sd), out_bytes(a, l->whole.slope * allocation_rate(p)), l->whole.z,
         100 * l->part[0].slope, 100 * l->part[1].slope, 100 * l->part[2].slope);
  out_group_key(stdout, p, o->by, l->stack);
  putchar('\n');
  out_callers(stdout, p, l->stack, "      ", 16);
  printf("    kept live at each window's end:");
  for (uint32_t i = 2; i <= to; i++) printf(" %s", out_bytes(a, l->series[i] * profile_sample_bytes(p)));
  putchar('\n');
}

static void print_heading(const Loaded *ld, const Options *o, const Analysis *an) {
  const Profile *p = ld->profile;
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX];
  uint32_t to = last_judged(p);
  printf("%s: %llu samples at rate %g, %s of trace, %u windows of equal allocation\n", ld->path,
         (unsigned long long)profile_totals(p)->samples, profile_rate(p),
         out_duration(a, (double)profile_summary(p)->last_us), profile_windows(p));
  analysis_print_partial(stdout, ld);
  if (profile_major_collections(p))
    printf("judged up to %s (window %u), the last major collection seen (of %llu): past it, old blocks may be "
           "garbage\n", out_duration(b, (double)profile_checkpoint_time(p, to)), to,
           (unsigned long long)profile_major_collections(p));
  else
    printf("no major collection seen: only promotions prove old blocks reachable\n");
  if (to < LEAK_MIN_POINTS + 1)
    printf("no leak can be judged: fewer than %u windows before that\n", LEAK_MIN_POINTS);
  else if (!an->n_leaking)
    printf("no leak: no %s's kept bytes grow beyond sampling noise all over the run (%u with kept blocks "
           "tested)\n", out_by_name(o->by), an->n);
  else
    printf("%u %s%s whose kept bytes grow all over the run (of %u tested), fastest first: the share of the\n"
           "bytes allocated that it keeps [95%%] (per second at this run's allocation rate), over the run and\n"
           "each third of it\n\n", an->n_leaking, out_by_name(o->by), an->n_leaking > 1 ? "s" : "", an->n);
}

static void print_text(const Loaded *ld, const Options *o, const Analysis *an) {
  const Profile *p = ld->profile;
  print_heading(ld, o, an);
  uint32_t shown = o->rows && o->rows < an->n_leaking ? o->rows : an->n_leaking;
  for (uint32_t i = 0; i < shown; i++) print_leak(p, o, &an->leaks[i], i + 1);
  if (shown < an->n_leaking) printf("(%u more: -n 0 shows all)\n", an->n_leaking - shown);
  if (!o->all) return;
  printf("\nnot leaking (z over the run and each third; share of the allocation kept):\n");
  for (uint32_t i = an->n_leaking; i < an->n; i++) {
    const Leak *l = &an->leaks[i];
    printf("  z %6.1f %6.1f %6.1f %6.1f  %8.3g%%  ", l->whole.z, l->part[0].z, l->part[1].z, l->part[2].z,
           100 * l->whole.slope);
    out_group_key(stdout, p, o->by, l->stack);
    putchar('\n');
  }
}

static void json_trend(Json *j, const char *key, const Trend *t) {
  json_object(j, key);
  json_number(j, "share", t->slope);
  json_interval(j, "interval", t->slope - Z95 * t->sd, t->slope + Z95 * t->sd);
  json_number(j, "z", t->z);
  json_end_object(j);
}

static void json_leak(Json *j, const Profile *p, const Options *o, const Leak *l, uint32_t rank) {
  uint32_t to = last_judged(p);
  json_object(j, NULL);
  json_uint(j, "rank", rank);
  json_bool(j, "leaks", l->leaks);
  json_group_key(j, p, o->by, l->stack);
  json_stack(j, "stack", p, l->stack);
  json_trend(j, "growth", &l->whole);
  json_array(j, "thirds");
  for (int i = 0; i < 3; i++) json_trend(j, NULL, &l->part[i]);
  json_end_array(j);
  json_number(j, "growth_bytes_per_s", l->whole.slope * allocation_rate(p));
  json_number(j, "live_bytes_judged_end", l->series[to] * profile_sample_bytes(p));
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
  json_array(&j, "checkpoints_allocated_bytes");
  for (uint32_t k = 1; k <= profile_windows(p); k++)
    json_number(&j, NULL, (double)profile_checkpoint_clock(p, k) * profile_sample_bytes(p));
  json_end_array(&j);
  json_uint(&j, "major_collections", profile_major_collections(p));
  json_uint(&j, "judged_windows", last_judged(p));
  json_object(&j, "criteria");
  json_number(&j, "z_min", LEAK_Z);
  json_number(&j, "z_third_min", LEAK_Z_PART);
  json_number(&j, "third_share_min", LEAK_PART_SHARE);
  json_uint(&j, "windows_min", LEAK_MIN_POINTS + 1);
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
