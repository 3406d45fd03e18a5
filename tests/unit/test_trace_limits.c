// test_trace_limits.c - cmocka tests of trace/format.h's table of limits
// (part 3), the writer's side against the reader's: each limit written at
// its edge through trace/writer.c and read back whole by trace/reader.c,
// and past its edge: cut by the writer as the table says (and said in its
// stats), still read whole. Then the reader's own side: a trace deeper than
// TRACE_MAX_FRAMES (which no writer of ours makes) is cut to its outermost
// frames, said in the event and the stats, and the events after it read on.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "writer.h"

static const uint64_t T0 = 0x5F0000123456ull;

// ================================================================ a writer into a temporary file

typedef struct Trace {
  FILE *file;
  TraceWriter *w;
  uint64_t now;
  uint32_t n_locations;        // locations each code resolves to (default 1)
  size_t name_bytes;           // bytes of each function name (default 2)
} Trace;

static uint32_t locate(void *data, uint64_t code, TraceLocation *out, uint32_t max) {
  Trace *t = data;
  static char name[TRACE_MAX_LOCATION_BYTES * 2];
  size_t n = t->name_bytes < sizeof name - 1 ? t->name_bytes : sizeof name - 1;
  memset(name, 'a' + (int)(code % 26), n);
  name[n] = '\0';
  uint32_t count = t->n_locations < max ? t->n_locations : max;
  for (uint32_t i = 0; i < count; i++) out[i] = (TraceLocation){name, "f.mn", (uint32_t)(code % 1000) + i, 1, 2};
  return count;
}

static Trace *trace_new(const char *long_string) {
  Trace *t = calloc(1, sizeof *t);
  assert_non_null(t);
  t->file = tmpfile();
  assert_non_null(t->file);
  t->n_locations = 1;
  t->name_bytes = 2;
  t->now = T0;
  TraceInfo info = {.sample_rate = 1e-4, .word_size = 64, .executable = long_string ? long_string : "exe",
                    .host = "host", .runtime_params = "p=1", .context = "ctx", .pid = 7, .start_time_us = T0,
                    .version = 2};
  char err[128];
  t->w = trace_writer_new(fileno(t->file), false, &info, locate, t, err, sizeof err);
  if (!t->w) fail_msg("%s", err);
  return t;
}

static TraceReader *trace_finish(Trace *t, TraceWriterStats *stats) {
  trace_writer_stats(t->w, stats);
  char err[128];
  if (!trace_writer_finish(t->w, err, sizeof err)) fail_msg("%s", err);
  fflush(t->file);
  assert_int_equal(lseek(fileno(t->file), 0, SEEK_SET), 0);
  TraceReaderError e;
  TraceReader *r = trace_reader_open_fd(dup(fileno(t->file)), &e);
  if (!r) fail_msg("%s", e.message);
  fclose(t->file);
  free(t);
  return r;
}

// The next event, which must be an allocation.
static TraceEvent next_alloc(TraceReader *r) {
  TraceEvent ev;
  TraceReaderStatus s = trace_reader_next(r, &ev);
  if (s != TRACE_READER_EVENT) fail_msg("status %d: %s", s, trace_reader_error(r)->message);
  assert_int_equal(ev.kind, TRACE_EVENT_ALLOC);
  return ev;
}

static void expect_end(TraceReader *r) {
  TraceEvent ev;
  TraceReaderStatus s = trace_reader_next(r, &ev);
  if (s != TRACE_READER_END) fail_msg("status %d: %s", s, trace_reader_error(r)->message);
}

// ================================================================ frames

// A recursion `depth` deep (code 5 under a root 3, the site 9), written as
// runs; as the VM writes it, each event a deeper prefix of the next, so that
// the 4,096-byte cap (some 347,000 frames an event) never cuts.
static void write_recursion(Trace *t, uint32_t depth, uint32_t step) {
  for (uint32_t d = step < depth ? step : depth;; d = d + step < depth ? d + step : depth) {
    TraceRun runs[3] = {{3, 1}, {5, d - 1}, {9, d}};
    uint64_t id;
    assert_true(trace_writer_alloc_runs(t->w, t->now++, 1, 1, TRACE_SOURCE_MINOR, runs, 3, d > step ? d - step : 0, &id));
    if (d == depth) break;
  }
}

