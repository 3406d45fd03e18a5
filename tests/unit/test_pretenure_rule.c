// test_pretenure_rule.c - cmocka tests of pretenuring's decision rule
// (memprof/pretenure_rule.c): binomial tails against exact sums and
// identities, Clopper-Pearson bounds against published values, and the
// rule's error rates by simulation: the chance that a site whose promoted
// share is at the threshold ever switches, over a whole sequential run, is
// at most alpha (and the same test finds the uncorrected rule, which tests
// every checkpoint at alpha, past it); the switch's delay at shares above
// it; the undo's chance of a wrong undo per window.
//
// Statistical checks use fixed seeds. A count of events of probability at
// most e in R independent runs is Binomial(R, e): "at most e" is checked as
// count <= R e + 5.7 sigma, sigma = sqrt(R e (1 - e)) (a correct rule fails
// one in about 10^8); each states its figures where it is computed.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../memprof/pretenure_rule.h"

#define TOL 5.7

// splitmix64: the simulations' generator (fixed seeds).
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static bool bernoulli(uint64_t *s, double p) { return (double)(next_u64(s) >> 11) * 0x1p-53 < p; }

// The largest count Binomial(runs, e) reaches but with a chance of about 10^-8.
static double upper_limit(double runs, double e) { return runs * e + TOL * sqrt(runs * e * (1 - e)); }

// =====================================================================
// Tails and bounds
// =====================================================================

// P(X >= k) summed exactly (long double, from pmf(0) by ratios), n <= 60.
static long double direct_tail(uint32_t n, uint32_t k, double p) {
  long double pmf = powl(1 - (long double)p, n), tail = 0;
  for (uint32_t j = 0; j <= n; j++) {
    if (j >= k) tail += pmf;
    pmf *= (long double)(n - j) / (long double)(j + 1) * (long double)p / (1 - (long double)p);
  }
  return tail;
}

static void test_tail_exact_small(void **state) {
  (void)state;
  const double ps[] = {0.01, 0.15, 0.5, 0.85, 0.97};
  for (uint32_t n = 1; n <= 60; n++)
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
      for (uint32_t k = 0; k <= n + 1; k++) {
        double got = exp(binomial_log_upper_tail(n, k, ps[i]));
        double want = (double)direct_tail(n, k, ps[i]);
        if (!(fabs(got - want) <= 1e-11 * want + 1e-300)) {
          print_error("P(Bin(%u, %g) >= %u) = %.17g, exact %.17g\n", n, ps[i], k, got, want);
          fail();
        }
      }
}

// For large n: consecutive tails differ by one pmf term, and the tails of
// the successes and of the failures add up to one, within the rounding the
// contract allows (tests against exact big-integer sums, n = 10^5, k = np:
// pmf 0.0035330720721431486; the tails are then about 1e-10 off).
static void test_tail_identities_large(void **state) {
  (void)state;
  const uint64_t ns[] = {1000, 100000, 10000000};
  const double ps[] = {0.15, 0.5, 0.85};
  for (size_t a = 0; a < 3; a++)
    for (size_t b = 0; b < 3; b++) {
      uint64_t n = ns[a];
      double p = ps[b], sd = sqrt((double)n * p * (1 - p));
      for (int z = -6; z <= 6; z++) {
        uint64_t k = (uint64_t)((double)n * p + z * sd);
        double t0 = exp(binomial_log_upper_tail(n, k, p)), t1 = exp(binomial_log_upper_tail(n, k + 1, p));
        double pmf = exp(lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
                         (double)k * log(p) + (double)(n - k) * log1p(-p));
        // The logarithms' rounding (binomial_log_upper_tail's contract) makes
        // each of t0, t1, pmf off by eps relatively; t0 - t1 cancels.
        double eps = 4e-16 * (double)n * log((double)n);
        if (!(fabs((t0 - t1) - pmf) <= eps * (t0 + t1 + pmf))) {
          print_error("n %llu k %llu p %g: %.17g - %.17g != pmf %.17g\n", (unsigned long long)n,
                      (unsigned long long)k, p, t0, t1, pmf);
          fail();
        }
        // P(X >= k) + P(n - X >= n - k + 1) = 1, n - X ~ Bin(n, 1 - p).
        double other = exp(binomial_log_upper_tail(n, n - k + 1, 1 - p));
        assert_true(fabs(t0 + other - 1) <= eps * 2);
      }
    }
}

