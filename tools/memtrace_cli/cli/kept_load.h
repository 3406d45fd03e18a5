// kept_load.h - what the commands that read snapshots share (leaks, paths,
// report, top --by holder, pprof --at, diff --by holder; info for its
// listing): the --retain and --at options, loading a trace with its
// snapshots, picking one, and how they are announced (text lines, a JSON
// member, the exit status of a damaged file).
#ifndef MINNOW_MEMTRACE_KEPT_LOAD_H
#define MINNOW_MEMTRACE_KEPT_LOAD_H

#include <stdio.h>

#include "../analysis/kept.h"
#include "../analysis/output.h"
#include "../analysis/snapshots.h"
#include "load.h"

// --retain FILE: the snapshot file to read instead of TRACE.retain.
#define KEPT_OPTION_RETAIN(target) {"--retain", "FILE", (target), NULL, NULL, 0, 0}
// --stdlib: sites at the allocating frame, stdlib frames included.
#define KEPT_OPTION_STDLIB(target) {"--stdlib", NULL, (target), NULL, NULL, 0, 0}

// A snapshot as --at names it: its number ("3"), "end" (the end state), or
// a time since the trace's start ("1.5s", "250ms", "800us", "2min", "P%" of
// the trace's duration): the last usable snapshot taken at or before it.
typedef struct SnapPick {
  bool set, end, by_time;
  uint64_t number;
  AtTime at;
} SnapPick;

// Parses --at's text into a SnapPick (false: not a number, "end" or a time).
bool kept_parse_pick(const char *text, SnapPick *out);
ToolOptionParse kept_parse_at;
#define KEPT_OPTION_AT(target) \
  {"--at", "N", (target), kept_parse_at, "a snapshot: its number, 'end', or a time (1.5s, 250ms, 2min, P%)", 0, 0}

// The snapshot `pick` names (not set: snapshots_default), or -1 with why in
// err (no such snapshot, not usable, none that early).
int64_t kept_pick(const Snapshots *s, const Profile *p, const SnapPick *pick, char *err, size_t err_len);

// load_trace with the snapshots watched, then snapshots_load. Returns as
// load_trace (the snapshots' status is in *s whatever it is); on failure
// nothing is left to free. After the answer, kept_close.
int kept_load(const ToolUsage *usage, const char *path, const char *retain, ProfileOptions *opts, const AtTime *at,
              Loaded *l, Snapshots *s);

// "snapshots: FILE: N whole (...), the end state ..." and, when k >= 0,
// "snapshot K (trigger, at T): ..."; or why there is none.
void kept_print_snapshots(FILE *f, const Snapshots *s, int64_t k);
// One line on snapshot k: "snapshot 3 (period, at 12.5 s): 412 sampled
// blocks alive, 412 paths; collection of 57001 blocks, pause 6.0 ms".
void kept_print_snapshot(FILE *f, const Snapshots *s, uint32_t k);

// Member "snapshots": {status, file, why, fix, tail, end_state, shown,
// list: [each snapshot's figures]}.
void kept_json_snapshots(Json *j, const Snapshots *s, int64_t shown);

// After the answer to what kept_load loaded: a damaged snapshot file, then
// a damaged or truncated trace, said on stderr (load_status for the trace);
// both freed. Returns 1 if either was, else 0.
int kept_close(const ToolUsage *usage, Loaded *l, Snapshots *s);

#endif