static void test_frames_at_the_limit(void **state) {
  (void)state;
  enum { STEP = 300000 };
  Trace *t = trace_new(NULL);
  write_recursion(t, TRACE_MAX_FRAMES, STEP);
  TraceWriterStats ws;
  TraceReader *r = trace_finish(t, &ws);
  assert_int_equal(ws.cut_deep, 0);
  TraceEvent ev;
  uint32_t events = 0;
  do {
    ev = next_alloc(r);
    events++;
    assert_false(ev.cut);
  } while (ev.backtrace_len < TRACE_MAX_FRAMES);
  assert_int_equal(events, (TRACE_MAX_FRAMES + STEP - 1) / STEP);
  assert_int_equal(ev.backtrace_len, TRACE_MAX_FRAMES);  // every frame, whole
  assert_int_equal(ev.backtrace[0], 3);
  assert_int_equal(ev.backtrace[TRACE_MAX_FRAMES - 2], 5);
  assert_int_equal(ev.backtrace[TRACE_MAX_FRAMES - 1], 9);
  expect_end(r);
  TraceReaderStats rs;
  trace_reader_stats(r, &rs);
  assert_int_equal(rs.cut_backtraces, 0);
  assert_int_equal(rs.max_backtrace, TRACE_MAX_FRAMES);
  trace_reader_close(r);
}

// Past the limit the writer writes the outermost TRACE_MAX_FRAMES frames
// (the site among the innermost, left out) and counts the event; the reader
// reads what was written whole, and the next event, shallow, as it is.
static void test_frames_past_the_limit(void **state) {
  (void)state;
  enum { STEP = 300000 };
  Trace *t = trace_new(NULL);
  write_recursion(t, TRACE_MAX_FRAMES + 1000, STEP);
  TraceRun shallow[2] = {{3, 1}, {9, 2}};
  uint64_t id;
  assert_true(trace_writer_alloc_runs(t->w, t->now++, 1, 1, TRACE_SOURCE_MINOR, shallow, 2, 1, &id));
  TraceWriterStats ws;
  TraceReader *r = trace_finish(t, &ws);
  assert_int_equal(ws.cut_deep, 1);
  TraceEvent ev;
  do ev = next_alloc(r);
  while (ev.backtrace_len < TRACE_MAX_FRAMES);
  assert_int_equal(ev.backtrace_len, TRACE_MAX_FRAMES);
  assert_false(ev.cut);  // the writer cut it: the reader holds all it was given
  assert_int_equal(ev.backtrace[TRACE_MAX_FRAMES - 1], 5);
  ev = next_alloc(r);
  assert_int_equal(ev.backtrace_len, 2);
  assert_int_equal(ev.backtrace[1], 9);
  expect_end(r);
  trace_reader_close(r);
}

// ================================================================ locations and strings

static void test_locations_at_and_past_the_limit(void **state) {
  (void)state;
  uint32_t counts[] = {TRACE_MAX_LOCATIONS, TRACE_MAX_LOCATIONS + 1};
  for (int k = 0; k < 2; k++) {
    Trace *t = trace_new(NULL);
    t->n_locations = counts[k];
    uint64_t stack[1] = {40};
    trace_writer_alloc(t->w, t->now++, 1, 1, TRACE_SOURCE_MINOR, stack, 1, 0);
    TraceWriterStats ws;
    TraceReader *r = trace_finish(t, &ws);
    next_alloc(r);
    const TraceReaderLocation *locs;
    int n = trace_reader_locations(r, 40, &locs);
    if (k == 0) {
      assert_int_equal(n, TRACE_MAX_LOCATIONS);  // every one
      assert_int_equal(locs[TRACE_MAX_LOCATIONS - 1].line, 40 + TRACE_MAX_LOCATIONS - 1);
    } else {
      assert_int_equal(n, 1);  // one unknown location
      assert_string_equal(locs[0].function, "??");
    }
    trace_reader_close(r);
  }
  // A location event's bytes: a name that fits is read whole; one that does
  // not (its event past TRACE_MAX_LOCATION_BYTES) is the unknown location.
  size_t sizes[] = {TRACE_MAX_LOCATION_BYTES - 64, TRACE_MAX_LOCATION_BYTES + 1};
  for (int k = 0; k < 2; k++) {
    Trace *t = trace_new(NULL);
    t->name_bytes = sizes[k];
    uint64_t stack[1] = {41};
    trace_writer_alloc(t->w, t->now++, 1, 1, TRACE_SOURCE_MINOR, stack, 1, 0);
    TraceWriterStats ws;
    TraceReader *r = trace_finish(t, &ws);
    next_alloc(r);
    const TraceReaderLocation *locs;
    assert_int_equal(trace_reader_locations(r, 41, &locs), 1);
    if (k == 0) assert_int_equal(strlen(locs[0].function), sizes[k]);
    else assert_string_equal(locs[0].function, "??");
    trace_reader_close(r);
  }
}

