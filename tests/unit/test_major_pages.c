// test_major_pages.c - cmocka tests for the page life cycle of gc/major.c:
// lazy carving (only carved blocks are ever walked), the pool of empty pages
// (reused before the system, cut down after a major, the rest released to
// the system), chunks, heap_words accounting, and the verifier's page checks.
#include <sys/mman.h>

#include "test_support.h"
#include "../../gc/gc_internal.h"

static uint64_t page_count(Vm *vm, uint32_t whsize) {
  uint64_t n = 0;
  for (Page *p = vm->gc.major->pages[whsize]; p; p = p->next) n++;
  return n;
}

static uint64_t free_list_length(Vm *vm, uint32_t whsize) {
  uint64_t n = 0;
  for (Value v = vm->gc.major->free_list[whsize]; v; v = val_field(v, 0)) n++;
  return n;
}

static bool on_free_list(Vm *vm, uint32_t whsize, Value b) {
  for (Value v = vm->gc.major->free_list[whsize]; v; v = val_field(v, 0))
    if (v == b) return true;
  return false;
}

static void count_block(Vm *vm, Value v, void *data) {
  (void)vm;
  (void)v;
  (*(uint64_t *)data)++;
}

static uint64_t block_count(Vm *vm) {
  uint64_t n = 0;
  major_each_block(vm, count_block, &n);
  return n;
}

// A garbage string block of 256 fields (whsize 257), straight from the major
// heap: no collection, no accounting of major_since_cycle.
static Value raw_string(Vm *vm) {
  Value v = major_alloc_raw(vm, 256, TAG_STRING);
  assert_true(v != 0);
  return v;
}

// Whether the first 4 KiB of page p are in memory (mincore).
static bool resident(const Page *p) {
  unsigned char vec[1];
  assert_int_equal(mincore((void *)(uintptr_t)p, 4096, vec), 0);
  return vec[0] & 1;
}

// --- lazy carving -----------------------------------------------------------------

static void test_fresh_page_carved_lazily(void **state) {
  Vm *vm = ts_vm(state);
  enum { K = 10 };
  Value b[K];
  for (int i = 0; i < K; i++) b[i] = ts_major_tuple(vm, val_of_int(i), VAL_NIL);
  Page *p = vm->gc.major->pages[3];
  assert_non_null(p);
  assert_null(p->next);
  assert_int_equal(p->nblocks, K);
  assert_true(vm->gc.major->carving[3] == p);
  assert_true(p->capacity > K);
  // Blocks are carved in address order, each right after the previous one.
  for (int i = 0; i < K; i++) assert_true(val_hd_ptr(b[i]) == p->words + 3 * i);
  // The page is the class's whole: heap_words counts all of it.
  assert_int_equal(vm->gc.stats.heap_words, (uint64_t)p->capacity * 3);
  // Junk past the carved blocks (a STATIC-coloured header everywhere) must
  // never be seen by a walker.
  memset(p->words + 3 * K, 0xff, ((uint64_t)p->capacity - K) * 3 * sizeof(Value));
  assert_int_equal(block_count(vm), K);
  assert_true(gc_verify(vm));
}

static void test_carved_page_sweeps_correctly(void **state) {
  Vm *vm = ts_vm(state);
  enum { K = 10 };
  Value keep[K / 2], dead[K / 2];
  for (int i = 0; i < K / 2; i++) {
    keep[i] = ts_major_tuple(vm, val_of_int(i), VAL_NIL);
    vm_push_root(vm, &keep[i]);
    dead[i] = ts_major_tuple(vm, val_of_int(-i), VAL_NIL);
  }
  Page *p = vm->gc.major->pages[3];
  memset(p->words + 3 * K, 0xff, ((uint64_t)p->capacity - K) * 3 * sizeof(Value));
  gc_major(vm);
  // Exactly the dead carved blocks are free; nothing past nblocks was touched.
  assert_int_equal(free_list_length(vm, 3), K / 2);
  for (int i = 0; i < K / 2; i++) {
    assert_true(on_free_list(vm, 3, dead[i]));
    assert_int_equal(hd_color(val_hd(keep[i])), COLOR_WHITE);
    assert_int_equal(val_to_int(val_field(keep[i], 0)), i);
  }
  assert_int_equal(p->nblocks, K);
  assert_int_equal(vm->gc.stats.live_words, K / 2 * 3);
  assert_int_equal(block_count(vm), K / 2);
  assert_true(p->words[3 * K] == ~(Value)0);
  assert_true(gc_verify(vm));
  // The free blocks are used first, then carving resumes where it stopped.
  for (int i = 0; i < K / 2; i++) {
    Value v = ts_major_tuple(vm, VAL_NIL, VAL_NIL);
    bool was_dead = false;
    for (int j = 0; j < K / 2; j++) was_dead |= v == dead[j];
    assert_true(was_dead);
  }
  assert_int_equal(p->nblocks, K);
  Value next = ts_major_tuple(vm, VAL_NIL, VAL_NIL);
  assert_true(val_hd_ptr(next) == p->words + 3 * K);
  assert_int_equal(p->nblocks, K + 1);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, K / 2);
}

