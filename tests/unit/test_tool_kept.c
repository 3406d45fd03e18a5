// test_tool_kept.c - cmocka tests of the end state's figures and text in the
// trace tools (tools/memtrace_cli/analysis/kept.c, retain_text.c): the
// Clopper-Pearson interval against published values, the rate that would
// give enough samples, and paths and holders as text (every hop kind, erased
// counts, indices, Hashtbl kinds and frame lines), and the verdict rules
// simulated with a fixed seed (kept.h states their error rates): the series
// rule names a holder that does not grow in at most KEPT_ALPHA = 1 % of runs
// and names a steady leak; the end-state rule names a steady leak and not a
// table built once or a churn's tail. The verdicts on real traces are
// tests/suites/trace_kept.sh's.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kept.h"
#include "analysis/retain_text.h"

static void assert_close(double got, double want, double abs_tol) {
  if (fabs(got - want) > abs_tol) fail_msg("got %.10g, want %.10g (within %g)", got, want, abs_tol);
}

// Clopper-Pearson 95 % intervals (exact binomial): published values to 4 places.
static void test_share_interval(void **state) {
  (void)state;
  Interval a = kept_share_interval(0, 10);
  assert_close(a.lo, 0, 1e-12);
  assert_close(a.hi, 0.3085, 1e-4);
  Interval b = kept_share_interval(5, 10);
  assert_close(b.lo, 0.1871, 1e-4);
  assert_close(b.hi, 0.8129, 1e-4);
  Interval c = kept_share_interval(10, 10);
  assert_close(c.lo, 0.6915, 1e-4);
  assert_close(c.hi, 1, 1e-12);
  Interval d = kept_share_interval(1, 100);
  assert_close(d.lo, 0.0003, 1e-4);
  assert_close(d.hi, 0.0545, 1e-4);
  Interval e = kept_share_interval(0, 0);
  assert_close(e.lo, 0, 0);
  assert_close(e.hi, 1, 0);
}

static void test_rate_for(void **state) {
  (void)state;
  assert_close(kept_rate_for(1e-4, 5, 10), 2e-4, 1e-12);
  assert_close(kept_rate_for(1e-4, 3, 10), 5e-4, 1e-12);   // 3.3e-4 rounds up to 5e-4
  assert_close(kept_rate_for(1e-4, 10, 10), 1e-4, 1e-12);
  assert_close(kept_rate_for(1e-4, 0, 50), 5e-3, 1e-12);   // none: as if one
  assert_close(kept_rate_for(1e-3, 7, 10), 2e-3, 1e-12);
  assert_close(kept_rate_for(0.5, 1, 10), 1, 0);
}

static char *text_of(const RetainPath *p, uint32_t hops, bool erase) { return retain_path_string(p, hops, erase); }

