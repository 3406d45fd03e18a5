// kept.h - what a snapshot keeps, and the leak verdicts of `memtrace
// leaks`, `report`, `paths --by holder` and `top --live --by holder`, from a
// trace and its snapshots (snapshots.h).
//
// Holders. A block's path is cut after its first container hop
// (trace/snapshot_holder.h); the root and hops up to the cut, erased, are
// its holder: every block kept by one list, array or table, or one field,
// reads the same, in every snapshot. A block without a path (an end state
// whose paths are not all there) has the holder "unknown" of its site.
//
// Sites, by what the user can change. A block's site is the innermost frame
// of its callstack outside the standard library (a file under "stdlib/"):
// Hashtbl.resize's bucket arrays count as the user's Hashtbl.replace call
// that grew the table. With `stdlib` (--stdlib) the allocating frame
// itself. Under a holder, a site's depth is where most of its bytes are
// held (the depth below the holder's cut with the most samples; the
// shallower on a tie): 0 the container's own cells, 1 its elements, 2 and
// more what they hold. Sites are listed by depth, then bytes: the line that
// keeps the data comes before the data.
//
// Verdicts. Two rules; the analysis says which it used (KeptRule).
//
// The series (KEPT_RULE_SERIES), with three or more usable snapshots with
// every path (S_0 .. S_L, the one analysed last; a = floor(L / 2); two
// snapshots with no allocation between them count once): a holder leaks
// when
//   (P) it keeps at S_L blocks born between S_0 and S_a (the three-snapshot
//       rule of Chrome DevTools and MemLab: born between early snapshots,
//       still kept at a later one), and
//   (G) what it keeps grew from S_a to S_L: with X its sampled blocks at
//       S_L not at S_a and Y its sampled blocks at S_a not at S_L,
//       p = P(Binomial(X + Y, 1/2) >= X) <= KEPT_ALPHA / m, m the holders
//       that meet (P) or kept something at every snapshot (those (S) below
//       may name; Bonferroni over both), and
//   (G') it still grew at the last step: X' > Y' for S_{L-1} -> S_L.
// (P) is what keeps a holder emptied now and then from (G): a table
// rebuilt each "hour", a queue drained, keeps something at every snapshot
// and may be low at S_a (just emptied) and high at S_L (filled again), but
// when it is emptied at least once in every stretch as long as S_L - S_a
// (three snapshots: their spacing) nothing born before S_a is kept at S_L.
// (Until 2026-11-29 a holder kept at every snapshot met (P) too, for a
// Buffer's storage, which (S) now judges: that named bench/servers'
// hourly_rebuild and queue_drain in 3 of 40 runs at 1e-3, and a simulated
// emptied holder in 14 % of runs.) A leak gives up little for it: (G) at
// p <= 1 % / m needs X >= 7 new blocks with none let go, and of a steady
// leak's blocks born between S_0 and S_L about half are born before S_a.
// Error rate: for a holder whose blocks come and go at a steady rate (its
// kept bytes neither grow nor shrink on average), X and Y are independent
// Poisson counts of equal mean (sampled blocks of disjoint sets: those born
// after S_a and kept, those let go; whatever their sizes: counting samples
// instead would not be Poisson for blocks larger than the sampling
// interval, whose samples come together), so
// given X + Y, X is Binomial(X + Y, 1/2): (G) holds with probability at
// most KEPT_ALPHA / m, and over the m holders of a run at most KEPT_ALPHA =
// 1 % that any is named (tests/unit/test_tool_kept.c simulates it, with a
// holder emptied at once every 0.05-0.4 of the run beside the churns: 6 of
// 3000 runs name any). A
// holder that meets (P) and grew, on too few samples for (G) to be possible
// (2^-(X+Y) > KEPT_ALPHA / m), cannot be judged ("too few samples").
// A Buffer's storage is one block copied into a larger one as it grows,
// so X and Y are 1 and 1 when it grew: a holder that kept something at
// every snapshot also leaks when
//   (S) its Buffer storage of most samples at S_L (reached through a
//       Buffer-storage hop) is a later copy of its storage at S_0, and
//       its storage at each snapshot between is one of them or a copy
//       between: the chain of copies from the last (snapshots_chain_through:
//       each an earlier, smaller block of the same stack, collected after
//       the next was made) goes through every one and has KEPT_CHAIN_MIN
//       links or more; and it is significantly larger than the one at S_0:
//       with x_L and x_0 their samples, P(Binomial(x_L + x_0, 1/2) >= x_L)
//       <= KEPT_ALPHA / m.
// From S_0 and not S_a: a storage doubling at a steady rate of filling is
// copied at times in a geometric progression, so between S_a and S_L there
// may be none; between S_0 and S_L (three snapshots evenly spaced, the
// last at least 3/2 of the time since the buffer was made) there is one.
// A copy is at least twice as large (x_L of at least twice x_0's mean); a
// Buffer made anew now and then and
// kept until the next (a report rebuilt each hour) may pass for a chain
// (an old storage is collected late, after the new one's first copies), but
// its storages are alike in size: samples of equal means, and the test
// names such a holder with probability at most KEPT_ALPHA / m.
// Otherwise: "built early" (nothing new kept since S_a), "steady" (new
// blocks kept, as many let go), "a tail" (nothing of the early snapshots
// kept).
//
// The end state alone (KEPT_RULE_END_STATE), with fewer snapshots: each
// kept block is placed in the run by the allocation clock at its birth. A
// holder leaks when it keeps sampled blocks born in the third quarter of
// the run and in the last, and not significantly fewer than 2/3 as many in
// the third as in the last (P(Binomial(n3 + n4, 2/5) <= n3) >= KEPT_ALPHA,
// n3 and n4 counts of sampled blocks: a block sampled many times counts
// once; the blocks counted are the data the holder keeps and a list's
// cells, not a table's cells and bucket arrays, which Hashtbl makes anew as
// it grows and as values are replaced): blocks born steadily over the later
// part of the run, whenever the leak began before 7/12 of it (then n3 is
// at least 2/3 of n4 on average). None born in the last quarter: "built early"
// (a table built once, however long the building took); significantly
// fewer than 2/3 in the third: "a tail" (a churn's survivors crowd the end
// of the run: a bounded cache, a queue, sessions that expire, whose lives
// are a tenth of the run or shorter: named in under 2 % of runs). A steady leak with n kept
// samples misses one of the two quarters with probability at most
// 2 e^(-n/4) (a Poisson count), under 5 % for n >= KEPT_MIN_SAMPLES = 15,
// and is taken for a tail with probability at most KEPT_ALPHA = 1 %
// (tests/unit/test_tool_kept.c simulates both); a holder of fewer samples
// that does not meet
// the rule cannot be judged ("too few samples").
// Born at once: a holder whose KEPT_BURST_BLOCKS = 8 or more such blocks
// (born in the second half of the run) were all born within KEPT_BURST_SPAN
// = a tenth of the run does not leak ("built early", however late: a
// working set replaced whole at 3/4 of the run straddles the quarters). A
// steady leak's blocks, born uniformly over the last 5/12 of the run or
// more, fall within a tenth with probability k r^(k-1) - (k-1) r^k,
// r = 0.1 / (5/12): at most 0.03 % for k >= 8.
// A Buffer's storage, which the runtime copies into a larger block as it
// grows, keeps one block, its last copy, born at its last growth: the rule
// above cannot see it. Its earlier copies are in the trace, each collected
// after the next was made (snapshots_chain): a holder whose Buffer storage
// of most samples (reached through a Buffer-storage hop, the path's last)
// ends a chain of KEPT_CHAIN_MIN = 3 sampled copies or more, and was born in
// the second half of the run, leaks too (a storage that doubles as it fills
// at a steady rate made its last copy after half the time it has been
// filling; one built early and left made its last copy early). Only a
// Buffer's storage: a string rebuilt by `++` until the run ends, or a
// table's bucket array (resized as it grows, a table built once), also
// leave chains of ever larger copies of one site, and are not one storage
// that grows (examples/string_builder.mn, bench word_count: trace_tools).
// A trace of fewer than KEPT_MIN_TRACE_SAMPLES = 50 samples cannot be
// judged at all.
//
// Figures: kept bytes = samples x word bytes / rate, with Garwood's exact
// Poisson 95 % interval (stats.h); the kept share = kept samples / samples
// its sites allocated, with the exact binomial (Clopper-Pearson) 95 %
// interval.
#ifndef MINNOW_MEMTRACE_KEPT_H
#define MINNOW_MEMTRACE_KEPT_H

