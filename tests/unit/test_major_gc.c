// test_major_gc.c - cmocka tests for gc/major.c and the major funnels of
// gc/heap.c: size-class pages and large blocks, mark and sweep (what is freed,
// what is kept), free-list reuse, empty pages leaving their class for the pool (the
// pool itself and lazy carving: test_major_pages.c), the bounded mark
// stack's overflow rescan, gc_full_major, and the heap limit.
#include "test_support.h"
#include "../../gc/gc_internal.h"

// Blocks per page of a size class (gc_internal.h's page layout).
static uint64_t blocks_per_page(uint64_t whsize) {
  return (PAGE_BYTES - sizeof(Page)) / sizeof(Value) / whsize;
}

// The page (of size class whsize) holding block v, or NULL.
static Page *page_of(Vm *vm, Value v, uint32_t whsize) {
  for (Page *p = vm->gc.major->pages[whsize]; p; p = p->next)
    if ((Value *)(uintptr_t)v > p->words && (Value *)(uintptr_t)v < p->words + p->nblocks * whsize) return p;
  return NULL;
}

static uint64_t page_count(Vm *vm, uint32_t whsize) {
  uint64_t n = 0;
  for (Page *p = vm->gc.major->pages[whsize]; p; p = p->next) n++;
  return n;
}

// --- allocation ---------------------------------------------------------------

static void test_alloc_major_small(void **state) {
  Vm *vm = ts_vm(state);
  Value a = gc_alloc_major(vm, 3, TAG_TUPLE);
  assert_false(vm_is_young(vm, a));
  assert_int_equal(ts_young_used(vm), 0);
  assert_int_equal(val_wosize(a), 3);
  assert_int_equal(val_tag(a), TAG_TUPLE);
  assert_int_equal(hd_color(val_hd(a)), COLOR_WHITE);
  // The first block of a class brings a whole page of that class.
  assert_int_equal(vm->gc.stats.heap_words, blocks_per_page(4) * 4);
  assert_true(vm->gc.stats.major_words == 4.0);
  assert_true(page_of(vm, a, 4) != NULL);
  Value b = gc_alloc_major(vm, 3, TAG_ARRAY);
  assert_true(b != a);
  assert_true(page_of(vm, b, 4) == page_of(vm, a, 4));
  assert_int_equal(vm->gc.stats.heap_words, blocks_per_page(4) * 4);
  assert_true(vm->gc.stats.major_words == 8.0);
  // Another size: another page.
  Value c = gc_alloc_major(vm, 1, TAG_FLOAT);
  assert_int_equal(vm->gc.stats.heap_words, blocks_per_page(4) * 4 + blocks_per_page(2) * 2);
  for (int i = 0; i < 3; i++) {
    gc_init_field(vm, a, (uint64_t)i, val_of_int(i));
    gc_init_field(vm, b, (uint64_t)i, a);
  }
  memset(val_fields(c), 0, 8);
  assert_true(gc_verify(vm));
}

static void test_large_blocks(void **state) {
  Vm *vm = ts_vm(state);
  // More than 256 fields: born old even through gc_alloc, one block each.
  Value big = gc_alloc(vm, 300, TAG_ARRAY);
  assert_false(vm_is_young(vm, big));
  assert_int_equal(ts_young_used(vm), 0);
  assert_int_equal(vm->gc.stats.heap_words, 301);
  assert_true(vm->gc.stats.major_words == 301.0);
  assert_int_equal(val_wosize(big), 300);
  Value huge = gc_alloc_major(vm, 100000, TAG_ARRAY);
  assert_int_equal(vm->gc.stats.heap_words, 301 + 100001);
  for (uint64_t i = 0; i < 300; i++) gc_init_field(vm, big, i, val_of_int((int64_t)i));
  for (uint64_t i = 0; i < 100000; i++) gc_init_field(vm, huge, i, big);
  vm_push_root(vm, &huge);
  gc_major(vm);
  // Both reachable: nothing freed, contents intact.
  assert_int_equal(vm->gc.stats.heap_words, 301 + 100001);
  assert_int_equal(vm->gc.stats.live_words, 301 + 100001);
  assert_true(val_field(huge, 99999) == big);
  assert_int_equal(val_to_int(val_field(big, 299)), 299);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
  gc_major(vm);
  assert_int_equal(vm->gc.stats.heap_words, 0);
  assert_int_equal(vm->gc.stats.live_words, 0);
  assert_true(gc_verify(vm));
}

