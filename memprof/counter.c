// counter.c - a C tracker that only counts (./vm --memprof-count RATE): what
// the benchmarks use to measure the engine's own cost, and a summary for
// users who want totals without writing a tracker.
#include <stdio.h>
#include <stdlib.h>

#include "counter.h"
#include "memprof_internal.h"
#include "../lang/vm.h"

typedef struct Counts {
  uint64_t blocks, samples, words, promotes, dealloc_minor, dealloc_major;
  uint64_t frames;   // callstack frames seen (site + callers)
} Counts;

static bool count_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  (void)vm;
  (void)block;
  Counts *c = data;
  c->blocks++;
  c->samples += s->n_samples;
  c->words += s->wosize + 1;
  c->frames += 1 + s->caller_count;
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

static void count_release(Vm *vm, void *data) {
  (void)vm;
  free(data);
}

bool memprof_counter_start(Vm *vm, double rate) {
  Counts *c = calloc(1, sizeof *c);
  if (!c) return false;
  MemprofTracker t = {count_alloc, count_promote, count_dealloc, count_release, NULL, c};
  vm->counter_data = c;
  return memprof_start_profile(vm, rate, 0, &t) >= 0;
}

void memprof_counter_report(Vm *vm, FILE *out) {
  Counts *c = vm->counter_data;
  if (!c || !vm->memprof) return;
  double rate = vm->memprof->sampler.rate;
  fprintf(out,
          "memprof: rate %g: %llu samples in %llu blocks (estimated %.0f words allocated), "
          "%llu promoted, %llu freed young, %llu freed old, %.1f frames per sample\n",
          rate, (unsigned long long)c->samples, (unsigned long long)c->blocks,
          (double)c->samples / rate, (unsigned long long)c->promotes,
          (unsigned long long)c->dealloc_minor, (unsigned long long)c->dealloc_major,
          c->blocks ? (double)c->frames / (double)c->blocks : 0.0);
}