#include <stdbool.h>
#include <stdint.h>

#include "output.h"
#include "profile.h"
#include "snapshots.h"
#include "stats.h"

#define KEPT_BURST_SPAN 0.1   // of the run: born at once (the end-state rule)
enum { KEPT_WINDOWS = 10, KEPT_MIN_SAMPLES = 15, KEPT_MIN_TRACE_SAMPLES = 50, KEPT_SERIES_MIN = 3, KEPT_CHAIN_MIN = 3, KEPT_BURST_BLOCKS = 8 };
#define KEPT_ALPHA 0.01

typedef enum KeptVerdict {
  KEPT_LEAK,        // grows (series) / births steady to the end (end state)
  KEPT_TOO_FEW,     // cannot be judged: too few samples
  KEPT_EARLY,       // "built early": nothing new kept
  KEPT_STEADY,      // series: new blocks kept, as many let go
  KEPT_LATE,        // "a tail": nothing kept from early on
} KeptVerdict;

typedef enum KeptRule { KEPT_RULE_SERIES, KEPT_RULE_END_STATE, KEPT_RULE_NONE } KeptRule;

typedef struct KeptSite {
  const TraceReaderLocation *loc;  // the user's line (header); NULL: a code without location
  uint64_t code;                   // loc NULL: the frame's code
  ProfileSiteId site;              // the allocating site (its innermost frame)
  ProfileStackId stack;            // its stack with the most samples here
  uint64_t key;
  uint64_t blocks, samples;        // kept under the holder
  uint32_t depth;                  // where most of its samples are held
  const RetainPath *example;       // a path of that depth (NULL without paths)
  uint64_t by_depth[4];            // samples at depth 0, 1, 2, 3 or more
} KeptSite;

