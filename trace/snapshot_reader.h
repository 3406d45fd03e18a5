// snapshot_reader.h - reads the snapshot file beside a trace ("T.ctf.retain",
// docs/trace-format.md section 12): version 2 (a header, then records
// appended while the program runs) and version 1 (one end state, read as
// one whole snapshot). Knows nothing of the VM or of the trace.
//
// Contract
// 1. What it gives. The whole snapshots in file order (Snapshot: number,
//    trigger, time, alloc count, what its end record says, its paths by
//    increasing allocation id), the decision records (not tied to a
//    snapshot), and what it left out at the end of the file (SnapshotTail):
//    a record cut short by the end of the file, a snapshot begun and not
//    ended. Those two are what a growing file or a run killed mid-write
//    leaves: said, never an error.
// 2. Damage. Everything else 12.1 forbids - a bad magic or version, a
//    record length of 0 or past 16 MiB, a check that does not match, a kind
//    it does not know, a record whose fields do not fill it exactly, a
//    snapshot number out of order, records of a snapshot not begun, a begin
//    inside a snapshot, a decision inside one, a snapshot after the end
//    state, a string index not yet defined, an id not below the snapshot's
//    alloc count or twice in it, more paths than live samples, an end
//    record whose path count is not the paths given, flags that contradict
//    its paths, unknown triggers, root or hop kinds, a hop repeated 0
//    times, more than 256 hops, a string past 4,096 bytes or holding a NUL
//    - refuses the file: the message names the file and the byte offset of
//    the damaged record's field. (Version 1: the checks of its old reader,
//    at their offsets.) Nothing aborts or reads out of bounds on any input.
// 3. Memory follows the distinct paths, not snapshots x paths: a path (its
//    block's id, root and hops) is stored once however many snapshots list
//    it (successive snapshots repeat most of theirs), names once a file;
//    a snapshot costs 4 bytes per path it lists. A path is stored encoded
//    (its fields as varints: about a tenth of a RetainPath and its hops at
//    32 bytes each) plus 16 bytes (8 more once snapshot_path is used; the
//    table that finds equal paths is made for each read and dropped after
//    it); snapshot_path decodes a path on first ask and keeps what it made,
//    snapshot_path_view decodes into the caller's buffer and keeps nothing
//    (a reader of every path uses views). Records are read one at a
//    time (at most 16 MiB each), never the whole file; a version-1 file is
//    read whole (its layout has no records).
// 4. Growing files. snapshot_reader_open reads what the file holds;
//    snapshot_reader_update reads what was appended since, taking up a cut
//    record or an unfinished snapshot where it stopped. Snapshots already
//    read and their pointers stay valid: the arrays grow, nothing read is
//    moved (paths and names live in chunks). A file not yet holding its
//    header is "nothing yet" (SnapshotTail.header_missing), not an error.
// 5. Lifetimes: every pointer returned (paths, names, reasons) lives until
//    snapshot_reader_close. Not thread-safe.
#ifndef MINNOW_TRACE_SNAPSHOT_READER_H
#define MINNOW_TRACE_SNAPSHOT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot_file.h"

typedef struct SnapshotReader SnapshotReader;

enum { SNAPSHOT_READER_ERROR_MAX = 512 };

typedef struct Snapshot {
  uint64_t number;           // 0, 1, 2... in the order taken
  RetainTrigger trigger;
  uint64_t time_us;          // µs since the epoch (the trace's clock)
  uint64_t alloc_count;      // allocations the trace held when it began
  RetainSnapshotEnd end;     // its end record (end.reason lives with the reader)
  uint64_t paths;            // paths it lists (= the end record's count)
  uint64_t offset;           // byte offset of its begin record (version 1: 0)
  uint64_t end_offset;       // byte offset just past its end record
} Snapshot;

// A decision record (kind 5): the runtime's choice about an allocation site.
typedef struct SnapshotDecision {
  uint64_t time_us;          // µs since the epoch
  uint64_t alloc_count;      // allocations the trace held then
  uint32_t action;           // 0: the site allocates young again; 1: old; 2: young again on a probe
  const char *function, *file;
  uint64_t line, first_col, last_col;
  uint64_t sampled;          // evidence: sampled blocks
  uint64_t counted;          // of them promoted (action 1) or dead at the first major cycle (action 0, or at the minor collection that ends a probe (action 2)
  uint64_t bound_millionths, threshold_millionths;
  uint64_t offset;           // byte offset of its record
} SnapshotDecision;

