// pretenure_rule.c - the arithmetic of pretenuring's decisions (contract and
// rule: pretenure_rule.h; the figures: docs/design.md, "Pretenuring").
//
// 1. Binomial tails in logarithms. P(X >= k) is summed from the term nearest
//    the mean outwards: above the mean (k >= np) the terms pmf(j), j >= k,
//    decrease, so the sum runs from pmf(k) up until a term adds nothing;
//    below it, P(X >= k) = 1 - P(X <= k - 1), whose terms decrease from
//    pmf(k - 1) down. pmf(k) itself comes from lgamma; the rest are ratios.
//    Only the terms that matter are added: about sqrt(n) of them near the
//    mean, fewer in the far tails, where the rule's tests fall.
// 2. A checkpoint's test needs one tail at p = threshold, not the bound: the
//    lower bound exceeds the threshold iff the tail at the threshold is
//    below the level (the tail grows with p). The bound itself, for the log
//    and the decision record, is found by bisection once a test passes.
#include <math.h>

#include "pretenure_rule.h"

// docs/design.md, "Pretenuring", says why these figures.
const PretenureParams PRETENURE_DEFAULTS = {
    .threshold = 0.85,
    .alpha = 1e-3,
    .first_check = 16,
    .undo_threshold = 0.5,
    .undo_alpha = 1e-3,
    .undo_window = 16,
    .probe_every = 64,
};

static double log_pmf(uint64_t n, uint64_t j, double lp, double lq) {
  return lgamma((double)n + 1) - lgamma((double)j + 1) - lgamma((double)(n - j) + 1) + (double)j * lp +
         (double)(n - j) * lq;
}

// Relative size below which a term no longer changes a sum of doubles.
#define NEGLIGIBLE 1e-17

double binomial_log_upper_tail(uint64_t n, uint64_t k, double p) {
  if (k == 0) return 0;
  if (k > n) return -INFINITY;
  double lp = log(p), lq = log1p(-p), odds = p / (1 - p);
  if ((double)k >= (double)n * p) {
    double sum = 1, term = 1;
    for (uint64_t j = k; j < n; j++) {
      term *= (double)(n - j) / (double)(j + 1) * odds;
      sum += term;
      if (term < NEGLIGIBLE * sum) break;
    }
    return log_pmf(n, k, lp, lq) + log(sum);
  }
  double sum = 1, term = 1;
  for (uint64_t j = k - 1; j > 0; j--) {
    term *= (double)j / (double)(n - j + 1) / odds;
    sum += term;
    if (term < NEGLIGIBLE * sum) break;
  }
  double lower = exp(log_pmf(n, k - 1, lp, lq)) * sum;
  return log1p(-(lower < 1 ? lower : 1));
}

double share_lower_bound(uint64_t n, uint64_t k, double a) {
  if (k == 0 || n == 0) return 0;
  if (k >= n) return exp(log(a) / (double)n);   // P(Bin(n, p) >= n) = p^n
  double lo = 0, hi = (double)k / (double)n, target = log(a);
  while (hi - lo > 1e-9) {
    double mid = (lo + hi) / 2;
    if (binomial_log_upper_tail(n, k, mid) > target) hi = mid;
    else lo = mid;
  }
  return lo;
}

void share_test_init(ShareTest *t, const PretenureParams *p) {
  *t = (ShareTest){.next_check = p->first_check ? p->first_check : 1};
}

double share_test_alpha(const PretenureParams *p, uint32_t j) {
  return p->alpha / (((double)j + 1) * ((double)j + 2));
}

bool share_test_add(ShareTest *t, bool success, const PretenureParams *p, double *bound) {
  t->n++;
  t->k += success;
  if (t->n < t->next_check) return false;
  double a = share_test_alpha(p, t->checks);
  t->checks++;
  t->next_check *= 2;
  // At or below the threshold the tail is about one half: no level passes.
  if ((double)t->k <= p->threshold * (double)t->n) return false;
  if (binomial_log_upper_tail(t->n, t->k, p->threshold) > log(a)) return false;
  if (bound) *bound = share_lower_bound(t->n, t->k, a);
  return true;
}

bool undo_window_test(uint64_t births, uint64_t deaths, const PretenureParams *p, double *bound) {
  if (births < p->undo_window || (double)deaths <= p->undo_threshold * (double)births) return false;
  if (binomial_log_upper_tail(births, deaths, p->undo_threshold) > log(p->undo_alpha)) return false;
  if (bound) *bound = share_lower_bound(births, deaths, p->undo_alpha);
  return true;
}
