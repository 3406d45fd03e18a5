// kept.h - what the end state keeps, and the leak verdicts of `memtrace
// leaks`, `report` and `top --live --by holder`, from a trace and its end
// state (end_state.h).
//
// Survivors are the sampled blocks without a collect event: with an end
// state present, exactly the sampled blocks reachable when the run ended.
//
// Holders. A survivor's path (retain.h) is cut after its first container
// hop (a run of list cells, an array element, a Hashtbl value, key or
// entry); a path without one is cut before its last hop. The root and hops
// up to the cut, with counts, array indices and frame lines erased, are the
// holder: every block kept by one list, array or table, or one field,
// reads the same. A survivor without a path (no paths in the file) has the
// holder "unknown" of its site. Under a holder, a site's depth is the
// fewest hop runs from the cut to one of its blocks: 0 the container's own
// cells, 1 its elements, 2 and more the data they hold.
//
// Verdict. The run is cut into KEPT_WINDOWS windows of equal allocation (by
// the allocation clock at each survivor's birth). A holder leaks when its
// survivors were born in every window but the last: what it keeps grows all
// over the run. A structure built early (survivors from the first windows
// only), a bounded cache or a queue's tail (from the last windows only),
// or anything else missing a window is not a leak, once it has at least
// KEPT_MIN_SAMPLES survivor samples; with fewer it cannot be judged.
// KEPT_MIN_SAMPLES = 22: survivors of a holder that keeps a fixed share of
// the allocation are spread evenly over the windows, so with n samples a
// given window is empty with probability about e^(-n/5), and one of the
// four judged windows with at most 4 e^(-n/5) <= 5 % for n >= 22. So a
// trace of N samples shows for sure only leaks that keep at least 22 / N of
// what the run allocates (kept_floor); one of fewer than
// KEPT_MIN_TRACE_SAMPLES = 5 x 22 samples would miss any leak keeping under
// a fifth: it cannot be judged at all.
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

enum { KEPT_WINDOWS = 5, KEPT_MIN_SAMPLES = 22, KEPT_MIN_TRACE_SAMPLES = 110 };

typedef enum KeptVerdict {
  KEPT_LEAK,        // survivors from every window but the last
  KEPT_EARLY,       // none from the later windows: built early, then kept
  KEPT_LATE,        // none from the first windows: a tail (bounded cache, queue end, last work)
  KEPT_GAPS,        // missing some window in between
  KEPT_TOO_FEW,     // missing a window with fewer than KEPT_MIN_SAMPLES samples: cannot judge
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

// "leak", "built early", "a tail", "gaps", "too few samples".
const char *kept_verdict_name(KeptVerdict v);

#endif
