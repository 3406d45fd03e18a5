// snapshot_file.h - the snapshot file that travels beside a trace:
// "T.ctf.retain" for the trace "T.ctf" (docs/trace-format.md, section 12).
// A snapshot says which sampled blocks are alive at one moment and, for each,
// one path from a GC root to it: the root, then each hop by what it is, runs
// of the same hop collapsed ("list cell x18342"). The VM appends snapshots
// while the program runs (snapshot_writer.h); the end state is the last one.
// memtrace's own tools never see the file: the trace itself is unchanged.
//
// This header holds what the writer and the reader share: the kinds, the
// records' layout constants, the named path, the limits, CRC-32. Like the
// rest of trace/, it knows nothing of the VM: roots and hops arrive named.
#ifndef MINNOW_TRACE_SNAPSHOT_FILE_H
#define MINNOW_TRACE_SNAPSHOT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RETAIN_SUFFIX ".retain"
#define RETAIN_MAGIC "MNRETAIN"   // 8 bytes, no NUL written
enum { RETAIN_MAGIC_BYTES = 8, RETAIN_VERSION_1 = 1, RETAIN_VERSION = 2 };

// What holds the first block of a path.
typedef enum RetainRootKind {
  RETAIN_ROOT_GLOBAL = 0,    // a module member or top-level binding: name
  RETAIN_ROOT_STACK = 1,     // a live slot of a frame: function, file, line, local (or ""), index = slot
  RETAIN_ROOT_C = 2,         // a value a primitive held (index: its place)
  RETAIN_ROOT_EXCEPTION = 3, // the exception being raised
  RETAIN_ROOT_PROFILER = 4,  // a Memprof callback's state
  RETAIN_ROOT_KINDS
} RetainRootKind;

// One hop from a block to the next (`count` times in a row).
typedef enum RetainHopKind {
  RETAIN_HOP_FIELD = 0,          // a record's field: name
  RETAIN_HOP_TUPLE = 1,          // a tuple's element: index
  RETAIN_HOP_ARRAY = 2,          // an array's element: index
  RETAIN_HOP_LIST_CELL = 3,      // a list cell's tail (the next cell)
  RETAIN_HOP_LIST_ELEMENT = 4,   // a list cell's head (the element)
  RETAIN_HOP_CAPTURE = 5,        // a closure's captured variable: name, index
  RETAIN_HOP_HASHTBL_VALUE = 6,  // from a Hashtbl to one of its values
  RETAIN_HOP_HASHTBL_KEY = 7,    // from a Hashtbl to one of its keys
  RETAIN_HOP_BUFFER = 8,         // a Buffer's storage
  RETAIN_HOP_OTHER = 9,          // a field of another kind of block: index
  RETAIN_HOP_ELIDED = 10,        // `count` hops left out of a very long path
  RETAIN_HOP_HASHTBL_ENTRY = 11, // from a Hashtbl to one of its (key, value) pairs or bucket cells
  RETAIN_HOP_HASHTBL_STORAGE = 12, // from a Hashtbl to its bucket array
  RETAIN_HOP_KINDS
} RetainHopKind;

// Record kinds (section 12.1): a record is a u32 length, a u32 CRC-32 of the
// body, then the body, whose first byte is the kind.
typedef enum RetainRecordKind {
  RETAIN_RECORD_STRINGS = 1,   // strings appended to the file's table
  RETAIN_RECORD_BEGIN = 2,     // a snapshot begins
  RETAIN_RECORD_PATHS = 3,     // some of its paths
  RETAIN_RECORD_END = 4,       // it ends (its numbers, its reason)
  RETAIN_RECORD_DECISION = 5,  // a pretenuring decision about an allocation site
  RETAIN_RECORD_KINDS
} RetainRecordKind;

// What took a snapshot.
typedef enum RetainTrigger {
  RETAIN_TRIGGER_END = 0,      // the trace ended: the end state
  RETAIN_TRIGGER_CALL = 1,     // Memtrace.snapshot()
  RETAIN_TRIGGER_SIGNAL = 2,   // SIGUSR1
  RETAIN_TRIGGER_PERIOD = 3,   // --memtrace-snapshot-every
  RETAIN_TRIGGER_PEAK = 4,     // --memtrace-snapshot-peak: a new peak of the live heap
  RETAIN_TRIGGERS
} RetainTrigger;

// End-record flags.
enum {
  RETAIN_COLLECTED = 1,   // the snapshot's collection ran
  RETAIN_PATHS = 2,       // every live sampled block has its path
};

// Limits, shared by the writer (longer paths are cut with an ELIDED hop by
// the VM before they get here) and the reader.
enum {
  RETAIN_MAX_HOPS = 256,               // hops of one path
  RETAIN_MAX_STRING = 4096,            // bytes of one name
  RETAIN_MAX_RECORD = 1 << 24,         // bytes of one record's body
  RETAIN_RECORD_HEADER = 8,            // its length and check
};

typedef struct RetainRoot {
  RetainRootKind kind;
  const char *name;          // global; stack: the function
  const char *file;          // stack
  uint32_t line;             // stack
  const char *local;         // stack: the local's name, "" if unknown
  uint64_t index;            // stack: slot; C root: its place
} RetainRoot;

typedef struct RetainHop {
  RetainHopKind kind;
  uint64_t count;            // >= 1: hops of this kind in a row
  uint64_t index;            // tuple, array, capture, other: the field index
  const char *name;          // field, capture: the name ("" if unknown)
} RetainHop;

typedef struct RetainPath {
  uint64_t alloc_id;         // the block's allocation id in the trace
  RetainRoot root;
  uint32_t hop_count;
  const RetainHop *hops;     // from the root's block to the sampled block
} RetainPath;

// What an end record says of its snapshot (section 12.1).
typedef struct RetainSnapshotEnd {
  uint32_t flags;            // RETAIN_COLLECTED, RETAIN_PATHS
  uint64_t live_samples;     // sampled blocks alive after the collection
  uint64_t marked_blocks;    // what the collection found reachable
  uint64_t marked_words;     // (headers included)
  uint64_t heap_words;       // the major heap's size after it
  uint64_t pause_us;         // the whole snapshot
  uint64_t paths_us;         // naming and writing paths
  const char *reason;        // why the snapshot holds less than it should ("" if whole)
} RetainSnapshotEnd;

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of n bytes, continuing
// from `crc` (0 to start).
uint32_t retain_crc32(uint32_t crc, const void *bytes, size_t n);
// The snapshot file's name beside the trace `trace`: trace RETAIN_SUFFIX,
// malloc'ed (the caller frees it); NULL when memory is short.
char *retain_file_name(const char *trace);
// Names of the kinds, as the tools print them ("global", "list cell", ...).
const char *retain_root_kind_name(RetainRootKind kind);
const char *retain_hop_kind_name(RetainHopKind kind);
const char *retain_trigger_name(RetainTrigger trigger);

#endif
