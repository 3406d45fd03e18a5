// test_ops.c - cmocka tests for the string paths of lang/runtime/ops.c: integer
// formatting against snprintf, short copies touching nothing outside their
// ranges, the padding of ops_string_uninit blocks, == / compare / hash on
// strings whose lengths differ only inside the padding word, and hash: its
// string values, its spread of adversarial key families over buckets, equal
// values hashing equal.
#include <math.h>

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

// The hash of a string, recomputed from its bytes and the layout of
// core/value.h (little-endian words, zero padding, the padding count in the
// last byte) and the step, finish and seed that ops.c states: the values
// Hashtbl orders depend on.
static uint64_t spec_rotl(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }
static uint64_t spec_step(uint64_t h, uint64_t w) {
  return spec_rotl(h ^ (w * 0xa0761d6478bd642full), 29) * 0xe7037ed1a0b428dbull;
}
static uint64_t spec_finish(uint64_t h) {
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 32;
  return h & (((uint64_t)1 << 62) - 1);
}
static uint64_t spec_string_hash(const char *s, size_t len) {
  size_t words = (len + 8) / 8;
  uint64_t h = spec_step(0x9e3779b97f4a7c15ull, (uint64_t)words << 8 | TAG_STRING);
  for (size_t i = 0; i < words; i++) {
    uint64_t w = 0;
    for (size_t b = 0; b < 8; b++) {
      size_t at = i * 8 + b;
      uint64_t byte = at < len ? (unsigned char)s[at] : at == words * 8 - 1 ? words * 8 - 1 - len : 0;
      w |= byte << (8 * b);
    }
    h = spec_step(h, w);
  }
  return spec_finish(h);
}

static void test_string_hash_values(void **state) {
  Vm *vm = ts_vm(state);
  const char *words[] = {"", "a", "hello", "abcdefg", "abcdefgh", "abcdefghijklmnopqrstuvwxyz"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    Value s = ops_string(vm, words[i], strlen(words[i]));
    assert_true(ops_hash(vm, s) == spec_string_hash(words[i], strlen(words[i])));
  }
}

static Value make_float(Vm *vm, double d) {
  Value v = gc_alloc(vm, 1, TAG_FLOAT);
  memcpy(val_fields(v), &d, sizeof d);
  return v;
}

// A pair of *a and *b (roots, or immediates: read after the allocation).
static Value make_pair(Vm *vm, const Value *a, const Value *b) {
  Value t = gc_alloc(vm, 2, TAG_TUPLE);
  val_fields(t)[0] = *a;
  val_fields(t)[1] = *b;
  return t;
}

static Value make_int_pair(Vm *vm, int64_t a, int64_t b) {
  Value x = val_of_int(a), y = val_of_int(b);
  return make_pair(vm, &x, &y);
}

// The key families of issue 23 whose old hashes (one multiply per word, no
// final mixing) shared their low bits: key k of a family is family(vm, k).
static Value key_float_integral(Vm *vm, int k) { return make_float(vm, (double)k); }
static Value key_float_scaled(Vm *vm, int k) { return make_float(vm, (double)k * 1048576.0); }
static Value key_int_high(Vm *vm, int k) { (void)vm; return val_of_int((int64_t)k << 32); }
static Value key_int_top(Vm *vm, int k) { (void)vm; return val_of_int((int64_t)((uint64_t)k << 45)); }
static Value key_int_small(Vm *vm, int k) { (void)vm; return val_of_int(k); }
static Value key_string(Vm *vm, int k) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "key%d", k);
  return ops_string(vm, buf, (size_t)n);
}
static Value key_string_long(Vm *vm, int k) {   // the difference in the second word only
  char buf[32];
  int n = snprintf(buf, sizeof buf, "prefix--%08d", k);
  return ops_string(vm, buf, (size_t)n);
}
static Value key_pair_diag(Vm *vm, int k) { return make_int_pair(vm, k, k); }
static Value key_pair_grid(Vm *vm, int k) { return make_int_pair(vm, k % 128, k / 128); }
static Value key_pair_floats(Vm *vm, int k) {
  Value f = make_float(vm, (double)k), zero = val_of_int(0);
  vm_push_root(vm, &f);
  Value t = make_pair(vm, &f, &zero);
  vm_pop_roots(vm, 1);
  return t;
}

// The smallest m such that, of `buckets` Poisson(lambda) counts, one at
// least m has probability below 1e-6 (union bound over the buckets).
static int poisson_max_bound(double lambda, int buckets) {
  double pmf = exp(-lambda), cdf = 0;
  for (int m = 0;; m++) {
    if (buckets * (1 - cdf) < 1e-6) return m;
    cdf += pmf;
    pmf *= lambda / (m + 1);
  }
}

