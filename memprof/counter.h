// counter.h - the counting tracker (memprof/counter.c): a native, immediate
// tracker (memprof/tracker.h) that counts what memprof reports and does
// nothing else. ./vm
// --memprof-count prints its totals when the VM exits; the benchmarks
// (bench/micro/memprof_micro.c) read them to measure the engine's own cost.
#ifndef MINNOW_COUNTER_H
#define MINNOW_COUNTER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct Vm Vm;

// What one counting profile saw, events delivered so far.
typedef struct MemprofCounts {
  double rate;
  uint64_t blocks, samples, words, promotes, dealloc_minor, dealloc_major;
  uint64_t frames;   // callstack frames seen (site + callers)
  uint64_t fresh;    // callers past `unchanged`: the frames captures walked
} MemprofCounts;

// Starts a profile at `rate` whose tracker counts into *counts (zeroed
// first), which the caller owns and must keep until the VM is freed;
// nothing is printed. The profile's index, or -1 on failure.
int memprof_counter_attach(Vm *vm, double rate, MemprofCounts *counts);

// Starts a profile at `rate` whose tracker counts events and prints their
// totals on stderr, one line, when the VM exits. False on failure.
bool memprof_counter_start(Vm *vm, double rate);

#endif
