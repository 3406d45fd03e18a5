// test_minor_gc.c - cmocka tests for gc/minor.c and the young half of
// gc/heap.c: bump allocation, promotion of what the roots reach, forwarding,
// counters, the emptied minor heap, and long structures copied without
// recursion. Every test checks gc_verify after each collection.
#include "test_support.h"

// --- allocation ---------------------------------------------------------------

static void test_young_alloc_bumps_down(void **state) {
  Vm *vm = ts_vm(state);
  assert_true(vm->young_ptr == vm->young_end);   // a fresh VM has an empty minor heap
  Value a = gc_alloc(vm, 3, TAG_TUPLE);
  assert_true(vm_is_young(vm, a));
  assert_int_equal(ts_young_used(vm), 4);        // 3 fields + header
  assert_true((Value *)(uintptr_t)a == vm->young_ptr + 1);
  Header hd = val_hd(a);
  assert_int_equal(hd_wosize(hd), 3);
  assert_int_equal(hd_tag(hd), TAG_TUPLE);
  assert_int_equal(hd_color(hd), COLOR_WHITE);
  Value b = gc_alloc(vm, 1, TAG_FLOAT);
  // The next block sits right below: its 2 words end where a's header is.
  assert_true((Value *)(uintptr_t)b + 1 == val_hd_ptr(a));
  assert_int_equal(ts_young_used(vm), 6);
  assert_true(gc_minor_words_now(vm) == 6.0);
  assert_int_equal(vm->gc.stats.minor_collections, 0);
  val_fields(a)[0] = val_fields(a)[1] = val_fields(a)[2] = val_of_int(1);
  memset(val_fields(b), 0, 8);
  assert_true(gc_verify(vm));
}

// While memprof has callbacks queued it raises young_limit to young_end so
// that the interpreter's next allocation takes the slow path and delivers
// them; C allocations cannot deliver, so their limit stays where it was.
static void test_forced_slow_path_spares_c_allocations(void **state) {
  Vm *vm = ts_vm(state);
  Value *limit_before = vm->young_limit;
  assert_true(vm->young_limit_c == limit_before);
  vm->memprof_force_slow = true;
  vm_update_limits(vm);
  assert_true(vm->young_limit == vm->young_end);
  assert_true(vm->young_limit_c == limit_before);
  Value a = gc_alloc(vm, 2, TAG_TUPLE);
  assert_true(vm_is_young(vm, a));
  assert_int_equal(ts_young_used(vm), 3);
  vm->memprof_force_slow = false;
  vm_update_limits(vm);
  assert_true(vm->young_limit == limit_before && vm->young_limit_c == limit_before);
  val_fields(a)[0] = val_fields(a)[1] = val_of_int(0);
  assert_true(gc_verify(vm));
}

static void test_zero_and_max_young_sizes(void **state) {
  Vm *vm = ts_vm(state);
  // No block of 0 fields is ever made: the shared empty array stands for all.
  assert_true(gc_alloc(vm, 0, TAG_ARRAY) == vm->empty_array);
  assert_int_equal(ts_young_used(vm), 0);
  Value big = gc_alloc(vm, MAX_YOUNG_WOSIZE, TAG_ARRAY);
  assert_true(vm_is_young(vm, big));
  assert_int_equal(ts_young_used(vm), MAX_YOUNG_WOSIZE + 1);
  for (int i = 0; i < MAX_YOUNG_WOSIZE; i++) val_fields(big)[i] = val_of_int(i);
  Value bigger = gc_alloc(vm, MAX_YOUNG_WOSIZE + 1, TAG_ARRAY);
  assert_false(vm_is_young(vm, bigger));
  assert_int_equal(ts_young_used(vm), MAX_YOUNG_WOSIZE + 1);
  for (int i = 0; i <= MAX_YOUNG_WOSIZE; i++) gc_init_field(vm, bigger, (uint64_t)i, VAL_NIL);
  assert_true(gc_verify(vm));
}

// --- what a minor collection copies -------------------------------------------------

