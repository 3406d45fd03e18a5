// test_trace_retain.c - cmocka tests of trace/retain.c, the version-1
// end-state file beside a trace, read back by trace/snapshot_reader.c: a
// round trip of every root and hop kind (paths added out of order come
// back sorted, a duplicate id keeps its first path, shared names are stored
// once); names cut at RETAIN_MAX_STRING; every truncation point and every
// flipped byte of a file is refused with a byte offset or read whole, never
// a crash (run under ASan by make test); one crafted file per check of the
// version-1 reading; an unwritable place leaves no file.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../trace/retain.h"
#include "../../trace/snapshot_reader.h"
#include "test_files.h"


static char tmp_path[64];

static int make_tmp(void **state) {
  (void)state;
  snprintf(tmp_path, sizeof tmp_path, "/tmp/test_retain_%d.retain", (int)getpid());
  return 0;
}

static int remove_tmp(void **state) {
  (void)state;
  remove(tmp_path);
  return 0;
}

static const RetainHop HOPS_A[] = {
    {RETAIN_HOP_FIELD, 1, 0, "items"},   {RETAIN_HOP_LIST_CELL, 18342, 0, ""}, {RETAIN_HOP_LIST_ELEMENT, 1, 0, ""},
    {RETAIN_HOP_TUPLE, 1, 1, ""},        {RETAIN_HOP_ARRAY, 1, 7, ""},         {RETAIN_HOP_CAPTURE, 1, 2, "buf"},
    {RETAIN_HOP_HASHTBL_VALUE, 1, 0, ""}, {RETAIN_HOP_HASHTBL_KEY, 1, 0, ""},  {RETAIN_HOP_BUFFER, 1, 0, ""},
    {RETAIN_HOP_OTHER, 1, 3, ""},        {RETAIN_HOP_ELIDED, 99999, 0, ""},
};

static RetainHeader header(uint64_t live) {
  return (RetainHeader){.pid = 4242, .start_time_us = 1795786330005883u, .alloc_count = 1000, .end_time_us = 1795786331000000u,
                        .flags = RETAIN_FINAL_GC | RETAIN_PATHS, .live_samples = live, .reachable_blocks = 120002,
                        .reachable_words = 525389, .gc_us = 476, .walk_us = 5488, .reason = ""};
}

// Writes paths for ids 30, 10, 20 (and 10 again, which must be dropped).
static void write_sample(const char *path) {
  RetainWriter *w = retain_writer_new();
  assert_non_null(w);
  RetainPath p30 = {30, {RETAIN_ROOT_STACK, "main", "x.mn", 12, "acc", 3}, 11, HOPS_A};
  RetainPath p10 = {10, {RETAIN_ROOT_GLOBAL, "log", "", 0, "", 0}, 3, HOPS_A};
  RetainPath p20 = {20, {RETAIN_ROOT_C, "", "", 0, "", 5}, 0, NULL};
  RetainPath dup = {10, {RETAIN_ROOT_EXCEPTION, "", "", 0, "", 0}, 1, HOPS_A + 9};
  assert_true(retain_writer_add(w, &p30));
  assert_true(retain_writer_add(w, &p10));
  assert_true(retain_writer_add(w, &p20));
  assert_true(retain_writer_add(w, &dup));
  RetainHeader h = header(4);
  char err[256];
  assert_true(retain_writer_finish(w, &h, path, err, sizeof err));
}

