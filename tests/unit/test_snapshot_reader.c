// test_snapshot_reader.c - cmocka tests of trace/snapshot_reader.c against
// docs/trace-format.md, section 12: a round trip through the writer of
// every trigger, root and hop kind and a decision record; every truncation
// point of a file read as a growing file (the snapshots whole by then, the
// cut record and the unfinished snapshot said, never an error); every
// flipped bit refused with the file's name and a byte offset, or read whole
// and consistent; one crafted file per check of 12.1, with the offset it
// names; the same file grown a byte at a time and read incrementally gives
// what a one-shot read gives, earlier pointers still valid (ASan in make
// test); paths stored once however many snapshots repeat them; version 1
// read as one end state.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../trace/snapshot_reader.h"
#include "../../trace/snapshot_writer.h"
#include "test_files.h"

static char tmp_path[64], grow_path[80];

static int make_tmp(void **state) {
  (void)state;
  snprintf(tmp_path, sizeof tmp_path, "/tmp/test_snapshot_reader_%d.retain", (int)getpid());
  snprintf(grow_path, sizeof grow_path, "%s.grow", tmp_path);
  remove(tmp_path);
  remove(grow_path);
  return 0;
}

static int remove_tmp(void **state) {
  (void)state;
  remove(tmp_path);
  remove(grow_path);
  return 0;
}

// --- bytes by hand ---------------------------------------------------------------

typedef struct Buf {
  unsigned char b[1 << 16];
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
static void b_record(Buf *x, const Buf *body) {
  b_u32(x, (uint32_t)body->n);
  b_u32(x, retain_crc32(0, body->b, body->n));
  memcpy(x->b + x->n, body->b, body->n);
  x->n += body->n;
}
static void b_header(Buf *x) {
  x->n = 0;
  memcpy(x->b, "MNRETAIN", 8);
  x->n = 8;
  b_byte(x, 2);
  b_leb(x, 77);
  b_leb(x, 1000);
}
// A record of the numbers given (the kind first).
static void b_rec(Buf *x, int n, ...) {
  static Buf body;
  body.n = 0;
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) b_leb(&body, va_arg(ap, uint64_t));
  va_end(ap);
  b_record(x, &body);
}
#define U(v) ((uint64_t)(v))
// Begin: number, trigger, time, alloc count.
static void b_begin(Buf *x, uint64_t n, uint64_t trigger, uint64_t allocs) {
  b_rec(x, 5, U(RETAIN_RECORD_BEGIN), n, trigger, U(5000) + n, allocs);
}
// End: number, flags, live, paths, then zeros and an empty reason.
static void b_end(Buf *x, uint64_t n, uint64_t flags, uint64_t live, uint64_t paths) {
  b_rec(x, 11, U(RETAIN_RECORD_END), n, flags, live, paths, U(0), U(0), U(0), U(0), U(0), U(0));
}
static void b_strings1(Buf *x, const char *s) {
  static Buf body;
  body.n = 0;
  b_byte(&body, RETAIN_RECORD_STRINGS);
  b_leb(&body, 1);
  b_str(&body, s);
  b_record(x, &body);
}

// --- the sample file -------------------------------------------------------------

static const RetainHop EVERY_HOP[] = {
    {RETAIN_HOP_FIELD, 1, 0, "items"},       {RETAIN_HOP_TUPLE, 1, 1, ""},
    {RETAIN_HOP_ARRAY, 1, 7, ""},            {RETAIN_HOP_LIST_CELL, 18342, 0, ""},
    {RETAIN_HOP_LIST_ELEMENT, 1, 0, ""},     {RETAIN_HOP_CAPTURE, 2, 4, "buf"},
    {RETAIN_HOP_HASHTBL_VALUE, 1, 0, ""},    {RETAIN_HOP_HASHTBL_KEY, 1, 0, ""},
    {RETAIN_HOP_BUFFER, 1, 0, ""},           {RETAIN_HOP_OTHER, 1, 3, ""},
    {RETAIN_HOP_ELIDED, 99999, 0, ""},       {RETAIN_HOP_HASHTBL_ENTRY, 3, 0, ""},
    {RETAIN_HOP_HASHTBL_STORAGE, 1, 0, ""},
};
enum { N_HOPS = sizeof EVERY_HOP / sizeof EVERY_HOP[0] };

static const RetainPath P_STACK = {10, {RETAIN_ROOT_STACK, "main", "x.mn", 12, "acc", 3}, 2, EVERY_HOP};
static const RetainPath P_GLOBAL = {30, {RETAIN_ROOT_GLOBAL, "log", "", 0, "", 0}, N_HOPS, EVERY_HOP};
static const RetainPath P_C = {20, {RETAIN_ROOT_C, "", "", 0, "", 5}, 0, NULL};
static const RetainPath P_EXN = {25, {RETAIN_ROOT_EXCEPTION, "", "", 0, "", 0}, 1, EVERY_HOP + 4};
static const RetainPath P_PROF = {26, {RETAIN_ROOT_PROFILER, "", "", 0, "", 0}, 1, EVERY_HOP + 8};
static const RetainPath P_NEW = {1200, {RETAIN_ROOT_GLOBAL, "fresh", "", 0, "", 0}, 3, EVERY_HOP + 2};

