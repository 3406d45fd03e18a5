// memtrace.h - the trace writer behind ./vm --memtrace FILE and the Memtrace
// module: a native memprof tracker writing Jane Street memtrace's trace
// format (docs/trace-format.md) through trace/writer.h. Design: the
// numbered comment at the top of memprof/memtrace.c.
#ifndef MINNOW_MEMTRACE_H
#define MINNOW_MEMTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/frames.h"
#include "../core/value.h"

typedef struct Vm Vm;

// The rate ./vm --memtrace samples at unless told otherwise.
#define MEMTRACE_DEFAULT_RATE 1e-5

// Starts a profile at `rate` (0 < rate <= 1) whose events are written to the
// trace file `path` (created or truncated) in format `version` (1 to 3).
// Fails, with the reason in err, if another profile samples (one at a time),
// the rate is out of range or the file cannot be written.
bool memtrace_start(Vm *vm, const char *path, double rate, int version, char *err, size_t err_len);
// Stops sampling, and flushes and closes the trace. False if none runs.
bool memtrace_stop(Vm *vm);

// --- snapshots (docs/design.md, "Snapshots") ---------------------------------
// What identifies the running trace, for the snapshot file written beside
// it (trace/snapshot_file.h). False if no trace runs or a write error stopped it.
typedef struct MemtraceIdentity {
  const char *path;
  uint64_t pid, start_time_us;
  uint64_t alloc_count;     // allocations written so far
  double rate;              // the sampling rate
} MemtraceIdentity;
bool memtrace_identity(const Vm *vm, MemtraceIdentity *out);
// The snapshot file beside the running trace (FILE.retain, created when the
// trace started), or NULL: no trace, a write error stopped it, or it is not
// a regular file.
struct SnapshotWriter *memtrace_snapshots(const Vm *vm);
// Writes the events so far to the trace (its packet, whole). False if no
// trace runs or a write error stopped it.
bool memtrace_flush(Vm *vm);
// With --memtrace-pprof-dir (memtrace.c part 8): the callstack of the live
// sampled block `id` (a node of memtrace_stacks), its samples and size;
// false if none is kept (no such option, the block is dead, memory ran
// short, memtrace_stop_stacks).
bool memtrace_stack_of(const Vm *vm, uint64_t id, uint32_t *node, uint32_t *samples, uint64_t *wosize);
// The trie of every callstack sampled, NULL when none is kept.
const struct StackTrie *memtrace_stacks(const Vm *vm);
// Keeps no more callstacks (no more profiles), saying why once on stderr.
void memtrace_stop_stacks(Vm *vm, const char *why);
// The debug entry of a callstack code (part 1: a site or a caller).
const DebugInfo *memtrace_code_debug(const Vm *vm, uint64_t code);
// Stops the trace's sampling (its tracked blocks keep reporting).
void memtrace_stop_sampling(Vm *vm);
// Visits each block the trace tracks that is alive, with its allocation id.
void memtrace_each_live(Vm *vm, void (*fn)(void *data, Value block, uint64_t id), void *data);

#endif
