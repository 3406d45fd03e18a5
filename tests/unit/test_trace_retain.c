// test_trace_retain.c - cmocka tests of the version-1 end-state file beside
// a trace (docs/trace-format.md, 12.3), which ./vm wrote before the snapshot
// file (version 2) replaced it and which trace/snapshot_reader.c still reads:
// the files are built here, byte by byte, as the format describes them (no
// writer of version 1 is left in the tree). A file of every root and hop
// kind reads back whole (shared names stored once); a name of 4,096 bytes is
// read and a longer one refused; every truncation point and every flipped
// byte of a file is refused with a byte offset or read whole, never a crash
// (run under ASan by make test); one crafted file per check of the
// version-1 reading; a missing file or a directory is refused.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../trace/snapshot_file.h"
#include "../../trace/snapshot_reader.h"

// A version-1 file being built: LEB128 varints and strings (a varint length,
// then the bytes) after the magic and the version byte.
typedef struct V1File {
  unsigned char b[3 * RETAIN_MAX_STRING];
  size_t n;
} V1File;

static void v1_varint(V1File *f, uint64_t v) {
  do {
    assert_true(f->n < sizeof f->b);
    f->b[f->n++] = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    v >>= 7;
  } while (v);
}

static void v1_string(V1File *f, const char *s) {
  size_t len = strlen(s);
  v1_varint(f, len);
  assert_true(f->n + len <= sizeof f->b);
  memcpy(f->b + f->n, s, len);
  f->n += len;
}

static void v1_bytes(V1File *f, const unsigned char *p, size_t len) {
  assert_true(f->n + len <= sizeof f->b);
  memcpy(f->b + f->n, p, len);
  f->n += len;
}

// The header: pid, start time, allocations, end time, flags, live samples,
// blocks and words reached, the collection's and the walk's microseconds;
// the reason "".
static void v1_header(V1File *f, const uint64_t numbers[10]) {
  f->n = 0;
  v1_bytes(f, (const unsigned char *)"MNRETAIN", 8);
  f->b[f->n++] = RETAIN_VERSION_1;
  for (int i = 0; i < 10; i++) v1_varint(f, numbers[i]);
  v1_string(f, "");
}

enum { BOTH = RETAIN_COLLECTED | RETAIN_PATHS };

// The string table of the sample, by index.
enum { S_MAIN, S_FILE, S_ACC, S_ITEMS, S_BUF, S_LOG, S_COUNT };
static const char *const STRINGS[S_COUNT] = {"main", "x.mn", "acc", "items", "buf", "log"};

static const RetainHop HOPS_A[] = {
    {RETAIN_HOP_FIELD, 1, 0, "items"},   {RETAIN_HOP_LIST_CELL, 18342, 0, ""}, {RETAIN_HOP_LIST_ELEMENT, 1, 0, ""},
    {RETAIN_HOP_TUPLE, 1, 1, ""},        {RETAIN_HOP_ARRAY, 1, 7, ""},         {RETAIN_HOP_CAPTURE, 1, 2, "buf"},
    {RETAIN_HOP_HASHTBL_VALUE, 1, 0, ""}, {RETAIN_HOP_HASHTBL_KEY, 1, 0, ""},  {RETAIN_HOP_BUFFER, 1, 0, ""},
    {RETAIN_HOP_OTHER, 1, 3, ""},        {RETAIN_HOP_ELIDED, 99999, 0, ""},
};

// A hop of HOPS_A: its kind, count, then its name's index and its index as
// the kind has them.
static void v1_hop(V1File *f, const RetainHop *h) {
  v1_varint(f, h->kind);
  v1_varint(f, h->count);
  if (h->kind == RETAIN_HOP_FIELD) v1_varint(f, S_ITEMS);
  if (h->kind == RETAIN_HOP_CAPTURE) v1_varint(f, S_BUF), v1_varint(f, h->index);
  if (h->kind == RETAIN_HOP_TUPLE || h->kind == RETAIN_HOP_ARRAY || h->kind == RETAIN_HOP_OTHER) v1_varint(f, h->index);
}

