// test_barrier.c - cmocka tests for the write barrier (gc_write,
// gc_init_field in gc/gc.h, gc_remember in gc/heap.c) and the remembered set
// as gc/minor.c uses it and gc/verify.c checks it.
#include "test_support.h"

// An old 2-field tuple holding two ints.
static Value old_pair(Vm *vm) { return ts_major_tuple(vm, val_of_int(0), val_of_int(0)); }

static bool remembered(const Vm *vm, const Value *field) {
  for (uint64_t i = 0; i < vm->gc.remembered_count; i++)
    if (vm->gc.remembered[i] == field) return true;
  return false;
}

static void test_young_into_old_is_remembered(void **state) {
  Vm *vm = ts_vm(state);
  Value old = old_pair(vm);
  vm_push_root(vm, &old);
  Value young = ts_tuple(vm, val_of_int(41), val_of_int(42));
  Value young_addr = young;
  assert_int_equal(vm->gc.remembered_count, 0);
  gc_write(vm, old, 1, young);
  assert_int_equal(vm->gc.remembered_count, 1);
  assert_true(vm->gc.remembered[0] == &val_fields(old)[1]);
  assert_true(val_field(old, 1) == young);
  assert_true(gc_verify(vm));
  // The young block's only reference is the old field: the minor GC keeps it
  // and updates the field.
  gc_minor(vm);
  Value moved = val_field(old, 1);
  assert_false(vm_is_young(vm, moved));
  assert_true(val_hd(young_addr) == 0 && val_field(young_addr, 0) == moved);
  assert_int_equal(val_to_int(val_field(moved, 0)), 41);
  assert_int_equal(val_to_int(val_field(moved, 1)), 42);
  assert_true(vm->gc.stats.promoted_words == 3.0);
  assert_int_equal(vm->gc.remembered_count, 0);   // emptied with the minor heap
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_old_and_immediate_stores_not_remembered(void **state) {
  Vm *vm = ts_vm(state);
  Value old = old_pair(vm);
  vm_push_root(vm, &old);
  Value other_old = old_pair(vm);
  Value constant = gc_alloc_static(vm, 1, TAG_FLOAT);
  gc_write(vm, old, 0, val_of_int(5));
  gc_write(vm, old, 0, VAL_NIL);
  gc_write(vm, old, 0, VAL_EMPTY);
  gc_write(vm, old, 1, other_old);
  gc_write(vm, old, 1, constant);
  gc_write(vm, old, 0, vm->empty_array);
  assert_int_equal(vm->gc.remembered_count, 0);
  assert_true(val_field(old, 1) == constant);
  // Young into young needs no entry either: the minor GC scans young blocks
  // it copies.
  Value y1 = ts_tuple(vm, val_of_int(1), val_of_int(1));
  vm_push_root(vm, &y1);
  Value y2 = ts_tuple(vm, val_of_int(2), val_of_int(2));
  gc_write(vm, y1, 0, y2);
  assert_int_equal(vm->gc.remembered_count, 0);
  assert_true(gc_verify(vm));
  gc_minor(vm);
  assert_int_equal(val_to_int(val_field(val_field(y1, 0), 0)), 2);
  vm_pop_roots(vm, 2);
}

static void test_same_field_twice_recorded_once(void **state) {
  Vm *vm = ts_vm(state);
  Value old = old_pair(vm);
  vm_push_root(vm, &old);
  Value first = ts_tuple(vm, val_of_int(1), val_of_int(1));
  gc_write(vm, old, 0, first);
  Value second = ts_tuple(vm, val_of_int(2), val_of_int(2));
  // The field already holds a young pointer, so it is already remembered.
  gc_write(vm, old, 0, second);
  assert_int_equal(vm->gc.remembered_count, 1);
  // Another field of the same block is another entry.
  gc_write(vm, old, 1, first);
  assert_int_equal(vm->gc.remembered_count, 2);
  assert_true(remembered(vm, &val_fields(old)[0]));
  assert_true(remembered(vm, &val_fields(old)[1]));
  gc_write(vm, old, 1, val_of_int(0));
  gc_minor(vm);
  // Only `second` is reachable (field 0); `first` was overwritten everywhere.
  assert_true(vm->gc.stats.promoted_words == 3.0);
  assert_int_equal(val_to_int(val_field(val_field(old, 0), 0)), 2);
  assert_true(val_hd(first) != 0);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_remembered_set_grows(void **state) {
  Vm *vm = ts_vm(state);
  // 5000 young boxes stored into a large old array (more than the table's
  // first capacity), the minor heap big enough to hold them all at once.
  enum { N = 5000 };
  assert_true(gc_set_minor_size(vm, 4 * N));
  Value arr = gc_alloc(vm, N, TAG_ARRAY);
  for (uint64_t i = 0; i < N; i++) gc_init_field(vm, arr, i, VAL_NIL);
  vm_push_root(vm, &arr);
  uint64_t minors = vm->gc.stats.minor_collections;
  for (int64_t i = 0; i < N; i++) {
    Value box = gc_alloc(vm, 1, TAG_ARRAY);
    val_fields(box)[0] = val_of_int(i);
    gc_write(vm, arr, (uint64_t)i, box);
  }
  assert_int_equal(vm->gc.stats.minor_collections, minors);
  assert_int_equal(vm->gc.remembered_count, N);
  assert_true(gc_verify(vm));
  gc_minor(vm);
  for (int64_t i = 0; i < N; i++) {
    Value box = val_field(arr, (uint64_t)i);
    assert_false(vm_is_young(vm, box));
    assert_int_equal(val_to_int(val_field(box, 0)), i);
  }
  assert_true(vm->gc.stats.promoted_words == 2.0 * N);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_init_field(void **state) {
  Vm *vm = ts_vm(state);
  Value young = ts_tuple(vm, val_of_int(3), val_of_int(4));
  vm_push_root(vm, &young);
  Value old = gc_alloc_major(vm, 3, TAG_TUPLE);
  vm_push_root(vm, &old);
  // Fresh fields hold garbage, which may even look like a young pointer:
  // gc_init_field must not look at it (gc_write would skip the entry).
  val_fields(old)[0] = young;
  gc_init_field(vm, old, 0, young);
  assert_int_equal(vm->gc.remembered_count, 1);
  assert_true(vm->gc.remembered[0] == &val_fields(old)[0]);
  gc_init_field(vm, old, 1, val_of_int(1));
  gc_init_field(vm, old, 2, old);
  assert_int_equal(vm->gc.remembered_count, 1);
  // Into a young block: a plain store, nothing remembered.
  Value y = gc_alloc(vm, 1, TAG_ARRAY);
  gc_init_field(vm, y, 0, young);
  assert_int_equal(vm->gc.remembered_count, 1);
  assert_true(gc_verify(vm));
  Value young_addr = young;
  vm_pop_roots(vm, 2);
  vm_push_root(vm, &old);          // only the old block is a root now
  gc_minor(vm);
  Value moved = val_field(old, 0);
  assert_true(val_field(young_addr, 0) == moved);   // forwarded there
  assert_false(vm_is_young(vm, moved));
  assert_int_equal(val_to_int(val_field(moved, 1)), 4);
  assert_true(val_field(old, 2) == old);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

static void test_verify_catches_missing_entry(void **state) {
  Vm *vm = ts_vm(state);
  Value old = old_pair(vm);
  vm_push_root(vm, &old);
  Value young = ts_tuple(vm, val_of_int(1), val_of_int(2));
  vm_push_root(vm, &young);
  assert_true(gc_verify(vm));
  val_fields(old)[1] = young;            // bypassing the barrier
  fprintf(stderr, "(test_verify_catches_missing_entry: a gc_verify error is expected next)\n");
  assert_false(gc_verify(vm));
  gc_remember(vm, &val_fields(old)[1]);   // what the barrier would have done
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 2);
}

static void test_verify_catches_dangling_field(void **state) {
  Vm *vm = ts_vm(state);
  Value old = old_pair(vm);
  vm_push_root(vm, &old);
  Value freed = old_pair(vm);
  gc_major(vm);                          // `freed` was unreachable: now free
  assert_int_equal(hd_color(val_hd(freed)), COLOR_FREE);
  assert_true(gc_verify(vm));
  val_fields(old)[0] = freed;            // a pointer to a free block
  fprintf(stderr, "(test_verify_catches_dangling_field: a gc_verify error is expected next)\n");
  assert_false(gc_verify(vm));
  val_fields(old)[0] = val_of_int(0);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// The interpreter's stores (a[i] = v, r.f = v) go through the barrier: a big
// array and a promoted record get young values, and the heap verifies.
static void test_interpreter_stores_use_barrier(void **state) {
  const char *out = ts_run(state,
      "let a = Array.make(300, nil)\n"
      "let r = {f: nil}\n"
      "Gc.minor()\n"
      "for i in 0..300 { a[i] = [i, i + 1] }\n"
      "r.f = (1, \"x\")\n"
      "println(Gc.verify())\n"
      "Gc.minor()\n"
      "var sum = 0\n"
      "for l in a { sum = sum + List.hd(l) + List.nth(l, 1) }\n"
      "println(sum)\n"
      "println(r.f)\n"
      "println(Gc.verify())\n");
  // sum over i < 300 of 2i + 1 = 300 * 300
  assert_string_equal(out, "true\n90000\n(1, \"x\")\ntrue\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_young_into_old_is_remembered, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_old_and_immediate_stores_not_remembered, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_same_field_twice_recorded_once, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_remembered_set_grows, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_init_field, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_verify_catches_missing_entry, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_verify_catches_dangling_field, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_interpreter_stores_use_barrier, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
