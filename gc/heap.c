// heap.c - the allocation funnels of gc.h: minor-heap slow path, major and
// static allocation, heap setup and limits. The inline fast path lives in the
// interpreter (lang/runtime/interp.c, ALLOC1) and in gc_alloc below:
//     p = young_ptr - whsize; if (p < young_limit) slow; young_ptr = p; *p = hd
// young_limit = max(young_start, young_trigger), so memprof's sampling costs
// the fast path nothing (docs/design.md, "The path of one allocation").
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gc_internal.h"
#include "../core/frames.h"
#include "../memprof/memprof.h"

bool gc_init(Vm *vm, uint64_t minor_words) {
  vm->gc.major = calloc(1, sizeof(MajorHeap));
  if (!vm->gc.major) return false;
  vm->gc.major_threshold = major_threshold_for(vm->gc.stats.live_words);
  vm->gc.major->mark_stack = malloc(MARK_STACK_ENTRIES * sizeof(Value));
  if (!vm->gc.major->mark_stack) return false;
  return gc_set_minor_size(vm, minor_words);
}

void gc_free(Vm *vm) {
  if (!vm->gc.major) return;
  major_free_all(vm->gc.major);
  free(vm->young_start);
  free(vm->gc.remembered);
  vm->gc.major = NULL;
}

bool gc_reset(Vm *vm, uint64_t minor_words) {
  vm_restart_major_cycle(vm);   // before the GC state is cleared: it reads major_since_cycle
  Value *mark_stack = vm->gc.major->mark_stack;
  vm->gc.major->mark_stack = NULL;
  major_free_all(vm->gc.major);
  free(vm->gc.remembered);
  memset(&vm->gc, 0, sizeof vm->gc);
  vm->gc.major_threshold = major_threshold_for(vm->gc.stats.live_words);
  vm->gc.major = calloc(1, sizeof(MajorHeap));
  if (!vm->gc.major) {
    free(mark_stack);
    return false;
  }
  vm->gc.major->mark_stack = mark_stack;
  vm->young_trigger = NULL;
  vm->young_ptr = vm->young_end;
  if (minor_words != (uint64_t)(vm->young_end - vm->young_start)) {   // Gc.set changed it
    free(vm->young_start);
    vm->young_start = vm->young_end = vm->young_ptr = NULL;
    return gc_set_minor_size(vm, minor_words);
  }
  vm_update_limits(vm);
  return true;
}

// Memory for a minor heap of `words` words (free() releases it). One that
// spans huge pages is aligned to them and the kernel asked to back it with
// them (a hint): the first pass over 16 MiB then takes 8 page faults, not 4096.
static Value *alloc_minor_heap(uint64_t words) {
  size_t bytes = words * sizeof(Value);
  if (bytes < HUGE_PAGE_BYTES) return malloc(bytes);
  size_t rounded = (bytes + HUGE_PAGE_BYTES - 1) & ~(size_t)(HUGE_PAGE_BYTES - 1);
  Value *heap = aligned_alloc(HUGE_PAGE_BYTES, rounded);
  if (heap) madvise(heap, rounded, MADV_HUGEPAGE);
  return heap;
}

bool gc_set_minor_size(Vm *vm, uint64_t minor_words) {
  if (minor_words > GC_MAX_MINOR_WORDS) return false;
  if (minor_words < 4096) minor_words = 4096;
  if (vm->young_start) gc_minor(vm);
  Value *heap = alloc_minor_heap(minor_words);
  if (!heap) return false;
  if (vm->young_start) vm->gc.stats.minor_words = gc_minor_words_now(vm);
  free(vm->young_start);
  vm->young_start = heap;
  vm->young_end = heap + minor_words;
  vm->young_ptr = vm->young_end;
  vm->options.minor_words = minor_words;
  if (vm->memprof) memprof_renew_trigger(vm);
  vm_update_limits(vm);
  return true;
}

void gc_set_max_heap(Vm *vm, uint64_t words) { vm->options.max_heap_words = words; }

double gc_minor_words_now(const Vm *vm) {
  return vm->gc.stats.minor_words + (double)(vm->young_end - vm->young_ptr);
}

static bool over_limit(const Vm *vm, uint64_t extra) {
  return vm->options.max_heap_words &&
         vm->gc.stats.heap_words + extra > vm->options.max_heap_words;
}

