// leak_test.h - the leak test of `memtrace leaks` and `memtrace report`:
// which groups of allocation sites (by site, function or file) keep more
// and more bytes reachable over the run, and how fast.
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
#ifndef MINNOW_MEMTRACE_LEAK_TEST_H
#define MINNOW_MEMTRACE_LEAK_TEST_H

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"

// K: the windows to build the profile with (ProfileOptions.windows); fewer
// than LEAK_MIN_POINTS + 1 judged checkpoints judge nothing.
enum { LEAK_WINDOWS = 24, LEAK_MIN_POINTS = 7 };
extern const double LEAK_Z, LEAK_Z_PART, LEAK_PART_SHARE;
extern const double LEAK_Z95;   // the normal's 97.5 % quantile: 95 % intervals of a slope

typedef struct LeakTrend {
  double slope, sd;     // share of the allocation kept (samples per sample of the clock), its sd
  double z;             // slope / sd (0 when sd = 0)
} LeakTrend;

typedef struct Leak {
  const ProfileGroup *group;
  ProfileStackId stack;        // its stack with the most samples alive at the end
  uint64_t *m;                 // (K + 2)² window matrix summed over the group's sites
  double series[LEAK_WINDOWS + 1];  // y_k, samples, k = 1..K
  LeakTrend whole, part[3];    // over the judged checkpoints, and each third of them
  bool leaks;
} Leak;

typedef struct LeakAnalysis {
  Leak *leaks;          // the groups with a window matrix (tested): leaks first, fastest first
  uint32_t n, n_leaking;
} LeakAnalysis;

// Tests every group of `g` (grouped by site, function or file) of a profile
// built with LEAK_WINDOWS windows, after profile_finish. False when out of
// memory (free what was made with leak_analysis_free anyway).
bool leak_analyse(const Profile *p, const ProfileGroups *g, LeakAnalysis *out);
void leak_analysis_free(LeakAnalysis *a);

// The last checkpoint judged: at or before the proof horizon (rule 1).
uint32_t leak_last_judged(const Profile *p);

// Bytes allocated per second over the judged checkpoints (0 if no time
// passed): converts a slope into bytes per second.
double leak_allocation_rate(const Profile *p);

#endif
