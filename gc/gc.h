// gc.h - the heap: allocation funnels, minor and major collection, write barrier.
// The one public header of gc/ (the rest is gc_internal.h). Design: the numbered
// comment at the top of gc/minor.c and gc/major.c; ../shared/DESIGN.md.
//
// Contract for callers:
//  * Every allocation may run a collection (and queue memprof callbacks, which
//    run later, at the interpreter's next safe point, never inside these calls).
//    A Value held in a C local across an allocation must be a root
//    (vm_push_root) or it may be left dangling.
//  * A freshly allocated scannable block (tag < TAG_NO_SCAN) has uninitialised
//    fields: fill every field (gc_init_field or plain stores for young blocks)
//    before the next allocation.
//  * Every store into a field of an existing block goes through gc_write.
#ifndef MINNOW_GC_H
#define MINNOW_GC_H

#include <stdbool.h>
#include <stdint.h>

#include "../lang/value.h"

typedef struct Vm Vm;
typedef struct MajorHeap MajorHeap;

// The Boehm build (make vm-boehm) allocates every block with GC_MALLOC: no
// minor heap, no sampling. Code tests this constant, never the macro.
#ifndef MINNOW_BOEHM
#define MINNOW_BOEHM 0
#endif
static const bool GC_IS_BOEHM = MINNOW_BOEHM;
// make vm-noprof builds without the profiler (the reference for measuring
// what memprof costs when it is off): every hook is compiled out.
#ifndef MINNOW_NO_MEMPROF
#define MINNOW_NO_MEMPROF 0
#endif
static const bool MEMPROF_BUILT = !MINNOW_NO_MEMPROF && !MINNOW_BOEHM;

// Limits on sizes that come from input (the command line, Gc.set): the
// minor heap (its size in bytes must fit a size_t with room to spare) and
// the major heap limit; a block's wosize must fit its header's 54 bits.
#define GC_MAX_MINOR_WORDS ((uint64_t)1 << 32)
#define GC_MAX_HEAP_WORDS ((uint64_t)1 << 54)
#define GC_MAX_WOSIZE (((uint64_t)1 << 54) - 1)

// Counters of Gc.stat, in words, headers included (as OCaml counts them).
typedef struct GcStats {
  double minor_words;        // allocated in the minor heap, up to the last minor GC
  double promoted_words;     // copied to the major heap by minor GCs
  double major_words;        // allocated in the major heap, promotions included
  uint64_t minor_collections;
  uint64_t major_collections;
  uint64_t heap_words;       // words of size-class pages and large blocks (not pooled pages: gc_internal.h)
  uint64_t live_words;       // live major words after the last major GC
} GcStats;

typedef struct GcState {
  GcStats stats;
  MajorHeap *major;
  Value **remembered;        // old fields that may point into the minor heap
  uint64_t remembered_count, remembered_cap;
  uint64_t major_since_cycle;   // major words allocated since the last major GC
  uint64_t major_alloc_limit;   // gc_alloc_major takes its slow path once
                             // major_since_cycle reaches this: the major GC
                             // threshold, or 0 while memprof samples (so that
                             // with the profiler off the path tests nothing more)
  uint64_t stress_counter;
  bool collecting;           // a collection is running (no allocation allowed)
  bool major_requested;      // run a major GC at the end of the next minor GC
  bool scanning_for_minor;   // gc_scan_roots serves a minor GC: roots known
                             // not to point into the minor heap may be skipped
} GcState;

// Recomputes major_alloc_limit (after a major cycle, and whenever memprof
// starts or stops sampling: gc_update_limit calls it).
void gc_update_major_limit(Vm *vm);

// Sets up the minor and major heaps. Returns false if memory is short.
bool gc_init(Vm *vm, uint64_t minor_words);
void gc_free(Vm *vm);
// Empties both heaps as if gc_init had just run (statistics included),
// keeping the minor heap's and the mark stack's memory; resizes the minor
// heap to minor_words if it changed. False if memory is short.
bool gc_reset(Vm *vm, uint64_t minor_words);

// ---------------------------------------------------------------------------
// Allocation. `gc_alloc` is the funnel for C code: blocks of at most
// MAX_YOUNG_WOSIZE fields are born young, larger ones old. May GC; memprof
// samples the block's words (callbacks are queued). The header is written;
// fields are not. Inline (below): a young block within young_limit_c costs a
// bump and a compare, as in the interpreter; everything else is gc_alloc_slow.
static inline Value gc_alloc(Vm *vm, uint64_t wosize, unsigned tag);
Value gc_alloc_slow(Vm *vm, uint64_t wosize, unsigned tag);
// gc_alloc's inline part alone: a young block of 1 .. MAX_YOUNG_WOSIZE fields
// if the minor heap has room below young_limit_c, else 0 and nothing done
// (then call gc_alloc). Never collects, never samples: for a caller that
// wants a fast path with no call in it at all.
static inline Value gc_alloc_young_try(Vm *vm, uint64_t wosize, unsigned tag);
// Allocates in the major heap whatever the size (memprof samples it as a major
// allocation). May GC. Fields uninitialised; fill with gc_init_field.
Value gc_alloc_major(Vm *vm, uint64_t wosize, unsigned tag);
// Allocates without ever collecting or sampling: in the minor heap if it has
// room, else in the major heap. For runtime-internal blocks made where the
// frame layout is unknown (error messages raised at any instruction).
Value gc_alloc_no_collect(Vm *vm, uint64_t wosize, unsigned tag);
// Allocates a never-collected block outside the collected heap (constants).
Value gc_alloc_static(Vm *vm, uint64_t wosize, unsigned tag);

