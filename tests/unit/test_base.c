// test_base.c - base/, the dependency-free helpers every program shares:
//   1. number.h: counts, decimals and rates read strictly (odd forms refused,
//      edges exact, nothing wrapped);
//   2. suggest.h: the nearest name within the allowed distance, swaps counted
//      as one edit, nothing for short or far words;
//   3. options.h: --opt VALUE, --opt=VALUE, -xVALUE, flags, the refusals'
//      texts, "did you mean".
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "../../base/number.h"
#include "../../base/options.h"
#include "../../base/grow.h"
#include "../../base/suggest.h"

static void test_counts(void **state) {
  (void)state;
  uint64_t v = 7;
  assert_true(number_parse_count("0", 10, &v) && v == 0);
  assert_true(number_parse_count("4294967296", UINT64_MAX, &v) && v == 4294967296u);
  assert_true(number_parse_count("18446744073709551615", UINT64_MAX, &v) && v == UINT64_MAX);
  v = 7;
  const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1e6", "0x10", "12abc", "18446744073709551616", "1.0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (number_parse_count(bad[i], UINT64_MAX, &v)) fail_msg("'%s' read as a count", bad[i]);
    assert_int_equal(v, 7);
  }
  assert_false(number_parse_count("11", 10, &v));
  assert_false(number_parse_count(NULL, 10, &v));
}

