// memtrace.c - entry points of the trace writer (--memtrace). The writer of
// the memtrace CTF format (../shared/MEMTRACE-FORMAT.md) is not in this
// version: the option is refused with a clear message rather than writing a
// partial trace.
#include <stdio.h>

#include "memtrace.h"

bool memtrace_start(Vm *vm, const char *path) {
  (void)vm;
  fprintf(stderr, "vm: --memtrace %s: this build has no trace writer yet\n", path);
  return false;
}

void memtrace_finish(Vm *vm) { (void)vm; }
