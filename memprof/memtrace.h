// memtrace.h - the trace writer behind ./vm --memtrace FILE: a C tracker that
// writes the memtrace (CTF) format of ../shared/MEMTRACE-FORMAT.md.
#ifndef MINNOW_MEMTRACE_H
#define MINNOW_MEMTRACE_H

#include <stdbool.h>

typedef struct Vm Vm;

// Starts profiling into `path`. Prints why and returns false on failure.
bool memtrace_start(Vm *vm, const char *path);
// Stops, reports the blocks still tracked as collected at exit, flushes.
void memtrace_finish(Vm *vm);

#endif