// One-sided lower bounds at 0.025: the lower ends of Clopper and Pearson's
// two-sided 95 % intervals, published to 4 places (the same values as
// test_tool_kept.c's).
static void test_lower_bound_published(void **state) {
  (void)state;
  assert_true(fabs(share_lower_bound(10, 5, 0.025) - 0.1871) < 1e-4);
  assert_true(fabs(share_lower_bound(10, 10, 0.025) - 0.6915) < 1e-4);
  assert_true(fabs(share_lower_bound(100, 1, 0.025) - 0.0003) < 1e-4);
  assert_true(share_lower_bound(10, 0, 0.025) == 0);
  // The bound is where the tail at it equals the level.
  for (uint64_t n = 20; n <= 20000; n *= 10)
    for (uint64_t k = 1; k < n; k += n / 7) {
      double b = share_lower_bound(n, k, 1e-4);
      assert_true(fabs(binomial_log_upper_tail(n, k, b) - log(1e-4)) < 1e-5 * n);
    }
}

// =====================================================================
// The switch's error rate and delay
// =====================================================================

// The uncorrected rule, for contrast: every checkpoint tested at alpha.
static bool naive_add(ShareTest *t, bool success, const PretenureParams *p) {
  t->n++;
  t->k += success;
  if (t->n < t->next_check) return false;
  t->next_check *= 2;
  return (double)t->k > p->threshold * (double)t->n &&
         binomial_log_upper_tail(t->n, t->k, p->threshold) <= log(p->alpha);
}

// Runs of `len` resolved trials each at promoted share `share`: how many
// ever switch (the rule, or the naive one).
static uint64_t switched_runs(const PretenureParams *p, double share, uint32_t runs, uint32_t len, bool naive,
                              uint64_t seed) {
  uint64_t s = seed, switched = 0;
  for (uint32_t r = 0; r < runs; r++) {
    ShareTest t;
    share_test_init(&t, p);
    for (uint32_t i = 0; i < len; i++) {
      bool success = bernoulli(&s, share);
      if (naive ? naive_add(&t, success, p) : share_test_add(&t, success, p, NULL)) {
        switched++;
        break;
      }
    }
  }
  return switched;
}

// At the threshold itself (the worst share the guarantee covers), over runs
// of 4,096 resolved trials (nine checkpoints from 16): at alpha = 0.05, the
// rule switches at most 5 % of runs; the uncorrected rule, which tests every
// checkpoint at 5 %, switches more than that bound allows. At the defaults
// (alpha = 0.001), and at shares below the threshold, at most alpha too.
static void test_error_rate(void **state) {
  (void)state;
  const uint32_t runs = 20000, len = 4096;
  PretenureParams p = PRETENURE_DEFAULTS;
  p.alpha = 0.05;
  uint64_t rule = switched_runs(&p, p.threshold, runs, len, false, 1);
  uint64_t naive = switched_runs(&p, p.threshold, runs, len, true, 1);
  print_message("alpha 0.05 at share %.2f: rule %.4f, uncorrected %.4f of %u runs\n", p.threshold,
                (double)rule / runs, (double)naive / runs, runs);
  assert_true((double)rule <= upper_limit(runs, p.alpha));
  assert_true((double)naive > upper_limit(runs, p.alpha));

  p = PRETENURE_DEFAULTS;
  const double shares[] = {p.threshold, p.threshold - 0.05, 0.5};
  for (int i = 0; i < 3; i++) {
    uint64_t n = switched_runs(&p, shares[i], runs, len, false, 2 + i);
    print_message("defaults at share %.2f: %llu of %u runs switched\n", shares[i], (unsigned long long)n, runs);
    assert_true((double)n <= upper_limit(runs, p.alpha));
  }
}