static void test_rooted_block_promoted_dead_block_not(void **state) {
  Vm *vm = ts_vm(state);
  Value dead = ts_tuple(vm, val_of_int(10), val_of_int(20));
  Value live = ts_tuple(vm, val_of_int(1), val_of_int(2));
  Value young_live = live;
  vm_push_root(vm, &live);
  assert_int_equal(ts_young_used(vm), 6);
  gc_minor(vm);
  // The root now points to an old copy with the same header and fields.
  assert_false(vm_is_young(vm, live));
  assert_true(live != young_live);
  assert_int_equal(val_wosize(live), 2);
  assert_int_equal(val_tag(live), TAG_TUPLE);
  assert_int_equal(hd_color(val_hd(live)), COLOR_WHITE);
  assert_int_equal(val_to_int(val_field(live, 0)), 1);
  assert_int_equal(val_to_int(val_field(live, 1)), 2);
  // The young original is forwarded: header 0, field 0 = the new address.
  assert_true(val_hd(young_live) == 0);
  assert_true(val_field(young_live, 0) == live);
  // The dead block was left alone (not forwarded, not copied).
  assert_true(val_hd(dead) != 0);
  assert_int_equal(val_to_int(val_field(dead, 0)), 10);
  assert_true(vm->gc.stats.promoted_words == 3.0);
  assert_true(vm->gc.stats.major_words == 3.0);
  assert_true(vm->gc.stats.minor_words == 6.0);
  assert_int_equal(vm->gc.stats.minor_collections, 1);
  assert_true(vm->young_ptr == vm->young_end);
  assert_true(gc_minor_words_now(vm) == 6.0);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_forwarding_keeps_sharing(void **state) {
  Vm *vm = ts_vm(state);
  Value shared = ts_tuple(vm, val_of_int(7), val_of_int(8));
  vm_push_root(vm, &shared);
  Value a = ts_tuple(vm, shared, shared);
  vm_push_root(vm, &a);
  Value b = ts_tuple(vm, shared, val_of_int(1));
  vm_push_root(vm, &b);
  Value alias = shared;                // a second root slot on the same block
  vm_push_root(vm, &alias);
  gc_minor(vm);
  assert_false(vm_is_young(vm, shared));
  assert_true(val_field(a, 0) == shared);
  assert_true(val_field(a, 1) == shared);
  assert_true(val_field(b, 0) == shared);
  assert_true(alias == shared);
  assert_int_equal(val_to_int(val_field(shared, 0)), 7);
  assert_int_equal(val_to_int(val_field(shared, 1)), 8);
  // Three blocks of 3 words, each copied once.
  assert_true(vm->gc.stats.promoted_words == 9.0);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 4);
}