static void end(SnapshotWriter *w, uint64_t live, const char *reason) {
  uint32_t flags = RETAIN_COLLECTED | (*reason ? 0 : RETAIN_PATHS);   // a reason: some paths missing
  RetainSnapshotEnd e = {flags, live, 500, 2000, 4096, 90, 12, reason};
  assert_true(snapshot_writer_end(w, &e));
}

// The decision record of the sample (names: "main" is string 0, "x.mn" 1).
static void append_decision(const char *path) {
  static Buf x;
  x.n = 0;
  b_rec(&x, 13, U(RETAIN_RECORD_DECISION), U(1795786330500000u), U(1100), U(1), U(0), U(1), U(12), U(5), U(40),
        U(64), U(60), U(937500), U(900000));
  FILE *f = fopen(path, "ab");
  assert_non_null(f);
  assert_int_equal(fwrite(x.b, 1, x.n, f), x.n);
  fclose(f);
}

// Snapshot 0 (call): five paths of every root kind; a decision; snapshot 1
// (signal): the same five again and a new one; snapshot 2 (the end state):
// two of them, a reason.
static void write_sample(const char *path) {
  char err[256];
  remove(path);
  SnapshotWriter *w = snapshot_writer_open(path, 4242, 1795786330005883u, err, sizeof err);
  assert_non_null(w);
  assert_true(snapshot_writer_begin(w, RETAIN_TRIGGER_CALL, 1795786330400000u, 1000));
  const RetainPath *first[] = {&P_STACK, &P_GLOBAL, &P_C, &P_EXN, &P_PROF};
  for (int i = 0; i < 5; i++) assert_true(snapshot_writer_path(w, first[i]));
  end(w, 5, "");
  append_decision(path);
  assert_true(snapshot_writer_begin(w, RETAIN_TRIGGER_SIGNAL, 1795786330600000u, 1500));
  assert_true(snapshot_writer_path(w, &P_NEW));
  for (int i = 4; i >= 0; i--) assert_true(snapshot_writer_path(w, first[i]));
  end(w, 7, "one sampled block had no path");   // 6 paths of 7 live: the flags say so
  assert_true(snapshot_writer_begin(w, RETAIN_TRIGGER_END, 1795786331000000u, 2000));
  assert_true(snapshot_writer_path(w, &P_NEW));
  assert_true(snapshot_writer_path(w, &P_GLOBAL));
  end(w, 2, "");
  snapshot_writer_close(w);
}

static void assert_path_equal(const RetainPath *got, const RetainPath *want) {
  assert_non_null(got);
  assert_int_equal(got->alloc_id, want->alloc_id);
  assert_int_equal(got->root.kind, want->root.kind);
  if (want->root.kind == RETAIN_ROOT_GLOBAL || want->root.kind == RETAIN_ROOT_STACK)
    assert_string_equal(got->root.name, want->root.name);
  if (want->root.kind == RETAIN_ROOT_STACK) {
    assert_string_equal(got->root.file, want->root.file);
    assert_int_equal(got->root.line, want->root.line);
    assert_string_equal(got->root.local, want->root.local);
  }
  if (want->root.kind == RETAIN_ROOT_STACK || want->root.kind == RETAIN_ROOT_C)
    assert_int_equal(got->root.index, want->root.index);
  assert_int_equal(got->hop_count, want->hop_count);
  for (uint32_t i = 0; i < want->hop_count; i++) {
    const RetainHop *g = &got->hops[i], *h = &want->hops[i];
    assert_int_equal(g->kind, h->kind);
    assert_int_equal(g->count, h->count);
    bool indexed = h->kind == RETAIN_HOP_TUPLE || h->kind == RETAIN_HOP_ARRAY || h->kind == RETAIN_HOP_CAPTURE ||
                   h->kind == RETAIN_HOP_OTHER;
    assert_int_equal(g->index, indexed ? h->index : 0);
    assert_string_equal(g->name, h->kind == RETAIN_HOP_FIELD || h->kind == RETAIN_HOP_CAPTURE ? h->name : "");
  }
}