// 20,000 keys of each family into B buckets by hash % B, as Hashtbl.index
// does. With a uniform hash the bucket counts are multinomial: Pearson's
// statistic has mean B - 1 and standard deviation sqrt(2 (B - 1)); the
// test allows 6 sigma above the mean. The largest bucket must stay below
// poisson_max_bound (a uniform hash passes but with probability 1e-6).
static void check_spread(Vm *vm, Value (*family)(Vm *, int), const char *name, int buckets) {
  enum { KEYS = 20000 };
  int *count = calloc((size_t)buckets, sizeof *count);
  assert_non_null(count);
  for (int k = 0; k < KEYS; k++) count[ops_hash(vm, family(vm, k)) % (uint64_t)buckets]++;
  double expected = (double)KEYS / buckets, chi2 = 0;
  int max = 0;
  for (int b = 0; b < buckets; b++) {
    chi2 += (count[b] - expected) * (count[b] - expected) / expected;
    if (count[b] > max) max = count[b];
  }
  free(count);
  double limit = (buckets - 1) + 6 * sqrt(2.0 * (buckets - 1));
  int max_limit = poisson_max_bound(expected, buckets);
  if (chi2 > limit || max >= max_limit) fail_msg("%s into %d buckets: chi2 %.0f (limit %.0f), largest bucket %d (limit %d)", name, buckets, chi2,
                   limit, max, max_limit);
}

static void test_hash_spreads_adversarial_keys(void **state) {
  Vm *vm = ts_vm(state);
  struct { Value (*family)(Vm *, int); const char *name; } families[] = {
      {key_float_integral, "integral floats"}, {key_float_scaled, "floats k * 2^20"},
      {key_int_high, "ints k << 32"}, {key_int_top, "ints k << 45"}, {key_int_small, "ints 0..19999"},
      {key_string, "strings key<k>"}, {key_string_long, "strings prefix--<k>"},
      {key_pair_diag, "pairs (k, k)"}, {key_pair_grid, "pairs (k % 128, k / 128)"},
      {key_pair_floats, "pairs (float k, 0)"},
  };
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
    check_spread(vm, families[i].family, families[i].name, 4096);
    check_spread(vm, families[i].family, families[i].name, 1000);
  }
}

// Equal values hash equal, whichever way they were built: 0.0 and -0.0,
// nested tuples, strings made apart, lists; and every nan hashes alike.
static void test_equal_values_hash_equal(void **state) {
  Vm *vm = ts_vm(state);
  Value z = make_float(vm, 0.0);
  vm_push_root(vm, &z);
  Value nz = make_float(vm, -0.0);
  vm_push_root(vm, &nz);
  assert_true(ops_equal(vm, z, nz));
  assert_true(ops_hash(vm, z) == ops_hash(vm, nz));
  Value seven = val_of_int(7);
  Value p1 = make_pair(vm, &z, &seven);
  vm_push_root(vm, &p1);
  Value p2 = make_pair(vm, &nz, &seven);
  vm_push_root(vm, &p2);
  assert_true(ops_equal(vm, p1, p2));
  assert_true(ops_hash(vm, p1) == ops_hash(vm, p2));
  Value n1 = make_float(vm, NAN);
  vm_push_root(vm, &n1);
  Value n2 = make_float(vm, -NAN);
  vm_push_root(vm, &n2);
  assert_true(ops_hash(vm, n1) == ops_hash(vm, n2));
  Value s1 = ops_string(vm, "minnow", 6);
  vm_push_root(vm, &s1);
  Value s2 = ops_string(vm, "minnow", 6);
  vm_push_root(vm, &s2);
  Value l1 = make_pair(vm, &s1, &p1);
  vm_push_root(vm, &l1);
  Value l2 = make_pair(vm, &s2, &p2);
  assert_true(ops_equal(vm, l1, l2));
  assert_true(ops_hash(vm, l1) == ops_hash(vm, l2));
  // A tuple is not a list and 1 is not 1.0: the kinds enter the hash.
  assert_true(ops_hash(vm, val_of_int(1)) != ops_hash(vm, make_float(vm, 1.0)));
  vm_pop_roots(vm, 9);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_format_int_matches_printf, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_string_of_int, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_copy_bytes_stays_in_range, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_uninit_string_padding, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_strings_differing_in_padding, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_string_hash_values, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_hash_spreads_adversarial_keys, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_equal_values_hash_equal, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
