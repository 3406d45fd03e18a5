// counter.c - a C tracker that only counts (./vm --memprof-count RATE): what
// the benchmarks use to measure the engine's own cost, and a summary for
// users who want totals without writing a tracker.
#include <stdio.h>
#include <stdlib.h>

#include "counter.h"
#include "memprof_internal.h"
#include "../core/vm_state.h"

typedef MemprofCounts Counts;

static bool count_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  (void)vm;
  (void)block;
  Counts *c = data;
  c->blocks++;
  c->samples += s->n_samples;
  c->words += s->wosize + 1;
  c->frames += 1 + s->caller_count;
  c->fresh += s->caller_count - s->unchanged;
  return true;
}

static bool count_promote(Vm *vm, void *data, MemprofBlock *block) {
  (void)vm;
  (void)block;
  ((Counts *)data)->promotes++;
  return true;
}

static void count_dealloc(Vm *vm, void *data, MemprofBlock *block, bool major) {
  (void)vm;
  (void)block;
  Counts *c = data;
  if (major) c->dealloc_major++;
  else c->dealloc_minor++;
}

// The profile ends with the VM (memprof_finish): one line of totals on stderr.
static void count_release(Vm *vm, void *data) {
  (void)vm;
  Counts *c = data;
  fprintf(stderr,
          "memprof: rate %g: %llu samples in %llu blocks (estimated %.0f words allocated), "
          "%llu promoted, %llu freed young, %llu freed old, %.1f new callers per sample, %.1f frames per sample\n",
          c->rate, (unsigned long long)c->samples, (unsigned long long)c->blocks,
          (double)c->samples / c->rate, (unsigned long long)c->promotes,
          (unsigned long long)c->dealloc_minor, (unsigned long long)c->dealloc_major,
          c->blocks ? (double)c->fresh / (double)c->blocks : 0.0,
          c->blocks ? (double)c->frames / (double)c->blocks : 0.0);
  free(c);
}

static int start(Vm *vm, double rate, Counts *c, void (*release)(Vm *, void *)) {
  *c = (Counts){.rate = rate};
  MemprofTracker t = {count_alloc, count_promote, count_dealloc, release, NULL, c, .native = true, .immediate = true, .reads_runs = true};
  return memprof_start_profile(vm, rate, 0, &t);
}

int memprof_counter_attach(Vm *vm, double rate, MemprofCounts *counts) {
  return start(vm, rate, counts, NULL);
}

bool memprof_counter_start(Vm *vm, double rate) {
  Counts *c = malloc(sizeof *c);
  if (!c) return false;
  if (start(vm, rate, c, count_release) >= 0) return true;
  free(c);
  return false;
}