static void test_path_text(void **state) {
  (void)state;
  RetainHop hops[] = {
      {RETAIN_HOP_FIELD, 1, 0, "items"},   {RETAIN_HOP_LIST_CELL, 18, 0, ""}, {RETAIN_HOP_LIST_ELEMENT, 1, 0, ""},
      {RETAIN_HOP_TUPLE, 1, 1, ""},        {RETAIN_HOP_ARRAY, 1, 7, ""},      {RETAIN_HOP_CAPTURE, 1, 0, "xs"},
      {RETAIN_HOP_CAPTURE, 1, 2, ""},      {RETAIN_HOP_HASHTBL_KEY, 1, 0, ""}, {RETAIN_HOP_BUFFER, 1, 0, ""},
      {RETAIN_HOP_OTHER, 1, 3, ""},        {RETAIN_HOP_ELIDED, 37, 0, ""},    {RETAIN_HOP_FIELD, 2, 0, "next"},
  };
  RetainPath p = {42, {RETAIN_ROOT_GLOBAL, "log", "", 0, "", 0}, sizeof hops / sizeof hops[0], hops};
  char *t = text_of(&p, p.hop_count, false);
  assert_string_equal(t, "global log -> field items -> list cell x18 -> list element -> tuple .1 -> array [7] -> "
                         "capture xs -> capture #2 -> Hashtbl key -> Buffer storage -> field #3 -> "
                         "(37 hops elided) -> field next x2");
  free(t);
  t = text_of(&p, 5, true);  // a holder: counts and indices erased
  assert_string_equal(t, "global log -> field items -> list cell xn -> list element -> tuple .1 -> array [*]");
  free(t);
  // Every run's length and an elision's count erased too: one structure, one
  // holder, whatever the depth of its blocks in it.
  t = text_of(&p, p.hop_count, true);
  assert_string_equal(t, "global log -> field items -> list cell xn -> list element -> tuple .1 -> array [*] -> "
                         "capture xs -> capture #2 -> Hashtbl -> Buffer storage -> field #3 -> "
                         "(hops elided) -> field next xn");
  free(t);
  hops[10].count = 1005, hops[11].count = 5;
  char *deeper = text_of(&p, p.hop_count, true);
  hops[10].count = 37, hops[11].count = 2;
  char *shallower = text_of(&p, p.hop_count, true);
  assert_string_equal(deeper, shallower);
  free(deeper);
  free(shallower);
  RetainHop value = {RETAIN_HOP_HASHTBL_VALUE, 1, 0, ""}, entry = {RETAIN_HOP_HASHTBL_ENTRY, 1, 0, ""};
  RetainPath v = {1, {RETAIN_ROOT_GLOBAL, "cache", "", 0, "", 0}, 1, &value}, e = v;
  e.hops = &entry;
  char *tv = text_of(&v, 1, true), *te = text_of(&e, 1, true);
  assert_string_equal(tv, "global cache -> Hashtbl");   // one holder for a table's values and entries
  assert_string_equal(te, tv);
  free(tv);
  free(te);
  RetainPath s = {2, {RETAIN_ROOT_STACK, "serve", "r.mn", 13, "rows", 2}, 0, NULL};
  t = text_of(&s, 0, false);
  assert_string_equal(t, "local rows of serve (r.mn:13)");
  free(t);
  t = text_of(&s, 0, true);  // a holder: the frame's line erased
  assert_string_equal(t, "local rows of serve (r.mn)");
  free(t);
  RetainPath c = {3, {RETAIN_ROOT_C, "", "", 0, "", 5}, 0, NULL};
  t = text_of(&c, 0, false);
  assert_string_equal(t, "C root #5");
  free(t);
  t = text_of(&c, 0, true);  // a holder: the registration order erased
  assert_string_equal(t, "C root");
  free(t);
  RetainPath ctl = {4, {RETAIN_ROOT_GLOBAL, "a\nb\x7f", "", 0, "", 0}, 0, NULL};
  t = text_of(&ctl, 0, false);
  assert_string_equal(t, "global a?b?");  // control characters never reach a terminal
  free(t);
}


// ---------------------------------------------------------------- simulation

// xorshift64*: a fixed seed, the same runs on every machine.
static uint64_t rng_state;
static uint64_t rng_next(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}
static double rng_unit(void) { return (double)(rng_next() >> 11) / 9007199254740992.0; }
static double rng_exp(double mean) { return -mean * log(1 - rng_unit()); }
static uint64_t rng_poisson(double mean) {   // Knuth's, for the small means used here
  double limit = exp(-mean), prod = rng_unit();
  uint64_t k = 0;
  while (prod > limit) {
    k++;
    prod *= rng_unit();
  }
  return k;
}

// One simulated block of a holder: born, dies (INFINITY: never), sampled.
typedef struct SimBlock {
  double birth, death;
  uint64_t samples;
} SimBlock;

enum { SIM_SNAPS = 5, SIM_MAX_BLOCKS = 200000 };
static SimBlock sim_blocks[SIM_MAX_BLOCKS];

typedef enum SimShape {
  SIM_CHURN,        // born at a steady rate, exponential lifetimes (a cache, sessions, a queue)
  SIM_BUILT_ONCE,   // all born in the first tenth, never die
  SIM_LEAK,         // born at a steady rate from `start` on, never die
  SIM_REPLACED,     // all born in [start, start + 0.03], never die (a working set replaced whole)
  SIM_EMPTIED,      // born at a steady rate, all let go at once every `life` (resets at start + k life):
                    // a table rebuilt each hour, a queue drained
} SimShape;

// Blocks of one holder over the run [0, 1] (a churn starts 10 lifetimes
// early, at equilibrium by time 0): `rate` births per unit of time, `mean`
// samples per block (Poisson: a block of mean x the sampling interval).
static uint32_t sim_holder(SimShape shape, double rate, double life, double start, double mean) {
  uint32_t n = 0;
  double t = shape == SIM_CHURN || shape == SIM_EMPTIED ? -10 * life
             : shape == SIM_LEAK || shape == SIM_REPLACED ? start
                                                          : 0;
  double end = shape == SIM_BUILT_ONCE ? 0.1 : shape == SIM_REPLACED ? start + 0.03 : 1;
  for (;;) {
    t += rng_exp(1 / rate);
    if (t > end || n == SIM_MAX_BLOCKS) break;
    uint64_t samples = rng_poisson(mean);
    if (!samples) continue;   // never sampled: in no snapshot
    double death = shape == SIM_CHURN     ? t + rng_exp(life)
                   : shape == SIM_EMPTIED ? start + (floor((t - start) / life) + 1) * life
                                          : INFINITY;
    sim_blocks[n++] = (SimBlock){t, death, samples};
  }
  return n;
}