static __attribute__((noinline)) void heap_limit_reached(Vm *vm, uint64_t extra) {
  gc_major(vm);
  if (over_limit(vm, extra)) vm_raise_out_of_memory(vm);
}

// Raises `out of memory` once a major GC could not bring the heap under the
// limit. Only called where raising is safe (no collection running). Inline:
// the allocations that pass it make no call.
static inline void check_heap_limit(Vm *vm, uint64_t extra) {
  if (__builtin_expect(over_limit(vm, extra), 0)) heap_limit_reached(vm, extra);
}

// The collections an allocation of whsize words needs first (the minor heap
// is full, or gc_stress collects at every allocation); returns where the
// block goes. Out of line: an allocation that only reaches memprof's trigger
// saves no registers for them.
static __attribute__((noinline)) Value *young_collect(Vm *vm, uint64_t whsize) {
  for (;;) {
    Value *p = vm->young_ptr - whsize;
    if (vm->options.gc_stress && !vm->gc.collecting) {
      if (++vm->gc.stress_counter % 64 == 0) gc_major(vm);
      else gc_minor(vm);
      check_heap_limit(vm, 0);
      return vm->young_ptr - whsize;
    }
    if (p >= vm->young_start) return p;
    gc_minor(vm);
    check_heap_limit(vm, 0);
  }
}

// A snapshot asked for (vm->pending_snapshot): taken here, at an allocation
// slow path, a safe point; the allocation then goes on in an empty minor
// heap. Out of line: it runs a major collection.
static __attribute__((noinline)) void take_pending_snapshot(Vm *vm) {
  if (vm->take_snapshot) {
    vm->take_snapshot(vm);
  } else {
    vm->pending_snapshot = 0;
  }
  vm_update_limits(vm);
}

// gc_young_slow's body, also inlined into young_alloc_slow (a C allocation
// that reaches memprof's trigger then makes one call less).
static inline __attribute__((always_inline)) Value *young_slow(Vm *vm, uint64_t whsize, const uint32_t *sub_whsizes,
                                                               uint32_t n_sub) {
  if (vm->pending_signal) vm_handle_signal(vm);   // the signal handler raised young_limit
  if (MEMPROF_BUILT && vm->pending_snapshot) take_pending_snapshot(vm);
  ASSERT(!vm->pc || frames_find(vm->frames, vm->pc), "an allocation stands at a safe point with a descriptor");
  ASSERT(!vm->gc.collecting, "no allocation during a collection");
  Value *p = vm->young_ptr - whsize;
  if (vm->options.gc_stress || p < vm->young_start) p = young_collect(vm, whsize);
  if (MEMPROF_BUILT && p < vm->young_trigger) memprof_sample_young(vm, vm->young_ptr, whsize, sub_whsizes, n_sub);
  ASSERT(p >= vm->young_start && p < vm->young_ptr, "the new block lies in the minor heap, below young_ptr");
  return p;
}

Value *gc_young_slow(Vm *vm, uint64_t whsize, const uint32_t *sub_whsizes, uint32_t n_sub) {
  return young_slow(vm, whsize, sub_whsizes, n_sub);
}

// gc_alloc_slow's minor-heap case, out of line: the major and empty cases
// then take no stack frame, in this build as in vm-noprof.
static __attribute__((noinline)) Value young_alloc_slow(Vm *vm, uint64_t wosize, unsigned tag) {
  uint64_t whsize = wosize + 1;
  Value header = hd_make(wosize, tag, COLOR_WHITE);   // kept across the call in one register, not two
  Value *p = vm->young_ptr - whsize;
  if (p < vm->young_limit_c) {
    uint32_t sub = (uint32_t)whsize;
    p = young_slow(vm, whsize, &sub, 1);
  }
  vm->young_ptr = p;
  *p = header;
  return val_of_ptr(p + 1);
}

Value gc_alloc_slow(Vm *vm, uint64_t wosize, unsigned tag) {
  if (wosize > MAX_YOUNG_WOSIZE) return gc_alloc_major(vm, wosize, tag);
  if (wosize == 0) return vm->empty_array;
  return young_alloc_slow(vm, wosize, tag);
}

// The allocation itself, within the heap limit, counted in the statistics
// and towards the next major cycle.
static inline __attribute__((always_inline)) Value major_alloc_counted(Vm *vm, uint64_t wosize, unsigned tag) {
  check_heap_limit(vm, wosize + 1);
  Value v = major_alloc_raw(vm, wosize, tag);
  if (!v) vm_raise_out_of_memory(vm);
  vm->gc.stats.major_words += (double)(wosize + 1);
  vm->gc.major_since_cycle += wosize + 1;
  return v;
}

