// kept.h - what the end state keeps, and the leak verdicts of `memtrace
// leaks`, `report` and `top --live --by holder`, from a trace and its end
// state (end_state.h).
//
// Survivors are the sampled blocks without a collect event: with an end
// state present, exactly the sampled blocks reachable when the run ended.
//
// Holders. A survivor's path is cut (trace/snapshot_holder.h) after its first container
// hop (a run of list cells, an array element, a Hashtbl value, key or
// entry); a path without one is cut before its last hop. The root and hops
// up to the cut, with counts, array indices and frame lines erased, are the
// holder: every block kept by one list, array or table, or one field,
// reads the same. A survivor without a path (no paths in the file) has the
// holder "unknown" of its site. Under a holder, a site's depth is how
// directly it holds the site's blocks (the fewest, over its blocks): 0 the
// container's own cells (list cells, Hashtbl entries), 1 its elements (a
// list element, an array element, a Hashtbl key or value), each further hop
// run one more (the data the elements hold).
//
// Verdict. The run is cut into KEPT_WINDOWS = 5 windows of equal allocation
// (by the allocation clock at each survivor's birth). The last window is
// not judged (a bounded cache, a queue's tail, the last request's data live
// there); the four others make two halves, the first two fifths and the
// next two. A holder leaks when it keeps blocks born in each half: what it
// keeps was allocated all over the run. None born in the second half: built
// early, then kept; none in the first: a tail. With fewer than
// KEPT_MIN_SAMPLES survivor samples a holder missing a half cannot be
// judged. KEPT_MIN_SAMPLES = 10: the survivors of a holder that keeps a
// fixed share of the allocation are spread evenly over the run, so with n
// samples a given half (2/5 of the run) is empty with probability
// e^(-2n/5), one of the two with at most 2 e^(-2n/5) <= 5 % for n >= 10 (a
// Poisson count; the sampling of words is one). So a trace of N samples
// shows for sure only leaks that keep at least 10 / N of what the run
// allocates (kept_floor); one of fewer than KEPT_MIN_TRACE_SAMPLES = 5 x 10
// samples would miss any leak keeping under a fifth: it cannot be judged at
// all. (bench/LEAKS.md measures the rule on bench/leaks.)
//
// Figures: kept bytes = survivor samples x word bytes / rate, with Garwood's
// exact Poisson 95 % interval (stats.h); the kept share = survivor samples /
// samples its sites allocated, with the exact binomial (Clopper-Pearson)
// 95 % interval.
#ifndef MINNOW_MEMTRACE_KEPT_H
#define MINNOW_MEMTRACE_KEPT_H

#include <stdbool.h>
#include <stdint.h>

#include "end_state.h"
#include "profile.h"
#include "stats.h"

enum { KEPT_WINDOWS = 5, KEPT_MIN_SAMPLES = 10, KEPT_MIN_TRACE_SAMPLES = 50 };

typedef enum KeptVerdict {
  KEPT_LEAK,        // survivors born in both judged halves
  KEPT_EARLY,       // none in the second half: built early, then kept
  KEPT_LATE,        // none in the first half: a tail (bounded cache, queue end, last work)
  KEPT_TOO_FEW,     // a half empty, fewer than KEPT_MIN_SAMPLES samples: cannot judge
} KeptVerdict;

typedef struct KeptSite {
  ProfileSiteId site;
  ProfileStackId stack;          // its stack with the most survivor samples here
  uint64_t blocks, samples;      // survivors under the holder
  uint32_t depth;                // fewest hop runs below the holder's cut
  const RetainPath *example;     // a path of that depth (NULL without paths)
  uint64_t windows[KEPT_WINDOWS];
} KeptSite;

typedef struct KeptHolder {
  uint64_t key;
  const RetainPath *example;     // a survivor's path (NULL: holder unknown)
  uint32_t cut;                  // its first `cut` hops are the holder
  ProfileSiteId unknown_site;    // example NULL: the site whose survivors these are
  uint64_t blocks, samples;      // survivors
  uint64_t allocated_samples;    // samples its sites allocated over the run
  uint64_t windows[KEPT_WINDOWS];
  KeptVerdict verdict;
  KeptSite *sites;               // most directly held first (depth, then samples)
  uint32_t n_sites;
} KeptHolder;

typedef enum KeptJudgement { KEPT_JUDGED, KEPT_CANNOT_JUDGE } KeptJudgement;

typedef struct KeptAnalysis {
  KeptJudgement judgement;
  char why[END_STATE_TEXT], fix[END_STATE_TEXT];   // CANNOT_JUDGE: why, what would let it
  KeptHolder *holders;           // leaks first, then cannot judge, then the rest; by samples
  uint32_t n, n_leaking, n_too_few;
  uint64_t samples;              // all survivor samples
} KeptAnalysis;

// The analysis of a loaded profile and its end state (any status: without
// a present one the judgement is CANNOT_JUDGE, holders empty).
void kept_analyse(const Profile *p, const EndState *es, KeptAnalysis *out);
void kept_analysis_free(KeptAnalysis *a);

// Estimated bytes kept (samples x sample bytes) and the intervals.
double kept_bytes(const Profile *p, uint64_t samples);
Interval kept_bytes_interval(const Profile *p, uint64_t samples);
Interval kept_share_interval(uint64_t k, uint64_t n);   // Clopper-Pearson, 95 %

// A sampling rate that would give `want` samples where `have` were had at
// `rate` (rounded up to 1, 2 or 5 x a power of ten, at most 1).
double kept_rate_for(double rate, uint64_t have, uint64_t want);

// The smallest share of the allocation a leak must keep for this trace to
// show it (KEPT_MIN_SAMPLES / samples).
double kept_floor(const Profile *p);

// "leak", "built early", "a tail", "too few samples".
const char *kept_verdict_name(KeptVerdict v);

#endif
