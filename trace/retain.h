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
// or none). The reader loads a whole file, checks every field against the
// bytes that remain (so its memory follows the file's size) and never aborts
// on bad input: it names the byte offset of the damage.
#ifndef MINNOW_TRACE_RETAIN_H
#define MINNOW_TRACE_RETAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RETAIN_SUFFIX ".retain"
enum { RETAIN_VERSION = 1 };

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

// Header flags.
enum {
  RETAIN_FINAL_GC = 1,   // a full major collection ran before the trace closed
  RETAIN_PATHS = 2,      // paths were computed (else: reason says why not)
};

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

// Limits, checked by the writer (longer paths are cut with an ELIDED hop by
// the VM before they get here) and by the reader.
enum {
  RETAIN_MAX_HOPS = 256,          // hops of one path
  RETAIN_MAX_STRING = 4096,       // bytes of one name
};

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

// ---------------------------------------------------------------------------
// Reading
typedef struct RetainFile {
  RetainHeader header;
  uint64_t path_count;
  RetainPath *paths;         // sorted by alloc_id, ids distinct
  // storage behind the pointers above
  char **strings;
  uint64_t string_count;
  RetainHop *hop_storage;
  char *reason_storage;
} RetainFile;

// Reads the end-state file at `path` into `out`. False with a message
// naming the file and the byte offset in err (out is then empty).
bool retain_read(const char *path, RetainFile *out, char *err, size_t err_len);
// The same from bytes in memory (the fuzz target); `name` names them in messages.
bool retain_read_bytes(const unsigned char *bytes, size_t len, const char *name, RetainFile *out, char *err,
                       size_t err_len);
void retain_file_free(RetainFile *f);
// The path of the block with allocation id `id`, or NULL.
const RetainPath *retain_find(const RetainFile *f, uint64_t id);
// Names of the kinds, as the tools print them ("global", "list cell", ...).
const char *retain_root_kind_name(RetainRootKind kind);
const char *retain_hop_kind_name(RetainHopKind kind);

#endif
