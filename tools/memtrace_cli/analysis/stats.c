// stats.c - estimates, intervals and tests of the trace tools (stats.h).
// The special functions are the textbook ones: the incomplete gamma by its
// series below a + 1 and its continued fraction above, the incomplete beta
// by its continued fraction (both evaluated with the modified Lentz method),
// quantiles by bisection (relative precision 1e-15, so tiny proportions keep
// their digits), or for large gamma shapes by Wilson and Hilferty's cube
// root approximation (relative error under 1e-6 past a = 1000).
#include "stats.h"

#include <math.h>

enum { MAX_ITERATIONS = 100000 };
static const double EPS = 1e-14, TINY = 1e-300;
static const double Z95 = 1.959963984540054;  // the standard normal's 0.975 quantile

// ---------------------------------------------------------------- tallies

Tally tally_empty(double scale) { return (Tally){0, 0, 0, scale, false}; }

void tally_add(Tally *t, uint64_t samples, double scale) {
  if (!samples) return;
  if (t->samples == 0) t->scale = scale;  // an empty tally's scale only served its interval
  else if (scale != t->scale) t->mixed = true;
  t->samples += samples;
  t->bytes += (double)samples * scale;
  t->var += (double)samples * scale * scale;
}

void tally_merge(Tally *t, const Tally *o) {
  if (!o->samples) return;
  if (t->samples == 0) {
    t->scale = o->scale;
    t->mixed = o->mixed;
  } else if (o->mixed || o->scale != t->scale) {
    t->mixed = true;
  }
  t->samples += o->samples;
  t->bytes += o->bytes;
  t->var += o->var;
}

Interval tally_interval(const Tally *t) {
  if (!t->mixed || t->samples == 0) {
    Interval g = stats_poisson_interval((double)t->samples);
    return (Interval){g.lo * t->scale, g.hi * t->scale};
  }
  double n = t->bytes * t->bytes / t->var, scale = t->var / t->bytes;
  Interval g = stats_poisson_interval(n);
  return (Interval){g.lo * scale, g.hi * scale};
}

Interval stats_poisson_interval(double n) {
  double lo = n > 0 ? stats_gamma_quantile(n, 0.025) : 0;
  return (Interval){lo, stats_gamma_quantile(n + 1, 0.975)};
}

// Clopper and Pearson's: the bounds are the proportions at which k or more
// (lo), k or fewer (hi) successes have probability 2.5 %, i.e. beta
// quantiles; closed forms at k = 0 and k = n.
Interval stats_proportion_interval(uint64_t k, uint64_t n) {
  if (n == 0) return (Interval){0, 1};
  if (k > n) k = n;
  double kk = (double)k, nn = (double)n;
  double lo = k == 0 ? 0 : k == n ? pow(0.025, 1 / nn) : stats_beta_quantile(kk, nn - kk + 1, 0.025);
  double hi = k == n ? 1 : k == 0 ? -expm1(log(0.025) / nn) : stats_beta_quantile(kk + 1, nn - kk, 0.975);
  return (Interval){lo, hi};
}

double stats_normal_upper(double z) { return 0.5 * erfc(z / sqrt(2.0)); }

double stats_diff_pvalue(const Tally *a, const Tally *b) {
  uint64_t n = a->samples + b->samples;
  if (n == 0) return 1;
  if (!a->mixed && !b->mixed && a->scale > 0 && b->scale > 0 && n <= 1000000) {
    double p = b->scale / (a->scale + b->scale);
    double below = stats_binomial_cdf(a->samples, n, p);
    double above = a->samples ? 1 - stats_binomial_cdf(a->samples - 1, n, p) : 1;
    double two = 2 * fmin(below, above);
    return two < 1 ? two : 1;
  }
  double sd = sqrt(a->var + b->var);
  if (sd == 0) return 1;
  return fmin(1, 2 * stats_normal_upper(fabs(b->bytes - a->bytes) / sd));
}

double stats_block_weight(uint64_t wosize, double rate) {
  if (rate >= 1) return 1;
  double q = -expm1((double)(wosize + 1) * log1p(-rate));
  return q > 0 ? 1 / q : 0;
}

// ---------------------------------------------------------------- gamma

// e^-x x^a / Γ(a), in logs.
static double gamma_front(double a, double x) { return exp(a * log(x) - x - lgamma(a)); }

static double gamma_series(double a, double x) {
  double term = 1 / a, sum = term;
  for (int n = 1; n < MAX_ITERATIONS; n++) {
    term *= x / (a + n);
    sum += term;
    if (fabs(term) < fabs(sum) * EPS) break;
  }
  return sum * gamma_front(a, x);
}

// Q(a, x) = 1 - P(a, x) by its continued fraction (modified Lentz).
static double gamma_fraction(double a, double x) {
  double b = x + 1 - a, c = 1 / TINY, d = 1 / b, h = d;
  for (int i = 1; i < MAX_ITERATIONS; i++) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (fabs(d) < TINY) d = TINY;
    c = b + an / c;
    if (fabs(c) < TINY) c = TINY;
    d = 1 / d;
    double delta = d * c;
    h *= delta;
    if (fabs(delta - 1) < EPS) break;
  }
  return gamma_front(a, x) * h;
}

double stats_gamma_p(double a, double x) {
  if (x <= 0) return 0;
  if (x < a + 1) return gamma_series(a, x);
  return 1 - gamma_fraction(a, x);
}

// The standard normal's p-quantile for p in {0.025, 0.975}, else by
// bisection on erfc (only the gamma quantile's large-shape branch uses it).
static double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; i++) {
    double mid = (lo + hi) / 2;
    if (1 - stats_normal_upper(mid) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

double stats_gamma_quantile(double a, double p) {
  if (a >= 1000) {
    double z = p == 0.975 ? Z95 : p == 0.025 ? -Z95 : normal_quantile(p);
    double c = 1 / (9 * a), r = 1 - c + z * sqrt(c);
    return a * r * r * r;
  }
  double lo = 0, hi = a + 10 * sqrt(a) + 10;
  while (stats_gamma_p(a, hi) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    double mid = (lo + hi) / 2;
    if (stats_gamma_p(a, mid) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

// ---------------------------------------------------------------- beta

static double beta_fraction(double a, double b, double x) {
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (fabs(d) < TINY) d = TINY;
  d = 1 / d;
  double h = d;
  for (int m = 1; m < MAX_ITERATIONS; m++) {
    int m2 = 2 * m;
    double an = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + an * d;
    if (fabs(d) < TINY) d = TINY;
    c = 1 + an / c;
    if (fabs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    an = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + an * d;
    if (fabs(d) < TINY) d = TINY;
    c = 1 + an / c;
    if (fabs(c) < TINY) c = TINY;
    d = 1 / d;
    double delta = d * c;
    h *= delta;
    if (fabs(delta - 1) < EPS) break;
  }
  return h;
}

double stats_beta_inc(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double stats_beta_quantile(double a, double b, double p) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 1100 && hi - lo > 1e-15 * hi; i++) {
    double mid = (lo + hi) / 2;  // halves the bracket: under 1100 steps reach any double
    if (stats_beta_inc(a, b, mid) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

double stats_binomial_cdf(uint64_t k, uint64_t n, double p) {
  if (k >= n) return 1;
  if (p <= 0) return 1;
  if (p >= 1) return 0;
  return stats_beta_inc((double)(n - k), (double)k + 1, 1 - p);
}
