// counter.h - the counting tracker (memprof/counter.c).
#ifndef MINNOW_COUNTER_H
#define MINNOW_COUNTER_H

#include <stdbool.h>
#include <stdio.h>

typedef struct Vm Vm;

// Starts a profile at `rate` whose tracker counts events. False on failure.
bool memprof_counter_start(Vm *vm, double rate);
// Prints the counts (one line) if the counter was started.
void memprof_counter_report(Vm *vm, FILE *out);

#endif
