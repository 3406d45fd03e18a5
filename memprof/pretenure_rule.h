// pretenure_rule.h - the arithmetic of pretenuring's decisions (docs/design.md,
// "Pretenuring"): the sequential test that switches an allocation site to
// the major heap and the window test that switches it back. Pure functions
// of counts: no VM, no memprof state, so that tests/unit/test_pretenure.c
// checks the rule's error rate by simulation with exactly this code.
//
// The switch (per site): its sampled blocks born in the minor heap are
// trials, each resolved at the next minor collection as promoted (success)
// or dead. At the checkpoints n = first_check * 2^j (j = 0, 1, ...) resolved
// trials, with k promoted, the site passes when the exact one-sided
// (Clopper-Pearson) lower confidence bound of its promoted share, at level
// 1 - alpha_j with alpha_j = alpha / ((j + 1)(j + 2)), exceeds `threshold`;
// equivalently when P(Bin(n, threshold) >= k) <= alpha_j. The alpha_j sum to
// alpha: for fates drawn independently with a share p <= threshold, the
// chance that the site ever passes, over the whole run however long, is at
// most alpha (a union bound over the checkpoints).
//
// The undo (per pretenured site): its sampled blocks born in the major heap
// are trials resolved by the first major collection after their birth: dead
// then, or not. Resolved trials accumulate in a window that closes at the
// end of the first major cycle in which it holds at least `undo_window`
// births; a closed window undoes the decision when P(Bin(b, undo_threshold)
// >= d) <= undo_alpha for its b births and d deaths, and starts afresh
// otherwise. A site whose first-cycle death share is at most undo_threshold
// is wrongly undone with a chance of at most undo_alpha per window.
//
// The probe (per pretenured site): after every probe_every sampled blocks
// born old, the site allocates young again until undo_window of its sampled
// blocks are born young; those are resolved by the next minor collection
// (asked for at once), and the same window test, on the probe's births and
// the deaths among them (dead at that minor collection), undoes the
// decision. A site whose blocks die before their first minor collection with
// a share of at most undo_threshold is wrongly undone with a chance of at
// most undo_alpha per probe.
#ifndef MINNOW_PRETENURE_RULE_H
#define MINNOW_PRETENURE_RULE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct PretenureParams {
  double threshold;        // promoted share a site must exceed (lower bound)
  double alpha;            // chance of a wrong switch, over the whole run
  uint32_t first_check;    // resolved trials at the first checkpoint
  double undo_threshold;   // first-cycle death share past which a site goes back
  double undo_alpha;       // chance of a wrong undo, per window
  uint32_t undo_window;    // births a window holds at least before its test
  uint32_t probe_every;    // sampled old births of a switched site between its probes
} PretenureParams;

// The rule --pretenure uses (docs/design.md gives the figures and why).
extern const PretenureParams PRETENURE_DEFAULTS;

// log P(X >= k) for X ~ Binomial(n, p), 0 < p < 1: 0 for k = 0, -INFINITY
// for k > n. Exact up to rounding: the logarithm is off by about
// 1e-16 n log n (lgamma's rounding; 2e-7 at n = 10^7), far below what the
// tests' levels need; costs about the square root of n's terms, or fewer.
double binomial_log_upper_tail(uint64_t n, uint64_t k, double p);
// The exact one-sided lower confidence bound of a share from k successes in
// n trials, at level 1 - a (Clopper and Pearson): the p with
// P(Bin(n, p) >= k) = a; 0 when k = 0. Bisection to 1e-9.
double share_lower_bound(uint64_t n, uint64_t k, double a);

// The switch's sequential test, one site's state.
typedef struct ShareTest {
  uint64_t n, k;           // resolved trials, successes
  uint64_t next_check;     // n at the next checkpoint
  uint32_t checks;         // checkpoints passed without switching (j)
} ShareTest;

void share_test_init(ShareTest *t, const PretenureParams *p);
// The level of checkpoint j: alpha / ((j + 1)(j + 2)).
double share_test_alpha(const PretenureParams *p, uint32_t j);
// One more resolved trial. True when this trial completes a checkpoint whose
// test passes; *bound (may be NULL) then holds the lower bound that decided.
bool share_test_add(ShareTest *t, bool success, const PretenureParams *p, double *bound);

// The undo's test of a closed window of `births` resolved births, `deaths`
// of them dead at their first major cycle: true to undo, with the lower
// bound of the death share in *bound (may be NULL). False for a window
// smaller than undo_window.
bool undo_window_test(uint64_t births, uint64_t deaths, const PretenureParams *p, double *bound);

#endif