static void test_info_strings(void **state) {
  (void)state;
  size_t sizes[] = {TRACE_MAX_INFO_STRING, TRACE_MAX_INFO_STRING + 100};
  for (int k = 0; k < 2; k++) {
    char *s = malloc(sizes[k] + 1);
    memset(s, 'x', sizes[k]);
    s[sizes[k]] = '\0';
    Trace *t = trace_new(s);
    TraceWriterStats ws;
    TraceReader *r = trace_finish(t, &ws);
    assert_int_equal(strlen(trace_reader_info(r)->executable), TRACE_MAX_INFO_STRING);
    expect_end(r);
    trace_reader_close(r);
    free(s);
  }
}

// ================================================================ the reader's side

// Raw bytes of a crafted trace (docs/trace-format.md), version 2 (or 3,
// with the domain of the packets to come), pid 1.
typedef struct Raw {
  uint8_t *b;
  size_t n;
  uint16_t version, domain;
} Raw;

static void put(Raw *r, const void *p, size_t n) {
  memcpy(r->b + r->n, p, n);
  r->n += n;
}
static void put8(Raw *r, uint8_t v) { put(r, &v, 1); }
static void put16(Raw *r, uint16_t v) { put(r, &v, 2); }
static void put32(Raw *r, uint32_t v) { put(r, &v, 4); }
static void put64(Raw *r, uint64_t v) { put(r, &v, 8); }
static void put_event(Raw *r, unsigned code, uint64_t t) {
  put32(r, (uint32_t)code << TRACE_TIME_BITS | (uint32_t)(t & ((1u << TRACE_TIME_BITS) - 1)));
}

static size_t begin_packet(Raw *r, uint64_t t, uint64_t id0, uint64_t id1) {
  size_t start = r->n;
  put32(r, TRACE_MAGIC);
  put32(r, 0);
  put64(r, t);
  put64(r, t);
  put32(r, 0);
  put16(r, r->version);
  put64(r, 1);
  if (r->version >= 3) put16(r, r->domain);
  put16(r, TRACE_CACHE_CHECK_NONE);
  put16(r, 0);
  put64(r, 0);
  put64(r, id0);
  put64(r, id1);
  return start;
}

static void end_packet(Raw *r, size_t start) {
  uint32_t bits = (uint32_t)(r->n - start) * 8;
  memcpy(r->b + start + 4, &bits, 4);
}

// Allocation `id` (a packet of its own): common prefix `prefix`, then, if
// `miss`, code 77 into bucket 9, then `hits` codewords on bucket 9 (which
// predicts itself) of `n` predicted frames: each 1 + n frames of 77.
static void put_alloc(Raw *r, uint64_t id, uint32_t prefix, bool miss, uint32_t hits, uint8_t n) {
  uint64_t t = T0 + 10 + id;
  if (r->version >= 3 && miss) {  // a domain's first event: its own cache
    size_t p = begin_packet(r, t, id, id);
    end_packet(r, p);
  }
  size_t p = begin_packet(r, t, id, id + 1);
  put_event(r, TRACE_EV_ALLOC, t);
  put(r, "\x01\x01\x00", 3);  // 1 word, 1 sample, minor
  put8(r, 254);                 // the prefix as an i32
  put32(r, prefix);
  put16(r, (uint16_t)(hits + miss));
  if (miss) {
    put16(r, 9 << 2 | 3);
    put64(r, 77);
  }
  for (uint32_t i = 0; i < hits; i++) {
    put16(r, 9 << 2 | 2);
    put8(r, n);
  }
  end_packet(r, p);
}

// Backtraces deeper than TRACE_MAX_FRAMES, which no writer of ours makes
// (events of up to 2.56 million frames more each, through the common
// prefix): cut to their outermost TRACE_MAX_FRAMES frames, the event and
// the stats say so, and the trace reads on to its end. An event whose prefix
// passes the frames kept is cut the same way; a shallow one after them is
// read as it is.
// The info and location packets: code 77 is "F.g" in f.ml.
static void put_start(Raw *r) {
  size_t p = begin_packet(r, T0, 0, 0);
  put_event(r, TRACE_EV_INFO, T0);
  double rate = 1e-4;
  put(r, &rate, 8);
  put8(r, 64);
  put(r, "exe\0host\0params", 16);
  put64(r, 1);
  put(r, "ctx", 4);
  end_packet(r, p);
  p = begin_packet(r, T0, 0, 0);
  put_event(r, TRACE_EV_LOCATION, T0);
  put64(r, 77);
  put8(r, 1);
  uint64_t bits = 10 | (uint64_t)31 << 38 | (uint64_t)31 << 43;
  put32(r, (uint32_t)bits);
  put16(r, (uint16_t)(bits >> 32));
  put(r, "f.ml\0F.g", 9);
  end_packet(r, p);
}