// Every snapshot's paths sorted, distinct, below its alloc count; found by id.
static void assert_consistent(const SnapshotReader *r) {
  for (uint32_t k = 0; k < snapshot_count(r); k++) {
    const Snapshot *s = snapshot_get(r, k);
    assert_int_equal(s->number, k);
    assert_true(s->paths <= s->end.live_samples);
    for (uint64_t i = 0; i < s->paths; i++) {
      const RetainPath *p = snapshot_path(r, k, i);
      assert_true(p->alloc_id < s->alloc_count);
      if (i) assert_true(p->alloc_id > snapshot_path(r, k, i - 1)->alloc_id);
      assert_ptr_equal(snapshot_find(r, k, p->alloc_id), p);
      assert_true(p->hop_count <= RETAIN_MAX_HOPS);
    }
  }
}

static void test_round_trip(void **state) {
  (void)state;
  write_sample(tmp_path);
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *r = snapshot_reader_open(tmp_path, err, sizeof err);
  if (!r) fail_msg("%s", err);
  assert_int_equal(snapshot_reader_version(r), 2);
  assert_int_equal(snapshot_reader_pid(r), 4242);
  assert_int_equal(snapshot_reader_start_time(r), 1795786330005883u);
  assert_int_equal(snapshot_count(r), 3);
  assert_int_equal(snapshot_end_state(r), 2);
  const Snapshot *s0 = snapshot_get(r, 0), *s1 = snapshot_get(r, 1), *s2 = snapshot_get(r, 2);
  assert_int_equal(s0->trigger, RETAIN_TRIGGER_CALL);
  assert_int_equal(s1->trigger, RETAIN_TRIGGER_SIGNAL);
  assert_int_equal(s2->trigger, RETAIN_TRIGGER_END);
  assert_int_equal(s0->time_us, 1795786330400000u);
  assert_int_equal(s1->alloc_count, 1500);
  assert_int_equal(s0->paths, 5);
  assert_int_equal(s1->paths, 6);
  assert_int_equal(s2->paths, 2);
  assert_int_equal(s1->end.live_samples, 7);
  assert_int_equal(s1->end.flags, RETAIN_COLLECTED);
  assert_int_equal(s0->end.flags, RETAIN_COLLECTED | RETAIN_PATHS);
  assert_string_equal(s1->end.reason, "one sampled block had no path");
  assert_int_equal(s0->end.marked_blocks, 500);
  assert_int_equal(s0->end.marked_words, 2000);
  assert_int_equal(s0->end.heap_words, 4096);
  assert_int_equal(s0->end.pause_us, 90);
  assert_int_equal(s0->end.paths_us, 12);
  assert_int_equal(s0->offset, 8 + 1 + 2 + 8);   // right after the header
  assert_true(s0->end_offset <= s1->offset);
  // by increasing id, whatever order they were written in
  const RetainPath *want0[] = {&P_STACK, &P_C, &P_EXN, &P_PROF, &P_GLOBAL};
  for (int i = 0; i < 5; i++) assert_path_equal(snapshot_path(r, 0, (uint64_t)i), want0[i]);
  assert_path_equal(snapshot_find(r, 1, 1200), &P_NEW);
  assert_path_equal(snapshot_find(r, 2, 30), &P_GLOBAL);
  assert_null(snapshot_find(r, 2, 10));
  assert_null(snapshot_find(r, 0, 1200));
  assert_null(snapshot_path(r, 0, 5));
  assert_null(snapshot_get(r, 3));
  // stored once: the five paths of snapshot 0 are snapshot 1's five
  assert_int_equal(snapshot_reader_distinct_paths(r), 6);
  assert_ptr_equal(snapshot_find(r, 0, 30), snapshot_find(r, 1, 30));
  assert_ptr_equal(snapshot_find(r, 0, 30), snapshot_find(r, 2, 30));
  // the decision
  assert_int_equal(snapshot_decision_count(r), 1);
  const SnapshotDecision *d = snapshot_decision(r, 0);
  assert_int_equal(d->time_us, 1795786330500000u);
  assert_int_equal(d->alloc_count, 1100);
  assert_int_equal(d->action, 1);
  assert_string_equal(d->function, "main");
  assert_string_equal(d->file, "x.mn");
  assert_int_equal(d->line, 12);
  assert_int_equal(d->first_col, 5);
  assert_int_equal(d->last_col, 40);
  assert_int_equal(d->sampled, 64);
  assert_int_equal(d->counted, 60);
  assert_int_equal(d->bound_millionths, 937500);
  assert_int_equal(d->threshold_millionths, 900000);
  assert_true(d->offset >= s0->end_offset && d->offset < s1->offset);
  const SnapshotTail *t = snapshot_reader_tail(r);
  assert_false(t->header_missing);
  assert_false(t->unfinished);
  assert_int_equal(t->cut_bytes, 0);
  char text[256];
  snapshot_tail_text(t, text, sizeof text);
  assert_string_equal(text, "");
  assert_consistent(r);
  snapshot_reader_close(r);
}