// The series rule's counts for the holder's blocks at snapshots taken at
// times snap[0..SIM_SNAPS-1] (the last the one analysed).
static void sim_series_counts(uint32_t n, const double *snap, KeptHolder *h) {
  memset(h, 0, sizeof *h);
  const int L = SIM_SNAPS - 1, a = L / 2;
  uint64_t kept[SIM_SNAPS] = {0};
  for (uint32_t i = 0; i < n; i++) {
    const SimBlock *b = &sim_blocks[i];
    bool alive[SIM_SNAPS];
    for (int q = 0; q < SIM_SNAPS; q++) {
      alive[q] = b->birth <= snap[q] && b->death > snap[q];
      if (alive[q]) kept[q] += b->samples;
    }
    if (alive[L] && b->birth >= snap[0] && b->birth < snap[a]) h->persist++;
    h->grew += alive[L] && !alive[a];
    h->let_go += alive[a] && !alive[L];
    h->grew_last += alive[L] && !alive[L - 1];
    h->let_go_last += alive[L - 1] && !alive[L];
    if (alive[L]) h->samples += b->samples;
  }
  h->always = true;
  for (int q = 0; q < SIM_SNAPS; q++) h->always = h->always && kept[q] > 0;
}

// The end-state rule's counts: sampled blocks alive at the end born in the
// third quarter and the last, and the samples kept.
static void sim_end_counts(uint32_t n, KeptHolder *h) {
  memset(h, 0, sizeof *h);
  for (uint32_t i = 0; i < n; i++) {
    const SimBlock *b = &sim_blocks[i];
    if (b->death <= 1) continue;
    h->samples += b->samples;
    if (b->birth >= 0.5 && b->birth < 0.75) h->third_quarter++;
    if (b->birth >= 0.75) h->last_quarter++;
    if (b->birth >= 0.5) {
      if (h->third_quarter + h->last_quarter == 1 || b->birth < h->first_late_at) h->first_late_at = b->birth;
      if (b->birth > h->last_late_at) h->last_late_at = b->birth;
    }
  }
}

// Runs of the series rule on holders that do not grow, seven to a run (m =
// the holders that meet (P) or keep something at every snapshot); the
// snapshots evenly spaced after a warm-up. Stated (kept.h): at most
// KEPT_ALPHA = 1 % of runs name any of them. Over 3000 runs the count of
// runs named is Binomial(3000, p); the test allows 1 % + 3 sigma of that
// count at p = 1 % (1.54 %, 46 runs): a rule whose rate were 2 % would pass
// with probability under 1e-3. The earlier rule (to 2026-11-29), where a holder
// kept at every snapshot met (P), named 429 of these 3000 runs (the emptied
// holder: kept.h); the rule now, 6.
static void test_series_false_positives(void **state) {
  (void)state;
  rng_state = 0x9E3779B97F4A7C15ULL;
  const double snap[SIM_SNAPS] = {0.2, 0.4, 0.6, 0.8, 1.0};
  const int runs = 3000;
  int named = 0, eligible_runs = 0;
  for (int r = 0; r < runs; r++) {
    // churns of short, middling and long lives (a long one turns over
    // slowly: a large cache), a table built once, a sparse churn of big
    // blocks (many samples each), a churn of blocks rarely sampled, and a
    // holder emptied at once every 0.05-0.4 of the run at a random phase
    // (kept at every snapshot, low at one and high at a later one: a table
    // rebuilt each hour, a queue drained; its period at most S_L - S_a, so
    // that nothing born before S_a is kept at S_L: kept.h)
    double period = 0.05 + 0.35 * rng_unit();
    struct { SimShape shape; double rate, life, start, mean; } holders[] = {
        {SIM_CHURN, 2000, 0.02, 0, 0.05}, {SIM_CHURN, 300, 0.3, 0, 0.2},   {SIM_CHURN, 40, 3.0, 0, 0.5},
        {SIM_BUILT_ONCE, 500, 0, 0, 0.3}, {SIM_CHURN, 20, 0.5, 0, 6.0},    {SIM_CHURN, 5000, 0.1, 0, 0.01},
        {SIM_EMPTIED, 3000, period, period * rng_unit(), 0.2},
    };
    enum { H = sizeof holders / sizeof holders[0] };
    KeptHolder h[H];
    uint32_t m = 0;
    for (int i = 0; i < H; i++) {
      uint32_t n = sim_holder(holders[i].shape, holders[i].rate, holders[i].life, holders[i].start, holders[i].mean);
      sim_series_counts(n, snap, &h[i]);
      m += h[i].persist > 0 || h[i].always;
    }
    eligible_runs += m > 0;
    bool any = false;
    for (int i = 0; i < H; i++) any |= kept_series_verdict(&h[i], KEPT_ALPHA / (m ? m : 1)) == KEPT_LEAK;
    named += any;
  }
  double sigma = sqrt(runs * KEPT_ALPHA * (1 - KEPT_ALPHA));
  printf("series rule: %d of %d runs named a holder that does not grow (allowed %.0f)\n", named, runs,
         runs * KEPT_ALPHA + 3 * sigma);
  assert_true(eligible_runs == runs);   // the rule was put to the test in every run
  assert_true(named <= runs * KEPT_ALPHA + 3 * sigma);
}