static void test_round_trip(void **state) {
  (void)state;
  write_sample(tmp_path);
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *r = snapshot_reader_open(tmp_path, err, sizeof err);
  if (!r) fail_msg("%s", err);
  assert_int_equal(snapshot_reader_version(r), RETAIN_VERSION_1);
  assert_int_equal(snapshot_reader_pid(r), 4242);
  assert_int_equal(snapshot_count(r), 1);
  const Snapshot *s = snapshot_get(r, 0);
  assert_int_equal(s->trigger, RETAIN_TRIGGER_END);
  assert_int_equal(s->alloc_count, 1000);
  assert_int_equal(s->end.flags, RETAIN_FINAL_GC | RETAIN_PATHS);
  assert_int_equal(s->end.marked_words, 525389);
  assert_int_equal(s->end.paths_us, 5488);
  assert_int_equal(s->end.pause_us, 476 + 5488);
  assert_string_equal(s->end.reason, "");
  assert_int_equal(s->paths, 3);
  const RetainPath *p10 = snapshot_path(r, 0, 0), *p20 = snapshot_path(r, 0, 1), *p30 = snapshot_path(r, 0, 2);
  assert_int_equal(p10->alloc_id, 10);
  assert_int_equal(p20->alloc_id, 20);
  assert_int_equal(p30->alloc_id, 30);
  // id 10 keeps its first path (a global), not the duplicate
  assert_int_equal(p10->root.kind, RETAIN_ROOT_GLOBAL);
  assert_string_equal(p10->root.name, "log");
  assert_int_equal(p10->hop_count, 3);
  assert_int_equal(p20->root.kind, RETAIN_ROOT_C);
  assert_int_equal(p20->root.index, 5);
  assert_int_equal(p20->hop_count, 0);
  const RetainPath *p = snapshot_find(r, 0, 30);
  assert_ptr_equal(p, p30);
  assert_null(snapshot_find(r, 0, 11));
  assert_null(snapshot_find(r, 0, 31));
  assert_int_equal(p->root.kind, RETAIN_ROOT_STACK);
  assert_string_equal(p->root.name, "main");
  assert_string_equal(p->root.file, "x.mn");
  assert_int_equal(p->root.line, 12);
  assert_string_equal(p->root.local, "acc");
  assert_int_equal(p->root.index, 3);
  assert_int_equal(p->hop_count, 11);
  for (uint32_t i = 0; i < 11; i++) {
    assert_int_equal(p->hops[i].kind, HOPS_A[i].kind);
    assert_int_equal(p->hops[i].count, HOPS_A[i].count);
    assert_string_equal(p->hops[i].name, HOPS_A[i].name);
    bool indexed = HOPS_A[i].kind == RETAIN_HOP_TUPLE || HOPS_A[i].kind == RETAIN_HOP_ARRAY ||
                   HOPS_A[i].kind == RETAIN_HOP_CAPTURE || HOPS_A[i].kind == RETAIN_HOP_OTHER;
    assert_int_equal(p->hops[i].index, indexed ? HOPS_A[i].index : 0);
  }
  // "items" is stored once though two paths name it: one pointer
  assert_ptr_equal(p10->hops[0].name, p30->hops[0].name);
  assert_int_equal(snapshot_reader_strings(r), 6);   // main, x.mn, acc, items, buf, log: each once
  snapshot_reader_close(r);
}

static void test_long_name_cut(void **state) {
  (void)state;
  char *name = malloc(RETAIN_MAX_STRING + 100);
  memset(name, 'n', RETAIN_MAX_STRING + 99);
  name[RETAIN_MAX_STRING + 99] = 0;
  RetainWriter *w = retain_writer_new();
  RetainPath p = {0, {RETAIN_ROOT_GLOBAL, name, "", 0, "", 0}, 0, NULL};
  assert_true(retain_writer_add(w, &p));
  RetainHeader h = header(1);
  char err[256];
  assert_true(retain_writer_finish(w, &h, tmp_path, err, sizeof err));
  SnapshotReader *r = snapshot_reader_open(tmp_path, err, sizeof err);
  assert_non_null(r);
  assert_int_equal(strlen(snapshot_path(r, 0, 0)->root.name), RETAIN_MAX_STRING);
  snapshot_reader_close(r);
  free(name);
}

