// test_snapshot_writer.c - cmocka tests of trace/snapshot_writer.c against
// docs/trace-format.md, section 12, with the expected bytes built here by
// hand: the header; a snapshot's begin, strings, paths and end records with
// their lengths and CRC-32s (checked against the standard check value);
// names written once a file and defined before use; paths records closed
// at 64 KiB so that a snapshot of many paths spans several; failures sticky
// (a path outside a snapshot, a nested begin); the file created exclusively;
// decision records (kind 5): written at once between snapshots, held until
// the end record during one, read back by trace/snapshot_reader.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../trace/snapshot_reader.h"
#include "../../trace/snapshot_writer.h"

static char tmp_path[64];

static int make_tmp(void **state) {
  (void)state;
  snprintf(tmp_path, sizeof tmp_path, "/tmp/test_snapshot_writer_%d.retain", (int)getpid());
  remove(tmp_path);
  return 0;
}

static int remove_tmp(void **state) {
  (void)state;
  remove(tmp_path);
  return 0;
}

// --- expected bytes, by hand ------------------------------------------------------

typedef struct Buf {
  unsigned char b[1 << 20];
  size_t n;
} Buf;

static void b_byte(Buf *x, unsigned v) { x->b[x->n++] = (unsigned char)v; }
static void b_leb(Buf *x, uint64_t v) {
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    b_byte(x, c | (v ? 0x80 : 0));
  } while (v);
}
static void b_str(Buf *x, const char *s) {
  b_leb(x, strlen(s));
  memcpy(x->b + x->n, s, strlen(s));
  x->n += strlen(s);
}
static void b_u32(Buf *x, uint32_t v) {
  for (int i = 0; i < 4; i++) b_byte(x, (v >> (8 * i)) & 0xff);
}
// Appends a record whose body is `body`.
static void b_record(Buf *x, const Buf *body) {
  b_u32(x, (uint32_t)body->n);
  b_u32(x, retain_crc32(0, body->b, body->n));
  memcpy(x->b + x->n, body->b, body->n);
  x->n += body->n;
}

static unsigned char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static unsigned char data[1 << 22];
  *len = fread(data, 1, sizeof data, f);
  fclose(f);
  return data;
}

static void assert_bytes(const unsigned char *got, size_t got_n, const Buf *want) {
  assert_int_equal(got_n, want->n);
  for (size_t i = 0; i < want->n; i++)
    if (got[i] != want->b[i]) fail_msg("byte %zu: got 0x%02x, want 0x%02x", i, got[i], want->b[i]);
}

// --- tests ----------------------------------------------------------------------