// The series rule names a steady leak: one sampled block born per 1/200 of
// the run from its start, kept for ever, beside a churn; at 200 kept blocks
// (about 40 between two snapshots) it is named in at least 99 % of runs (a
// binomial test at 3 sigma over 500 runs: at least 490). Power, not an
// error rate: a rule that names nothing fails here.
static void test_series_names_a_leak(void **state) {
  (void)state;
  rng_state = 0xD1B54A32D192ED03ULL;
  const double snap[SIM_SNAPS] = {0.2, 0.4, 0.6, 0.8, 1.0};
  int named = 0;
  for (int r = 0; r < 500; r++) {
    KeptHolder leak, churn;
    sim_series_counts(sim_holder(SIM_LEAK, 1000, 0, 0, 0.2), snap, &leak);
    sim_series_counts(sim_holder(SIM_CHURN, 300, 0.3, 0, 0.2), snap, &churn);
    uint32_t m = (leak.persist > 0 || leak.always) + (churn.persist > 0 || churn.always);
    named += kept_series_verdict(&leak, KEPT_ALPHA / m) == KEPT_LEAK;
  }
  printf("series rule: a steady leak named in %d of 500 runs\n", named);
  assert_true(named >= 490);
}

// The end-state rule: a steady leak that began before 7/12 of the run, kept
// 15 sampled blocks or more (here about 40), is named in at least 95 % of
// runs (kept.h: missed w.p. <= 2 e^(-n/4) + 1 %); over 1000 runs, at least
// 950 - 3 sigma = 929. A table built in the first tenth, and a working set
// replaced whole at 0.72-0.77 of the run (in 0.03 of it, across the
// quarters: kept.h's burst, with about 48 sampled blocks), are never named; a
// churn whose lives are a tenth of the run and shorter is named in at most
// 2 % of runs (the floor for programs that do not leak; allowed
// 20 + 3 sigma = 33 of 1000).
static void test_end_state_rule(void **state) {
  (void)state;
  rng_state = 0x94D049BB133111EBULL;
  int leak_named = 0, built_named = 0, churn_named = 0, replaced_named = 0;
  for (int r = 0; r < 1000; r++) {
    KeptHolder h;
    double start = 0.58 * rng_unit();
    sim_end_counts(sim_holder(SIM_LEAK, 100, 0, start, 0.5), &h);
    leak_named += kept_end_state_verdict(&h) == KEPT_LEAK;
    sim_end_counts(sim_holder(SIM_BUILT_ONCE, 2000, 0, 0, 0.1), &h);
    built_named += kept_end_state_verdict(&h) == KEPT_LEAK;
    sim_end_counts(sim_holder(SIM_CHURN, 2000, 0.1 * (0.2 + 0.8 * rng_unit()), 0, 0.2), &h);
    churn_named += kept_end_state_verdict(&h) == KEPT_LEAK;
    // a working set replaced whole around 3/4 of the run, across the quarters
    sim_end_counts(sim_holder(SIM_REPLACED, 8000, 0, 0.72 + 0.05 * rng_unit(), 0.2), &h);
    replaced_named += kept_end_state_verdict(&h) == KEPT_LEAK;
  }
  printf("end-state rule over 1000 runs: a steady leak named %d, a table built once %d, a churn's tail %d, "
         "a working set replaced at 3/4 %d\n", leak_named, built_named, churn_named, replaced_named);
  double sigma95 = sqrt(1000 * 0.05 * 0.95), sigma2 = sqrt(1000 * 0.02 * 0.98);
  assert_true(leak_named >= 950 - 3 * sigma95);
  assert_int_equal(built_named, 0);
  assert_int_equal(replaced_named, 0);
  assert_true(churn_named <= 20 + 3 * sigma2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_share_interval),
      cmocka_unit_test(test_rate_for),
      cmocka_unit_test(test_path_text),
      cmocka_unit_test(test_series_false_positives),
      cmocka_unit_test(test_series_names_a_leak),
      cmocka_unit_test(test_end_state_rule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
