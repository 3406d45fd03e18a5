// test_ops.c - cmocka tests for the string paths of lang/runtime/ops.c: integer
// formatting against snprintf, short copies touching nothing outside their
// ranges, the padding of ops_string_uninit blocks, and == / compare / hash on
// strings whose lengths differ only inside the padding word.
#include "../../lang/runtime/ops.h"
#include "test_support.h"

// --- integers -----------------------------------------------------------------

static void check_int(int64_t n) {
  char want[32], got[OPS_INT_CHARS];
  snprintf(want, sizeof want, "%lld", (long long)n);
  size_t len = ops_format_int(n, got);
  assert_string_equal(got, want);
  assert_int_equal(len, strlen(want));
}

static void test_format_int_matches_printf(void **state) {
  (void)state;
  check_int(0);
  check_int(MINNOW_INT_MAX);
  check_int(MINNOW_INT_MIN);
  check_int(INT64_MAX);
  check_int(INT64_MIN);
  uint64_t p = 1;   // unsigned: the last step reaches 10^19
  for (int k = 0; k < 19; k++, p *= 10)
    for (int64_t d = -1; d <= 1; d++) {
      check_int((int64_t)p + d);
      check_int(-((int64_t)p + d));
    }
  for (int64_t n = -1000; n <= 1000; n++) check_int(n);
}

static void test_string_of_int(void **state) {
  Vm *vm = ts_vm(state);
  const int64_t cases[] = {0, 7, -7, 10, 1234567, 12345678, -1234567, MINNOW_INT_MAX, MINNOW_INT_MIN};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char want[32];
    int len = snprintf(want, sizeof want, "%lld", (long long)cases[i]);
    Value s = ops_string_of_int(vm, cases[i]);
    assert_int_equal(str_len(s), (size_t)len);
    assert_memory_equal(str_bytes(s), want, (size_t)len + 1);   // NUL-terminated
  }
}

// --- copies and padding ---------------------------------------------------------

static void test_copy_bytes_stays_in_range(void **state) {
  (void)state;
  char src[64], dst[80];
  for (int i = 0; i < 64; i++) src[i] = (char)('A' + i % 26);
  for (size_t n = 0; n <= 40; n++) {
    memset(dst, '#', sizeof dst);
    ops_copy_bytes(dst + 8, src + 3, n);
    for (size_t i = 0; i < sizeof dst; i++) {
      if (i >= 8 && i < 8 + n) assert_int_equal(dst[i], src[3 + i - 8]);
      else assert_int_equal(dst[i], '#');
    }
  }
}

static void test_uninit_string_padding(void **state) {
  Vm *vm = ts_vm(state);
  for (size_t len = 0; len <= 40; len++) {
    Value s = ops_string_uninit(vm, len);
    assert_int_equal(val_wosize(s), str_wosize_for(len));
    assert_int_equal(str_len(s), len);
    const unsigned char *b = (const unsigned char *)str_bytes(s);
    size_t bytes = val_wosize(s) * 8;
    for (size_t i = len; i < bytes - 1; i++) assert_int_equal(b[i], 0);
    memset(val_fields(s), 'x', len);   // filling the bytes leaves the length intact
    assert_int_equal(str_len(s), len);
  }
}

// --- equality, ordering, hashing ---------------------------------------------------

static void test_strings_differing_in_padding(void **state) {
  Vm *vm = ts_vm(state);
  // "abc", "abc\0" and "abc\0\0\0\0" all fit one word; "abcdefg\0" takes two.
  Value a = ops_string(vm, "abc", 3);
  Value b = ops_string(vm, "abc\0", 4);
  Value c = ops_string(vm, "abc\0\0\0\0", 7);
  Value a2 = ops_string(vm, "abc", 3);
  assert_int_equal(val_wosize(a), val_wosize(c));
  assert_true(ops_equal(vm, a, a2));
  assert_false(ops_equal(vm, a, b));
  assert_false(ops_equal(vm, b, c));
  assert_false(ops_equal(vm, a, c));
  assert_int_equal(ops_compare(vm, a, b), -1);
  assert_int_equal(ops_compare(vm, c, b), 1);
  assert_int_equal(ops_compare(vm, a, a2), 0);
  assert_true(ops_hash(vm, a) == ops_hash(vm, a2));
  assert_true(ops_hash(vm, a) != ops_hash(vm, b));
  // Long strings (memcmp path) equal and different in their last byte.
  char big[200];
  memset(big, 'q', sizeof big);
  Value x = ops_string(vm, big, sizeof big);
  Value y = ops_string(vm, big, sizeof big);
  big[199] = 'r';
  Value z = ops_string(vm, big, sizeof big);
  assert_true(ops_equal(vm, x, y));
  assert_false(ops_equal(vm, x, z));
  assert_int_equal(ops_compare(vm, x, z), -1);
}

// FNV-1a over the tag then the bytes, masked to 62 bits: the values Hashtbl
// orders depend on, computed here independently.
static void test_string_hash_is_fnv1a(void **state) {
  Vm *vm = ts_vm(state);
  const char *words[] = {"", "a", "hello", "abcdefgh", "abcdefghijklmnopqrstuvwxyz"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    uint64_t h = 0xcbf29ce484222325ull;
    h = (h ^ TAG_STRING) * 0x100000001b3ull;
    for (const char *p = words[i]; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    Value s = ops_string(vm, words[i], strlen(words[i]));
    assert_true(ops_hash(vm, s) == (h & (((uint64_t)1 << 62) - 1)));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_format_int_matches_printf, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_string_of_int, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_copy_bytes_stays_in_range, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_uninit_string_padding, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_strings_differing_in_padding, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_string_hash_is_fnv1a, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