// The sample: paths for ids 10 (global log, 3 hops), 20 (a C root, none)
// and 30 (a stack slot, all 11 hops of HOPS_A), sorted by id as a file has
// them; "items" named by two paths, stored once.
static void sample(V1File *f) {
  const uint64_t numbers[10] = {4242, 1795786330005883u, 1000, 1795786331000000u, BOTH, 3, 120002, 525389, 476, 5488};
  v1_header(f, numbers);
  v1_varint(f, S_COUNT);
  for (int i = 0; i < S_COUNT; i++) v1_string(f, STRINGS[i]);
  v1_varint(f, 3);
  v1_varint(f, 10);
  v1_varint(f, RETAIN_ROOT_GLOBAL), v1_varint(f, S_LOG);
  v1_varint(f, 3);
  for (int i = 0; i < 3; i++) v1_hop(f, &HOPS_A[i]);
  v1_varint(f, 20);
  v1_varint(f, RETAIN_ROOT_C), v1_varint(f, 5);
  v1_varint(f, 0);
  v1_varint(f, 30);
  v1_varint(f, RETAIN_ROOT_STACK), v1_varint(f, S_MAIN), v1_varint(f, S_FILE), v1_varint(f, 12), v1_varint(f, S_ACC),
      v1_varint(f, 3);
  v1_varint(f, 11);
  for (int i = 0; i < 11; i++) v1_hop(f, &HOPS_A[i]);
}

static void test_round_trip(void **state) {
  (void)state;
  V1File f;
  sample(&f);
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *r = snapshot_reader_open_bytes(f.b, f.n, "t.retain", err, sizeof err);
  if (!r) fail_msg("%s", err);
  assert_int_equal(snapshot_reader_version(r), RETAIN_VERSION_1);
  assert_int_equal(snapshot_reader_pid(r), 4242);
  assert_int_equal(snapshot_count(r), 1);
  const Snapshot *s = snapshot_get(r, 0);
  assert_int_equal(s->trigger, RETAIN_TRIGGER_END);
  assert_int_equal(s->alloc_count, 1000);
  assert_int_equal(s->end.flags, BOTH);
  assert_int_equal(s->end.marked_words, 525389);
  assert_int_equal(s->end.paths_us, 5488);
  assert_int_equal(s->end.pause_us, 476 + 5488);
  assert_string_equal(s->end.reason, "");
  assert_int_equal(s->paths, 3);
  const RetainPath *p10 = snapshot_path(r, 0, 0), *p20 = snapshot_path(r, 0, 1), *p30 = snapshot_path(r, 0, 2);
  assert_int_equal(p10->alloc_id, 10);
  assert_int_equal(p20->alloc_id, 20);
  assert_int_equal(p30->alloc_id, 30);
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
  assert_int_equal(snapshot_reader_strings(r), S_COUNT);
  snapshot_reader_close(r);
}

// A file whose one path is a global named by a string of `len` bytes.
static void long_name(V1File *f, size_t len) {
  const uint64_t numbers[10] = {1, 2, 100, 3, BOTH, 1, 0, 0, 0, 0};
  v1_header(f, numbers);
  char *name = malloc(len + 1);
  memset(name, 'n', len);
  name[len] = 0;
  v1_varint(f, 1);
  v1_string(f, name);
  free(name);
  const unsigned char path[] = {1, 5, RETAIN_ROOT_GLOBAL, 0, 0};   // 1 path: id 5, global string 0, 0 hops
  v1_bytes(f, path, sizeof path);
}

static void test_long_name(void **state) {
  (void)state;
  V1File f;
  char err[SNAPSHOT_READER_ERROR_MAX];
  long_name(&f, RETAIN_MAX_STRING);
  SnapshotReader *r = snapshot_reader_open_bytes(f.b, f.n, "n.retain", err, sizeof err);
  if (!r) fail_msg("%s", err);
  assert_int_equal(strlen(snapshot_path(r, 0, 0)->root.name), RETAIN_MAX_STRING);
  snapshot_reader_close(r);
  long_name(&f, RETAIN_MAX_STRING + 1);
  assert_null(snapshot_reader_open_bytes(f.b, f.n, "n.retain", err, sizeof err));
  if (!strstr(err, "a string of 4097 bytes (at most 4096")) fail_msg("%s", err);
}

