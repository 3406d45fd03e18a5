// major.c - the major heap: size-segregated pages, free lists, mark and sweep.
//
// 1. Allocation: blocks of at most MAX_YOUNG_WOSIZE fields come from the free
//    list of their exact size class (whsize); when it is empty, the next
//    block is carved from the class's carving page (page->nblocks grows by
//    one: a page is written only as its blocks are handed out, never all at
//    once), and when that page is full a page is taken from the pool of
//    empty pages, else from the released ones, else from the newest chunk.
//    Chunks are CHUNK_BYTES, aligned, and the kernel is asked to back them
//    with huge pages (MADV_HUGEPAGE; a hint, ignored where unsupported): a
//    growing heap then takes one page fault per 2 MiB instead of one per
//    4 KiB. Bigger blocks are large blocks (part 6).
//    The heap never moves a block.
// 2. Mark (stop-the-world, from the roots of gc_scan_roots): a WHITE block
//    reached turns BLACK and, if it holds values, goes on the mark stack. The
//    stack is bounded; when it is full the block stays BLACK but is not pushed
//    and `mark_overflow` is set. Once the stack drains, an overflow rescan
//    walks the heap and pushes the WHITE children of every BLACK block, until
//    a pass ends without overflow.
//    A snapshot's collection marks with gc/mark_paths.c instead, which
//    records the path to each of memprof's sampled blocks it reaches.
// 3. memprof learns which tracked old blocks stayed WHITE (dead) before the
//    sweep reuses them (memprof_major_mark_done).
// 4. Sweep, over the carved blocks of each page: WHITE blocks become FREE and
//    join their class's free list; BLACK ones turn WHITE; a page with no live
//    block leaves its class for the pool; dead large blocks are freed.
// 5. A cycle that leaves more live words than gc.snapshot_peak_words asks
//    for a snapshot (--memtrace-snapshot-peak; taken at the next safe point).
//    The pool is then cut down to major_pool_limit_pages, the words the next
//    cycle may promote before it collects (major_threshold_for): the pool
//    exists so that a program which promotes and drops the same amount cycle
//    after cycle takes its pages back from the pool instead of the system,
//    and a bigger pool would only sit idle. It does not raise the peak
//    footprint: before the next major the heap grows by that much anyway.
//    The pages beyond the limit give their memory back (MADV_DONTNEED) but
//    keep their addresses (the `released` list): chunks are unmapped only by
//    major_free_all, so the heap never splits its mappings page by page.
// 6. Large blocks (more than MAX_YOUNG_WOSIZE fields) get their size rounded
//    up to their bin (gc_internal.h). Up to LARGE_CARVE_BYTES they are carved
//    one after the other from large chunks (CHUNK_BYTES, huge pages, like the
//    pages' chunks); bigger ones are mmap'ed alone. The sweep keeps dead ones
//    in per-bin free lists and alloc_large takes from its bin first: a
//    program that keeps making and dropping big strings reuses the same
//    memory. Dead blocks stay resident while they hold what the next cycle
//    may allocate (like the pool); past that, a block that a whole cycle did
//    not reuse gives its pages back at the next sweep (a carved block keeps
//    its place in the bin, a block mapped alone is unmapped). Carved memory
//    is never unmapped before major_free_all. Not malloc: its heap grows and
//    shrinks 4 KiB at a time, and a page fault costs 10-30 us on a
//    virtualised machine.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gc_internal.h"
#include "../memprof/memprof.h"

// =====================================================================
// Allocation
// =====================================================================