static void test_old_blocks_not_copied_again(void **state) {
  Vm *vm = ts_vm(state);
  Value l = ts_int_list(vm, 100);
  vm_push_root(vm, &l);
  gc_minor(vm);
  assert_true(vm->gc.stats.promoted_words == 300.0);
  Value old = l;
  gc_minor(vm);
  assert_true(l == old);                   // old blocks never move
  assert_true(vm->gc.stats.promoted_words == 300.0);
  assert_int_equal(vm->gc.stats.minor_collections, 2);
  // Young cells in front of an old list: only they are promoted.
  for (int i = 100; i < 110; i++) l = ts_cons(vm, val_of_int(i), l);
  gc_minor(vm);
  assert_true(vm->gc.stats.promoted_words == 330.0);
  ts_check_int_list(l, 110);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_no_scan_blocks_not_followed(void **state) {
  Vm *vm = ts_vm(state);
  Value victim = ts_tuple(vm, val_of_int(1), val_of_int(2));
  // A string whose bytes happen to hold a young address, and a float likewise.
  Value s = gc_alloc(vm, 2, TAG_STRING);
  val_fields(s)[0] = victim;
  str_finish(s, 8);
  vm_push_root(vm, &s);
  Value f = gc_alloc(vm, 1, TAG_FLOAT);
  val_fields(f)[0] = victim;
  vm_push_root(vm, &f);
  gc_minor(vm);
  assert_false(vm_is_young(vm, s));
  assert_true(val_field(s, 0) == victim);   // bytes unchanged
  assert_true(val_field(f, 0) == victim);
  assert_true(val_hd(victim) != 0);         // not forwarded
  assert_true(vm->gc.stats.promoted_words == 5.0);  // 3 (string) + 2 (float)
  assert_int_equal(str_len(s), 8);
  vm_pop_roots(vm, 2);
}

static void test_every_field_of_a_wide_block(void **state) {
  Vm *vm = ts_vm(state);
  // 256 fields (still young), each a distinct young 1-field block.
  enum { N = MAX_YOUNG_WOSIZE };
  Value arr = gc_alloc(vm, N, TAG_ARRAY);
  for (int i = 0; i < N; i++) val_fields(arr)[i] = VAL_NIL;
  vm_push_root(vm, &arr);
  for (int i = 0; i < N; i++) {
    Value box = gc_alloc(vm, 1, TAG_ARRAY);
    val_fields(box)[0] = val_of_int(i * 3);
    // arr may already be old if a collection ran: go through the barrier.
    gc_write(vm, arr, (uint64_t)i, box);
  }
  gc_minor(vm);
  assert_false(vm_is_young(vm, arr));
  for (int i = 0; i < N; i++) {
    Value box = val_field(arr, (uint64_t)i);
    assert_false(vm_is_young(vm, box));
    assert_int_equal(val_wosize(box), 1);
    assert_int_equal(val_to_int(val_field(box, 0)), i * 3);
  }
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// --- collections triggered by allocation -----------------------------------------

static void test_full_minor_heap_collects(void **state) {
  Vm *vm = ts_vm(state);
  // 20000 cells = 60000 words through a 4096-word minor heap.
  Value l = ts_int_list(vm, 20000);
  vm_push_root(vm, &l);
  assert_true(vm->gc.stats.minor_collections >= 60000 / TS_MINOR_WORDS);
  // Every word allocated is counted once, in the minor counter.
  assert_true(gc_minor_words_now(vm) == 60000.0);
  // What has been promoted plus what is still young is the whole list.
  assert_true(vm->gc.stats.promoted_words + (double)ts_young_used(vm) == 60000.0);
  ts_check_int_list(l, 20000);
  assert_true(gc_verify(vm));
  gc_minor(vm);
  assert_true(vm->gc.stats.promoted_words == 60000.0);
  ts_check_int_list(l, 20000);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_garbage_only_is_not_promoted(void **state) {
  Vm *vm = ts_vm(state);
  for (int i = 0; i < 10000; i++) ts_tuple(vm, val_of_int(i), val_of_int(i));
  assert_true(vm->gc.stats.minor_collections > 0);
  assert_true(vm->gc.stats.promoted_words == 0.0);
  assert_int_equal(vm->gc.stats.heap_words, 0);
  assert_true(gc_verify(vm));
}

// --- long structures ----------------------------------------------------------------

static void test_long_young_list_promoted_iteratively(void **state) {
  Vm *vm = ts_vm(state);
  // A million cells, all young at once: a recursive copy would need a
  // million nested C frames.
  enum { N = 1000000 };
  assert_true(gc_set_minor_size(vm, 3 * N + 16));
  uint64_t before = vm->gc.stats.minor_collections;
  Value l = ts_int_list(vm, N);
  vm_push_root(vm, &l);
  assert_int_equal(vm->gc.stats.minor_collections, before);   // all still young
  assert_true(vm_is_young(vm, l));
  gc_minor(vm);
  assert_true(vm->gc.stats.promoted_words == 3.0 * N);
  assert_true(vm->young_ptr == vm->young_end);
  Value c = l;
  for (int i = 0; i < N; i++, c = val_field(c, 1)) assert_false(vm_is_young(vm, c));
  ts_check_int_list(l, N);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_long_list_young_to_old_chain(void **state) {
  Vm *vm = ts_vm(state);
  // 100k cells built through the small heap: each minor GC promotes the
  // young prefix, whose last cell points to the already old rest.
  Value l = ts_int_list(vm, 100000);
  vm_push_root(vm, &l);
  gc_full_major(vm);
  ts_check_int_list(l, 100000);
  assert_int_equal(vm->gc.stats.live_words, 300000);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_young_alloc_bumps_down, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_forced_slow_path_spares_c_allocations, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_zero_and_max_young_sizes, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_rooted_block_promoted_dead_block_not, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_forwarding_keeps_sharing, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_old_blocks_not_copied_again, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_no_scan_blocks_not_followed, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_every_field_of_a_wide_block, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_full_minor_heap_collects, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_garbage_only_is_not_promoted, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_long_young_list_promoted_iteratively, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_long_list_young_to_old_chain, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
