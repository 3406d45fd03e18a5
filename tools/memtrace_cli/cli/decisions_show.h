// decisions_show.h - how commands show the runtime's pretenuring decisions
// (the decision records of the snapshot file beside a trace; their index by
// site: analysis/decisions.h): `lifetimes` marks the rows of the sites
// switched, `info` lists them all.
//
// Contract
//   * The decisions are read only from a snapshot file that is the trace's
//     (snapshots.h: not DAMAGED, so its pid and start time are the trace's):
//     decisions_reader gives NULL otherwise, and then nothing is shown.
//   * Times are said since the trace's start (`start_us`, the trace info's
//     start time); a decision stamped before it (a damaged clock) says so
//     rather than printing a wrapped figure.
//   * Names are printed as the trace's locations are (output.h, out_site).
#ifndef MINNOW_MEMTRACE_DECISIONS_SHOW_H
#define MINNOW_MEMTRACE_DECISIONS_SHOW_H

#include <stdio.h>

#include "../analysis/decisions.h"
#include "../analysis/output.h"
#include "../analysis/snapshots.h"

// The reader whose decisions belong to the trace, or NULL (no file, a
// damaged one, another trace's).
const SnapshotReader *decisions_reader(const Snapshots *s);

// The decision's site: "function file:line:first-last".
void decision_print_site(FILE *f, const SnapshotDecision *x);

// What it did and on what evidence, one line without its site and without
// a newline: "switched old at 22.5 ms, after 796 of the trace's
// allocations: of the 64 blocks born young the feedback sampled, 64 were
// promoted (share >= 0.8635 > 0.85)"; for an undo "undone, young again at
// ...: of the 620 blocks born old the feedback sampled, 620 died at their
// first major cycle (...)". The evidence is the feedback's own samples
// (--pretenure-rate), not the trace's.
void decision_print(FILE *f, const SnapshotDecision *x, uint64_t start_us);

// One decision as a JSON object (key NULL inside an array): action ("old",
// "young"), time_s (null before the trace's start), alloc_count, site
// {function, file, line, first_col, last_col}, sampled, counted, bound,
// threshold (fractions).
void decision_json(Json *j, const char *key, const SnapshotDecision *x, uint64_t start_us);

#endif
