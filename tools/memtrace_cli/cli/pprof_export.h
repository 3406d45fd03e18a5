// pprof_export.h - traces to one gzipped pprof profile: what `memtrace
// pprof` (one trace) and `memtrace merge` (several) write.
//
// The profile: sample types alloc_objects (count), alloc_space (bytes),
// inuse_objects (count), inuse_space (bytes), alloc_space shown by default;
// one sample per distinct callstack, its locations leaf first (an empty
// callstack: a location "(no backtrace)"), one location per distinct frame
// (its inlined locations as pprof lines, innermost first), functions with their file names, one mapping (the first trace's
// executable), period = bytes one sample stands for (of the first trace),
// time = the earliest start, duration to the latest last event, a comment
// line per trace (file, rate, samples, and PARTIAL when damaged).
// Recursion in a sample's callers is folded unless whole_stacks
// (collapse.h): a run is one location, its function named "f ×N" or
// "(f → g) ×N" (file and line of its first frame); the allocating frame is
// always a location of its own.
//
// Values are unbiased per trace, then summed over traces (several rates are
// fine): space = samples × word bytes / λ; objects = Σ 1 / P(a block of
// its size is sampled) (stats_block_weight); inuse = blocks neither
// collected at the trace's end. Callstacks and frames of different traces
// are matched by their locations (the profile's stable keys), not their
// codes. Memory: the distinct callstacks and frames of all traces, and one
// trace's profile at a time.
#ifndef MINNOW_PPROF_EXPORT_H
#define MINNOW_PPROF_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "kept_load.h"
#include "tool.h"

// The output of -o: *out NULL becomes "-" (stdout). False (after printing
// why on stderr) when that is stdout and stdout is a terminal: gzip data is
// not for a screen.
bool pprof_export_output_ok(const ToolUsage *usage, const char **out);

// Reads paths[0 .. n) in turn and writes the profile to `out` ("-":
// stdout). Returns the exit status: 0; 1 when a trace could not be read
// (nothing written then) or was damaged (the profile holds the events
// before the damage, marked PARTIAL in its comments), or writing failed.
// Messages go to stderr prefixed with "memtrace NAME".
int pprof_export(const ToolUsage *usage, const char *const *paths, size_t n, const char *out, bool whole_stacks);

// A snapshot's profile (pprof --at): the trace `path` with its snapshots
// (`retain`: --retain, or NULL), the one `pick` names; sample types
// inuse_objects and inuse_space (shown by default) only: per block it lists,
// its samples' bytes and the blocks it stands for (as its stack's sampled
// blocks do on average), one sample per callstack and holder, the holder's
// text (trace/snapshot_holder.h) the label "holder"; a comment names the
// snapshot; time = its time. Exit status 1 when no snapshot is picked (why
// on stderr, nothing written), the file is damaged, or writing failed.
int pprof_export_snapshot(const ToolUsage *usage, const char *path, const char *retain, const SnapPick *pick,
                          const char *out, bool whole_stacks);

#endif