// Maps a chunk (CHUNK_BYTES, aligned to its size, which the kernel is asked
// to back with huge pages) and appends it to a growable array of chunks;
// NULL when the system has no memory.
static char *new_chunk(void ***chunks, uint64_t *count, uint64_t *cap) {
  if (*count == *cap) {
    uint64_t n = *cap ? 2 * *cap : 16;
    void **grown = realloc(*chunks, n * sizeof(void *));
    if (!grown) return NULL;
    *chunks = grown;
    *cap = n;
  }
  // Twice the size, then the unaligned ends are cut off.
  char *m = mmap(NULL, 2 * CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  char *c = (char *)(((uintptr_t)m + CHUNK_BYTES - 1) & ~(uintptr_t)(CHUNK_BYTES - 1));
  if (c > m) munmap(m, (size_t)(c - m));
  munmap(c + CHUNK_BYTES, (size_t)(m + CHUNK_BYTES - c));
  madvise(c, CHUNK_BYTES, MADV_HUGEPAGE);
  (*chunks)[(*count)++] = c;
  return c;
}

// Maps one more chunk and makes it the source of never-used pages.
static bool map_chunk(MajorHeap *h) {
  char *c = new_chunk(&h->chunks, &h->chunk_count, &h->chunk_cap);
  if (!c) return false;
  h->chunk_next = c;
  h->chunk_end = c + CHUNK_BYTES;
  return true;
}

// An empty page of no class: resident ones first. NULL when the system has
// no memory.
static Page *empty_page(MajorHeap *h) {
  Page *p = h->pool;
  if (p) {
    h->pool = p->next;
    h->pool_pages--;
    return p;
  }
  if (h->released_pages > 0) return h->released[--h->released_pages];
  if (h->chunk_next == h->chunk_end && !map_chunk(h)) return NULL;
  p = (Page *)h->chunk_next;
  h->chunk_next += PAGE_BYTES;
  return p;
}

// Moves an empty page to class whsize and makes it the class's carving page.
// Returns NULL when the system has no memory. Out of line: once per page.
static __attribute__((noinline)) Page *take_page(Vm *vm, uint32_t whsize) {
  MajorHeap *h = vm->gc.major;
  Page *p = empty_page(h);
  if (!p) return NULL;
  p->whsize = whsize;
  p->capacity = page_capacity(whsize);
  p->nblocks = 0;
  p->next = h->pages[whsize];
  h->pages[whsize] = p;
  h->carving[whsize] = p;
  vm->gc.stats.heap_words += (uint64_t)p->capacity * whsize;
  return p;
}

// The next never-used block of class whsize (its header is the caller's to
// write). Returns 0 when the system has no memory.
static Value carve(Vm *vm, uint32_t whsize) {
  MajorHeap *h = vm->gc.major;
  Page *p = h->carving[whsize];
  if (!p && !(p = take_page(vm, whsize))) return 0;
  Value *hd = p->words + (uint64_t)p->nblocks * whsize;
  if (++p->nblocks == p->capacity) h->carving[whsize] = NULL;
  return val_of_ptr(hd + 1);
}

// Bytes of memory for a LargeBlock of `capacity` words.
static size_t large_bytes(uint64_t capacity) { return sizeof(LargeBlock) + capacity * sizeof(Value); }

// Bytes of the mapping of an own_mapping block.
static size_t large_mapping_bytes(uint64_t capacity) {
  return (large_bytes(capacity) + OS_PAGE_BYTES - 1) & ~(size_t)(OS_PAGE_BYTES - 1);
}

// Room for a new large block of `capacity` words: carved from the newest
// large chunk (a new one when it has no room left: what remains of the old
// one, less than LARGE_CARVE_BYTES, is not used), or mapped alone when
// bigger than LARGE_CARVE_BYTES. NULL when the system has no memory.
static LargeBlock *new_large(MajorHeap *h, uint64_t capacity) {
  size_t bytes = large_bytes(capacity);
  if (bytes > LARGE_CARVE_BYTES) {
    size_t mapped = large_mapping_bytes(capacity);
    void *m = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    if (mapped >= CHUNK_BYTES) madvise(m, mapped, MADV_HUGEPAGE);   // its aligned 2 MiB spans
    LargeBlock *b = m;
    b->own_mapping = true;
    return b;
  }
  bytes = (bytes + 15) & ~(size_t)15;
  if ((size_t)(h->large_end - h->large_next) < bytes) {
    char *c = new_chunk(&h->large_chunks, &h->large_chunk_count, &h->large_chunk_cap);
    if (!c) return NULL;
    h->large_next = c;
    h->large_end = c + CHUNK_BYTES;
  }
  LargeBlock *b = (LargeBlock *)h->large_next;
  h->large_next += bytes;
  b->own_mapping = false;
  return b;
}

static __attribute__((noinline)) Value alloc_large(Vm *vm, uint64_t wosize, unsigned tag) {
  MajorHeap *h = vm->gc.major;
  uint32_t bin = large_bin(wosize + 1);
  LargeBlock *b = bin < LARGE_BINS ? h->large_free[bin] : NULL;
  if (b) {
    h->large_free[bin] = b->next;
    if (!b->released) h->large_free_words -= b->capacity;
  } else {
    uint64_t capacity = bin < LARGE_BINS ? large_bin_capacity(bin) : wosize + 1;
    b = new_large(h, capacity);
    if (!b) return 0;
    b->capacity = capacity;
  }
  b->released = false;
  b->whsize = wosize + 1;
  b->next = h->large;
  h->large = b;
  b->words[0] = hd_make(wosize, tag, COLOR_WHITE);
  vm->gc.stats.heap_words += wosize + 1;
  return val_of_ptr(b->words + 1);
}

Value major_alloc_raw(Vm *vm, uint64_t wosize, unsigned tag) {
  if (wosize > MAX_YOUNG_WOSIZE) return alloc_large(vm, wosize, tag);
  uint32_t whsize = (uint32_t)wosize + 1;
  MajorHeap *h = vm->gc.major;
  Value v = h->free_list[whsize];
  if (v) h->free_list[whsize] = val_field(v, 0);
  else if (!(v = carve(vm, whsize))) return 0;
  *val_hd_ptr(v) = hd_make(wosize, tag, COLOR_WHITE);
  return v;
}

void major_each_block(Vm *vm, void (*fn)(Vm *vm, Value v, void *data), void *data) {
  MajorHeap *h = vm->gc.major;
  for (uint32_t c = 0; c < SIZE_CLASSES; c++)
    for (Page *p = h->pages[c]; p; p = p->next)
      for (uint32_t i = 0; i < p->nblocks; i++) {
        Value *hd = p->words + (uint64_t)i * p->whsize;
        if (hd_color(hd[0]) != COLOR_FREE) fn(vm, val_of_ptr(hd + 1), data);
      }
  for (LargeBlock *b = h->large; b; b = b->next) fn(vm, val_of_ptr(b->words + 1), data);
}

// Unmaps a block mapped alone; carved blocks go with their chunk.
static void free_large(LargeBlock *b) {
  if (b->own_mapping) munmap(b, large_mapping_bytes(b->capacity));
}

void major_free_all(MajorHeap *h) {
  for (uint64_t i = 0; i < h->chunk_count; i++) munmap(h->chunks[i], CHUNK_BYTES);
  free(h->chunks);
  free(h->released);
  for (LargeBlock *b = h->large, *next; b; b = next) {
    next = b->next;
    free_large(b);
  }
  for (uint32_t bin = 0; bin < LARGE_BINS; bin++)
    for (LargeBlock *b = h->large_free[bin], *next; b; b = next) {
      next = b->next;
      free_large(b);
    }
  for (uint64_t i = 0; i < h->large_chunk_count; i++) munmap(h->large_chunks[i], CHUNK_BYTES);
  free(h->large_chunks);
  for (StaticBlock *b = h->statics, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(h->mark_stack);
  free(h->promoted);
  free(h);
}

// =====================================================================
// Mark
// =====================================================================

static void mark_value(MajorHeap *h, Value v) {
  if (!val_is_ptr(v)) return;
  Header *hd = val_hd_ptr(v);
  if (hd_color(*hd) != COLOR_WHITE) return;
  *hd = hd_with_color(*hd, COLOR_BLACK);
  if (hd_tag(*hd) >= TAG_NO_SCAN) return;
  if (h->mark_top == MARK_STACK_ENTRIES) {
    h->mark_overflow = true;
    return;
  }
  h->mark_stack[h->mark_top++] = v;
}

static void mark_root(Vm *vm, Value *slot, void *data) {
  (void)data;
  mark_value(vm->gc.major, *slot);
}

static void drain_mark_stack(MajorHeap *h) {
  while (h->mark_top > 0) {
    Value b = h->mark_stack[--h->mark_top];
    uint64_t n = val_wosize(b);
    const Value *f = val_fields(b);
    for (uint64_t i = 0; i < n; i++) mark_value(h, f[i]);
  }
}

static void rescan_block(Vm *vm, Value v, void *data) {
  (void)data;
  MajorHeap *h = vm->gc.major;
  Header hd = val_hd(v);
  if (hd_color(hd) != COLOR_BLACK || hd_tag(hd) >= TAG_NO_SCAN) return;
  uint64_t n = hd_wosize(hd);
  for (uint64_t i = 0; i < n; i++) {
    mark_value(h, val_field(v, i));
    drain_mark_stack(h);
  }
}

void major_mark_rescan(Vm *vm) {
  MajorHeap *h = vm->gc.major;
  do {
    h->mark_overflow = false;
    major_each_block(vm, rescan_block, NULL);
  } while (h->mark_overflow);
}

void major_mark(Vm *vm) {
  MajorHeap *h = vm->gc.major;
  h->mark_top = 0;
  h->mark_overflow = false;
  gc_scan_roots(vm, mark_root, NULL);
  drain_mark_stack(h);
  if (h->mark_overflow) major_mark_rescan(vm);
}

// =====================================================================
// Sweep
// =====================================================================

// Sweeps one page; returns its live words. Free blocks are chained into *list.
static uint64_t sweep_page(Page *p, Value *list) {
  uint64_t live = 0;
  Value chain = *list;
  for (uint32_t i = 0; i < p->nblocks; i++) {
    Value *hd = p->words + (uint64_t)i * p->whsize;
    unsigned color = hd_color(hd[0]);
    if (color == COLOR_BLACK) {
      hd[0] = hd_with_color(hd[0], COLOR_WHITE);
      live += p->whsize;
      continue;
    }
    hd[0] = hd_make(p->whsize - 1, 0, COLOR_FREE);
    hd[1] = chain;
    chain = val_of_ptr(hd + 1);
  }
  if (live > 0) *list = chain;
  return live;
}

static uint64_t sweep_class(Vm *vm, uint32_t c) {
  MajorHeap *h = vm->gc.major;
  uint64_t live = 0;
  Value list = 0;
  Page **link = &h->pages[c];
  while (*link) {
    Page *p = *link;
    uint64_t page_live = sweep_page(p, &list);
    if (page_live == 0) {
      *link = p->next;
      vm->gc.stats.heap_words -= (uint64_t)p->capacity * p->whsize;
      if (h->carving[c] == p) h->carving[c] = NULL;
      p->next = h->pool;
      h->pool = p;
      h->pool_pages++;
      continue;
    }
    live += page_live;
    link = &p->next;
  }
  h->free_list[c] = list;
  return live;
}

// Gives back the memory of the whole system pages inside a dead carved block,
// which stays in its bin: the LargeBlock fields and the header stay.
static void release_large(LargeBlock *b) {
  uintptr_t page = OS_PAGE_BYTES, start = ((uintptr_t)(b->words + 1) + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)b + large_bytes(b->capacity)) & ~(page - 1);
  if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
  b->released = true;
}

// Every block in a bin at a sweep has gone unused for at least the whole
// cycle since the sweep that put it there. While the resident ones hold
// more than `keep` words, they give their memory back to the system
// (release_large; blocks mapped alone are unmapped).
static void trim_large_bins(MajorHeap *h, uint64_t keep) {
  for (uint32_t bin = 0; bin < LARGE_BINS && h->large_free_words > keep; bin++) {
    LargeBlock **link = &h->large_free[bin];
    while (*link && h->large_free_words > keep) {
      LargeBlock *b = *link;
      if (!b->released) {
        h->large_free_words -= b->capacity;
        if (b->own_mapping) {
          *link = b->next;
          free_large(b);
          continue;
        }
        release_large(b);
      }
      link = &b->next;
    }
  }
}

// Dead large blocks go, resident, to the head of their bin's free list
// (blocks of bins past LARGE_BINS are unmapped), once the bins have been
// trimmed to the words the next cycle may allocate (major_threshold_for).
static uint64_t sweep_large(Vm *vm) {
  MajorHeap *h = vm->gc.major;
  // Capacities exceed sizes by up to a quarter (gc_internal.h).
  trim_large_bins(h, vm->gc.major_threshold / 4 * 5);
  uint64_t live = 0;
  LargeBlock **link = &h->large;
  while (*link) {
    LargeBlock *b = *link;
    if (hd_color(b->words[0]) == COLOR_BLACK) {
      b->words[0] = hd_with_color(b->words[0], COLOR_WHITE);
      live += b->whsize;
      link = &b->next;
      continue;
    }
    *link = b->next;
    vm->gc.stats.heap_words -= b->whsize;
    uint32_t bin = large_bin(b->whsize);
    if (bin >= LARGE_BINS) {
      free_large(b);
      continue;
    }
    h->large_free_words += b->capacity;
    b->next = h->large_free[bin];
    h->large_free[bin] = b;
  }
  return live;
}

uint64_t major_pool_limit_pages(const Vm *vm) {
  return vm->gc.major_threshold * sizeof(Value) / PAGE_BYTES;
}

// Gives the memory of the pool's pages beyond major_pool_limit_pages back to
// the system; the pages move to the released list.
static void trim_pool(Vm *vm) {
  MajorHeap *h = vm->gc.major;
  uint64_t limit = major_pool_limit_pages(vm);
  if (h->pool_pages <= limit) return;
  uint64_t need = h->released_pages + (h->pool_pages - limit);
  if (need > h->released_cap) {
    Page **released = realloc(h->released, need * sizeof(Page *));
    if (!released) return;   // the pages stay pooled
    h->released = released;
    h->released_cap = need;
  }
  while (h->pool_pages > limit) {
    Page *p = h->pool;
    h->pool = p->next;
    h->pool_pages--;
    madvise(p, PAGE_BYTES, MADV_DONTNEED);
    h->released[h->released_pages++] = p;
  }
}

void major_collect(Vm *vm) {
  GcPathRequest *req = vm->gc.path_request;
  if (req) {
    vm->gc.path_request = NULL;
    req->list_targets(vm, req);
    major_mark_paths(vm, req);
    req->ran = true;
  } else {
    major_mark(vm);
  }
  if (vm->memprof) memprof_major_mark_done(vm);
  uint64_t live = 0;
  for (uint32_t c = 2; c < SIZE_CLASSES; c++) live += sweep_class(vm, c);
  live += sweep_large(vm);
  vm->gc.stats.live_words = live;
  vm->gc.major_threshold = major_threshold_for(live);
  trim_pool(vm);
  vm->gc.stats.major_collections++;
  if (MEMPROF_BUILT && vm->gc.snapshot_peak_words && live > vm->gc.snapshot_peak_words)
    vm_request_snapshot(vm, VM_SNAPSHOT_PEAK);
  vm_restart_major_cycle(vm);
  vm_update_limits(vm);
}

// A whole major collection now, a minor one first (the young blocks are
// roots of nothing then: all promoted or dead).
void gc_major(Vm *vm) {
  if (vm->gc.collecting) return;
  gc_minor(vm);
  vm->gc.collecting = true;
  major_collect(vm);
  vm->gc.collecting = false;
  if (vm->options.gc_verify && !gc_verify(vm)) {
    fprintf(stderr, "minnow: heap verification failed after a major collection\n");
    abort();
  }
}

void gc_full_major(Vm *vm) {
  gc_major(vm);
  gc_major(vm);
}