static void test_truncation(void **state) {
  (void)state;
  write_sample(tmp_path);
  TestBytes b = test_slurp(tmp_path);
  char err[SNAPSHOT_READER_ERROR_MAX];
  // A version-1 file is whole or damaged: every cut past its magic and
  // version is refused (before them: a header not yet whole).
  for (size_t n = 9; n < b.n; n++) {
    err[0] = 0;
    SnapshotReader *r = snapshot_reader_open_bytes(b.b, n, "t.retain", err, sizeof err);
    if (r) fail_msg("a cut at %zu bytes read", n);
    assert_non_null(strstr(err, "t.retain"));
  }
  SnapshotReader *r = snapshot_reader_open_bytes(b.b, b.n, "t.retain", err, sizeof err);
  assert_non_null(r);
  snapshot_reader_close(r);
  free(b.b);
}

static void test_flipped_bytes(void **state) {
  (void)state;
  write_sample(tmp_path);
  TestBytes b = test_slurp(tmp_path);
  char err[SNAPSHOT_READER_ERROR_MAX];
  unsigned refused = 0;
  for (size_t i = 0; i < b.n; i++) {
    for (unsigned mask = 1; mask < 256; mask <<= 1) {
      b.b[i] ^= (unsigned char)mask;
      SnapshotReader *r = snapshot_reader_open_bytes(b.b, b.n, "t.retain", err, sizeof err);
      if (r) {
        // what reads must be consistent: sorted distinct ids below alloc_count
        for (uint32_t k = 0; k < snapshot_count(r); k++)
          for (uint64_t q = 0; q < snapshot_get(r, k)->paths; q++) {
            assert_true(snapshot_path(r, k, q)->alloc_id < snapshot_get(r, k)->alloc_count);
            if (q) assert_true(snapshot_path(r, k, q)->alloc_id > snapshot_path(r, k, q - 1)->alloc_id);
          }
        snapshot_reader_close(r);
      } else {
        assert_non_null(strstr(err, "t.retain"));
        refused++;
      }
      b.b[i] ^= (unsigned char)mask;
    }
  }
  assert_true(refused > 0);
  free(b.b);
}

// Builds a file by hand: the header with `flags`, `live` live samples and
// `allocs` allocations, no string, then the bytes of `rest`.
static size_t craft(unsigned char *out, uint64_t flags, uint64_t live, uint64_t allocs, const unsigned char *rest,
                    size_t rest_len) {
  size_t n = 0;
  memcpy(out, "MNRETAIN", 8);
  n = 8;
  out[n++] = RETAIN_VERSION_1;
  const uint64_t nums[] = {1, 2, allocs, 3, flags, live, 0, 0, 0, 0};
  for (size_t i = 0; i < 10; i++) {
    uint64_t v = nums[i];
    do {
      out[n++] = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
      v >>= 7;
    } while (v);
  }
  out[n++] = 0;   // reason ""
  memcpy(out + n, rest, rest_len);
  return n + rest_len;
}

static void expect_refused(const unsigned char *rest, size_t len, uint64_t flags, uint64_t live, const char *what) {
  unsigned char buf[512];
  size_t n = craft(buf, flags, live, 100, rest, len);
  char err[SNAPSHOT_READER_ERROR_MAX] = "";
  assert_null(snapshot_reader_open_bytes(buf, n, "c.retain", err, sizeof err));
  if (!strstr(err, what)) fail_msg("expected '%s' in '%s'", what, err);
  assert_non_null(strstr(err, "c.retain"));
}