static void test_crc32_check_value(void **state) {
  (void)state;
  assert_int_equal(retain_crc32(0, "123456789", 9), 0xCBF43926u);   // the CRC-32 check value
  assert_int_equal(retain_crc32(retain_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
  assert_int_equal(retain_crc32(0, "", 0), 0);
}

static const RetainHop HOPS[] = {
    {RETAIN_HOP_FIELD, 1, 0, "items"},
    {RETAIN_HOP_LIST_CELL, 300, 0, ""},
    {RETAIN_HOP_LIST_ELEMENT, 1, 0, ""},
    {RETAIN_HOP_CAPTURE, 1, 2, "buf"},
    {RETAIN_HOP_TUPLE, 1, 1, ""},
};

static void test_two_snapshots_bytes(void **state) {
  (void)state;
  char err[256];
  SnapshotWriter *w = snapshot_writer_open(tmp_path, 4242, 1795786330005883u, err, sizeof err);
  assert_non_null(w);
  assert_true(snapshot_writer_begin(w, RETAIN_TRIGGER_PERIOD, 1795786331000000u, 1000));
  RetainPath p1 = {30, {RETAIN_ROOT_GLOBAL, "log", "", 0, "", 0}, 3, HOPS};
  RetainPath p2 = {7, {RETAIN_ROOT_STACK, "serve", "s.mn", 13, "rows", 3}, 5, HOPS};
  assert_true(snapshot_writer_path(w, &p1));
  assert_true(snapshot_writer_path(w, &p2));
  RetainSnapshotEnd e1 = {RETAIN_COLLECTED | RETAIN_PATHS, 2, 5000, 20000, 40000, 120, 30, ""};
  assert_true(snapshot_writer_end(w, &e1));
  assert_int_equal(snapshot_writer_path_count(w), 2);
  // The second snapshot reuses "log" and "items" and adds nothing else; its
  // collection found no live sample.
  assert_true(snapshot_writer_begin(w, RETAIN_TRIGGER_END, 1795786332000000u, 1500));
  RetainSnapshotEnd e2 = {RETAIN_COLLECTED | RETAIN_PATHS, 0, 10, 40, 40000, 7, 0, ""};
  assert_true(snapshot_writer_end(w, &e2));
  assert_int_equal(snapshot_writer_snapshots(w), 2);
  snapshot_writer_close(w);

  static Buf want, body;
  want.n = 0;
  memcpy(want.b, "MNRETAIN", 8);
  want.n = 8;
  b_byte(&want, 2);
  b_leb(&want, 4242);
  b_leb(&want, 1795786330005883u);
  // begin 0
  body.n = 0;
  b_byte(&body, 2);
  b_leb(&body, 0);
  b_leb(&body, 3);
  b_leb(&body, 1795786331000000u);
  b_leb(&body, 1000);
  b_record(&want, &body);
  // strings: log 0, items 1, serve 2, s.mn 3, rows 4, buf 5 (in order of first use)
  body.n = 0;
  b_byte(&body, 1);
  b_leb(&body, 6);
  b_str(&body, "log");
  b_str(&body, "items");
  b_str(&body, "serve");
  b_str(&body, "s.mn");
  b_str(&body, "rows");
  b_str(&body, "buf");
  b_record(&want, &body);
  // paths of snapshot 0
  body.n = 0;
  b_byte(&body, 3);
  b_leb(&body, 0);
  b_leb(&body, 2);
  b_leb(&body, 30);   // p1: global log, 3 hops
  b_leb(&body, 0);
  b_leb(&body, 0);
  b_leb(&body, 3);
  b_leb(&body, 0), b_leb(&body, 1), b_leb(&body, 1);     // field items
  b_leb(&body, 3), b_leb(&body, 300);                    // list cell x300
  b_leb(&body, 4), b_leb(&body, 1);                      // list element
  b_leb(&body, 7);    // p2: stack serve s.mn:13 rows slot 3, 5 hops
  b_leb(&body, 1);
  b_leb(&body, 2), b_leb(&body, 3), b_leb(&body, 13), b_leb(&body, 4), b_leb(&body, 3);
  b_leb(&body, 5);
  b_leb(&body, 0), b_leb(&body, 1), b_leb(&body, 1);
  b_leb(&body, 3), b_leb(&body, 300);
  b_leb(&body, 4), b_leb(&body, 1);
  b_leb(&body, 5), b_leb(&body, 1), b_leb(&body, 5), b_leb(&body, 2);   // capture buf #2
  b_leb(&body, 1), b_leb(&body, 1), b_leb(&body, 1);                    // tuple .1
  b_record(&want, &body);
  // end 0: flags, live, paths, marked blocks, words, heap words, pause, paths us, reason
  body.n = 0;
  b_byte(&body, 4);
  b_leb(&body, 0);
  const uint64_t n1[] = {3, 2, 2, 5000, 20000, 40000, 120, 30};
  for (int i = 0; i < 8; i++) b_leb(&body, n1[i]);
  b_str(&body, "");
  b_record(&want, &body);
  // begin 1, end 1
  body.n = 0;
  b_byte(&body, 2);
  b_leb(&body, 1);
  b_leb(&body, 0);
  b_leb(&body, 1795786332000000u);
  b_leb(&body, 1500);
  b_record(&want, &body);
  body.n = 0;
  b_byte(&body, 4);
  b_leb(&body, 1);
  const uint64_t n2[] = {3, 0, 0, 10, 40, 40000, 7, 0};
  for (int i = 0; i < 8; i++) b_leb(&body, n2[i]);
  b_str(&body, "");
  b_record(&want, &body);

  size_t len;
  const unsigned char *got = read_file(tmp_path, &len);
  assert_bytes(got, len, &want);
}

// Walks the records of a file: checks each length and CRC, counts kinds,
// and checks that every name index a paths record uses is already defined.
typedef struct Walk {
  unsigned kinds[8];
  uint64_t paths;
  uint64_t strings;
} Walk;

static uint64_t get_leb(const unsigned char **p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    unsigned char c = *(*p)++;
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
}

static void walk_file(const unsigned char *d, size_t n, Walk *wk) {
  memset(wk, 0, sizeof *wk);
  assert_memory_equal(d, "MNRETAIN", 8);
  const unsigned char *p = d + 9;
  get_leb(&p);
  get_leb(&p);
  while (p < d + n) {
    uint32_t len = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
    uint32_t crc = p[4] | p[5] << 8 | p[6] << 16 | (uint32_t)p[7] << 24;
    p += 8;
    assert_true(p + len <= d + n);
    assert_int_equal(retain_crc32(0, p, len), crc);
    unsigned kind = p[0];
    assert_true(kind >= 1 && kind <= 4);
    wk->kinds[kind]++;
    const unsigned char *q = p + 1;
    if (kind == 1) wk->strings += get_leb(&q);
    if (kind == 3) {
      get_leb(&q);
      uint64_t count = get_leb(&q);
      for (uint64_t i = 0; i < count; i++) {
        get_leb(&q);                     // id
        assert_int_equal(get_leb(&q), 0);   // global
        assert_true(get_leb(&q) < wk->strings);
        assert_int_equal(get_leb(&q), 1);   // one hop: a field
        assert_int_equal(get_leb(&q), 0);
        assert_int_equal(get_leb(&q), 1);
        assert_true(get_leb(&q) < wk->strings);
      }
      assert_true(q == p + len);
      wk->paths += count;
    }
    p += len;
  }
  assert_true(p == d + n);
}

static void test_many_paths_span_records(void **state) {
  (void)state;
  char err[256];
  SnapshotWriter *w = snapshot_writer_open(tmp_path, 1, 2, err, sizeof err);
  assert_non_null(w);
  assert_true(snapshot_writer_begin(w, RETAIN_TRIGGER_CALL, 3, 400000));
  char name[32], field[32];
  for (uint64_t i = 0; i < 200000; i++) {
    snprintf(name, sizeof name, "g%llu", (unsigned long long)(i % 5000));
    snprintf(field, sizeof field, "f%llu", (unsigned long long)(i % 7000));
    RetainHop h = {RETAIN_HOP_FIELD, 1, 0, field};
    RetainPath p = {i, {RETAIN_ROOT_GLOBAL, name, "", 0, "", 0}, 1, &h};
    assert_true(snapshot_writer_path(w, &p));
  }
  RetainSnapshotEnd e = {RETAIN_COLLECTED | RETAIN_PATHS, 200000, 1, 1, 1, 1, 1, ""};
  assert_true(snapshot_writer_end(w, &e));
  snapshot_writer_close(w);
  size_t len;
  const unsigned char *d = read_file(tmp_path, &len);
  Walk wk;
  walk_file(d, len, &wk);
  assert_int_equal(wk.paths, 200000);
  assert_int_equal(wk.strings, 12000);   // each name once a file
  assert_int_equal(wk.kinds[2], 1);
  assert_int_equal(wk.kinds[4], 1);
  assert_true(wk.kinds[3] > 10);         // closed at 64 KiB: several paths records
}

static void test_misuse_is_sticky(void **state) {
  (void)state;
  char err[256];
  SnapshotWriter *w = snapshot_writer_open(tmp_path, 1, 2, err, sizeof err);
  assert_non_null(w);
  RetainPath p = {1, {RETAIN_ROOT_EXCEPTION, "", "", 0, "", 0}, 0, NULL};
  assert_false(snapshot_writer_path(w, &p));
  assert_non_null(strstr(snapshot_writer_error(w), "outside a snapshot"));
  assert_false(snapshot_writer_begin(w, RETAIN_TRIGGER_CALL, 1, 1));   // sticky
  snapshot_writer_close(w);
  size_t len;
  read_file(tmp_path, &len);
  assert_int_equal(len, 8 + 1 + 1 + 1);   // the header alone

  remove(tmp_path);
  w = snapshot_writer_open(tmp_path, 1, 2, err, sizeof err);
  assert_true(snapshot_writer_begin(w, RETAIN_TRIGGER_CALL, 1, 1));
  assert_false(snapshot_writer_begin(w, RETAIN_TRIGGER_CALL, 1, 1));
  assert_non_null(strstr(snapshot_writer_error(w), "inside another"));
  snapshot_writer_close(w);
}

static void test_created_exclusively(void **state) {
  (void)state;
  FILE *f = fopen(tmp_path, "w");
  assert_non_null(f);
  fputs("precious", f);
  fclose(f);
  char err[256];
  assert_null(snapshot_writer_open(tmp_path, 1, 2, err, sizeof err));
  assert_non_null(strstr(err, "cannot create"));
  size_t len;
  const unsigned char *d = read_file(tmp_path, &len);
  assert_int_equal(len, 8);
  assert_memory_equal(d, "precious", 8);   // not truncated
  assert_null(snapshot_writer_open("/nonexistent-dir/x.retain", 1, 2, err, sizeof err));
}

// A decision between snapshots is written at once, its names defined by a
// strings record just before it; the bytes by hand.
static void test_decision_bytes(void **state) {
  (void)state;
  char err[256];
  SnapshotWriter *w = snapshot_writer_open(tmp_path, 7, 8, err, sizeof err);
  assert_non_null(w);
  RetainDecision d = {1795786331000000u, 1234, 1, "<top>", "t.mn", 16, 27, 77, 64, 64, 863500, 850000};
  assert_true(snapshot_writer_decision(w, &d));
  assert_int_equal(snapshot_writer_decisions(w), 1);
  size_t len;
  const unsigned char *got = read_file(tmp_path, &len);   // written at once: the writer is still open
  static Buf want, body;
  want.n = 0;
  memcpy(want.b, "MNRETAIN", 8);
  want.n = 8;
  b_byte(&want, 2);
  b_leb(&want, 7);
  b_leb(&want, 8);
  body.n = 0;
  b_byte(&body, 1);
  b_leb(&body, 2);
  b_str(&body, "<top>");
  b_str(&body, "t.mn");
  b_record(&want, &body);
  body.n = 0;
  b_byte(&body, 5);
  const uint64_t fields[] = {1795786331000000u, 1234, 1, 0, 1, 16, 27, 77, 64, 64, 863500, 850000};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) b_leb(&body, fields[i]);
  b_record(&want, &body);
  assert_bytes(got, len, &want);
  snapshot_writer_close(w);
}

// A decision made while a snapshot is taken (the runtime decides inside
// collections) follows its end record; the reader takes the file whole,
// with both decisions and the snapshot's paths.
static void test_decision_during_snapshot(void **state) {
  (void)state;
  char err[256];
  SnapshotWriter *w = snapshot_writer_open(tmp_path, 7, 8, err, sizeof err);
  assert_non_null(w);
  RetainDecision d1 = {100, 10, 1, "entry", "p.mn", 16, 14, 64, 64, 64, 863500, 850000};
  RetainDecision d2 = {200, 20, 0, "entry", "p.mn", 16, 14, 64, 1197, 1197, 994200, 500000};
  assert_true(snapshot_writer_decision(w, &d1));
  assert_true(snapshot_writer_begin(w, RETAIN_TRIGGER_CALL, 150, 15));
  RetainPath p1 = {3, {RETAIN_ROOT_GLOBAL, "table", "", 0, "", 0}, 1, HOPS};
  assert_true(snapshot_writer_path(w, &p1));
  assert_true(snapshot_writer_decision(w, &d2));
  assert_int_equal(snapshot_writer_decisions(w), 1);   // held
  RetainSnapshotEnd e = {RETAIN_COLLECTED | RETAIN_PATHS, 1, 5, 20, 40, 1, 1, ""};
  assert_true(snapshot_writer_end(w, &e));
  assert_int_equal(snapshot_writer_decisions(w), 2);
  snapshot_writer_close(w);

  SnapshotReader *r = snapshot_reader_open(tmp_path, err, sizeof err);
  if (!r) fail_msg("%s", err);
  assert_int_equal(snapshot_count(r), 1);
  assert_int_equal(snapshot_get(r, 0)->paths, 1);
  assert_int_equal(snapshot_decision_count(r), 2);
  const RetainDecision *want[] = {&d1, &d2};
  for (uint32_t i = 0; i < 2; i++) {
    const SnapshotDecision *g = snapshot_decision(r, i);
    assert_int_equal(g->time_us, want[i]->time_us);
    assert_int_equal(g->alloc_count, want[i]->alloc_count);
    assert_int_equal(g->action, want[i]->action);
    assert_string_equal(g->function, want[i]->function);
    assert_string_equal(g->file, want[i]->file);
    assert_int_equal(g->line, want[i]->line);
    assert_int_equal(g->first_col, want[i]->first_col);
    assert_int_equal(g->last_col, want[i]->last_col);
    assert_int_equal(g->sampled, want[i]->sampled);
    assert_int_equal(g->counted, want[i]->counted);
    assert_int_equal(g->bound_millionths, want[i]->bound_millionths);
    assert_int_equal(g->threshold_millionths, want[i]->threshold_millionths);
  }
  assert_true(snapshot_decision(r, 1)->offset > snapshot_get(r, 0)->end_offset - 1);   // after the end record
  snapshot_reader_close(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_crc32_check_value),
      cmocka_unit_test_setup_teardown(test_two_snapshots_bytes, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_many_paths_span_records, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_misuse_is_sticky, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_created_exclusively, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_decision_bytes, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_decision_during_snapshot, make_tmp, remove_tmp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