// What a prefix of n bytes of the sample must read as: the snapshots and
// decisions whose records end by n.
static void check_prefix(const SnapshotReader *whole, const unsigned char *bytes, size_t n, size_t header) {
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *r = snapshot_reader_open_bytes(bytes, n, "t.retain", err, sizeof err);
  if (!r) fail_msg("prefix of %zu bytes refused: %s", n, err);
  uint32_t want = 0;
  for (uint32_t k = 0; k < snapshot_count(whole); k++) want += snapshot_get(whole, k)->end_offset <= n;
  assert_int_equal(snapshot_count(r), want);
  const SnapshotDecision *d = snapshot_decision(whole, 0);
  uint32_t decision_len = (uint32_t)bytes[d->offset] | (uint32_t)bytes[d->offset + 1] << 8;
  assert_int_equal(snapshot_decision_count(r), d->offset + 8 + decision_len <= n);
  const SnapshotTail *t = snapshot_reader_tail(r);
  assert_int_equal(t->header_missing, n < header);
  if (n >= header) {
    // the cut record: from the last record boundary at or before n
    size_t b = header;
    while (b + 8 <= n && b + 8 + ((uint32_t)bytes[b] | (uint32_t)bytes[b + 1] << 8) <= n)
      b += 8 + ((uint32_t)bytes[b] | (uint32_t)bytes[b + 1] << 8);
    assert_int_equal(t->cut_bytes, n - b);
    if (n > b) assert_int_equal(t->cut_offset, b);
    // unfinished: a snapshot whose begin record is whole and whose end is not
    bool unfinished = false;
    for (uint32_t k = 0; k < snapshot_count(whole); k++) {
      const Snapshot *s = snapshot_get(whole, k);
      size_t begin_end = s->offset + 8 + ((uint32_t)bytes[s->offset] | (uint32_t)bytes[s->offset + 1] << 8);
      if (begin_end <= n && n < s->end_offset) {
        unfinished = true;
        assert_int_equal(t->unfinished_number, k);
        assert_int_equal(t->unfinished_offset, s->offset);
      }
    }
    assert_int_equal(t->unfinished, unfinished);
  }
  char text[256];
  snapshot_tail_text(t, text, sizeof text);
  if (t->cut_bytes || t->unfinished) assert_non_null(strstr(text, "left out"));
  assert_consistent(r);
  snapshot_reader_close(r);
}

static void test_every_truncation(void **state) {
  (void)state;
  write_sample(tmp_path);
  TestBytes b = test_slurp(tmp_path);
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *whole = snapshot_reader_open_bytes(b.b, b.n, "t.retain", err, sizeof err);
  assert_non_null(whole);
  size_t header = 8 + 1 + 2 + 8;
  for (size_t n = 0; n <= b.n; n++) check_prefix(whole, b.b, n, header);
  snapshot_reader_close(whole);
  free(b.b);
}

static void test_flipped_bits(void **state) {
  (void)state;
  write_sample(tmp_path);
  TestBytes b = test_slurp(tmp_path);
  char err[SNAPSHOT_READER_ERROR_MAX];
  unsigned refused = 0, read = 0;
  for (size_t i = 0; i < b.n; i++) {
    for (unsigned mask = 1; mask < 256; mask <<= 1) {
      b.b[i] ^= (unsigned char)mask;
      err[0] = 0;
      SnapshotReader *r = snapshot_reader_open_bytes(b.b, b.n, "t.retain", err, sizeof err);
      if (r) {
        assert_consistent(r);
        snapshot_reader_close(r);
        read++;
      } else {
        assert_non_null(strstr(err, "t.retain"));
        if (i >= 9) assert_non_null(strstr(err, "at byte"));
        refused++;
      }
      b.b[i] ^= (unsigned char)mask;
    }
  }
  // Records are checked by CRC: every flip inside a record body is refused;
  // flips of the pid, the start time and some length bits read.
  assert_true(refused > 8 * (b.n - 40));
  assert_true(read > 0);
  free(b.b);
}