static void test_crafted(void **state) {
  (void)state;
  const uint64_t both = RETAIN_FINAL_GC | RETAIN_PATHS;
  // strings: 1 string "a", then paths
  const unsigned char ok_path[] = {1, 1, 'a', 1, 5, 0, 0, 0};   // id 5, global "a", 0 hops
  {
    unsigned char buf[512];
    size_t n = craft(buf, both, 1, 100, ok_path, sizeof ok_path);
    char err[SNAPSHOT_READER_ERROR_MAX];
    SnapshotReader *r = snapshot_reader_open_bytes(buf, n, "c.retain", err, sizeof err);
    assert_non_null(r);
    assert_string_equal(snapshot_path(r, 0, 0)->root.name, "a");
    snapshot_reader_close(r);
  }
  const unsigned char huge_strings[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
  expect_refused(huge_strings, sizeof huge_strings, both, 1, "strings cannot fit");
  const unsigned char wide[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
  expect_refused(wide, sizeof wide, both, 1, "wider than 64 bits");
  const unsigned char nul[] = {1, 2, 'a', 0, 0};
  expect_refused(nul, sizeof nul, both, 1, "NUL byte");
  const unsigned char more_paths[] = {0, 2, 5, 4, 0, 6, 4, 0};
  expect_refused(more_paths, sizeof more_paths, both, 1, "2 paths for 1 live samples");
  const unsigned char big_id[] = {0, 1, 100, 4, 0};
  expect_refused(big_id, sizeof big_id, both, 1, "allocation 100 of a trace of 100");
  const unsigned char order[] = {0, 2, 6, 4, 0, 5, 4, 0};
  expect_refused(order, sizeof order, both, 2, "out of order");
  const unsigned char dup[] = {0, 2, 6, 4, 0, 6, 4, 0};
  expect_refused(dup, sizeof dup, both, 2, "out of order");
  const unsigned char bad_root[] = {0, 1, 5, 9, 0};
  expect_refused(bad_root, sizeof bad_root, both, 1, "unknown root kind");
  const unsigned char bad_name[] = {0, 1, 5, 0, 3, 0};
  expect_refused(bad_name, sizeof bad_name, both, 1, "string 3 of a table of 0");
  const unsigned char bad_hop[] = {0, 1, 5, 4, 1, 42, 1};
  expect_refused(bad_hop, sizeof bad_hop, both, 1, "unknown hop kind");
  const unsigned char zero_count[] = {0, 1, 5, 4, 1, 3, 0};
  expect_refused(zero_count, sizeof zero_count, both, 1, "repeated 0 times");
  const unsigned char long_path[] = {0, 1, 5, 4, 0x81, 0x02};   // 257 hops
  expect_refused(long_path, sizeof long_path, both, 1, "257 hops");
  const unsigned char trailing[] = {0, 0, 7};
  expect_refused(trailing, sizeof trailing, both, 0, "after the last path");
  const unsigned char no_paths_flag[] = {0, 1, 5, 4, 0};
  expect_refused(no_paths_flag, sizeof no_paths_flag, RETAIN_FINAL_GC, 1, "says it has none");
  const unsigned char nothing[] = {0, 0};
  expect_refused(nothing, sizeof nothing, RETAIN_PATHS, 0, "without a final collection");
  expect_refused(nothing, sizeof nothing, 64, 0, "unknown flags");
  const unsigned char line[] = {1, 0, 1, 5, 1, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0};
  expect_refused(line, sizeof line, both, 1, "line");
  // not a file of ours at all
  char err[SNAPSHOT_READER_ERROR_MAX];
  assert_null(snapshot_reader_open_bytes((const unsigned char *)"MNRETAIX\1", 9, "x", err, sizeof err));
  assert_non_null(strstr(err, "not a snapshot file"));
  assert_null(snapshot_reader_open_bytes((const unsigned char *)"MNRETAIN\7", 9, "x", err, sizeof err));
  assert_non_null(strstr(err, "version 7"));
}

static void test_unwritable(void **state) {
  (void)state;
  RetainWriter *w = retain_writer_new();
  RetainHeader h = header(0);
  char err[256] = "";
  assert_false(retain_writer_finish(w, &h, "/nonexistent-dir/t.ctf.retain", err, sizeof err));
  assert_non_null(strstr(err, "/nonexistent-dir/t.ctf.retain"));
  assert_int_equal(access("/nonexistent-dir/t.ctf.retain.tmp", F_OK), -1);
  assert_null(snapshot_reader_open("/nonexistent-dir/t.ctf.retain", err, sizeof err));
  assert_non_null(strstr(err, "cannot read"));
  assert_null(snapshot_reader_open("/tmp", err, sizeof err));
  assert_non_null(strstr(err, "not a regular file"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_long_name_cut, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_truncation, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_flipped_bytes, make_tmp, remove_tmp),
      cmocka_unit_test(test_crafted),
      cmocka_unit_test(test_unwritable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