static void test_carving_page_full_then_next(void **state) {
  Vm *vm = ts_vm(state);
  uint32_t cap = page_capacity(3);
  for (uint32_t i = 0; i < cap; i++) ts_major_tuple(vm, VAL_NIL, VAL_NIL);
  assert_int_equal(page_count(vm, 3), 1);
  assert_int_equal(vm->gc.major->pages[3]->nblocks, cap);
  assert_null(vm->gc.major->carving[3]);   // full: no longer the carving page
  ts_major_tuple(vm, VAL_NIL, VAL_NIL);
  assert_int_equal(page_count(vm, 3), 2);
  assert_true(vm->gc.major->carving[3] == vm->gc.major->pages[3]);
  assert_int_equal(vm->gc.major->pages[3]->nblocks, 1);
  assert_int_equal(vm->gc.stats.heap_words, 2 * (uint64_t)cap * 3);
  assert_true(gc_verify(vm));
}

// --- the pool -------------------------------------------------------------------------

// Pages in classes plus pages in the pool: what the heap holds of the system.
static uint64_t pages_held(Vm *vm) {
  uint64_t n = vm->gc.major->pool_pages;
  for (uint32_t c = 0; c < SIZE_CLASSES; c++) n += page_count(vm, c);
  return n;
}

static void test_pool_reused_across_cycles(void **state) {
  Vm *vm = ts_vm(state);
  // 40 pages of garbage tuples, dropped, five times over: the first round
  // takes pages from the system, the others only from the pool.
  uint32_t n = 40 * page_capacity(3);
  uint64_t held = 0;
  for (int round = 0; round < 5; round++) {
    uint64_t pool_before = vm->gc.major->pool_pages;
    for (uint32_t i = 0; i < n; i++) ts_major_tuple(vm, val_of_int(i), VAL_NIL);
    assert_int_equal(page_count(vm, 3), 40);
    assert_int_equal(vm->gc.stats.heap_words, 40 * (uint64_t)page_capacity(3) * 3);
    if (round > 0) {
      assert_int_equal(vm->gc.major->pool_pages, pool_before - 40);
      assert_int_equal(pages_held(vm), held);
    }
    gc_major(vm);
    assert_int_equal(page_count(vm, 3), 0);
    assert_null(vm->gc.major->carving[3]);
    assert_int_equal(vm->gc.stats.heap_words, 0);
    assert_true(vm->gc.major->pool_pages >= 40);
    if (round == 0) held = pages_held(vm);
    assert_int_equal(pages_held(vm), held);
    assert_int_equal(vm->gc.major->chunk_count, 1 + 40 / (CHUNK_BYTES / PAGE_BYTES));
    assert_int_equal(vm->gc.major->released_pages, 0);
    assert_true(gc_verify(vm));
  }
}

static void test_pool_serves_any_class(void **state) {
  Vm *vm = ts_vm(state);
  for (uint32_t i = 0; i < 3 * page_capacity(3); i++) ts_major_tuple(vm, VAL_NIL, VAL_NIL);
  gc_major(vm);
  uint64_t pooled = vm->gc.major->pool_pages;
  assert_true(pooled >= 3);
  // A class never used before takes a pooled page of another class.
  Value s = raw_string(vm);
  assert_int_equal(vm->gc.major->pool_pages, pooled - 1);
  Page *p = vm->gc.major->pages[257];
  assert_non_null(p);
  assert_int_equal(p->whsize, 257);
  assert_int_equal(p->capacity, page_capacity(257));
  assert_int_equal(p->nblocks, 1);
  assert_true(val_hd_ptr(s) == p->words);
  assert_int_equal(vm->gc.stats.heap_words, (uint64_t)page_capacity(257) * 257);
  assert_true(gc_verify(vm));
}