// gc_alloc_major once major_alloc_limit is reached: a major cycle may be due,
// or the block may hold memprof's next sampled major word (vm_state.h).
// `sub`: the sub-block of the allocating instruction's site (gc_alloc_pretenured).
static __attribute__((noinline)) Value alloc_major_slow(Vm *vm, uint64_t wosize, unsigned tag, uint32_t sub) {
  // The cycle is due: a minor collection, which ends with the major one
  // (gc/minor.c part 5; gc_major would run a second right after it).
  if (vm->gc.major_since_cycle > vm->gc.major_threshold) gc_minor(vm);
  Value v = major_alloc_counted(vm, wosize, tag);
  // Where the block starts, counted after any collection it caused.
  uint64_t at = vm->gc.major_since_cycle - (wosize + 1);
  if (MEMPROF_BUILT && vm->memprof_sampling && at + wosize >= vm->memprof_major_point)
    memprof_sample_major(vm, v, wosize, sub);
  return v;
}

// While memprof samples, a block that holds no sampled word takes the fast
// path as when it does not: major_alloc_limit is the nearer of the cycle's
// threshold and the sampled word (string_build makes thousands of them).
static inline __attribute__((always_inline)) Value alloc_major(Vm *vm, uint64_t wosize, unsigned tag, uint32_t sub) {
  if (wosize == 0) return vm->empty_array;
  if (wosize > GC_MAX_WOSIZE) vm_raise_out_of_memory(vm);
  if (vm->gc.major_since_cycle + wosize >= vm->gc.major_alloc_limit) return alloc_major_slow(vm, wosize, tag, sub);
  return major_alloc_counted(vm, wosize, tag);
}

Value gc_alloc_major(Vm *vm, uint64_t wosize, unsigned tag) { return alloc_major(vm, wosize, tag, 0); }

Value gc_alloc_pretenured(Vm *vm, uint64_t wosize, unsigned tag, uint32_t sub) {
  // Where alloc_major_slow may collect too: the callers root what they hold.
  if (vm->gc.minor_requested) gc_minor(vm);
  Value v = alloc_major(vm, wosize, tag, sub);
  vm->gc.stats.pretenured_words += (double)(wosize + 1);
  return v;
}

Value gc_alloc_no_collect(Vm *vm, uint64_t wosize, unsigned tag) {
  Value *p = vm->young_ptr - (wosize + 1);
  if (wosize <= MAX_YOUNG_WOSIZE && p >= vm->young_start) {
    vm->young_ptr = p;
    *p = hd_make(wosize, tag, COLOR_WHITE);
    if (p < vm->young_trigger && vm->memprof) memprof_renew_trigger(vm);
    vm_update_limits(vm);
    return val_of_ptr(p + 1);
  }
  Value v = major_alloc_raw(vm, wosize, tag);
  if (!v) vm_out_of_memory(vm, "runtime block");
  vm->gc.stats.major_words += (double)(wosize + 1);
  return v;
}

Value gc_alloc_static(Vm *vm, uint64_t wosize, unsigned tag) {
  StaticBlock *b = malloc(sizeof(StaticBlock) + (wosize + 1) * sizeof(Value));
  if (!b) vm_out_of_memory(vm, "constants");
  b->next = vm->gc.major->statics;
  vm->gc.major->statics = b;
  b->words[0] = hd_make(wosize, tag, COLOR_STATIC);
  memset(b->words + 1, 0, wosize * sizeof(Value));
  for (uint64_t i = 0; i < wosize && tag < TAG_NO_SCAN; i++) b->words[1 + i] = VAL_NIL;
  return val_of_ptr(b->words + 1);
}

void gc_remember(Vm *vm, Value *field) {
  GcState *gc = &vm->gc;
  if (gc->remembered_count == gc->remembered_cap) {
    gc->remembered_cap = gc->remembered_cap ? gc->remembered_cap * 2 : 1024;
    gc->remembered = realloc(gc->remembered, gc->remembered_cap * sizeof(Value *));
    if (!gc->remembered) vm_out_of_memory(vm, "remembered set");
  }
  gc->remembered[gc->remembered_count++] = field;
}