typedef struct KeptHolder {
  uint64_t key;
  const RetainPath *example;     // a kept block's path (NULL: holder unknown)
  uint32_t cut;                  // its first `cut` hops are the holder
  ProfileSiteId unknown_site;    // example NULL: the site whose blocks these are
  uint64_t blocks, samples;      // kept at the snapshot analysed
  uint64_t allocated_samples;    // samples its sites allocated over the run
  uint64_t windows[KEPT_WINDOWS];   // kept samples by birth window
  uint64_t third_quarter, last_quarter;   // end-state rule: kept sampled blocks born in [1/2, 3/4), [3/4, 1]
  double first_late_at, last_late_at;     // the first and last births of those, as fractions of the run
  uint32_t chain;                // end-state rule: links of the chain ending at its block of most samples
  double chain_at;               // that block's birth, as a fraction of the run
  // the series rule: blocks (not samples)
  uint64_t persist;              // (P): blocks kept at S_L, born between S_0 and S_a
  bool always;                   // (P) too: it kept something at every snapshot of the series
  uint32_t storage_links;        // (S): links of the chain from its Buffer storage at S_L back through the one at S_0 (0: none)
  double storage_p;              // (S): the test that the one at S_L is larger than at S_0 (1 when not computed)
  uint64_t grew, let_go;         // X, Y from S_a to S_L (sampled blocks)
  uint64_t grew_last, let_go_last;   // X', Y' from S_{L-1} to S_L (sampled blocks)
  double p;                      // series: (G)'s p-value; end state: the rise's (1 when not computed)
  uint64_t *series;              // samples kept at each snapshot of the series (n_series)
  KeptVerdict verdict;
  KeptSite *sites;               // by depth, then samples
  uint32_t n_sites;
} KeptHolder;

