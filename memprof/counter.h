// counter.h - the counting tracker (memprof/counter.c).
#ifndef MINNOW_COUNTER_H
#define MINNOW_COUNTER_H

#include <stdbool.h>

typedef struct Vm Vm;

// Starts a profile at `rate` whose tracker counts events and prints their
// totals on stderr, one line, when the VM exits. False on failure.
bool memprof_counter_start(Vm *vm, double rate);

#endif
