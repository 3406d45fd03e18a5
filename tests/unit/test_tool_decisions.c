// test_tool_decisions.c - cmocka tests of the pretenuring decisions' index
// by site key (tools/memtrace_cli/analysis/decisions.c): decisions written
// by trace/snapshot_writer and read back by trace/snapshot_reader find the
// key the profile gives a site of the same location (profile.c's own keys,
// strings equal but not the same pointers), by site, function and file; a
// site's decisions come in the order made (a switch, then its undo); a
// decision whose line does not fit a trace's 32-bit locations (a hostile
// record) names no site, and does not alias line (2^32 + 16) to line 16.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/decisions.h"
#include "snapshot_writer.h"

static char tmp_path[64];

static SnapshotReader *read_back(void) {
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *r = snapshot_reader_open(tmp_path, err, sizeof err);
  if (!r) fail_msg("%s", err);
  return r;
}

// Four decisions: site A (make, t.mn:16:27-77) old then young again, site B
// (<top>, t.mn:3:5-9) old, and one naming line 2^32 + 16 of A's function.
static SnapshotReader *four_decisions(void) {
  snprintf(tmp_path, sizeof tmp_path, "/tmp/test_tool_decisions_%d.retain", (int)getpid());
  char err[256];
  SnapshotWriter *w = snapshot_writer_open(tmp_path, 7, 1000, err, sizeof err);
  if (!w) fail_msg("%s", err);
  RetainDecision a_old = {2000, 10, 1, "make", "t.mn", 16, 27, 77, 64, 64, 863501, 850000};
  RetainDecision b_old = {2500, 12, 1, "<top>", "t.mn", 3, 5, 9, 70, 66, 870000, 850000};
  RetainDecision a_young = {3000, 40, 0, "make", "t.mn", 16, 27, 77, 52, 40, 600000, 500000};
  RetainDecision wide = {3500, 41, 1, "make", "t.mn", (1ull << 32) + 16, 27, 77, 64, 64, 863501, 850000};
  assert_true(snapshot_writer_decision(w, &a_old));
  assert_true(snapshot_writer_decision(w, &b_old));
  assert_true(snapshot_writer_decision(w, &a_young));
  assert_true(snapshot_writer_decision(w, &wide));
  snapshot_writer_close(w);
  SnapshotReader *r = read_back();
  remove(tmp_path);
  assert_int_equal(snapshot_decision_count(r), 4);
  return r;
}

// A location of copies of the names: the key must not depend on pointers.
static uint64_t key_of(const char *function, const char *file, uint32_t line, uint32_t first, uint32_t last,
                       ProfileBy by) {
  char fn[64], fl[64];
  snprintf(fn, sizeof fn, "%s", function);
  snprintf(fl, sizeof fl, "%s", file);
  TraceReaderLocation loc = {fn, fl, line, first, last};
  return profile_location_key(&loc, by);
}

static void test_by_site(void **state) {
  (void)state;
  SnapshotReader *r = four_decisions();
  SiteDecisions d;
  site_decisions_init(&d, r, PROFILE_BY_SITE);
  assert_int_equal(d.n, 4);
  assert_int_equal(d.n_keyed, 3);  // the wide line names no site
  uint32_t first;
  assert_int_equal(site_decisions_find(&d, key_of("make", "t.mn", 16, 27, 77, PROFILE_BY_SITE), &first), 2);
  assert_int_equal(site_decisions_at(&d, first)->action, 1);
  assert_int_equal(site_decisions_at(&d, first)->alloc_count, 10);
  assert_int_equal(site_decisions_at(&d, first + 1)->action, 0);
  assert_int_equal(site_decisions_at(&d, first + 1)->alloc_count, 40);
  assert_int_equal(site_decisions_find(&d, key_of("<top>", "t.mn", 3, 5, 9, PROFILE_BY_SITE), &first), 1);
  assert_int_equal(site_decisions_at(&d, first)->counted, 66);
  // Another column, another line, another file: another site.
  assert_int_equal(site_decisions_find(&d, key_of("make", "t.mn", 16, 27, 78, PROFILE_BY_SITE), &first), 0);
  assert_int_equal(site_decisions_find(&d, key_of("make", "t.mn", 17, 27, 77, PROFILE_BY_SITE), &first), 0);
  assert_int_equal(site_decisions_find(&d, key_of("make", "u.mn", 16, 27, 77, PROFILE_BY_SITE), &first), 0);
  site_decisions_free(&d);
  snapshot_reader_close(r);
}

static void test_by_function_and_file(void **state) {
  (void)state;
  SnapshotReader *r = four_decisions();
  SiteDecisions d;
  uint32_t first;
  site_decisions_init(&d, r, PROFILE_BY_FUNCTION);
  assert_int_equal(site_decisions_find(&d, key_of("make", "t.mn", 99, 1, 2, PROFILE_BY_FUNCTION), &first), 2);
  assert_int_equal(site_decisions_find(&d, key_of("<top>", "t.mn", 1, 1, 2, PROFILE_BY_FUNCTION), &first), 1);
  assert_int_equal(site_decisions_find(&d, key_of("make", "u.mn", 16, 27, 77, PROFILE_BY_FUNCTION), &first), 0);
  site_decisions_free(&d);
  site_decisions_init(&d, r, PROFILE_BY_FILE);
  assert_int_equal(site_decisions_find(&d, key_of("any", "t.mn", 1, 1, 1, PROFILE_BY_FILE), &first), 3);
  // in file order within the key
  assert_int_equal(site_decisions_at(&d, first)->alloc_count, 10);
  assert_int_equal(site_decisions_at(&d, first + 1)->alloc_count, 12);
  assert_int_equal(site_decisions_at(&d, first + 2)->alloc_count, 40);
  site_decisions_free(&d);
  snapshot_reader_close(r);
}

static void test_keys_and_names(void **state) {
  (void)state;
  SnapshotDecision wide = {.function = "make", .file = "t.mn", .line = (1ull << 32) + 16, .first_col = 27,
                           .last_col = 77};
  uint64_t key;
  assert_false(decision_key(&wide, PROFILE_BY_SITE, &key));
  wide.line = 16;
  assert_true(decision_key(&wide, PROFILE_BY_SITE, &key));
  assert_true(key == key_of("make", "t.mn", 16, 27, 77, PROFILE_BY_SITE));
  wide.last_col = (1ull << 32) + 77;
  assert_false(decision_key(&wide, PROFILE_BY_SITE, &key));
  assert_string_equal(decision_action_name(1), "old");
  assert_string_equal(decision_action_name(0), "young");
  assert_string_equal(decision_action_name(2), "young");   // on a probe's evidence
  assert_string_equal(decision_action_name(3), "unknown");
  SiteDecisions none;
  site_decisions_init(&none, NULL, PROFILE_BY_SITE);
  uint32_t first;
  assert_int_equal(none.n, 0);
  assert_int_equal(site_decisions_find(&none, key, &first), 0);
  site_decisions_free(&none);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_by_site),
      cmocka_unit_test(test_by_function_and_file),
      cmocka_unit_test(test_keys_and_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
