// memtrace.h - the trace writer behind ./vm --memtrace FILE and the Memtrace
// module: a native memprof tracker writing Jane Street memtrace's trace
// format (docs/trace-format.md) through trace/writer.h. Design: the
// numbered comment at the top of memprof/memtrace.c.
#ifndef MINNOW_MEMTRACE_H
#define MINNOW_MEMTRACE_H

#include <stdbool.h>
#include <stddef.h>


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

#endif
