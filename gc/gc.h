// gc.h - the heap: allocation funnels, minor and major collection, write barrier.
// The one public header of gc/ (the rest is gc_internal.h). Design: the numbered
// comment at the top of gc/minor.c and gc/major.c; docs/design.md ("The GC").
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

#include "../core/value.h"
#include "../core/vm_state.h"

// Limits on sizes that come from input (the command line, Gc.set): the
// minor heap (its size in bytes must fit a size_t with room to spare) and
// the major heap limit; a block's wosize must fit its header's 54 bits.
#define GC_MAX_MINOR_WORDS ((uint64_t)1 << 32)
#define GC_MAX_HEAP_WORDS ((uint64_t)1 << 54)
#define GC_MAX_WOSIZE (((uint64_t)1 << 54) - 1)

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
// gc_alloc_major for the interpreter's allocation instructions that
// pretenuring switched to the major heap (ALLOC1_OLD, ALLOCN_OLD: core/bytecode.h):
// counted in Gc.stat's pretenured_words, sampled by memprof as sub-block
// `sub` of the instruction's site (each sub-block of a combined allocation
// is a block of its own here). Runs a minor collection first when
// vm->gc.minor_requested (pretenuring's probe asks for one).
Value gc_alloc_pretenured(Vm *vm, uint64_t wosize, unsigned tag, uint32_t sub);
// Allocates without ever collecting or sampling: in the minor heap if it has
// room, else in the major heap. For runtime-internal blocks made where the
// frame layout is unknown (error messages raised at any instruction).
Value gc_alloc_no_collect(Vm *vm, uint64_t wosize, unsigned tag);
// Raises a runtime error whose message is printf-formatted (its string is
// allocated with gc_alloc_no_collect). Never returns.
_Noreturn void gc_raise_error(Vm *vm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Allocates a never-collected block outside the collected heap (constants).
Value gc_alloc_static(Vm *vm, uint64_t wosize, unsigned tag);

// Slow path of the minor-heap allocation of `whsize` words (the interpreter's
// inline fast path found young_ptr - whsize < young_limit). Makes room (minor
// GC), lets memprof count the samples falling in the new words, and returns the
// new young_ptr (the header address of the allocation). The interpreter's
// combined allocations pass their sub-block layout through `sub_whsizes`
// (n_sub entries, program order = decreasing addresses); C callers pass 1 block.
Value *gc_young_slow(Vm *vm, uint64_t whsize, const uint32_t *sub_whsizes, uint32_t n_sub);


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
void gc_scan_roots(Vm *vm, RootVisitor visit, void *data);

// What a root slot is (gc_scan_roots_named), for retaining paths.
typedef enum GcRootKind {
  GC_ROOT_GLOBAL,     // vm->globals[index]
  GC_ROOT_STACK,      // slot `index` of a frame; `desc` its descriptor, `depth` 0 innermost
  GC_ROOT_C,          // vm->roots[index] (pushed by a primitive)
  GC_ROOT_EXCEPTION,  // vm->exn
  GC_ROOT_PROFILER,   // a memprof tracker's state
} GcRootKind;

typedef struct GcRootInfo {
  GcRootKind kind;
  uint32_t index;
  uint32_t depth;
  const struct FrameDesc *desc;
  Value *slot;
} GcRootInfo;

// The roots of gc_scan_roots, each with what it is, in the order retaining
// paths prefer them: globals, frames innermost first, C roots, the
// exception, memprof's states.
void gc_scan_roots_named(Vm *vm, void (*visit)(Vm *vm, Value *slot, const GcRootInfo *info, void *data), void *data);

// ---------------------------------------------------------------------------
// Snapshots (gc/mark_paths.c): a major collection whose mark records, for
// each of a set of target blocks it reaches, the path it took from a root,
// with runs of equal hops collapsed. Design: docs/design.md ("Snapshots").
enum { GC_RETAIN_MAX_RUNS = 64 };
// A run of equal hops: `count` times the field `field` of a block like
// `parent` (the first of the run's parents).
typedef struct GcPathRun {
  Value parent;
  uint32_t field;
  uint64_t count;
} GcPathRun;
typedef struct GcRetainPath {
  GcRootInfo root;
  Value root_block;            // the block the root's slot holds
  uint64_t hops;               // the path's length in hops
  GcPathRun runs[GC_RETAIN_MAX_RUNS];
  uint32_t run_count;
  // A path of more than GC_RETAIN_MAX_RUNS runs keeps its first and last
  // runs: runs[0 .. elided_at) from the root, then the rest down to the
  // target; elided_runs runs of elided_hops hops lie between.
  uint32_t elided_at, elided_runs;
  uint64_t elided_hops;
} GcRetainPath;

typedef struct GcPathTargets GcPathTargets;
typedef struct GcPathRequest GcPathRequest;
struct GcPathRequest {
  // The caller's. list_targets runs once the minor heap is empty, before the
  // mark: it calls gc_path_target for each target (a block of the major
  // heap) with the caller's id for it. `reached` runs during the mark for
  // each target the mark reaches, with the path it took (valid during the
  // call only); it must not allocate in the heap nor run Minnow code.
  void (*list_targets)(Vm *vm, GcPathRequest *req);
  void (*reached)(Vm *vm, GcPathRequest *req, uint64_t id, const GcRetainPath *path);
  void *data;
  // The collection's.
  GcPathTargets *targets;      // during the collection only
  uint64_t target_count;       // targets listed
  uint64_t reached_count;      // targets given a path (the others died, or see `failed`)
  uint64_t marked_blocks;      // blocks the mark reached
  bool ran;                    // the collection ran
  bool failed;                 // memory was short: the mark recorded no (or not every) path
};
// Adds a target; false if memory is short (the collection then records no path).
bool gc_path_target(GcPathRequest *req, Value block, uint64_t id);
// Runs a major collection (a minor one first, as gc_major) whose mark
// records paths, with what it frees reported to memprof as by any major
// collection. Costs one major collection, plus, for each target reached,
// the frames of its path not yet read and a constant (gc/mark_paths.c part
// 3). Does nothing but set req->failed inside a collection or in the Boehm
// build.
void gc_major_paths(Vm *vm, GcPathRequest *req);

// Used by the barrier: remembers `field` (slow path of gc_write).
void gc_remember(Vm *vm, Value *field);

// ---------------------------------------------------------------------------
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


// Conditions under which a store must be remembered: the block is old, the
// new value is a young pointer, and the old value was not already young (a
// field holding a young pointer is already in the remembered set).
static inline void gc_write(Vm *vm, Value block, uint64_t i, Value v) {
  Value *field = &val_fields(block)[i];
  if (vm_is_young(vm, v) && !vm_is_young(vm, block) && !vm_is_young(vm, *field))
    gc_remember(vm, field);
  *field = v;
}

static inline void gc_init_field(Vm *vm, Value block, uint64_t i, Value v) {
  Value *field = &val_fields(block)[i];
  *field = v;
  if (vm_is_young(vm, v) && !vm_is_young(vm, block)) gc_remember(vm, field);
}

#endif