// The sample appended to another file a byte at a time (and then in
// uneven steps): each update reads what is whole, as a one-shot read of the
// prefix would, and earlier snapshots' pointers stay valid.
static void test_incremental(void **state) {
  (void)state;
  write_sample(tmp_path);
  TestBytes b = test_slurp(tmp_path);
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *whole = snapshot_reader_open_bytes(b.b, b.n, "t.retain", err, sizeof err);
  assert_non_null(whole);
  for (size_t step = 1; step <= 97; step += 48) {
    remove(grow_path);
    FILE *f = fopen(grow_path, "wb");
    assert_non_null(f);
    SnapshotReader *r = snapshot_reader_open(grow_path, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(snapshot_reader_version(r), 0);
    assert_true(snapshot_reader_tail(r)->header_missing);
    const RetainPath *early = NULL;
    uint32_t seen = 0;
    for (size_t n = 0; n < b.n;) {
      size_t k = n + step <= b.n ? step : b.n - n;
      assert_int_equal(fwrite(b.b + n, 1, k, f), k);
      fflush(f);
      n += k;
      int got = snapshot_reader_update(r, err, sizeof err);
      if (got < 0) fail_msg("update at %zu bytes: %s", n, err);
      seen += (uint32_t)got;
      assert_int_equal(snapshot_count(r), seen);
      uint32_t want = 0;
      for (uint32_t s = 0; s < snapshot_count(whole); s++) want += snapshot_get(whole, s)->end_offset <= n;
      assert_int_equal(seen, want);
      if (seen && !early) early = snapshot_path(r, 0, 4);
    }
    fclose(f);
    assert_int_equal(snapshot_count(r), 3);
    assert_int_equal(snapshot_decision_count(r), 1);
    assert_path_equal(early, &P_GLOBAL);   // taken after snapshot 0, read after everything
    for (uint32_t s = 0; s < 3; s++)
      for (uint64_t i = 0; i < snapshot_get(whole, s)->paths; i++)
        assert_path_equal(snapshot_path(r, s, i), snapshot_path(whole, s, i));
    assert_int_equal(snapshot_reader_distinct_paths(r), 6);
    assert_int_equal(snapshot_reader_update(r, err, sizeof err), 0);   // nothing new
    snapshot_reader_close(r);
  }
  snapshot_reader_close(whole);
  free(b.b);
}

// A file cut as a run killed mid-snapshot leaves it: snapshots 0 and 1
// whole, snapshot 2 begun with some paths, the last record cut.
static void test_killed_mid_snapshot(void **state) {
  (void)state;
  write_sample(tmp_path);
  TestBytes b = test_slurp(tmp_path);
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *whole = snapshot_reader_open_bytes(b.b, b.n, "t.retain", err, sizeof err);
  size_t cut = b.n - 5;   // inside snapshot 2's end record
  SnapshotReader *r = snapshot_reader_open_bytes(b.b, cut, "k.retain", err, sizeof err);
  assert_non_null(r);
  assert_int_equal(snapshot_count(r), 2);
  assert_int_equal(snapshot_end_state(r), -1);
  const SnapshotTail *t = snapshot_reader_tail(r);
  assert_true(t->unfinished);
  assert_int_equal(t->unfinished_number, 2);
  assert_int_equal(t->unfinished_offset, snapshot_get(whole, 2)->offset);
  assert_int_equal(t->unfinished_paths, 2);
  assert_true(t->cut_bytes > 0);
  char text[512];
  snapshot_tail_text(t, text, sizeof text);
  assert_non_null(strstr(text, "snapshot 2 (begun at byte"));
  assert_non_null(strstr(text, "cut short"));
  snapshot_reader_close(r);
  snapshot_reader_close(whole);
  free(b.b);
}

static void test_paths_stored_once(void **state) {
  (void)state;
  char err[SNAPSHOT_READER_ERROR_MAX];
  remove(tmp_path);
  SnapshotWriter *w = snapshot_writer_open(tmp_path, 1, 2, err, sizeof err);
  assert_non_null(w);
  char name[32];
  for (uint64_t s = 0; s < 20; s++) {
    assert_true(snapshot_writer_begin(w, RETAIN_TRIGGER_PERIOD, 10 + s, 1000));
    for (uint64_t i = 0; i < 500; i++) {
      RetainHop h = {RETAIN_HOP_LIST_CELL, i == 7 ? 100 + s : 1 + i, 0, ""};   // id 7 moves each time
      snprintf(name, sizeof name, "g%llu", (unsigned long long)(i % 10));
      RetainPath p = {i, {RETAIN_ROOT_GLOBAL, name, "", 0, "", 0}, 1, &h};
      assert_true(snapshot_writer_path(w, &p));
    }
    end(w, 500, "");
  }
  snapshot_writer_close(w);
  SnapshotReader *r = snapshot_reader_open(tmp_path, err, sizeof err);
  assert_non_null(r);
  assert_int_equal(snapshot_count(r), 20);
  assert_int_equal(snapshot_reader_distinct_paths(r), 499 + 20);
  assert_int_equal(snapshot_reader_strings(r), 10);
  assert_int_equal(snapshot_find(r, 19, 7)->hops[0].count, 119);
  snapshot_reader_close(r);
}

// --- crafted files: one per check -------------------------------------------------

static Buf x;

// Reads x and expects a refusal naming `what` at byte `at` (-1: any).
static void expect_refused_at(const char *what, long long at) {
  char err[SNAPSHOT_READER_ERROR_MAX] = "";
  SnapshotReader *r = snapshot_reader_open_bytes(x.b, x.n, "c.retain", err, sizeof err);
  if (r) fail_msg("read, expected '%s'", what);
  if (!strstr(err, what)) fail_msg("expected '%s' in '%s'", what, err);
  assert_non_null(strstr(err, "c.retain"));
  if (at >= 0) {
    char want[64];
    snprintf(want, sizeof want, "at byte %lld:", at);
    if (!strstr(err, want)) fail_msg("expected '%s' in '%s'", want, err);
  }
}

static void test_crafted(void **state) {
  (void)state;
  const uint64_t both = RETAIN_COLLECTED | RETAIN_PATHS;
  const size_t H = 8 + 1 + 1 + 2;   // header: magic, version, pid 77, start 1000
  size_t rec;
  // a good one first: strings, begin, a path, end
  b_header(&x);
  b_strings1(&x, "a");
  b_begin(&x, 0, 1, 100);
  b_rec(&x, 7, U(RETAIN_RECORD_PATHS), U(0), U(1), U(5), U(RETAIN_ROOT_GLOBAL), U(0), U(0));
  b_end(&x, 0, both, 1, 1);
  {
    char err[SNAPSHOT_READER_ERROR_MAX];
    SnapshotReader *r = snapshot_reader_open_bytes(x.b, x.n, "c.retain", err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_int_equal(snapshot_count(r), 1);
    assert_string_equal(snapshot_path(r, 0, 0)->root.name, "a");
    snapshot_reader_close(r);
  }
  // not ours
  memcpy(x.b, "MNRETAIX", 8);
  expect_refused_at("not a snapshot file", -1);
  b_header(&x);
  x.b[8] = 7;
  expect_refused_at("version 7", -1);
  // header numbers
  b_header(&x);
  x.n = 9;
  for (int i = 0; i < 10; i++) b_byte(&x, 0xff);
  b_byte(&x, 0x7f);
  expect_refused_at("wider than 64 bits", 18);
  // record lengths and checks
  b_header(&x);
  b_u32(&x, 0), b_u32(&x, 0), b_byte(&x, 1);
  expect_refused_at("a record of 0 bytes", (long long)H);
  b_header(&x);
  b_u32(&x, RETAIN_MAX_RECORD + 1), b_u32(&x, 0);
  expect_refused_at("a record of 16777217 bytes", (long long)H);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  x.b[x.n - 1] ^= 1;
  expect_refused_at("check does not match", (long long)H);
  b_header(&x);
  b_rec(&x, 1, U(9));
  expect_refused_at("unknown record kind 9", (long long)H + 8);
  // fields that do not fill the record, or overflow it
  b_header(&x);
  b_rec(&x, 6, U(RETAIN_RECORD_BEGIN), U(0), U(1), U(2), U(100), U(0));
  expect_refused_at("1 bytes left over", (long long)H + 8 + 5);
  b_header(&x);
  b_rec(&x, 4, U(RETAIN_RECORD_BEGIN), U(0), U(1), U(2));
  expect_refused_at("alloc count: the record ends inside its number", (long long)H + 8 + 4);
  b_header(&x);
  b_rec(&x, 2, U(RETAIN_RECORD_STRINGS), U(5));
  expect_refused_at("5 strings cannot fit the 0 bytes left", (long long)H + 9);
  // snapshot numbers and nesting
  b_header(&x);
  b_begin(&x, 1, 1, 100);
  expect_refused_at("snapshot number 1 out of order (0 expected)", (long long)H + 9);
  b_header(&x);
  b_rec(&x, 3, U(RETAIN_RECORD_PATHS), U(0), U(0));
  expect_refused_at("a paths record of snapshot 0, which was not begun", (long long)H + 9);
  b_header(&x);
  b_end(&x, 0, both, 0, 0);
  expect_refused_at("an end record of snapshot 0, which was not begun", (long long)H + 9);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 3, U(RETAIN_RECORD_PATHS), U(3), U(0));
  expect_refused_at("a paths record of snapshot 3 inside snapshot 0", (long long)rec + 9);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_begin(&x, 1, 1, 100);
  expect_refused_at("snapshot 1 begins inside snapshot 0 (begun at byte 12)", (long long)rec);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 13, U(RETAIN_RECORD_DECISION), U(1), U(1), U(1), U(0), U(0), U(1), U(1), U(1), U(1), U(1), U(1), U(1));
  expect_refused_at("a decision record inside snapshot 0", (long long)rec);
  b_header(&x);
  b_begin(&x, 0, RETAIN_TRIGGER_END, 100);
  b_end(&x, 0, both, 0, 0);
  rec = x.n;
  b_begin(&x, 1, 1, 100);
  expect_refused_at("snapshot 1 begins after the end state", (long long)rec);
  b_header(&x);
  b_begin(&x, 0, 5, 100);
  expect_refused_at("unknown trigger 5", (long long)H + 10);
  // names
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 7, U(RETAIN_RECORD_PATHS), U(0), U(1), U(5), U(RETAIN_ROOT_GLOBAL), U(3), U(0));
  expect_refused_at("string 3 of a table of 0", (long long)rec + 8 + 5);
  b_header(&x);
  {
    static Buf body;
    body.n = 0;
    b_byte(&body, RETAIN_RECORD_STRINGS);
    b_leb(&body, 1);
    b_leb(&body, 2);
    b_byte(&body, 'a');
    b_byte(&body, 0);
    b_record(&x, &body);
  }
  expect_refused_at("a NUL byte inside a string", (long long)H + 10);
  b_header(&x);
  b_rec(&x, 3, U(RETAIN_RECORD_STRINGS), U(1), U(RETAIN_MAX_STRING + 1));
  expect_refused_at("a string of 4097 bytes", (long long)H + 10);
  // ids
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 6, U(RETAIN_RECORD_PATHS), U(0), U(1), U(100), U(RETAIN_ROOT_EXCEPTION), U(0));
  expect_refused_at("a path for allocation 100 in snapshot 0, begun at 100 allocations", (long long)rec + 11);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 9, U(RETAIN_RECORD_PATHS), U(0), U(2), U(6), U(RETAIN_ROOT_EXCEPTION), U(0), U(6),
        U(RETAIN_ROOT_PROFILER), U(0));
  b_end(&x, 0, both, 2, 2);
  expect_refused_at("allocation 6 listed twice in snapshot 0 (first at byte", (long long)rec + 14);
  // paths and live samples, the end record's figures
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  b_rec(&x, 9, U(RETAIN_RECORD_PATHS), U(0), U(2), U(6), U(RETAIN_ROOT_EXCEPTION), U(0), U(7),
        U(RETAIN_ROOT_PROFILER), U(0));
  rec = x.n;
  b_end(&x, 0, RETAIN_COLLECTED, 1, 2);
  expect_refused_at("2 paths for 1 live samples", (long long)rec + 12);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_end(&x, 0, both, 3, 3);
  expect_refused_at("snapshot 0 says 3 paths; its paths records gave 0", (long long)rec + 12);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_end(&x, 0, 64, 0, 0);
  expect_refused_at("unknown flags 0x40", (long long)rec + 10);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_end(&x, 0, RETAIN_PATHS, 0, 0);
  expect_refused_at("every block has its path, but no collection ran", (long long)rec + 10);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  b_rec(&x, 6, U(RETAIN_RECORD_PATHS), U(0), U(1), U(6), U(RETAIN_ROOT_EXCEPTION), U(0));
  rec = x.n;
  b_end(&x, 0, 0, 1, 1);
  expect_refused_at("1 paths, but no collection ran", (long long)rec + 10);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  b_rec(&x, 6, U(RETAIN_RECORD_PATHS), U(0), U(1), U(6), U(RETAIN_ROOT_EXCEPTION), U(0));
  rec = x.n;
  b_end(&x, 0, both, 2, 1);
  expect_refused_at("every live block has its path", (long long)rec + 10);
  // roots and hops
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 6, U(RETAIN_RECORD_PATHS), U(0), U(1), U(5), U(9), U(0));
  expect_refused_at("unknown root kind 9", (long long)rec + 12);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 8, U(RETAIN_RECORD_PATHS), U(0), U(1), U(5), U(RETAIN_ROOT_EXCEPTION), U(1), U(42), U(1));
  expect_refused_at("unknown hop kind 42", (long long)rec + 14);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 8, U(RETAIN_RECORD_PATHS), U(0), U(1), U(5), U(RETAIN_ROOT_EXCEPTION), U(1), U(RETAIN_HOP_LIST_CELL),
        U(0));
  expect_refused_at("a hop repeated 0 times", (long long)rec + 15);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 6, U(RETAIN_RECORD_PATHS), U(0), U(1), U(5), U(RETAIN_ROOT_EXCEPTION), U(257));
  expect_refused_at("a path of 257 hops (at most 256)", (long long)rec + 13);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 6, U(RETAIN_RECORD_PATHS), U(0), U(1), U(5), U(RETAIN_ROOT_STACK), U(0));
  expect_refused_at("string 0 of a table of 0", (long long)rec + 13);
  b_header(&x);
  b_strings1(&x, "f");
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 11, U(RETAIN_RECORD_PATHS), U(0), U(1), U(5), U(RETAIN_ROOT_STACK), U(0), U(0), U(1ull << 33), U(0),
        U(0), U(0));
  expect_refused_at("line 8589934592 is out of range", (long long)rec + 15);
  b_header(&x);
  b_begin(&x, 0, 1, 100);
  rec = x.n;
  b_rec(&x, 3, U(RETAIN_RECORD_PATHS), U(0), U(9));
  expect_refused_at("9 paths cannot fit the 0 bytes left", (long long)rec + 10);
  // a decision's action
  b_header(&x);
  b_strings1(&x, "f");
  rec = x.n;
  b_rec(&x, 13, U(RETAIN_RECORD_DECISION), U(1), U(1), U(3), U(0), U(0), U(1), U(1), U(1), U(1), U(1), U(1), U(1));
  expect_refused_at("unknown action 3", (long long)rec + 11);   // 2: young again on a probe
}