static void test_pool_bounded_after_major(void **state) {
  Vm *vm = ts_vm(state);
  // Twice as many empty pages as the floor allows: the pool keeps the limit.
  uint64_t floor_pages = major_pool_limit_pages(vm);
  assert_int_equal(floor_pages, (uint64_t)MAJOR_FLOOR_WORDS * sizeof(Value) / PAGE_BYTES);
  for (uint64_t i = 0; i < 2 * floor_pages * page_capacity(257); i++) raw_string(vm);
  assert_int_equal(page_count(vm, 257), 2 * floor_pages);
  uint64_t chunks = vm->gc.major->chunk_count;
  assert_int_equal(chunks, 2 * floor_pages / (CHUNK_BYTES / PAGE_BYTES));
  gc_major(vm);
  assert_int_equal(vm->gc.stats.live_words, 0);
  assert_int_equal(vm->gc.major->pool_pages, floor_pages);
  assert_int_equal(vm->gc.major->released_pages, floor_pages);
  assert_int_equal(vm->gc.stats.heap_words, 0);
  // The released pages' memory went back to the system; pooled pages kept theirs.
  for (uint64_t i = 0; i < floor_pages; i++) assert_false(resident(vm->gc.major->released[i]));
  for (Page *p = vm->gc.major->pool; p; p = p->next) assert_true(resident(p));
  assert_true(gc_verify(vm));
  // Allocating them all again takes the pool, then the released pages: no new chunk.
  for (uint64_t i = 0; i < 2 * floor_pages * page_capacity(257); i++) raw_string(vm);
  assert_int_equal(vm->gc.major->pool_pages, 0);
  assert_int_equal(vm->gc.major->released_pages, 0);
  assert_int_equal(vm->gc.major->chunk_count, chunks);
  raw_string(vm);
  assert_int_equal(vm->gc.major->chunk_count, chunks + 1);
  assert_true(gc_verify(vm));
}