static void test_truncation(void **state) {
  (void)state;
  V1File f;
  sample(&f);
  char err[SNAPSHOT_READER_ERROR_MAX];
  // A version-1 file is whole or damaged: every cut past its magic and
  // version is refused (before them: a header not yet whole).
  // Each cut is read from a block of its own length, so that ASan sees a
  // read past it.
  for (size_t n = 9; n < f.n; n++) {
    err[0] = 0;
    unsigned char *cut = malloc(n);
    assert_non_null(cut);
    memcpy(cut, f.b, n);
    SnapshotReader *r = snapshot_reader_open_bytes(cut, n, "t.retain", err, sizeof err);
    free(cut);
    if (r) fail_msg("a cut at %zu bytes read", n);
    assert_non_null(strstr(err, "t.retain"));
  }
  SnapshotReader *r = snapshot_reader_open_bytes(f.b, f.n, "t.retain", err, sizeof err);
  assert_non_null(r);
  snapshot_reader_close(r);
}

static void test_flipped_bytes(void **state) {
  (void)state;
  V1File f;
  sample(&f);
  unsigned char *b = malloc(f.n);   // the file in a block of its own length (ASan)
  assert_non_null(b);
  memcpy(b, f.b, f.n);
  char err[SNAPSHOT_READER_ERROR_MAX];
  unsigned refused = 0;
  for (size_t i = 0; i < f.n; i++) {
    for (unsigned mask = 1; mask < 256; mask <<= 1) {
      b[i] ^= (unsigned char)mask;
      SnapshotReader *r = snapshot_reader_open_bytes(b, f.n, "t.retain", err, sizeof err);
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
      b[i] ^= (unsigned char)mask;
    }
  }
  assert_true(refused > 0);
  free(b);
}

// A file of `allocs` allocations with `flags` and `live` live samples, no
// string, then the bytes of `rest`.
static void craft(V1File *f, uint64_t flags, uint64_t live, uint64_t allocs, const unsigned char *rest, size_t rest_len) {
  const uint64_t numbers[10] = {1, 2, allocs, 3, flags, live, 0, 0, 0, 0};
  v1_header(f, numbers);
  v1_bytes(f, rest, rest_len);
}

static void expect_refused(const unsigned char *rest, size_t len, uint64_t flags, uint64_t live, const char *what) {
  V1File f;
  craft(&f, flags, live, 100, rest, len);
  char err[SNAPSHOT_READER_ERROR_MAX] = "";
  assert_null(snapshot_reader_open_bytes(f.b, f.n, "c.retain", err, sizeof err));
  if (!strstr(err, what)) fail_msg("expected '%s' in '%s'", what, err);
  assert_non_null(strstr(err, "c.retain"));
}

static void test_crafted(void **state) {
  (void)state;
  const uint64_t both = BOTH;
  // strings: 1 string "a", then paths
  const unsigned char ok_path[] = {1, 1, 'a', 1, 5, 0, 0, 0};   // id 5, global "a", 0 hops
  {
    V1File f;
    craft(&f, both, 1, 100, ok_path, sizeof ok_path);
    char err[SNAPSHOT_READER_ERROR_MAX];
    SnapshotReader *r = snapshot_reader_open_bytes(f.b, f.n, "c.retain", err, sizeof err);
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
  expect_refused(no_paths_flag, sizeof no_paths_flag, RETAIN_COLLECTED, 1, "says it has none");
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

static void test_unreadable(void **state) {
  (void)state;
  char err[SNAPSHOT_READER_ERROR_MAX] = "";
  assert_null(snapshot_reader_open("/nonexistent-dir/t.ctf.retain", err, sizeof err));
  assert_non_null(strstr(err, "cannot read"));
  assert_null(snapshot_reader_open("/tmp", err, sizeof err));
  assert_non_null(strstr(err, "not a regular file"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),  cmocka_unit_test(test_long_name), cmocka_unit_test(test_truncation),
      cmocka_unit_test(test_flipped_bytes), cmocka_unit_test(test_crafted),  cmocka_unit_test(test_unreadable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
