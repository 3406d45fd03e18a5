// test_tool_kept.c - cmocka tests of the end state's figures and text in the
// trace tools (tools/memtrace_cli/analysis/kept.c, retain_text.c): the
// Clopper-Pearson interval against published values, the rate that would
// give enough samples, and paths and holders as text (every hop kind, erased
// counts, indices, Hashtbl kinds and frame lines). The verdicts on real
// traces are tests/suites/trace_kept.sh's.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kept.h"
#include "analysis/retain_text.h"

static void assert_close(double got, double want, double abs_tol) {
  if (fabs(got - want) > abs_tol) fail_msg("got %.10g, want %.10g (within %g)", got, want, abs_tol);
}

// Clopper-Pearson 95 % intervals (exact binomial): published values to 4 places.
static void test_share_interval(void **state) {
  (void)state;
  Interval a = kept_share_interval(0, 10);
  assert_close(a.lo, 0, 1e-12);
  assert_close(a.hi, 0.3085, 1e-4);
  Interval b = kept_share_interval(5, 10);
  assert_close(b.lo, 0.1871, 1e-4);
  assert_close(b.hi, 0.8129, 1e-4);
  Interval c = kept_share_interval(10, 10);
  assert_close(c.lo, 0.6915, 1e-4);
  assert_close(c.hi, 1, 1e-12);
  Interval d = kept_share_interval(1, 100);
  assert_close(d.lo, 0.0003, 1e-4);
  assert_close(d.hi, 0.0545, 1e-4);
  Interval e = kept_share_interval(0, 0);
  assert_close(e.lo, 0, 0);
  assert_close(e.hi, 1, 0);
}

static void test_rate_for(void **state) {
  (void)state;
  assert_close(kept_rate_for(1e-4, 5, 10), 2e-4, 1e-12);
  assert_close(kept_rate_for(1e-4, 3, 10), 5e-4, 1e-12);   // 3.3e-4 rounds up to 5e-4
  assert_close(kept_rate_for(1e-4, 10, 10), 1e-4, 1e-12);
  assert_close(kept_rate_for(1e-4, 0, 50), 5e-3, 1e-12);   // none: as if one
  assert_close(kept_rate_for(1e-3, 7, 10), 2e-3, 1e-12);
  assert_close(kept_rate_for(0.5, 1, 10), 1, 0);
}

static char *text_of(const RetainPath *p, uint32_t hops, bool erase) { return retain_path_string(p, hops, erase); }

static void test_path_text(void **state) {
  (void)state;
  RetainHop hops[] = {
      {RETAIN_HOP_FIELD, 1, 0, "items"},   {RETAIN_HOP_LIST_CELL, 18, 0, ""}, {RETAIN_HOP_LIST_ELEMENT, 1, 0, ""},
      {RETAIN_HOP_TUPLE, 1, 1, ""},        {RETAIN_HOP_ARRAY, 1, 7, ""},      {RETAIN_HOP_CAPTURE, 1, 0, "xs"},
      {RETAIN_HOP_CAPTURE, 1, 2, ""},      {RETAIN_HOP_HASHTBL_KEY, 1, 0, ""}, {RETAIN_HOP_BUFFER, 1, 0, ""},
      {RETAIN_HOP_OTHER, 1, 3, ""},        {RETAIN_HOP_ELIDED, 37, 0, ""},    {RETAIN_HOP_FIELD, 2, 0, "next"},
  };
  RetainPath p = {42, {RETAIN_ROOT_GLOBAL, "log", "", 0, "", 0}, sizeof hops / sizeof hops[0], hops};
  char *t = text_of(&p, p.hop_count, false);
  assert_string_equal(t, "global log -> field items -> list cell x18 -> list element -> tuple .1 -> array [7] -> "
                         "capture xs -> capture #2 -> Hashtbl key -> Buffer storage -> field #3 -> "
                         "(37 hops elided) -> field next x2");
  free(t);
  t = text_of(&p, 5, true);  // a holder: counts and indices erased
  assert_string_equal(t, "global log -> field items -> list cell xn -> list element -> tuple .1 -> array [*]");
  free(t);
  RetainHop value = {RETAIN_HOP_HASHTBL_VALUE, 1, 0, ""}, entry = {RETAIN_HOP_HASHTBL_ENTRY, 1, 0, ""};
  RetainPath v = {1, {RETAIN_ROOT_GLOBAL, "cache", "", 0, "", 0}, 1, &value}, e = v;
  e.hops = &entry;
  char *tv = text_of(&v, 1, true), *te = text_of(&e, 1, true);
  assert_string_equal(tv, "global cache -> Hashtbl");   // one holder for a table's values and entries
  assert_string_equal(te, tv);
  free(tv);
  free(te);
  RetainPath s = {2, {RETAIN_ROOT_STACK, "serve", "r.mn", 13, "rows", 2}, 0, NULL};
  t = text_of(&s, 0, false);
  assert_string_equal(t, "local rows of serve (r.mn:13)");
  free(t);
  t = text_of(&s, 0, true);  // a holder: the frame's line erased
  assert_string_equal(t, "local rows of serve (r.mn)");
  free(t);
  RetainPath c = {3, {RETAIN_ROOT_C, "", "", 0, "", 5}, 0, NULL};
  t = text_of(&c, 0, false);
  assert_string_equal(t, "C root #5");
  free(t);
  RetainPath ctl = {4, {RETAIN_ROOT_GLOBAL, "a\nb\x7f", "", 0, "", 0}, 0, NULL};
  t = text_of(&ctl, 0, false);
  assert_string_equal(t, "global a?b?");  // control characters never reach a terminal
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_share_interval),
      cmocka_unit_test(test_rate_for),
      cmocka_unit_test(test_path_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
