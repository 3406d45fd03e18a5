// gc_internal.h - shared between the files of gc/ only.
// The major heap: size-segregated pages for blocks of at most MAX_YOUNG_WOSIZE
// fields, a LargeBlock (carved from a large chunk or mapped alone) for each
// bigger block (design: gc/major.c).
//
//   Page (PAGE_BYTES, one size class `whsize`, room for `capacity` blocks):
//   +------+-------------+-------------+-----+-------------------------+
//   | Page | hd | fields | hd | fields | ... | not carved yet          |
//   +------+-------------+-------------+-----+-------------------------+
//          '---------- nblocks blocks -------'
//
// Only words[0 .. nblocks*whsize) hold blocks (each starts with a header);
// the rest holds nothing meaningful (never written, zeroes, or stale blocks
// of the class that used the page before the pool): every walk over a page
// (sweep, major_each_block, verifier) stops at nblocks. Pages are the
// CHUNK_BYTES / PAGE_BYTES consecutive slices of aligned chunks.
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
  HUGE_PAGE_BYTES = 2 * 1024 * 1024,     // x86-64's transparent huge page
  OS_PAGE_BYTES = 4096,                  // the system's page (mmap, madvise)
  CHUNK_BYTES = HUGE_PAGE_BYTES,         // pages come from the system in aligned chunks
  SIZE_CLASSES = MAX_YOUNG_WOSIZE + 2,   // indexed by whsize (2 .. 257)
  MARK_STACK_ENTRIES = 1 << 16,
};

typedef struct Page {
  struct Page *next;      // next page of the class, or of the pool
  uint32_t whsize;        // size class (meaningless while pooled)
  uint32_t nblocks;       // blocks carved: 0 < nblocks <= capacity in a class
  uint32_t capacity;      // page_capacity(whsize)
  uint32_t unused;
  Value words[];
} Page;

// Blocks of whsize words that fit in one page.
static inline uint32_t page_capacity(uint32_t whsize) {
  return (uint32_t)((PAGE_BYTES - sizeof(Page)) / sizeof(Value) / whsize);
}

typedef struct LargeBlock {
  struct LargeBlock *next;
  uint64_t whsize;        // of the block it holds (heap_words counts this)
  uint64_t capacity;      // words of room for it: large_bin_capacity(bin)
  bool own_mapping;       // mmap'ed alone (else carved from a large chunk)
  bool released;          // in a bin, its memory given back (MADV_DONTNEED)
  Value words[];          // words[0] is the header
} LargeBlock;

// Large blocks get their size rounded up to the top of a bin: bins are
// quarter powers of two, [(4+q) << (e-2), (5+q) << (e-2)) words, so a block
// wastes under a fifth of its size. The sweep keeps dead blocks of the bins
// below LARGE_BINS in per-bin free lists (gc/major.c part 6). Blocks of at
// most LARGE_CARVE_BYTES are carved from large chunks (CHUNK_BYTES, huge
// pages); bigger ones are mapped alone.
enum { LARGE_BINS = 48 };   // bins up to 2^20 words (8 MiB) are reused
enum { LARGE_CARVE_BYTES = CHUNK_BYTES / 4 };

static inline uint32_t large_bin(uint64_t whsize) {
  uint32_t e = 63u - (uint32_t)__builtin_clzll(whsize);   // whsize >= 258: e >= 8
  uint32_t q = (uint32_t)(whsize >> (e - 2)) & 3u;
  return (e - 8) * 4 + q;
}

static inline uint64_t large_bin_capacity(uint32_t bin) {
  uint32_t e = bin / 4 + 8, q = bin % 4;
  return ((uint64_t)(5 + q) << (e - 2)) - 1;
}

typedef struct StaticBlock {
  struct StaticBlock *next;
  Value words[];
} StaticBlock;