static void test_pool_limit_follows_live_heap(void **state) {
  Vm *vm = ts_vm(state);
  // Keep L pages of strings live (more words than the floor) and drop L more:
  // the limit is the live words' worth of pages, below the L dropped ones.
  uint64_t floor_pages = major_pool_limit_pages(vm);
  uint64_t live_pages = floor_pages * 3 / 2;
  uint64_t n = live_pages * page_capacity(257);
  Value keep = gc_alloc_major(vm, n, TAG_ARRAY);
  for (uint64_t i = 0; i < n; i++) gc_init_field(vm, keep, i, VAL_NIL);
  vm_push_root(vm, &keep);
  for (uint64_t i = 0; i < n; i++) {
    gc_init_field(vm, keep, i, raw_string(vm));
    raw_string(vm);   // garbage, interleaved: half of each page dies
  }
  for (uint64_t i = 0; i < n; i++) raw_string(vm);   // whole pages of garbage
  gc_major(vm);
  uint64_t live = n * 257 + n + 1;
  assert_int_equal(vm->gc.stats.live_words, live);
  uint64_t limit = live * sizeof(Value) / PAGE_BYTES;
  assert_int_equal(major_pool_limit_pages(vm), limit);
  assert_true(limit > floor_pages && limit < live_pages);
  assert_int_equal(vm->gc.major->pool_pages, limit);
  assert_int_equal(page_count(vm, 257), 2 * live_pages);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// --- the verifier's page checks ---------------------------------------------------

static void test_verify_catches_page_errors(void **state) {
  Vm *vm = ts_vm(state);
  for (uint32_t i = 0; i <= page_capacity(3); i++) ts_major_tuple(vm, VAL_NIL, VAL_NIL);
  assert_true(gc_verify(vm));
  Page *full = vm->gc.major->pages[3]->next;
  assert_int_equal(full->nblocks, full->capacity);
  full->nblocks--;                              // partly carved, not the carving page
  assert_false(gc_verify(vm));
  full->nblocks++;
  assert_true(gc_verify(vm));
  vm->gc.stats.heap_words += 1;                 // accounting off by one word
  assert_false(gc_verify(vm));
  vm->gc.stats.heap_words -= 1;
  vm->gc.major->pool_pages += 1;                // pool length wrong
  assert_false(gc_verify(vm));
  vm->gc.major->pool_pages -= 1;
  vm->gc.major->chunk_next += PAGE_BYTES;       // a page lost from every list
  assert_false(gc_verify(vm));
  vm->gc.major->chunk_next -= PAGE_BYTES;
  assert_true(gc_verify(vm));
}

// --- large blocks -----------------------------------------------------------------

static void test_large_bins(void **state) {
  (void)state;
  // Every size lands in a bin whose capacity holds it, within a fifth of it.
  uint32_t prev = 0;
  for (uint64_t w = 258; w < (1u << 21); w += 1 + w / 97) {
    uint32_t bin = large_bin(w);
    assert_true(bin >= prev);
    prev = bin;
    uint64_t cap = large_bin_capacity(bin);
    assert_true(cap >= w);
    assert_true(cap - w < w / 4 + 1);
    // The bin's capacity is the largest size of the bin.
    assert_int_equal(large_bin(cap), bin);
    assert_int_equal(large_bin(cap + 1), bin + 1);
  }
  assert_int_equal(large_bin(258), 0);
  assert_int_equal(large_bin((1u << 20) - 1), LARGE_BINS - 1);
  assert_int_equal(large_bin(1u << 20), LARGE_BINS);
}

static void test_large_blocks_reused(void **state) {
  Vm *vm = ts_vm(state);
  MajorHeap *h = vm->gc.major;
  enum { K = 20 };
  Value b[K];
  for (int i = 0; i < K; i++) b[i] = major_alloc_raw(vm, 300 + (uint64_t)i, TAG_STRING);
  uint64_t words = 0;
  for (int i = 0; i < K; i++) words += 301 + (uint64_t)i;
  assert_int_equal(vm->gc.stats.heap_words, words);
  gc_major(vm);   // all dead: kept in their bins, no longer counted
  assert_int_equal(vm->gc.stats.heap_words, 0);
  assert_null(h->large);
  uint64_t kept = h->large_free_words;
  assert_true(kept >= words);
  assert_true(gc_verify(vm));
  // The same sizes again come from the bins (the same memory), none malloc'ed.
  for (int i = 0; i < K; i++) {
    Value v = major_alloc_raw(vm, 300 + (uint64_t)i, TAG_STRING);
    bool reused = false;
    for (int j = 0; j < K; j++) reused |= v == b[j];
    assert_true(reused);
    assert_int_equal(val_wosize(v), 300 + (uint64_t)i);
  }
  assert_int_equal(h->large_free_words, 0);
  assert_int_equal(vm->gc.stats.heap_words, words);
  assert_true(gc_verify(vm));
}

static void test_large_cache_bounded(void **state) {
  Vm *vm = ts_vm(state);
  MajorHeap *h = vm->gc.major;
  // Three times the bound in dead 1000-field blocks: the sweep that finds
  // them dead keeps them all resident in their bin; the next one, which finds
  // them unused for a whole cycle, gives back all but the bound's worth
  // (major_threshold_for, plus a quarter for the bins' rounding).
  uint64_t bound = vm->gc.major_threshold / 4 * 5;
  uint32_t bin = large_bin(1001);
  uint64_t cap = large_bin_capacity(bin);
  uint64_t n = 3 * bound / cap;
  for (uint64_t i = 0; i < n; i++) major_alloc_raw(vm, 1000, TAG_STRING);
  gc_major(vm);
  assert_int_equal(h->large_free_words, n * cap);
  gc_major(vm);
  assert_true(h->large_free_words <= bound);
  assert_true(h->large_free_words + cap > bound);
  uint64_t resident = 0, listed = 0;
  for (LargeBlock *b = h->large_free[bin]; b; b = b->next) {
    listed++;
    if (!b->released) resident += b->capacity;
    assert_false(b->own_mapping);
  }
  assert_int_equal(listed, n);   // released blocks keep their place in the bin
  assert_int_equal(resident, h->large_free_words);
  assert_true(gc_verify(vm));
  // Reusing a released block works (its pages come back zeroed).
  Value v = major_alloc_raw(vm, 1000, TAG_STRING);
  for (uint64_t i = 0; i < 1000; i++) val_fields(v)[i] = (Value)i;
  assert_int_equal(val_fields(v)[999], 999);
  assert_true(gc_verify(vm));
}

static void test_large_mapped_alone(void **state) {
  Vm *vm = ts_vm(state);
  MajorHeap *h = vm->gc.major;
  // A block bigger than LARGE_CARVE_BYTES has its own mapping; one of a bin
  // past LARGE_BINS is unmapped as soon as it is found dead.
  uint64_t big = LARGE_CARVE_BYTES / sizeof(Value) + 10, huge = (1u << 20) + 5;
  Value a = major_alloc_raw(vm, big, TAG_STRING);
  Value b = major_alloc_raw(vm, huge, TAG_STRING);
  assert_true(h->large->own_mapping);
  assert_true(h->large->next->own_mapping);
  val_fields(a)[big - 1] = 1;
  val_fields(b)[huge - 1] = 1;
  assert_true(gc_verify(vm));
  gc_major(vm);
  assert_null(h->large);
  assert_int_equal(h->large_free_words, large_bin_capacity(large_bin(big + 1)));
  assert_non_null(h->large_free[large_bin(big + 1)]);
  Value c = major_alloc_raw(vm, big, TAG_STRING);
  assert_true(c == a);   // from the bin
  assert_int_equal(h->large_free_words, 0);
  assert_true(gc_verify(vm));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fresh_page_carved_lazily, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_carved_page_sweeps_correctly, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_carving_page_full_then_next, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_pool_reused_across_cycles, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_pool_serves_any_class, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_pool_bounded_after_major, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_pool_limit_follows_live_heap, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_verify_catches_page_errors, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_large_bins, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_large_blocks_reused, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_large_mapped_alone, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_large_cache_bounded, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