typedef enum KeptJudgement { KEPT_JUDGED, KEPT_CANNOT_JUDGE } KeptJudgement;

typedef struct KeptOptions {
  bool stdlib;                   // sites at the allocating frame, stdlib frames included
} KeptOptions;

typedef struct KeptAnalysis {
  KeptJudgement judgement;
  char why[SNAPSHOTS_TEXT], fix[SNAPSHOTS_TEXT];   // CANNOT_JUDGE: why, what would let it
  KeptRule rule;
  int64_t snapshot;              // the snapshot analysed (index in the file), -1 if none
  uint32_t *series;              // the snapshots of the series (indices), the last the one analysed
  uint32_t n_series;
  uint32_t series_a;             // position of S_a in the series
  double alpha;                  // (G)'s threshold per holder: KEPT_ALPHA / m
  uint32_t eligible;             // m
  KeptHolder *holders;           // leaks first, then cannot judge, then the rest; by samples
  uint32_t n, n_leaking, n_too_few;
  uint64_t samples;              // all kept samples
  uint64_t no_path;              // listed blocks short of paths (live samples - paths)
} KeptAnalysis;

// The analysis of snapshot k (-1: snapshots_default) of a loaded profile
// and its snapshots (any status: without a usable snapshot the judgement is
// CANNOT_JUDGE, holders empty). The verdict rule uses the usable snapshots
// up to k.
void kept_analyse(const Profile *p, const Snapshots *s, int64_t k, const KeptOptions *o, KeptAnalysis *out);
void kept_analysis_free(KeptAnalysis *a);
// Reorders the holders most kept first, whatever their verdicts.
void kept_sort_by_kept(KeptAnalysis *a);

// Estimated bytes kept (samples x sample bytes) and the intervals.
double kept_bytes(const Profile *p, uint64_t samples);
Interval kept_bytes_interval(const Profile *p, uint64_t samples);
Interval kept_share_interval(uint64_t k, uint64_t n);   // Clopper-Pearson, 95 %

// A sampling rate that would give `want` samples where `have` were had at
// `rate` (rounded up to 1, 2 or 5 x a power of ten, at most 1).
double kept_rate_for(double rate, uint64_t have, uint64_t want);

// The smallest share of the allocation a leak must keep for this trace to
// show it for sure by the end-state rule (KEPT_MIN_SAMPLES / samples).
double kept_floor(const Profile *p);

// One holder's verdict by the series rule from its counts (persist, always,
// grew, let_go, grew_last, let_go_last; sets p), `alpha` the threshold per
// holder (KEPT_ALPHA / m); and by the end-state rule (third_quarter,
// last_quarter, samples; sets p). The analysis applies them to every holder;
// tests/unit/test_tool_kept.c simulates them.
KeptVerdict kept_series_verdict(KeptHolder *h, double alpha);
KeptVerdict kept_end_state_verdict(KeptHolder *h);

// P(Binomial(n, 1/2) >= x): (G)'s p-value.
double kept_growth_p(uint64_t x, uint64_t n);

// "leak", "too few samples", "built early", "steady", "a tail".
const char *kept_verdict_name(KeptVerdict v);

// The site's line as text: "function file:line:start-end" (and, when the
// allocating frame is another, " (through FUNCTION)"), or "$code".
void kept_site_text(FILE *f, const Profile *p, const KeptSite *s);
// Its JSON members: "site" (the text), "function", "file", "line",
// "start_col", "end_col", and "allocating_site" (the innermost frame's
// fields) when the two differ.
void kept_site_json(Json *j, const Profile *p, const KeptSite *s);

#endif
