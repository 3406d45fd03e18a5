// gc_internal.h - shared between the files of gc/ only.
// The major heap: size-segregated pages for blocks of at most MAX_YOUNG_WOSIZE
// fields, one malloc'ed LargeBlock per bigger block.
//
//   Page (PAGE_BYTES, one size class `whsize`):
//   +------+------------------+------------------+-----+
//   | Page | hd | fields ...  | hd | fields ...  | ... |   nblocks blocks
//   +------+------------------+------------------+-----+
//
// Block colours (value.h): WHITE allocated and unmarked, BLACK marked during a
// major GC (and whitened again by the sweep), FREE on a free list (field 0
// links to the next free block of the class), STATIC outside the heap.
// Invariant outside a major GC: no block in the heap is BLACK.
#ifndef MINNOW_GC_INTERNAL_H
#define MINNOW_GC_INTERNAL_H

#include "gc.h"

enum {
  PAGE_BYTES = 64 * 1024,
  SIZE_CLASSES = MAX_YOUNG_WOSIZE + 2,   // indexed by whsize (2 .. 257)
  MARK_STACK_ENTRIES = 1 << 16,
};

typedef struct Page {
  struct Page *next;
  uint32_t whsize;
  uint32_t nblocks;
  Value words[];
} Page;

typedef struct LargeBlock {
  struct LargeBlock *next;
  uint64_t whsize;
  Value words[];          // words[0] is the header
} LargeBlock;

typedef struct StaticBlock {
  struct StaticBlock *next;
  Value words[];
} StaticBlock;

struct MajorHeap {
  Page *pages[SIZE_CLASSES];
  Value free_list[SIZE_CLASSES];   // a free block (Value of field 0), or 0
  LargeBlock *large;
  StaticBlock *statics;
  Value *mark_stack;               // bounded; see gc/major.c part 2
  uint32_t mark_top;
  bool mark_overflow;
  Value *promoted;                 // minor GC: promoted blocks still to scan
  uint64_t promoted_count, promoted_cap;
};

// Allocates in the major heap without collecting or sampling (promotion and
// the public funnels use it). Never returns NULL (exits on OOM... see heap.c).
Value major_alloc_raw(Vm *vm, uint64_t wosize, unsigned tag);
// Runs the mark and sweep of a major cycle (the minor heap must be empty).
void major_collect(Vm *vm);
void major_free_all(MajorHeap *heap);
// Iterates the blocks of the major heap: calls fn(vm, v, data) for each
// non-free block (used by the verifier and by mark-stack overflow rescans).
void major_each_block(Vm *vm, void (*fn)(Vm *vm, Value v, void *data), void *data);
uint64_t major_live_threshold(const Vm *vm);

#endif