static void test_decimals_and_rates(void **state) {
  (void)state;
  double d = -1;
  assert_true(number_parse_decimal(".5", &d) && d == 0.5);
  assert_true(number_parse_decimal("1.", &d) && d == 1.0);
  assert_true(number_parse_decimal("2e3", &d) && d == 2000);
  assert_true(number_parse_decimal("1E-5", &d) && d == 1e-5);
  const char *bad[] = {"", ".", "e5", "1e", "1e+", "-1", "+1", " 1", "1 ", "0x1p3", "inf", "nan", "1.2.3", "1e400"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (number_parse_decimal(bad[i], &d)) fail_msg("'%s' read as a decimal", bad[i]);
  assert_true(number_parse_rate("1", &d) && d == 1);
  assert_true(number_parse_rate("1e-5", &d) && d == 1e-5);
  assert_false(number_parse_rate("0", &d));
  assert_false(number_parse_rate("1.0000001", &d));
  assert_false(number_parse_rate("0x0.8", &d));
}

static const char *nearest(const char *typed, const char *const *names, size_t n) {
  Suggestion s;
  suggestion_init(&s, typed);
  for (size_t i = 0; i < n; i++) suggestion_consider(&s, names[i]);
  return suggestion_best(&s);
}

static void test_suggest(void **state) {
  (void)state;
  const char *const names[] = {"--live", "--by", "--json", "--whole-stacks", "--memtrace-rate", "--memtrace"};
  size_t n = sizeof names / sizeof names[0];
  assert_string_equal(nearest("--liv", names, n), "--live");
  assert_string_equal(nearest("--lvie", names, n), "--live");            // a swap is one edit
  assert_string_equal(nearest("--whole-stack", names, n), "--whole-stacks");
  assert_string_equal(nearest("--memtrace-rte", names, n), "--memtrace-rate");
  assert_string_equal(nearest("--memtrac", names, n), "--memtrace");
  assert_null(nearest("--frobnicate", names, n));
  assert_null(nearest("-m", names, n));                                   // too short to guess
  assert_null(nearest("--live", names, n));                               // itself is no suggestion
  char long_word[200];
  memset(long_word, 'a', sizeof long_word - 1);
  long_word[sizeof long_word - 1] = '\0';
  assert_null(nearest(long_word, names, n));
  Suggestion s;
  suggestion_init_n(&s, "--jsn=1", 5);
  suggestion_consider(&s, "--json");
  assert_string_equal(suggestion_best(&s), "--json");
}

typedef struct Parsed {
  const char *file;
  double rate;
  uint32_t rows;
  uint64_t words;
  bool live;
} Parsed;

// Reads argv (NULL-terminated, the first word a program name) against the
// test's table; returns the refusal text, or "" when all was taken.
static const char *take_all(Parsed *p, char **argv, char *err, size_t err_len) {
  const Option options[] = {
      {"--file", "FILE", &p->file, NULL, NULL, 0, 0},
      {"--rate", "R", &p->rate, option_parse_rate, "a rate in (0, 1]", 0, 0},
      {"-n", "N", &p->rows, option_parse_u32, "a count", 0, 100},
      {"--words", "N", &p->words, option_parse_u64, "a number of words", 1, 18014398509481984.0},
      {"--live", NULL, &p->live, NULL, NULL, 0, 0},
  };
  bool seen[5] = {false};
  int argc = 0;
  while (argv[argc]) argc++;
  err[0] = '\0';
  for (int i = 1; i < argc; i++)
    if (!option_take(options, 5, seen, argc, argv, &i, err, err_len)) return err;
  return err;
}

static void test_options(void **state) {
  (void)state;
  char err[256];
  Parsed p = {0};
  char *ok[] = {"x", "--file=a b", "--rate", "0.5", "-n7", "--words=18014398509481984", "--live", NULL};
  assert_string_equal(take_all(&p, ok, err, sizeof err), "");
  assert_string_equal(p.file, "a b");
  assert_true(p.rate == 0.5 && p.rows == 7 && p.words == 18014398509481984u && p.live);
  p = (Parsed){0};
  char *spaced[] = {"x", "-n", "100", "--file", "-odd", NULL};  // a value may start with '-'
  assert_string_equal(take_all(&p, spaced, err, sizeof err), "");
  assert_int_equal(p.rows, 100);
  assert_string_equal(p.file, "-odd");
  struct { char *argv[4]; const char *want; } refused[] = {
      {{"x", "--rat=0.5", NULL}, "unknown option '--rat=0.5' (did you mean --rate?)"},
      {{"x", "--frobnicate", NULL}, "unknown option '--frobnicate'"},
      {{"x", "--live", "--live", NULL}, "option --live given twice"},
      {{"x", "--live=1", NULL}, "option --live takes no value (got '--live=1')"},
      {{"x", "--rate", NULL}, "option --rate needs a value (R)"},
      {{"x", "--rate", "nan", NULL}, "option --rate: 'nan' is not a rate in (0, 1]"},
      {{"x", "-n", "101", NULL}, "option -n: '101' is not a count"},
      {{"x", "-n4294967296", NULL}, "option -n: '4294967296' is not a count"},
      {{"x", "--words=0", NULL}, "option --words: '0' is not a number of words"},
      {{"x", "--words=18014398509481985", NULL}, "option --words: '18014398509481985' is not a number of words"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    p = (Parsed){0};
    assert_string_equal(take_all(&p, refused[i].argv, err, sizeof err), refused[i].want);
  }
}

// grow_array: NULL means a failure alone, so an unallocated array asked for
// room for nothing is still allocated (memtrace.c's callers' tail asked for
// 0 items at its first sample: "out of memory (memtrace callstack)").
static void test_grow_array(void **state) {
  (void)state;
  uint32_t cap = 0;
  uint64_t *p = grow_array(NULL, &cap, 0, sizeof *p, 4);
  assert_non_null(p);
  assert_true(cap >= 1);
  uint64_t *q = grow_array(p, &cap, 0, sizeof *p, 4);
  assert_ptr_equal(q, p);
  q = grow_array(q, &cap, 9, sizeof *q, 4);
  assert_non_null(q);
  assert_int_equal(cap, 16);
  uint32_t big = 0;
  assert_null(grow_array(NULL, &big, (uint64_t)UINT32_MAX + 1, 1, 4));   // past the counter
  assert_int_equal(big, 0);
  free(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts),
      cmocka_unit_test(test_decimals_and_rates),
      cmocka_unit_test(test_suggest),
      cmocka_unit_test(test_grow_array),
      cmocka_unit_test(test_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
