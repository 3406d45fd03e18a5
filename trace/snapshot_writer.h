// snapshot_writer.h - appends snapshots to the file beside a trace
// (snapshot_file.h; the bytes in docs/trace-format.md, section 12).
//
// Contract:
//  * snapshot_writer_open creates the file afresh and writes its header; a
//    snapshot is then snapshot_writer_begin, any number of
//    snapshot_writer_path, snapshot_writer_end. Snapshots follow each other;
//    they never nest.
//  * Records reach the file whole, each written by one write (retried on a
//    short write), in order; a snapshot's end record last. What is written
//    stays readable whatever happens to the process afterwards.
//  * Memory is bounded: the records not yet written (flushed at 64 KiB)
//    and the string table (each distinct name once a file), not the paths.
//  * The first failure (a write error, memory) is kept: every later call
//    returns false and writes nothing; snapshot_writer_error says what.
//  * A decision record (snapshot_writer_decision) may be given at any time:
//    between snapshots it is written at once; during one (the runtime
//    decides inside collections, and a snapshot is one) it is held and
//    written right after the snapshot's end record, since the format puts
//    none inside a snapshot.
#ifndef MINNOW_TRACE_SNAPSHOT_WRITER_H
#define MINNOW_TRACE_SNAPSHOT_WRITER_H

#include "snapshot_file.h"

typedef struct SnapshotWriter SnapshotWriter;

// Creates `path` exclusively (O_EXCL: the caller removes a stale file first)
// and writes the header naming the trace (its pid and start time). NULL with
// a message in err on failure.
SnapshotWriter *snapshot_writer_open(const char *path, uint64_t pid, uint64_t start_time_us, char *err,
                                     size_t err_len);
// Begins the next snapshot (numbered from 0): what took it, when (µs since
// the epoch), the trace's allocations so far.
bool snapshot_writer_begin(SnapshotWriter *w, RetainTrigger trigger, uint64_t time_us, uint64_t alloc_count);
// Adds one path to the snapshot begun (its strings are copied into the table
// the first time they appear; hops past RETAIN_MAX_HOPS are dropped).
bool snapshot_writer_path(SnapshotWriter *w, const RetainPath *path);
// Ends the snapshot: its remaining paths, then its end record; all written.
bool snapshot_writer_end(SnapshotWriter *w, const RetainSnapshotEnd *end);
// A pretenuring decision about an allocation site (record kind 5,
// docs/trace-format.md 12.1): snapshot_reader gives it back as a
// SnapshotDecision.
typedef struct RetainDecision {
  uint64_t time_us;          // µs since the epoch, the trace's clock
  uint64_t alloc_count;      // allocations the trace held then
  uint32_t action;           // 0: the site allocates young again; 1: old; 2: young again on a probe
  const char *function, *file;
  uint64_t line, first_col, last_col;
  uint64_t sampled;          // evidence: sampled blocks
  uint64_t counted;          // of them promoted (action 1) or dead at their first major cycle (action 0, or at the minor collection that ends a probe (action 2)
  uint64_t bound_millionths, threshold_millionths;
} RetainDecision;
// Appends a decision record (its names interned as paths' are), at once or
// after the snapshot being taken (contract above).
bool snapshot_writer_decision(SnapshotWriter *w, const RetainDecision *d);
// Decision records written (held ones not counted until written).
uint64_t snapshot_writer_decisions(const SnapshotWriter *w);
// The first failure's message, "" if none.
const char *snapshot_writer_error(const SnapshotWriter *w);
// Paths added to the snapshot begun, or to the last one ended.
uint64_t snapshot_writer_path_count(const SnapshotWriter *w);
// Snapshots whole in the file (ended).
uint64_t snapshot_writer_snapshots(const SnapshotWriter *w);
// Whether the end state (a snapshot of trigger RETAIN_TRIGGER_END) was begun.
bool snapshot_writer_has_end_state(const SnapshotWriter *w);
// Closes the file; a snapshot begun and not ended stays unfinished in it.
void snapshot_writer_close(SnapshotWriter *w);

#endif