// Every trial promoted: the first checkpoint whose level the threshold's
// power passes, exactly (defaults: 0.85^64 = 3.0e-5 <= 0.001 / 12 at the
// third checkpoint, 64 trials; 0.85^32 = 5.5e-3 > 0.001 / 6 at the second).
static void test_delay_all_promoted(void **state) {
  (void)state;
  const PretenureParams *p = &PRETENURE_DEFAULTS;
  ShareTest t;
  share_test_init(&t, p);
  double bound = 0;
  uint64_t n = 0;
  while (!share_test_add(&t, true, p, &bound)) n++;
  n++;
  assert_int_equal(n, 64);
  assert_true(bound > p->threshold && bound < 1);
  assert_true(fabs(bound - exp(log(share_test_alpha(p, 2)) / 64)) < 1e-9);
}

// At share 0.99 and 0.95, the share of runs switched by 128 and by 512
// trials is at least the chance that the checkpoint at 128 (or 512) alone
// passes, computed exactly from the binomial: the simulated count must not
// fall below it by more than 5.7 sigma.
static void test_delay_high_shares(void **state) {
  (void)state;
  const PretenureParams *p = &PRETENURE_DEFAULTS;
  const double shares[] = {0.99, 0.95};
  const uint32_t at[] = {128, 512};
  const uint32_t runs = 10000;
  for (int i = 0; i < 2; i++) {
    uint32_t j = 0;
    while ((uint64_t)p->first_check << j < at[i]) j++;
    double a = share_test_alpha(p, j);
    uint64_t kmin = at[i];   // the fewest promoted that pass at that checkpoint
    while (kmin > 0 && binomial_log_upper_tail(at[i], kmin - 1, p->threshold) <= log(a)) kmin--;
    double pass = exp(binomial_log_upper_tail(at[i], kmin, shares[i]));
    uint64_t s = 77 + i, switched = 0;
    double mean_n = 0;
    for (uint32_t r = 0; r < runs; r++) {
      ShareTest t;
      share_test_init(&t, p);
      for (uint32_t n = 1; n <= 1u << 16; n++)
        if (share_test_add(&t, bernoulli(&s, shares[i]), p, NULL)) {
          switched += n <= at[i];
          mean_n += n;
          break;
        }
    }
    print_message("share %.2f: %.4f switched by %u trials (the checkpoint alone: %.4f), mean %.0f trials\n",
                  shares[i], (double)switched / runs, at[i], pass, mean_n / runs);
    assert_true((double)switched >= runs * pass - TOL * sqrt(runs * pass * (1 - pass)));
  }
}

// =====================================================================
// The undo
// =====================================================================

// Windows of 16 births at a first-cycle death share of exactly 0.5 (the
// undo threshold): at most undo_alpha of them undo. All dead: the first
// window undoes. Fewer births than the window: never. A probe's test
// (memprof/pretenure.c, part 8) is this one on exactly undo_window births,
// dead at their first minor collection or not: the same bound per probe.
static void test_undo(void **state) {
  (void)state;
  const PretenureParams *p = &PRETENURE_DEFAULTS;
  const uint32_t windows = 200000;
  uint64_t s = 5, undone = 0;
  for (uint32_t w = 0; w < windows; w++) {
    uint64_t deaths = 0;
    for (uint32_t b = 0; b < p->undo_window; b++) deaths += bernoulli(&s, p->undo_threshold);
    undone += undo_window_test(p->undo_window, deaths, p, NULL);
  }
  print_message("undo at death share %.2f: %.5f of %u windows\n", p->undo_threshold, (double)undone / windows,
                windows);
  assert_true((double)undone <= upper_limit(windows, p->undo_alpha));
  double bound = 0;
  assert_true(undo_window_test(p->undo_window, p->undo_window, p, &bound));
  assert_true(bound > p->undo_threshold);
  assert_false(undo_window_test(p->undo_window - 1, p->undo_window - 1, p, NULL));
  assert_false(undo_window_test(100, 50, p, NULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tail_exact_small),
      cmocka_unit_test(test_tail_identities_large),
      cmocka_unit_test(test_lower_bound_published),
      cmocka_unit_test(test_error_rate),
      cmocka_unit_test(test_delay_all_promoted),
      cmocka_unit_test(test_delay_high_shares),
      cmocka_unit_test(test_undo),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
