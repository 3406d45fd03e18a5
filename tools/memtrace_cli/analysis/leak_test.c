// leak_test.c - the leak test (leak_test.h gives the method).
#include "leak_test.h"

#include <math.h>
#include <stdlib.h>

const double LEAK_Z = 4.0, LEAK_Z_PART = 1.0, LEAK_PART_SHARE = 0.25;
const double LEAK_Z95 = 1.959963984540054;

// The trend of y_k over checkpoints from..to (profile.h's windows). The
// slope is computed block by block, as its variance is: a block counted at
// every checkpoint of the range adds exactly 0 to both (A[from - 1] = A[to]
// = 0 exactly), where Σ a_k y_k would leave rounding noise that a variance
// just as tiny would turn into a huge z.
static LeakTrend trend(const Profile *p, const uint64_t *m, uint32_t from, uint32_t to) {
  uint32_t k_max = profile_windows(p), side = k_max + 2;
  double x[LEAK_WINDOWS + 1], a[LEAK_WINDOWS + 2] = {0}, mean = 0, sxx = 0;
  LeakTrend t = {0, 0, 0};
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
uint32_t leak_last_judged(const Profile *p) {
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
  uint32_t to = leak_last_judged(p), b[4];
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

void leak_analysis_free(LeakAnalysis *a) {
  for (uint32_t i = 0; i < a->n; i++) free(a->leaks[i].m);
  free(a->leaks);
}

bool leak_analyse(const Profile *p, const ProfileGroups *g, LeakAnalysis *out) {
  uint32_t side = profile_windows(p) + 2;
  *out = (LeakAnalysis){calloc((size_t)g->n + 1, sizeof *out->leaks), 0, 0};
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

double leak_allocation_rate(const Profile *p) {
  uint32_t to = leak_last_judged(p);
  double us = (double)(profile_checkpoint_time(p, to) - profile_checkpoint_time(p, 2));
  double bytes = (double)(profile_checkpoint_clock(p, to) - profile_checkpoint_clock(p, 2)) * profile_sample_bytes(p);
  return us > 0 ? bytes / us * 1e6 : 0;
}