static TraceReader *open_raw(const Raw *r, FILE **f) {
  *f = tmpfile();
  assert_int_equal(fwrite(r->b, 1, r->n, *f), r->n);
  fflush(*f);
  assert_int_equal(lseek(fileno(*f), 0, SEEK_SET), 0);
  TraceReaderError e;
  TraceReader *rd = trace_reader_open_fd(dup(fileno(*f)), &e);
  if (!rd) fail_msg("%s", e.message);
  return rd;
}

static void test_reader_cuts_deeper_backtraces(void **state) {
  (void)state;
  Raw r = {malloc(1 << 20), 0, 2, 0};
  assert_non_null(r.b);
  put_start(&r);
  enum { HITS = 10000 };
  uint32_t len = 1 + HITS * 256;
  put_alloc(&r, 0, 0, true, HITS, 255);
  put_alloc(&r, 1, len, false, HITS, 255);
  put_alloc(&r, 2, 2 * len - 1, false, HITS, 255);
  uint32_t deep = 3 * len - 2 + 3000 * 256;  // past the limit
  put_alloc(&r, 3, 3 * len - 2, false, 3000, 255);
  put_alloc(&r, 4, deep, false, 1, 0);  // its prefix passes the frames kept
  put_alloc(&r, 5, 10, false, 1, 0);
  FILE *f;
  TraceReader *rd = open_raw(&r, &f);
  uint32_t want[] = {len, 2 * len - 1, 3 * len - 2, TRACE_MAX_FRAMES, TRACE_MAX_FRAMES, 11};
  bool cut[] = {false, false, false, true, true, false};
  for (int i = 0; i < 6; i++) {
    TraceEvent ev = next_alloc(rd);
    assert_int_equal(ev.id, i);
    assert_int_equal(ev.backtrace_len, want[i]);
    assert_int_equal(ev.cut, cut[i]);
    assert_int_equal(ev.backtrace[ev.backtrace_len - 1], 77);
  }
  expect_end(rd);
  TraceReaderStats rs;
  trace_reader_stats(rd, &rs);
  assert_int_equal(rs.cut_backtraces, 2);
  assert_int_equal(rs.deepest_cut, deep + 1);
  assert_int_equal(rs.max_backtrace, TRACE_MAX_FRAMES);
  assert_int_equal(rs.allocs, 6);
  trace_reader_close(rd);
  fclose(f);
  free(r.b);
}

// Version 3: the domains hold TRACE_READER_MAX_TOTAL_FRAMES together at
// most. Two domains of 7.68 million frames fill it; the third's backtrace is
// cut where its room ends (past the slack of 256 frames a possible domain),
// said in the event, and the trace reads on.
static void test_reader_cuts_at_the_domains_total(void **state) {
  (void)state;
  Raw r = {malloc(1 << 20), 0, 3, 0};
  assert_non_null(r.b);
  put_start(&r);
  enum { HITS = 10000 };
  uint32_t len = 1 + HITS * 256;
  for (uint16_t d = 0; d < 3; d++) {
    r.domain = d;
    put_alloc(&r, 3 * d, 0, true, HITS, 255);
    put_alloc(&r, 3 * d + 1, len, false, HITS, 255);
    put_alloc(&r, 3 * d + 2, 2 * len - 1, false, HITS, 255);
  }
  FILE *f;
  TraceReader *rd = open_raw(&r, &f);
  for (int i = 0; i < 9; i++) {
    TraceEvent ev = next_alloc(rd);
    assert_int_equal(ev.domain, i / 3);
    if (i < 6) {
      assert_false(ev.cut);
      assert_int_equal(ev.backtrace_len, (uint32_t)(i % 3 + 1) * len - (uint32_t)(i % 3));
    } else {
      assert_true(ev.cut);
      assert_in_range(ev.backtrace_len, 16000, 16384 + 256);
    }
  }
  expect_end(rd);
  TraceReaderStats rs;
  trace_reader_stats(rd, &rs);
  assert_int_equal(rs.cut_backtraces, 3);
  trace_reader_close(rd);
  fclose(f);
  free(r.b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_frames_at_the_limit),
      cmocka_unit_test(test_frames_past_the_limit),
      cmocka_unit_test(test_locations_at_and_past_the_limit),
      cmocka_unit_test(test_info_strings),
      cmocka_unit_test(test_reader_cuts_deeper_backtraces),
      cmocka_unit_test(test_reader_cuts_at_the_domains_total),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
