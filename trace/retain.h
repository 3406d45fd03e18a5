// retain.h - the end-state file that travels beside a trace: "T.ctf.retain"
// for the trace "T.ctf" (docs/trace-format.md, "The end state"). It records
// that the run ended with a full major collection, so that every sampled
// block without a collect event in the trace was reachable at the end, and,
// for each such block, one path from a GC root to it: the root, then each
// hop by what it is, runs of the same hop collapsed ("list cell x18342").
// memtrace's own tools never see it: the trace itself is unchanged.
//
// Like the rest of trace/, it knows nothing of the VM: roots and hops arrive
// already named. The writer keeps everything in memory and writes the file
// at the end (to a temporary name, then renamed: a reader sees a whole file
// or none). trace/snapshot_reader.h reads it (as one whole end state).
#ifndef MINNOW_TRACE_RETAIN_H
#define MINNOW_TRACE_RETAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot_file.h"

// Header flags (version 1: RETAIN_FINAL_GC is RETAIN_COLLECTED).
enum { RETAIN_FINAL_GC = RETAIN_COLLECTED };

typedef struct RetainHeader {
  uint64_t pid;              // the trace's pid and start time: which trace this is
  uint64_t start_time_us;
  uint64_t alloc_count;      // allocations the trace holds (ids 0 .. alloc_count-1)
  uint64_t end_time_us;      // when the end state was taken
  uint32_t flags;
  uint64_t live_samples;     // tracked blocks alive at the end (one path each when RETAIN_PATHS)
  uint64_t reachable_blocks; // blocks and words the walk reached
  uint64_t reachable_words;
  uint64_t gc_us, walk_us;   // the final collection's and the walk's durations
  const char *reason;        // why no end state or no paths ("" when none)
} RetainHeader;

// ---------------------------------------------------------------------------
// Writing
typedef struct RetainWriter RetainWriter;
RetainWriter *retain_writer_new(void);
// Copies the path (its strings are interned). False if memory is short.
bool retain_writer_add(RetainWriter *w, const RetainPath *path);
// Writes the file at `path` (through `path`.tmp, then renamed) and frees the
// writer. False with a message in err on failure (nothing left at `path`).
bool retain_writer_finish(RetainWriter *w, const RetainHeader *header, const char *path, char *err, size_t err_len);
void retain_writer_free(RetainWriter *w);

#endif