// --- mark and sweep -----------------------------------------------------------------

static void test_major_frees_unreachable(void **state) {
  Vm *vm = ts_vm(state);
  Value keep = ts_major_tuple(vm, val_of_int(1), val_of_int(2));
  vm_push_root(vm, &keep);
  for (int i = 0; i < 5000; i++) ts_major_tuple(vm, val_of_int(i), keep);   // garbage
  for (int i = 0; i < 10; i++) {
    Value big = gc_alloc_major(vm, 400, TAG_ARRAY);                         // garbage
    for (uint64_t j = 0; j < 400; j++) gc_init_field(vm, big, j, VAL_NIL);
  }
  uint64_t pages = (5001 + blocks_per_page(3) - 1) / blocks_per_page(3);
  assert_int_equal(page_count(vm, 3), pages);
  assert_int_equal(vm->gc.stats.heap_words, pages * blocks_per_page(3) * 3 + 10 * 401);
  gc_major(vm);
  assert_int_equal(vm->gc.stats.major_collections, 1);
  assert_int_equal(vm->gc.stats.live_words, 3);
  // Only keep's page is left; the large blocks are gone.
  assert_int_equal(page_count(vm, 3), 1);
  assert_int_equal(vm->gc.stats.heap_words, blocks_per_page(3) * 3);
  assert_int_equal(val_to_int(val_field(keep, 0)), 1);
  assert_int_equal(val_to_int(val_field(keep, 1)), 2);
  assert_int_equal(hd_color(val_hd(keep)), COLOR_WHITE);   // whitened by the sweep
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_major_keeps_reachable_structure(void **state) {
  Vm *vm = ts_vm(state);
  // A large array of 1000 entries -> (i, "s<i>") tuples -> strings, mixed with garbage.
  enum { N = 1000 };
  Value arr = gc_alloc_major(vm, N, TAG_ARRAY);
  for (uint64_t i = 0; i < N; i++) gc_init_field(vm, arr, i, VAL_NIL);
  vm_push_root(vm, &arr);
  Value s = VAL_NIL;
  vm_push_root(vm, &s);
  for (int i = 0; i < N; i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "s%d", i);
    s = ts_string(vm, buf);
    ts_tuple(vm, s, s);                       // garbage (may move s)
    Value t = ts_tuple(vm, val_of_int(i), s);
    gc_write(vm, arr, (uint64_t)i, t);
  }
  vm_pop_roots(vm, 1);
  gc_full_major(vm);
  for (int i = 0; i < N; i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "s%d", i);
    Value t = val_field(arr, (uint64_t)i);
    assert_false(vm_is_young(vm, t));
    assert_int_equal(val_tag(t), TAG_TUPLE);
    assert_int_equal(val_to_int(val_field(t, 0)), i);
    assert_string_equal(str_bytes(val_field(t, 1)), buf);
  }
  // Live: the array, N tuples, N one-word strings ("s999" fits 8 bytes).
  assert_int_equal(vm->gc.stats.live_words, (N + 1) + N * 3 + N * 2);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_unreachable_cycle_freed_reachable_kept(void **state) {
  Vm *vm = ts_vm(state);
  Value a = ts_major_tuple(vm, val_of_int(1), VAL_NIL);
  vm_push_root(vm, &a);
  Value b = ts_major_tuple(vm, val_of_int(2), a);
  gc_write(vm, a, 1, b);                       // a <-> b, rooted
  Value c = ts_major_tuple(vm, val_of_int(3), VAL_NIL);
  Value d = ts_major_tuple(vm, val_of_int(4), c);
  gc_write(vm, c, 1, d);                       // c <-> d, garbage
  gc_major(vm);
  assert_int_equal(vm->gc.stats.live_words, 6);
  assert_int_equal(hd_color(val_hd(c)), COLOR_FREE);
  assert_int_equal(hd_color(val_hd(d)), COLOR_FREE);
  assert_true(val_field(val_field(a, 1), 1) == a);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_free_list_reuse(void **state) {
  Vm *vm = ts_vm(state);
  Value keep = ts_major_tuple(vm, val_of_int(1), val_of_int(1));
  vm_push_root(vm, &keep);
  Value gone = ts_major_tuple(vm, val_of_int(2), val_of_int(2));
  Page *page = page_of(vm, keep, 3);
  assert_true(page_of(vm, gone, 3) == page);
  gc_major(vm);
  assert_int_equal(hd_color(val_hd(gone)), COLOR_FREE);
  uint64_t heap = vm->gc.stats.heap_words;
  // The page has nblocks - 1 free blocks: that many allocations need no new
  // page, and one of them is the freed block.
  uint64_t free_blocks = blocks_per_page(3) - 1;
  bool reused = false;
  for (uint64_t i = 0; i < free_blocks; i++) {
    Value v = gc_alloc_major(vm, 2, TAG_TUPLE);
    gc_init_field(vm, v, 0, val_of_int(0));
    gc_init_field(vm, v, 1, val_of_int(0));
    assert_true(page_of(vm, v, 3) == page);
    assert_true(v != keep);
    if (v == gone) reused = true;
  }
  assert_true(reused);
  assert_int_equal(vm->gc.stats.heap_words, heap);
  assert_int_equal(page_count(vm, 3), 1);
  // The page is full now: the next block needs a new page.
  gc_alloc_major(vm, 2, TAG_TUPLE);
  assert_int_equal(page_count(vm, 3), 2);
  assert_int_equal(vm->gc.stats.heap_words, heap + blocks_per_page(3) * 3);
  vm_pop_roots(vm, 1);
}

static void test_empty_pages_pooled(void **state) {
  Vm *vm = ts_vm(state);
  for (int i = 0; i < 20000; i++) ts_major_tuple(vm, val_of_int(i), val_of_int(i));
  for (int i = 0; i < 3000; i++) gc_alloc_major(vm, 7, TAG_STRING);
  uint64_t pages = page_count(vm, 3) + page_count(vm, 8);
  assert_true(page_count(vm, 3) >= 2);
  assert_true(vm->gc.stats.heap_words >= 20000 * 3 + 3000 * 8);
  assert_int_equal(vm->gc.major->pool_pages, 0);
  gc_major(vm);
  assert_int_equal(page_count(vm, 3), 0);
  assert_int_equal(page_count(vm, 8), 0);
  assert_int_equal(vm->gc.major->pool_pages, pages);   // under the pool's limit
  assert_true(vm->gc.major->free_list[3] == 0);
  assert_int_equal(vm->gc.stats.heap_words, 0);
  assert_int_equal(vm->gc.stats.live_words, 0);
  // And the heap works again afterwards.
  Value t = ts_major_tuple(vm, val_of_int(5), val_of_int(6));
  assert_int_equal(val_to_int(val_field(t, 1)), 6);
  assert_true(gc_verify(vm));
}

// --- the bounded mark stack -------------------------------------------------------

static void test_mark_stack_overflow_rescan(void **state) {
  Vm *vm = ts_vm(state);
  // arr (one large block) -> N tuples t_i = (i, u_i) -> u_i = (2i, 3i).
  // Marking arr pushes N > MARK_STACK_ENTRIES children at once: the rest
  // overflow, and only the rescan reaches their u_i.
  enum { N = 200000 };
  static_assert(N > 2 * MARK_STACK_ENTRIES, "the array must overflow the mark stack");
  Value arr = gc_alloc(vm, N, TAG_ARRAY);
  for (uint64_t i = 0; i < N; i++) gc_init_field(vm, arr, i, VAL_NIL);
  vm_push_root(vm, &arr);
  for (int64_t i = 0; i < N; i++) {
    Value u = ts_tuple(vm, val_of_int(2 * i), val_of_int(3 * i));
    Value t = ts_tuple(vm, val_of_int(i), u);
    gc_write(vm, arr, (uint64_t)i, t);          // young into old: remembered
  }
  gc_minor(vm);                                 // everything is promoted
  assert_int_equal(vm->gc.remembered_count, 0);
  gc_major(vm);
  // Live: the array and 2N tuples of 3 words; nothing else was allocated.
  assert_int_equal(vm->gc.stats.live_words, (N + 1) + 2 * N * 3);
  for (int64_t i = 0; i < N; i++) {
    Value t = val_field(arr, (uint64_t)i);
    assert_int_equal(hd_color(val_hd(t)), COLOR_WHITE);
    assert_int_equal(val_tag(t), TAG_TUPLE);
    assert_int_equal(val_to_int(val_field(t, 0)), i);
    Value u = val_field(t, 1);
    assert_int_equal(hd_color(val_hd(u)), COLOR_WHITE);
    assert_int_equal(val_tag(u), TAG_TUPLE);
    assert_int_equal(val_to_int(val_field(u, 0)), 2 * i);
    assert_int_equal(val_to_int(val_field(u, 1)), 3 * i);
  }
  assert_true(gc_verify(vm));
  // A second cycle (fresh mark stack state) finds the same.
  gc_major(vm);
  assert_int_equal(vm->gc.stats.live_words, (N + 1) + 2 * N * 3);
  vm_pop_roots(vm, 1);
}

static void test_mark_stack_overflow_deep_chains(void **state) {
  Vm *vm = ts_vm(state);
  // A 100000-field array of 5-cell lists: behind every entry that overflowed
  // the mark stack is a chain the rescan must follow to its end.
  enum { N = 100000, LEN = 5 };
  Value arr = gc_alloc_major(vm, N, TAG_ARRAY);
  for (uint64_t i = 0; i < N; i++) gc_init_field(vm, arr, i, VAL_NIL);
  vm_push_root(vm, &arr);
  for (int64_t i = 0; i < N; i++) gc_write(vm, arr, (uint64_t)i, ts_int_list(vm, LEN));
  gc_full_major(vm);
  assert_int_equal(vm->gc.stats.live_words, (N + 1) + (uint64_t)N * LEN * 3);
  for (int64_t i = 0; i < N; i++) ts_check_int_list(val_field(arr, (uint64_t)i), LEN);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// --- full major ----------------------------------------------------------------------

static void test_full_major(void **state) {
  Vm *vm = ts_vm(state);
  Value young = ts_tuple(vm, val_of_int(4), val_of_int(5));
  vm_push_root(vm, &young);
  ts_tuple(vm, val_of_int(0), val_of_int(0));            // young garbage
  Value old_garbage = ts_major_tuple(vm, val_of_int(9), val_of_int(9));
  uint64_t minors = vm->gc.stats.minor_collections;
  gc_full_major(vm);
  assert_int_equal(vm->gc.stats.major_collections, 2);
  assert_int_equal(vm->gc.stats.minor_collections, minors + 2);
  assert_false(vm_is_young(vm, young));
  assert_int_equal(val_to_int(val_field(young, 0)), 4);
  assert_true(vm->gc.stats.promoted_words == 3.0);
  assert_int_equal(vm->gc.stats.live_words, 3);
  // old_garbage shared young's page class; its block is free (or its page gone).
  Page *p = page_of(vm, old_garbage, 3);
  if (p) assert_int_equal(hd_color(val_hd(old_garbage)), COLOR_FREE);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_static_blocks_never_collected(void **state) {
  Vm *vm = ts_vm(state);
  Value s = gc_alloc_static(vm, 1, TAG_STRING);
  memcpy(val_fields(s), "abc", 3);
  str_finish(s, 3);
  Value t = ts_major_tuple(vm, s, s);
  vm_push_root(vm, &t);
  gc_full_major(vm);
  assert_int_equal(hd_color(val_hd(s)), COLOR_STATIC);
  assert_string_equal(str_bytes(val_field(t, 0)), "abc");
  assert_int_equal(vm->gc.stats.live_words, 3);          // statics are not heap words
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// --- the heap limit (Gc.set max_heap_words) ----------------------------------------

static void test_heap_limit_collects_before_failing(void **state) {
  // A million words of garbage arrays through a 300000-word limit: each time
  // the limit is reached a major GC makes room.
  const char *out = ts_run(state,
                           "Gc.set({max_heap_words: 300000})\n"
                           "var i = 0\n"
                           "while i < 1000 { let a = Array.make(1000, i); i = i + 1 }\n"
                           "println(Gc.stat().heap_words <= 300000)\n");
  assert_string_equal(out, "true\n");
  assert_true(ts_vm(state)->gc.stats.major_collections >= 3);
}

static void test_heap_limit_out_of_memory(void **state) {
  // The same arrays kept alive: the limit cannot be met.
  TsChild c = ts_run_forked(state,
                            "Gc.set({max_heap_words: 300000})\n"
                            "var keep = []\n"
                            "var i = 0\n"
                            "while i < 1000 { keep = Array.make(1000, i) :: keep; i = i + 1 }\n"
                            "println(\"unreachable\")\n");
  assert_int_equal(c.status, 1);
  assert_string_equal(c.out, "");
  // Raised at the allocating call, "Array.make(" at 0-based column 24.
  char expect[256];
  const char *path = ((TestCtx *)*state)->path;
  snprintf(expect, sizeof expect, "%s:4:25: error: out of memory\n  at <top> (%s:4:25)\n", path, path);
  assert_string_equal(c.err, expect);
}

// gc_alloc_major's one test: the major GC threshold while memprof does not
// sample; while it does, memprof's next sampled major word if nearer, which
// promotions and a major cycle move with major_since_cycle; a major cycle
// moves the threshold with the live heap.
static void test_major_alloc_limit(void **state) {
  Vm *vm = ts_vm(state);
  assert_int_equal(vm->gc.major_alloc_limit, vm->gc.major_threshold);
  vm->memprof_sampling = true;
  vm->memprof_major_point = vm->gc.major_since_cycle + 1000;
  vm_update_limits(vm);
  assert_true(vm->gc.major_threshold > vm->gc.major_since_cycle + 1000);
  assert_int_equal(vm->gc.major_alloc_limit, vm->gc.major_since_cycle + 1000);
  Value v = gc_alloc_major(vm, 300, TAG_STRING);   // before the point: the fast path
  assert_int_equal(val_wosize(v), 300);
  assert_int_equal(vm->memprof_major_point - vm->gc.major_since_cycle, 1000 - 301);
  v = gc_alloc_major(vm, 700, TAG_STRING);         // holds it: the slow path allocates as well
  assert_int_equal(val_wosize(v), 700);
  // A promotion counts towards the cycle but moves the point as far.
  Value young = gc_alloc(vm, 3, TAG_ARRAY);
  for (int i = 0; i < 3; i++) gc_init_field(vm, young, (uint64_t)i, VAL_NIL);
  vm_push_root(vm, &young);
  vm->memprof_major_point = vm->gc.major_since_cycle + 2000;   // no profile here draws it
  uint64_t since = vm->gc.major_since_cycle;
  gc_minor(vm);
  assert_int_equal(vm->gc.major_since_cycle, since + 4);
  assert_int_equal(vm->memprof_major_point - vm->gc.major_since_cycle, 2000);
  // A major cycle resets major_since_cycle and keeps the point as far ahead.
  vm->memprof_major_point = vm->gc.major_since_cycle + 5000;
  gc_major(vm);
  assert_int_equal(vm->gc.major_since_cycle, 0);
  assert_int_equal(vm->memprof_major_point, 5000);
  vm_pop_roots(vm, 1);
  vm->memprof_sampling = false;
  vm_update_limits(vm);
  assert_int_equal(vm->gc.major_alloc_limit, vm->gc.major_threshold);
  // Keep more than the threshold's floor alive: after the cycle the limit follows.
  enum { N = 1200 };
  Value arr = gc_alloc_major(vm, N, TAG_ARRAY);
  for (int i = 0; i < N; i++) gc_init_field(vm, arr, (uint64_t)i, VAL_NIL);
  vm_push_root(vm, &arr);
  for (int i = 0; i < N; i++) {
    Value big = gc_alloc_major(vm, 1000, TAG_ARRAY);
    for (int j = 0; j < 1000; j++) gc_init_field(vm, big, (uint64_t)j, VAL_NIL);
    gc_write(vm, arr, (uint64_t)i, big);
  }
  gc_major(vm);
  assert_true(vm->gc.stats.live_words > MAJOR_FLOOR_WORDS);
  assert_int_equal(vm->gc.major_alloc_limit, vm->gc.stats.live_words);
  vm_pop_roots(vm, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_major_alloc_limit, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_alloc_major_small, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_large_blocks, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_major_frees_unreachable, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_major_keeps_reachable_structure, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_unreachable_cycle_freed_reachable_kept, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_free_list_reuse, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_empty_pages_pooled, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_mark_stack_overflow_rescan, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_mark_stack_overflow_deep_chains, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_full_major, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_static_blocks_never_collected, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_heap_limit_collects_before_failing, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_heap_limit_out_of_memory, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