// Slow path of the minor-heap allocation of `whsize` words (the interpreter's
// inline fast path found young_ptr - whsize < young_limit). Makes room (minor
// GC), lets memprof count the samples falling in the new words, and returns the
// new young_ptr (the header address of the allocation). The interpreter's
// combined allocations pass their sub-block layout through `sub_whsizes`
// (n_sub entries, program order = decreasing addresses); C callers pass 1 block.
Value *gc_young_slow(Vm *vm, uint64_t whsize, const uint32_t *sub_whsizes, uint32_t n_sub);

// Recomputes vm->young_limit = max(young_start, young_trigger) (young_end in
// stress mode, or while memprof has callbacks to deliver), and
// vm->young_limit_c, gc_alloc's limit: the same except while callbacks wait,
// since only interpreter allocations deliver them (a C primitive allocating
// many blocks after queuing some, String.split across a minor GC, keeps its
// fast path). memprof calls it whenever it moves young_trigger or
// memprof_force_slow changes.
void gc_update_limit(Vm *vm);

// Blocks are young iff in [young_start, young_end).
static inline bool gc_is_young(const Vm *vm, Value v);

// ---------------------------------------------------------------------------
// Write barrier: the only way to store into a field of a block that may be
// old. Records the field in the remembered set when an old block gets a
// pointer to a young one.
static inline void gc_write(Vm *vm, Value block, uint64_t i, Value v);
// Initialising store into a block just returned by gc_alloc_major (fields hold
// garbage, so the old value is not looked at).
static inline void gc_init_field(Vm *vm, Value block, uint64_t i, Value v);

// ---------------------------------------------------------------------------
// Collections (each may queue memprof callbacks).
void gc_minor(Vm *vm);
// Finishes a major cycle: everything unreachable at the start is freed.
void gc_major(Vm *vm);
// Two cycles, so that blocks freed by callbacks of the first are gone too.
void gc_full_major(Vm *vm);
// Resizes the minor heap (empties it first).
bool gc_set_minor_size(Vm *vm, uint64_t minor_words);
// Sets the major heap limit in words (0: none); past it, `out of memory`.
void gc_set_max_heap(Vm *vm, uint64_t words);
// Words allocated in the minor heap so far, including the current heap.
double gc_minor_words_now(const Vm *vm);

// Checks every invariant of the heap; on failure prints what is wrong and
// returns false. Used by --gc-verify, Gc.verify() and the unit tests.
bool gc_verify(Vm *vm);

// Visits every root slot (stack frames via the descriptor walker, globals,
// C roots, memprof's states, the exception being raised).
typedef void (*RootVisitor)(Vm *vm, Value *slot, void *data);
void gc_scan_roots(Vm *vm, RootVisitor visit, void *data);

// Used by the barrier: remembers `field` (slow path of gc_write).
void gc_remember(Vm *vm, Value *field);

// ---------------------------------------------------------------------------
#include "../lang/vm.h"

static inline Value gc_alloc_young_try(Vm *vm, uint64_t wosize, unsigned tag) {
  if (!GC_IS_BOEHM && wosize - 1 < MAX_YOUNG_WOSIZE) {   // 1 .. MAX_YOUNG_WOSIZE fields
    Value *p = vm->young_ptr - (wosize + 1);
    if (__builtin_expect(p >= vm->young_limit_c, 1)) {
      vm->young_ptr = p;
      *p = hd_make(wosize, tag, COLOR_WHITE);
      return val_of_ptr(p + 1);
    }
  }
  return 0;
}

static inline Value gc_alloc(Vm *vm, uint64_t wosize, unsigned tag) {
  Value v = gc_alloc_young_try(vm, wosize, tag);
  return v ? v : gc_alloc_slow(vm, wosize, tag);
}

static inline bool gc_is_young(const Vm *vm, Value v) {
  return val_is_ptr(v) && (Value *)(uintptr_t)v > vm->young_start &&
         (Value *)(uintptr_t)v < vm->young_end;
}

// Conditions under which a store must be remembered: the block is old, the
// new value is a young pointer, and the old value was not already young (a
// field holding a young pointer is already in the remembered set).
static inline void gc_write(Vm *vm, Value block, uint64_t i, Value v) {
  Value *field = &val_fields(block)[i];
  if (gc_is_young(vm, v) && !gc_is_young(vm, block) && !gc_is_young(vm, *field))
    gc_remember(vm, field);
  *field = v;
}

static inline void gc_init_field(Vm *vm, Value block, uint64_t i, Value v) {
  Value *field = &val_fields(block)[i];
  *field = v;
  if (gc_is_young(vm, v) && !gc_is_young(vm, block)) gc_remember(vm, field);
}

#endif