// Page ownership: every page of every chunk is in exactly one of pages[c]
// (it holds blocks of class c), the pool (empty, resident: any class may take
// it), `released` (empty, its memory given back to the system) or the
// never-used tail [chunk_next, chunk_end) of the newest chunk.
// carving[c] is NULL or the one page of pages[c] with nblocks < capacity;
// every other page of pages[c] is carved to capacity (gc_verify checks both).
// Gc.stat()'s heap_words counts capacity * whsize words for each page of
// pages[] (carved or not: the page is the class's) plus every large block's
// whsize; pooled, released and unused pages are not counted: they hold no
// blocks, the pool is bounded by the last major cycle (gc/major.c part 5),
// and heap_words stays what max_heap_words limits, the room given to blocks.
struct MajorHeap {
  Page *pages[SIZE_CLASSES];
  Value free_list[SIZE_CLASSES];   // a free block (Value of field 0), or 0
  Page *carving[SIZE_CLASSES];     // page still being carved, or NULL
  Page *pool;                      // empty pages of no class (LIFO)
  uint64_t pool_pages;             // length of the pool list
  Page **released;                 // empty pages without memory (MADV_DONTNEED):
  uint64_t released_pages, released_cap;   // kept off the pages, which stay untouched
  char *chunk_next, *chunk_end;    // never-used pages of the newest chunk
  void **chunks;                   // every chunk mapped, unmapped at exit
  uint64_t chunk_count, chunk_cap;
  LargeBlock *large;
  LargeBlock *large_free[LARGE_BINS];   // dead large blocks kept for reuse
  uint64_t large_free_words;       // capacities of the resident ones, summed
                                   // (not in heap_words; see gc/major.c part 6)
  char *large_next, *large_end;    // never-used room of the newest large chunk
  void **large_chunks;             // every large chunk, unmapped at exit
  uint64_t large_chunk_count, large_chunk_cap;
  StaticBlock *statics;
  Value *mark_stack;               // bounded; see gc/major.c part 2
  uint32_t mark_top;
  bool mark_overflow;
  Value *promoted;                 // minor GC: promoted blocks still to scan
  uint64_t promoted_count, promoted_cap;
};

// Allocates in the major heap without collecting or sampling (promotion and
// the public funnels use it). Returns 0 when the system has no memory left.
Value major_alloc_raw(Vm *vm, uint64_t wosize, unsigned tag);
// Runs the mark and sweep of a major cycle (the minor heap must be empty);
// the mark records paths when vm->gc.path_request is set (and takes it).
void major_collect(Vm *vm);
// The plain mark (gc/major.c part 2), and its overflow rescan alone: every
// BLACK block's WHITE children marked, until a pass overflows no more.
void major_mark(Vm *vm);
void major_mark_rescan(Vm *vm);
// The mark that records paths (gc/mark_paths.c).
void major_mark_paths(Vm *vm, GcPathRequest *req);
void major_free_all(MajorHeap *heap);
// Most pages the pool keeps after a major cycle (gc/major.c part 5).
uint64_t major_pool_limit_pages(const Vm *vm);
// Iterates the blocks of the major heap: calls fn(vm, v, data) for each
// non-free block (used by the verifier and by mark-stack overflow rescans).
void major_each_block(Vm *vm, void (*fn)(Vm *vm, Value v, void *data), void *data);
// The words a major cycle lets be promoted or allocated in the major heap
// before the next one runs: the live words of the last cycle, but at least
// MAJOR_FLOOR_WORDS, so that a small heap is not collected every few blocks.
// 2^19 words (4 MiB) rather than 2^20: reused major memory stays warmer in
// the cache (string_build, whose large strings churn through the major heap,
// ran 0.93x as long; the other bench programs within 1.5 %, alternating
// runs) and the heap's footprint shrinks by 4-8 MiB. The price is the odd
// extra major cycle while a program's live data grows: word_count runs 7 %
// more instructions at 200,000 words, none more at 1,000,000
// (bench/README.md). Kept in vm->gc.major_threshold, set from the live
// words by each major cycle (and gc_init): every major allocation tests it
// while memprof samples (gc/heap.c, gc_alloc_major).
enum { MAJOR_FLOOR_WORDS = 1u << 19 };
static inline uint64_t major_threshold_for(uint64_t live_words) {
  return live_words > MAJOR_FLOOR_WORDS ? live_words : MAJOR_FLOOR_WORDS;
}

#endif