// --- version 1 ----------------------------------------------------------------------

// A version-1 file: its header's numbers, no string, then `rest`.
static void v1(uint64_t flags, uint64_t live, const unsigned char *rest, size_t len) {
  x.n = 0;
  memcpy(x.b, "MNRETAIN", 8);
  x.n = 8;
  b_byte(&x, 1);
  const uint64_t nums[] = {4242, 1000, 100, 2000, flags, live, 55, 66, 7, 8};
  for (int i = 0; i < 10; i++) b_leb(&x, nums[i]);
  b_str(&x, "why");
  memcpy(x.b + x.n, rest, len);
  x.n += len;
}

static void test_version1(void **state) {
  (void)state;
  const uint64_t both = RETAIN_COLLECTED | RETAIN_PATHS;
  // strings "a"; two paths: id 5 global a, id 9 exception with one list cell hop x4
  const unsigned char ok[] = {1, 1, 'a', 2, 5, 0, 0, 0, 9, 3, 1, 3, 4};
  v1(both, 2, ok, sizeof ok);
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *r = snapshot_reader_open_bytes(x.b, x.n, "v1.retain", err, sizeof err);
  if (!r) fail_msg("%s", err);
  assert_int_equal(snapshot_reader_version(r), 1);
  assert_int_equal(snapshot_reader_pid(r), 4242);
  assert_int_equal(snapshot_reader_start_time(r), 1000);
  assert_int_equal(snapshot_count(r), 1);
  assert_int_equal(snapshot_end_state(r), 0);
  const Snapshot *s = snapshot_get(r, 0);
  assert_int_equal(s->alloc_count, 100);
  assert_int_equal(s->time_us, 2000);
  assert_int_equal(s->end.live_samples, 2);
  assert_int_equal(s->end.marked_blocks, 55);
  assert_int_equal(s->end.marked_words, 66);
  assert_int_equal(s->end.pause_us, 15);
  assert_int_equal(s->end.paths_us, 8);
  assert_string_equal(s->end.reason, "why");
  assert_int_equal(s->paths, 2);
  assert_string_equal(snapshot_find(r, 0, 5)->root.name, "a");
  assert_int_equal(snapshot_find(r, 0, 9)->hops[0].count, 4);
  assert_consistent(r);
  snapshot_reader_close(r);
  // every truncation is refused (a version-1 file is whole or damaged)
  size_t whole = x.n;
  for (size_t n = 9; n < whole; n++) {
    r = snapshot_reader_open_bytes(x.b, n, "v1.retain", err, sizeof err);
    if (r) fail_msg("a version-1 file cut at %zu read", n);
    assert_non_null(strstr(err, "at byte"));
  }
  const unsigned char order[] = {0, 2, 6, 4, 0, 5, 4, 0};
  v1(both, 2, order, sizeof order);
  expect_refused_at("out of order", -1);
  const unsigned char none[] = {0, 1, 5, 4, 0};
  v1(RETAIN_COLLECTED, 1, none, sizeof none);
  expect_refused_at("says it has none", -1);
  const unsigned char trailing[] = {0, 0, 7};
  v1(both, 0, trailing, sizeof trailing);
  expect_refused_at("after the last path", -1);
}

static void test_unreadable(void **state) {
  (void)state;
  char err[SNAPSHOT_READER_ERROR_MAX];
  assert_null(snapshot_reader_open("/nonexistent-dir/t.ctf.retain", err, sizeof err));
  assert_non_null(strstr(err, "cannot read /nonexistent-dir/t.ctf.retain"));
  assert_null(snapshot_reader_open("/tmp", err, sizeof err));
  assert_non_null(strstr(err, "not a regular file"));
  SnapshotReader *r = snapshot_reader_open_bytes((const unsigned char *)"MNRE", 4, "m", err, sizeof err);
  assert_non_null(r);   // a header not yet whole: nothing yet
  assert_true(snapshot_reader_tail(r)->header_missing);
  assert_int_equal(snapshot_reader_update(r, err, sizeof err), -1);   // from memory: nothing to update
  snapshot_reader_close(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_every_truncation, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_flipped_bits, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_incremental, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_killed_mid_snapshot, make_tmp, remove_tmp),
      cmocka_unit_test_setup_teardown(test_paths_stored_once, make_tmp, remove_tmp),
      cmocka_unit_test(test_crafted),
      cmocka_unit_test(test_version1),
      cmocka_unit_test(test_unreadable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