// What the reader left out at the end of what it read (contract 1).
typedef struct SnapshotTail {
  bool header_missing;       // the file is shorter than its header
  uint64_t cut_bytes;        // bytes of a record cut short by the end of the file (0: none)
  uint64_t cut_offset;       // where that record starts
  bool unfinished;           // a snapshot begun and not ended
  uint64_t unfinished_number, unfinished_offset, unfinished_paths;
  uint64_t file_bytes;       // bytes the file held at the last read
} SnapshotTail;

// Reads the file at `path` as it is now. NULL on failure, with the message
// in err: the file cannot be read, or is damaged (contract 2).
SnapshotReader *snapshot_reader_open(const char *path, char *err, size_t err_len);
// The same from bytes in memory (the fuzz target, tests); `name` names them
// in messages. The bytes are not kept.
SnapshotReader *snapshot_reader_open_bytes(const unsigned char *bytes, size_t len, const char *name, char *err,
                                           size_t err_len);
// Reads what was appended to the file since (a reader opened from a file;
// version 2). Returns the number of snapshots now whole that were not, or
// -1 on damage or a read error (message in err; the reader then keeps what
// it had and every later call fails the same way).
int snapshot_reader_update(SnapshotReader *r, char *err, size_t err_len);
void snapshot_reader_close(SnapshotReader *r);

// The header.
uint32_t snapshot_reader_version(const SnapshotReader *r);   // 1 or 2 (0: no header yet)
uint64_t snapshot_reader_pid(const SnapshotReader *r);
uint64_t snapshot_reader_start_time(const SnapshotReader *r); // µs since the epoch
const char *snapshot_reader_name(const SnapshotReader *r);

uint32_t snapshot_count(const SnapshotReader *r);
const Snapshot *snapshot_get(const SnapshotReader *r, uint32_t k);
// The index of the end state (the last snapshot, when its trigger is END),
// or -1.
int64_t snapshot_end_state(const SnapshotReader *r);
// Snapshot k's i-th path (0 <= i < paths), by increasing allocation id;
// decoded on the first ask and kept (NULL when out of range or out of
// memory).
const RetainPath *snapshot_path(const SnapshotReader *r, uint32_t k, uint64_t i);
// Snapshot k's path of the block `id`, or NULL.
const RetainPath *snapshot_find(const SnapshotReader *r, uint32_t k, uint64_t id);
// Whether snapshot k lists the block `id` (nothing decoded).
bool snapshot_lists(const SnapshotReader *r, uint32_t k, uint64_t id);
// Snapshot k's i-th path's allocation id (UINT64_MAX when out of range),
// and its distinct path's index (below snapshot_reader_distinct_paths: equal
// for equal paths, across snapshots; UINT32_MAX when out of range), nothing
// decoded.
uint64_t snapshot_path_id(const SnapshotReader *r, uint32_t k, uint64_t i);
uint32_t snapshot_path_index(const SnapshotReader *r, uint32_t k, uint64_t i);
// Snapshot k's i-th path decoded into *v (its names are the reader's, valid
// until close; the path and hops are v's, valid until v is reused): what
// snapshot_path gives, without keeping it. NULL when out of range.
typedef struct SnapshotPathView {
  RetainPath path;
  RetainHop hops[RETAIN_MAX_HOPS];
} SnapshotPathView;
const RetainPath *snapshot_path_view(const SnapshotReader *r, uint32_t k, uint64_t i, SnapshotPathView *v);

uint32_t snapshot_decision_count(const SnapshotReader *r);
const SnapshotDecision *snapshot_decision(const SnapshotReader *r, uint32_t i);

const SnapshotTail *snapshot_reader_tail(const SnapshotReader *r);
// Distinct paths stored (contract 3), and names.
uint64_t snapshot_reader_distinct_paths(const SnapshotReader *r);
uint64_t snapshot_reader_strings(const SnapshotReader *r);

// One sentence on what the tail left out ("" when nothing): "the last
// record (37 bytes at byte 912) is cut short: being written, or the run
// died mid-write; left out", "snapshot 3 (begun at byte 800) is not
// finished: left out".
void snapshot_tail_text(const SnapshotTail *t, char *buf, size_t len);

#endif
