// test_trace_writer.c - cmocka tests of the trace encoder (trace/writer.c):
// packet headers, the trace-info event, vints, short and long allocation
// events, location events (bit layout, clamping, move-to-front names, the
// "unknown" fallback), backtrace codewords on hand-made stacks (hits,
// misses, predictions, runs past 255, eviction), the 4,096-byte cap and the
// common prefix after it, the cache check, the flush rules, promote/collect
// distances, write errors (EPIPE, ENOSPC), and that the writer reads no
// frame below known_common; recursions (a frame predicting itself) at run
// and cap edges, also given as runs; trace_writer_alloc_common and
// trace_writer_alloc_runs against trace_writer_alloc, and
// decoded by trace/reader.c. Expected bytes are built here from the format's
// description (docs/trace-format.md), not from the writer's code; hash
// values were computed with OCaml's own int arithmetic.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader.h"
#include "writer.h"
#include "../../base/hash.h"

static const uint64_t T0 = 0x5F0000123456ull;  // start time of every test trace
static const uint64_t PID = 0x1122334455ull;

// ================================================================ fixture

typedef struct Fixture {
  FILE *file;
  TraceWriter *w;
  uint8_t *bytes;  // the whole trace, after finish()
  size_t len;
  unsigned locate_calls;
  uint64_t last_located;
  // custom locations (n_custom > 0 or custom_none): returned for every code
  TraceLocation custom[300];
  uint32_t n_custom;
  bool custom_none;
} Fixture;

// Default locations: code c is "f<c>" in "file<c % 3>.mn", line c % 1000.
static uint32_t fixture_locate(void *data, uint64_t code, TraceLocation *out, uint32_t max) {
  Fixture *fx = data;
  fx->locate_calls++;
  fx->last_located = code;
  if (fx->custom_none) return 0;
  if (fx->n_custom) {
    uint32_t n = fx->n_custom < max ? fx->n_custom : max;
    memcpy(out, fx->custom, n * sizeof *out);
    return n;
  }
  static char function[32], file[32];
  snprintf(function, sizeof function, "f%llu", (unsigned long long)code);
  snprintf(file, sizeof file, "file%llu.mn", (unsigned long long)(code % 3));
  out[0] = (TraceLocation){function, file, (uint32_t)(code % 1000), 1, 2};
  return 1;
}

static TraceInfo info_of(uint16_t version) {
  return (TraceInfo){.sample_rate = 1e-4, .word_size = 64, .executable = "exe", .host = "host",
                     .runtime_params = "p=1", .context = "ctx", .pid = PID, .start_time_us = T0,
                     .version = version};
}

static Fixture *fixture_new(uint16_t version) {
  Fixture *fx = calloc(1, sizeof *fx);
  assert_non_null(fx);
  fx->file = tmpfile();
  assert_non_null(fx->file);
  TraceInfo info = info_of(version);
  char err[128];
  fx->w = trace_writer_new(fileno(fx->file), false, &info, fixture_locate, fx, err, sizeof err);
  assert_non_null(fx->w);
  return fx;
}

static int setup_v2(void **state) {
  *state = fixture_new(2);
  return 0;
}

static int teardown(void **state) {
  Fixture *fx = *state;
  if (fx->w) trace_writer_close(fx->w);
  fclose(fx->file);
  free(fx->bytes);
  free(fx);
  return 0;
}

// Closes the writer and reads the trace back.
static void finish(Fixture *fx) {
  assert_true(trace_writer_close(fx->w));
  fx->w = NULL;
  int fd = fileno(fx->file);
  off_t len = lseek(fd, 0, SEEK_END);
  fx->bytes = malloc((size_t)len + 1);
  assert_int_equal(pread(fd, fx->bytes, (size_t)len, 0), len);
  fx->len = (size_t)len;
}

// ================================================================ reading bytes

static uint64_t rd(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

typedef struct Packet {
  const uint8_t *p;       // header
  size_t size;            // bytes, header included
  size_t header;          // 66 or 68
  const uint8_t *events;  // after the header
  size_t events_len;
} Packet;

// The k-th packet of the trace (asserts it exists).
static Packet packet(const Fixture *fx, int k) {
  size_t off = 0;
  for (;;) {
    assert_true(off + 8 <= fx->len);
    assert_int_equal(rd(fx->bytes + off, 4), TRACE_MAGIC);
    size_t size = rd(fx->bytes + off + 4, 4) / 8;
    assert_true(off + size <= fx->len);
    if (k-- == 0) {
      size_t header = rd(fx->bytes + off + 28, 2) >= 3 ? 68 : 66;
      return (Packet){fx->bytes + off, size, header, fx->bytes + off + header, size - header};
    }
    off += size;
  }
}

static int packet_count(const Fixture *fx) {
  int n = 0;
  for (size_t off = 0; off < fx->len; off += rd(fx->bytes + off + 4, 4) / 8) n++;
  return n;
}

static uint64_t time_begin(Packet k) { return rd(k.p + 8, 8); }
static uint64_t time_end(Packet k) { return rd(k.p + 16, 8); }
static uint64_t id_begin(Packet k) { return rd(k.p + k.header - 16, 8); }
static uint64_t id_end(Packet k) { return rd(k.p + k.header - 8, 8); }
static uint32_t event_code(const uint8_t *e) { return (uint32_t)rd(e, 4) >> 25; }
static bool is_location_packet(Packet k) { return k.events_len >= 4 && event_code(k.events) == TRACE_EV_LOCATION; }

// The event packets (not info, not location) in order: index k among them.
static Packet event_packet(const Fixture *fx, int k) {
  for (int i = 1;; i++) {
    Packet p = packet(fx, i);
    if (!is_location_packet(p) && k-- == 0) return p;
  }
}

// The bodies of all event packets, concatenated (malloc'd, *len set).
static uint8_t *all_events(const Fixture *fx, size_t *len) {
  uint8_t *out = malloc(fx->len);
  *len = 0;
  for (int i = 1; i < packet_count(fx); i++) {
    Packet p = packet(fx, i);
    if (is_location_packet(p)) continue;
    memcpy(out + *len, p.events, p.events_len);
    *len += p.events_len;
  }
  return out;
}

// ================================================================ building expected bytes

typedef struct Bytes {
  uint8_t b[8192];
  size_t n;
} Bytes;

static void b_put(Bytes *b, uint64_t v, int n) {
  for (int i = 0; i < n; i++) b->b[b->n++] = (uint8_t)(v >> (8 * i));
}
static void b_str(Bytes *b, const char *s) {
  size_t n = strlen(s) + 1;
  memcpy(b->b + b->n, s, n);
  b->n += n;
}
static void b_vint(Bytes *b, uint64_t v) {
  if (v <= 252) b_put(b, v, 1);
  else if (v <= 0xFFFF) b_put(b, 253, 1), b_put(b, v, 2);
  else if (v <= 0x7FFFFFFF) b_put(b, 254, 1), b_put(b, v, 4);
  else b_put(b, 255, 1), b_put(b, v, 8);
}
static void b_event(Bytes *b, uint32_t code, uint64_t time) { b_put(b, (uint64_t)code << 25 | (time & 0x1FFFFFF), 4); }
static void b_miss(Bytes *b, uint32_t bucket, uint64_t code) { b_put(b, bucket << 2 | 3, 2), b_put(b, code, 8); }
static void b_hit(Bytes *b, uint32_t bucket, uint32_t predicted) {
  b_put(b, bucket << 2 | (predicted > 1 ? 2 : predicted), 2);
  if (predicted > 1) b_put(b, predicted, 1);
}

static void assert_bytes(const uint8_t *got, size_t got_len, const Bytes *want) {
  if (got_len != want->n || memcmp(got, want->b, want->n) != 0) {
    size_t i = 0;
    while (i < got_len && i < want->n && got[i] == want->b[i]) i++;
    fail_msg("bytes differ at %zu (got %zu bytes, want %zu): got %02x want %02x", i, got_len, want->n,
             i < got_len ? got[i] : 0, i < want->n ? want->b[i] : 0);
  }
}

// One alloc with a fresh writer whose stack is `stack`: the event's bytes.
// Set: alloc() hands the stack as runs (trace_writer_alloc_runs, `known`
// then taken as the common prefix: the tests that use it pass the exact one).
static bool alloc_as_runs;

static uint32_t runs_of(const uint64_t *stack, uint32_t depth, TraceRun *runs);

static uint64_t alloc(Fixture *fx, uint64_t t, uint64_t wosize, const uint64_t *stack, uint32_t depth,
                      uint32_t known) {
  if (alloc_as_runs) {
    static TraceRun runs[4096];
    assert_true(depth <= 4096);
    uint32_t n = runs_of(stack, depth, runs);
    uint64_t id;
    bool ok = trace_writer_alloc_runs(fx->w, t, wosize, 1, TRACE_SOURCE_MINOR, runs, n, known, &id);
    assert_true(ok == (trace_writer_error(fx->w) == NULL));
    return id;
  }
  return trace_writer_alloc(fx->w, t, wosize, 1, TRACE_SOURCE_MINOR, stack, depth, known);
}

// ================================================================ hashes

static void test_bucket_hashes(void **state) {
  (void)state;
  // (code, bucket1, bucket2) as OCaml computes ((code * 0x4983723) lsr 11)
  // land 16383 and ((code * 0xfdea731) lsr 21) land 16383 on 63-bit ints.
  static const struct { uint64_t code; uint32_t b1, b2; } cases[] = {
    {0x1ull, 4870, 126},
    {0x2ull, 9741, 253},
    {0x400000ull, 6144, 3682},
    {0x7fffffffull, 11513, 897},
    {0x123456789abcull, 11121, 9064},
    {0x3fffffffffffffffull, 11513, 16257},
    {0x3ffffffffffff01ull, 3106, 393},
    {0x2ad45dc75ae0ull, 14577, 14189},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    assert_int_equal(trace_bucket1(cases[i].code), cases[i].b1);
    assert_int_equal(trace_bucket2(cases[i].code), cases[i].b2);
  }
}

// ================================================================ headers and trace info

static void check_info_packet(uint16_t version) {
  Fixture *fx = fixture_new(version);
  finish(fx);
  Bytes want = {.n = 0};
  size_t header = version >= 3 ? 68 : 66;
  b_put(&want, TRACE_MAGIC, 4);
  size_t size_at = want.n;
  b_put(&want, 0, 4);
  b_put(&want, T0, 8), b_put(&want, T0, 8);
  b_put(&want, 0, 4);
  b_put(&want, version, 2);
  b_put(&want, PID, 8);
  if (version >= 3) b_put(&want, 0, 2);
  b_put(&want, 0xFFFF, 2), b_put(&want, 0, 2), b_put(&want, 0, 8);
  b_put(&want, 0, 8), b_put(&want, 0, 8);
  assert_int_equal(want.n, header);
  b_event(&want, TRACE_EV_INFO, T0);
  double rate = 1e-4;
  uint64_t bits;
  memcpy(&bits, &rate, 8);
  b_put(&want, bits, 8);
  b_put(&want, 64, 1);
  b_str(&want, "exe"), b_str(&want, "host"), b_str(&want, "p=1");
  b_put(&want, PID, 8);
  if (version >= 2) b_str(&want, "ctx");
  uint64_t size_bits = want.n * 8;
  for (int i = 0; i < 4; i++) want.b[size_at + i] = (uint8_t)(size_bits >> (8 * i));
  Packet info = packet(fx, 0);
  assert_bytes(info.p, info.size, &want);
  // then one empty event packet (the close), with no cache check yet
  assert_int_equal(packet_count(fx), 2);
  Packet last = packet(fx, 1);
  assert_int_equal(last.size, header);
  assert_int_equal(rd(last.p + header - 28, 2), 0xFFFF);
  assert_int_equal(time_begin(last), T0);
  fx->w = NULL;
  teardown((void **)&fx);
}

static void test_info_packet_v1(void **state) { (void)state, check_info_packet(1); }
static void test_info_packet_v2(void **state) { (void)state, check_info_packet(2); }
static void test_info_packet_v3(void **state) { (void)state, check_info_packet(3); }

static void test_bad_version_and_long_info(void **state) {
  (void)state;
  FILE *f = tmpfile();
  TraceInfo info = info_of(4);
  char err[128] = "";
  assert_null(trace_writer_new(fileno(f), false, &info, NULL, NULL, err, sizeof err));
  assert_non_null(strstr(err, "version 4"));
  // strings longer than TRACE_WRITER_MAX_INFO_STRING are cut, the packet fits
  char *huge = malloc(100000);
  memset(huge, 'x', 99999);
  huge[99999] = 0;
  info = info_of(2);
  info.executable = info.host = info.runtime_params = info.context = huge;
  TraceWriter *w = trace_writer_new(fileno(f), false, &info, NULL, NULL, err, sizeof err);
  assert_non_null(w);
  assert_true(trace_writer_close(w));
  uint8_t head[8];
  assert_int_equal(pread(fileno(f), head, 8, 0), 8);
  size_t size = rd(head + 4, 4) / 8;
  assert_true(size <= TRACE_MAX_PACKET);
  assert_int_equal(size, 66 + 4 + 8 + 1 + 4 * (TRACE_WRITER_MAX_INFO_STRING + 1) + 8);
  free(huge);
  fclose(f);
}

// ================================================================ allocation events

// Long allocation events: every vint form, every source, many samples.
static void test_long_alloc_and_vints(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  static const uint64_t sizes[] = {0, 17, 252, 253, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000ull, 1ull << 40};
  const uint64_t frame = 0x400000;
  Bytes want = {.n = 0};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    TraceSource source = (TraceSource)(i % 3);
    uint32_t samples = i == 4 ? 1000000 : 2;
    uint64_t id = trace_writer_alloc(fx->w, T0 + i, sizes[i], samples, source, &frame, 1, 0);
    assert_int_equal(id, i);
    b_event(&want, TRACE_EV_ALLOC, T0 + i);
    b_vint(&want, sizes[i]);
    b_vint(&want, samples);
    b_put(&want, source, 1);
    b_vint(&want, i == 0 ? 0 : 1);  // common prefix: the one frame, after the first
    b_put(&want, i == 0 ? 1 : 0, 2);
    if (i == 0) b_miss(&want, trace_bucket2(frame), frame);  // both buckets date 0: the second
  }
  finish(fx);
  Packet e = event_packet(fx, 0);
  assert_bytes(e.events, e.events_len, &want);
}

// The short form: 1..16 words, minor, one sample, fewer than 256 new frames.
static void test_short_alloc_conditions(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  uint64_t stack[300];
  for (int i = 0; i < 300; i++) stack[i] = 0x1000 + 16 * (uint64_t)i;
  struct { uint64_t wosize; uint32_t samples; TraceSource source; uint32_t depth; uint32_t code; } cases[] = {
    {1, 1, TRACE_SOURCE_MINOR, 1, 101},    {16, 1, TRACE_SOURCE_MINOR, 1, 116},
    {0, 1, TRACE_SOURCE_MINOR, 1, 2},      {17, 1, TRACE_SOURCE_MINOR, 1, 2},
    {5, 2, TRACE_SOURCE_MINOR, 1, 2},      {5, 1, TRACE_SOURCE_MAJOR, 1, 2},
    {5, 1, TRACE_SOURCE_EXTERNAL, 1, 2},   {5, 1, TRACE_SOURCE_MINOR, 256, 101 + 4},
    {5, 1, TRACE_SOURCE_MINOR, 257, 2},
  };
  // depth 256 after depth 1 (same first frame): 255 new frames, short;
  // then depth 257 after 256: 1 new frame... so reset to depth 1 between.
  uint64_t t = T0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    trace_writer_alloc(fx->w, ++t, 1, 1, TRACE_SOURCE_MINOR, stack, 1, 0);
    trace_writer_alloc(fx->w, ++t, cases[i].wosize, cases[i].samples, cases[i].source, stack, cases[i].depth, 1);
  }
  finish(fx);
  size_t len;
  uint8_t *events = all_events(fx, &len);  // 255 new locations flush the packet
  const uint8_t *p = events, *end = events + len;
  // walk: each pair is (short reset event, case event); parse only headers
  // and skip payloads using the known layouts
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    for (int half = 0; half < 2; half++) {
      assert_true(p < end);
      uint32_t code = event_code(p);
      if (half == 1) assert_int_equal(code, cases[i].code);
      p += 4;
      if (code != TRACE_EV_ALLOC) {
        p += p[0] <= 252 ? 1 : 3;  // common prefix
        uint32_t n = *p++;
        for (uint32_t k = 0; k < n; k++) p += (rd(p, 2) & 3) == 3 ? 10 : (rd(p, 2) & 3) == 2 ? 3 : 2;
      } else {
        for (int v = 0; v < 2; v++) p += p[0] <= 252 ? 1 : p[0] == 253 ? 3 : p[0] == 254 ? 5 : 9;
        p += 1;
        p += p[0] <= 252 ? 1 : 3;
        uint32_t n = (uint32_t)rd(p, 2);
        p += 2;
        for (uint32_t k = 0; k < n; k++) p += (rd(p, 2) & 3) == 3 ? 10 : (rd(p, 2) & 3) == 2 ? 3 : 2;
      }
    }
  }
  assert_ptr_equal(p, end);
  free(events);
}

// ================================================================ locations

// The location packet's first event: code, count, then the locations.
static const uint8_t *first_location(const Fixture *fx, int packet_index) {
  Packet k = packet(fx, packet_index);
  assert_true(is_location_packet(k));
  return k.events;
}

static void test_location_layout_and_clamping(void **state) {
  Fixture *fx = *state;
  fx->custom[0] = (TraceLocation){"outer", "a.mn", 0xFFFFF + 7, 300, 2000};
  fx->custom[1] = (TraceLocation){"inner", "a.mn", 12, 3, 4};
  fx->n_custom = 2;
  const uint64_t frame = 0x77770;
  alloc(fx, T0 + 5, 1, &frame, 1, 0);
  finish(fx);
  Bytes want = {.n = 0};
  b_event(&want, TRACE_EV_LOCATION, T0);  // the packet's first time, not the event's
  b_put(&want, frame, 8);
  b_put(&want, 2, 1);
  uint64_t bits = 0xFFFFFull | 255ull << 20 | 1023ull << 28 | 31ull << 38 | 31ull << 43;
  b_put(&want, bits, 4), b_put(&want, bits >> 32, 2);
  b_str(&want, "a.mn"), b_str(&want, "outer");
  bits = 12 | 3ull << 20 | 4ull << 28 | 0ull << 38 | 31ull << 43;  // same file: code 0
  b_put(&want, bits, 4), b_put(&want, bits >> 32, 2);
  b_str(&want, "inner");
  Packet loc = packet(fx, 1);
  assert_bytes(loc.events, loc.events_len, &want);
  // its header: the event packet's first time and first id, no cache check
  assert_int_equal(time_begin(loc), T0);
  assert_int_equal(time_end(loc), T0);
  assert_int_equal(id_begin(loc), 0);
  assert_int_equal(id_end(loc), 0);
  assert_int_equal(rd(loc.p + 38, 2), 0xFFFF);
  // and the event packet follows it
  Packet e = packet(fx, 2);
  assert_false(is_location_packet(e));
  assert_int_equal(id_end(e), 1);
}

// Move-to-front: codes of files and functions are positions, a new name is
// 31 and goes to the front; a file pushed out of the 31 entries is new
// again, with an empty function table.
static void test_location_mtf(void **state) {
  Fixture *fx = *state;
  static char files[40][16], functions[40][16];
  for (int i = 0; i < 40; i++) {
    snprintf(files[i], 16, "F%d", i);
    snprintf(functions[i], 16, "g%d", i);
  }
  // (file, function) per code, and the expected (file code, function code)
  typedef struct Step { int file, function, file_code, function_code; } Step;
  static Step seq[64] = {
    {0, 0, 31, 31}, {1, 0, 31, 31}, {0, 0, 1, 0}, {0, 1, 0, 31}, {0, 0, 0, 1}, {1, 0, 1, 0},
  };
  int n = 6;
  for (int f = 2; f <= 30; f++) seq[n++] = (Step){f, 0, 31, 31};  // 31 files now: F0 is the last
  seq[n++] = (Step){0, 1, 30, 1};     // F0 at position 30; its functions are [g0, g1]
  seq[n++] = (Step){32, 0, 31, 31};   // pushes out F1 (F0 moved to the front)
  seq[n++] = (Step){1, 0, 31, 31};    // F1 is new again, its functions forgotten; F2 goes
  seq[n++] = (Step){3, 0, 30, 0};     // F3 is the oldest left
  fx->n_custom = 1;
  uint64_t code = 0x1000;
  for (int i = 0; i < n; i++) {
    fx->custom[0] = (TraceLocation){functions[seq[i].function], files[seq[i].file], 1, 0, 0};
    code += 16;
    alloc(fx, T0, 1, &code, 1, 0);
    trace_writer_flush(fx->w);  // one location packet, one event packet per code
  }
  finish(fx);
  for (int i = 0; i < n; i++) {
    const uint8_t *e = first_location(fx, 1 + 2 * i);
    uint64_t bits = rd(e + 13, 4) | rd(e + 17, 2) << 32;
    assert_int_equal(bits >> 38 & 31, seq[i].file_code);
    assert_int_equal(bits >> 43 & 31, seq[i].function_code);
    if (seq[i].file_code == 31) assert_string_equal((const char *)e + 19, files[seq[i].file]);
  }
}

static void test_location_unknown_fallbacks(void **state) {
  Fixture *fx = *state;
  static char long_name[4100];
  memset(long_name, 'n', 4099);
  // a chain of 256 (more than 255): one unknown location
  for (int i = 0; i < 256; i++) fx->custom[i] = (TraceLocation){"f", "x.mn", 1, 1, 1};
  fx->n_custom = 256;
  uint64_t code = 0x5000;
  alloc(fx, T0, 1, &code, 1, 0);
  trace_writer_flush(fx->w);
  // a name making the payload bound exceed 4,096 bytes: unknown too
  fx->custom[0] = (TraceLocation){long_name + 4099 - 4080, "y.mn", 1, 1, 1};  // 9+6+5+4081 = 4101
  fx->n_custom = 1;
  code = 0x5010;
  alloc(fx, T0, 1, &code, 1, 0);
  trace_writer_flush(fx->w);
  // exactly at the bound: written
  fx->custom[0] = (TraceLocation){long_name + 4099 - 4075, "y.mn", 1, 1, 1};  // 9+6+5+4076 = 4096
  code = 0x5020;
  alloc(fx, T0, 1, &code, 1, 0);
  // a code without location: count 0
  fx->custom_none = true;
  code = 0x5030;
  alloc(fx, T0, 1, &code, 1, 0);
  finish(fx);
  Bytes unknown = {.n = 0};
  b_event(&unknown, TRACE_EV_LOCATION, T0);
  b_put(&unknown, 0x5000, 8);
  b_put(&unknown, 1, 1);
  uint64_t bits = 1 | 1ull << 20 | 1ull << 28 | 31ull << 38 | 31ull << 43;
  b_put(&unknown, bits, 4), b_put(&unknown, bits >> 32, 2);
  b_str(&unknown, "<unknown>"), b_str(&unknown, "??");
  Packet k = packet(fx, 1);
  assert_bytes(k.events, k.events_len, &unknown);
  k = packet(fx, 3);
  assert_int_equal(rd(k.events + 4, 8), 0x5010);
  // "<unknown>" is now file 0 and "??" its function 0
  bits = rd(k.events + 13, 4) | rd(k.events + 17, 2) << 32;
  assert_int_equal(bits >> 38 & 31, 0);
  assert_int_equal(bits >> 43 & 31, 0);
  assert_int_equal(k.events_len, 4 + 9 + 6);
  k = packet(fx, 5);  // 0x5020's location at the bound, then 0x5030's with none
  assert_int_equal(rd(k.events + 4, 8), 0x5020);
  assert_int_equal(k.events[12], 1);
  assert_int_equal(k.events_len, 4 + 4096 + 4 + 9);
  assert_int_equal(rd(k.events + 4100 + 4, 8), 0x5030);
  assert_int_equal(k.events[4100 + 12], 0);
}

// A code's location is written once for the run, even when it misses the
// cache again later; trace_writer_relog_locations restores memtrace's way.
static void check_location_once(Fixture *fx, bool relog, unsigned want_calls) {
  if (relog) trace_writer_relog_locations(fx->w);
  const uint64_t a = 0x400000;
  uint64_t b = a + 16;
  while (trace_bucket2(b) != trace_bucket2(a)) b += 16;  // b evicts a (see test_eviction)
  alloc(fx, T0, 1, &a, 1, 0);
  alloc(fx, T0, 1, &b, 1, 0);
  alloc(fx, T0, 1, &a, 1, 0);
  assert_int_equal(fx->locate_calls, want_calls);
}

static void test_location_once(void **state) { check_location_once(*state, false, 2); }
static void test_location_relog(void **state) { check_location_once(*state, true, 3); }

// ================================================================ backtraces

static void test_codewords_misses_hits_predictions(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  const uint64_t A = 0x1000, B = 0x2000, C = 0x3000, D = 0x4000;
  uint32_t a2 = trace_bucket2(A), b2 = trace_bucket2(B), c2 = trace_bucket2(C), d2 = trace_bucket2(D);
  assert_true(a2 != b2 && a2 != c2 && b2 != c2 && d2 != a2 && d2 != b2 && d2 != c2);
  uint64_t abc[] = {A, B, C}, abd[] = {A, B, D}, ab[] = {A, B};
  uint64_t t = T0;
  alloc(fx, ++t, 1, abc, 3, 0);  // 3 misses
  alloc(fx, ++t, 1, abc, 3, 0);  // all common: no codeword
  alloc(fx, ++t, 1, NULL, 0, 0); // empty stack
  alloc(fx, ++t, 1, abc, 3, 0);  // hit A, 2 predicted
  alloc(fx, ++t, 1, NULL, 0, 0);
  alloc(fx, ++t, 1, ab, 2, 0);   // hit A, 1 predicted
  alloc(fx, ++t, 1, abd, 3, 2);  // common 2, D misses
  alloc(fx, ++t, 1, NULL, 0, 0);
  alloc(fx, ++t, 1, abd, 3, 0);  // hit A, B predicted; D hit (the D miss above followed bucket 0, not B)
  alloc(fx, ++t, 1, NULL, 0, 0);
  alloc(fx, ++t, 1, abc, 3, 0);  // hit A, B predicted, C not: hit C (no prediction)
  finish(fx);
  Bytes want = {.n = 0};
  t = T0;
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 3, 1);
  b_miss(&want, a2, A), b_miss(&want, b2, B), b_miss(&want, c2, C);
  b_event(&want, 101, ++t), b_vint(&want, 3), b_put(&want, 0, 1);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 0, 1);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 1, 1), b_hit(&want, a2, 2);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 0, 1);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 1, 1), b_hit(&want, a2, 1);
  b_event(&want, 101, ++t), b_vint(&want, 2), b_put(&want, 1, 1), b_miss(&want, d2, D);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 0, 1);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 2, 1), b_hit(&want, a2, 1), b_hit(&want, d2, 0);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 0, 1);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 2, 1), b_hit(&want, a2, 1), b_hit(&want, c2, 0);
  Packet e = event_packet(fx, 0);
  assert_bytes(e.events, e.events_len, &want);
}

// A 600-frame self-recursion: one miss, then hits carrying 255, 255 and 86
// predicted frames... 1 + 256 + 256 + 87 frames (a run longer than 255
// takes a new codeword).
static void test_prediction_runs_past_255(void **state) {
  Fixture *fx = *state;
  static uint64_t stack[600];
  const uint64_t X = 0x8880;
  for (int i = 0; i < 600; i++) stack[i] = X;
  alloc(fx, T0, 3, stack, 600, 0);
  finish(fx);
  uint32_t x = trace_bucket2(X);
  Bytes want = {.n = 0};
  b_event(&want, TRACE_EV_ALLOC, T0);  // 600 new frames: not short
  b_vint(&want, 3), b_vint(&want, 1), b_put(&want, 0, 1), b_vint(&want, 0), b_put(&want, 4, 2);
  b_miss(&want, x, X);
  b_hit(&want, x, 255), b_hit(&want, x, 255), b_hit(&want, x, 86);
  Packet e = event_packet(fx, 0);
  assert_bytes(e.events, e.events_len, &want);
}

// Eviction: of a code's two buckets the one used longest ago (the second
// on a tie) takes the new code.
static void test_eviction(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  const uint64_t A = 0x400000;
  uint64_t B = A + 16;
  while (trace_bucket2(B) != trace_bucket2(A) || trace_bucket1(B) == trace_bucket1(A)) B += 16;
  uint32_t shared = trace_bucket2(A);
  alloc(fx, T0, 1, &A, 1, 0);  // id 0: A into bucket2 (tie of dates 0)
  alloc(fx, T0, 1, &B, 1, 0);  // id 1: B's buckets: bucket1 date 0, shared date 0: tie, shared; A is out
  alloc(fx, T0, 1, &A, 1, 0);  // id 2: A misses; bucket1(A) date 0 < shared date 1: bucket1
  alloc(fx, T0, 1, &B, 1, 0);  // id 3: B hits in shared
  alloc(fx, T0, 1, &A, 1, 0);  // id 4: A hits in bucket1
  finish(fx);
  Bytes want = {.n = 0};
  b_event(&want, 101, T0), b_vint(&want, 0), b_put(&want, 1, 1), b_miss(&want, shared, A);
  b_event(&want, 101, T0), b_vint(&want, 0), b_put(&want, 1, 1), b_miss(&want, shared, B);
  b_event(&want, 101, T0), b_vint(&want, 0), b_put(&want, 1, 1), b_miss(&want, trace_bucket1(A), A);
  b_event(&want, 101, T0), b_vint(&want, 0), b_put(&want, 1, 1), b_hit(&want, shared, 0);
  b_event(&want, 101, T0), b_vint(&want, 0), b_put(&want, 1, 1), b_hit(&want, trace_bucket1(A), 0);
  Packet e = event_packet(fx, 0);
  assert_bytes(e.events, e.events_len, &want);
}

// 1,000 never-seen frames: 409 misses fit the 4,096 bytes (the writer stops
// once past 4,086); the next stack, equal, shares only those 409 frames.
static void test_truncation_at_4096_bytes(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  static uint64_t stack[1000];
  for (int i = 0; i < 1000; i++) stack[i] = 0x100000 + 16 * (uint64_t)i;
  alloc(fx, T0, 1, stack, 1000, 0);
  assert_int_equal(trace_writer_backtrace_depth(fx->w), 409);
  alloc(fx, T0, 1, stack, 1000, 1000);
  assert_int_equal(trace_writer_backtrace_depth(fx->w), 818);
  alloc(fx, T0, 1, stack, 1000, 1000);
  assert_int_equal(trace_writer_backtrace_depth(fx->w), 1000);
  alloc(fx, T0, 1, stack, 1000, 1000);  // now all common
  finish(fx);
  size_t len;
  uint8_t *events = all_events(fx, &len);  // each event has > 128 new locations: a packet each
  const uint8_t *p = events;
  assert_int_equal(event_code(p), TRACE_EV_ALLOC);
  assert_int_equal(p[7], 0);                 // common prefix 0
  assert_int_equal(rd(p + 8, 2), 409);       // codewords
  assert_int_equal(rd(p + 10, 2), (uint32_t)trace_bucket2(stack[0]) << 2 | 3);
  p += 10 + 4090;
  assert_int_equal(event_code(p), TRACE_EV_ALLOC);
  assert_int_equal(p[7], 253);               // common prefix 409, a u16 vint
  assert_int_equal(rd(p + 8, 2), 409);
  assert_int_equal(rd(p + 10, 2), 409);
  assert_int_equal(rd(p + 14, 8), stack[409]);  // first miss: frame 409
  p += 12 + 4090;
  assert_int_equal(event_code(p), 101);      // 182 new frames: the short form
  assert_int_equal(p[4], 253);
  assert_int_equal(rd(p + 5, 2), 818);
  assert_int_equal(p[7], 182);
  p += 8 + 1820;
  assert_int_equal(event_code(p), 101);
  assert_int_equal(rd(p + 5, 2), 1000);
  assert_int_equal(p[7], 0);
  assert_ptr_equal(p + 8, events + len);
  free(events);
}

// n codes from `from` on (step 16) whose two buckets are used by no code
// in used[0 .. *n_used) nor by each other; their buckets are added to used.
static void distinct_codes(uint64_t from, uint64_t *out, int n, uint32_t *used, int *n_used) {
  for (uint64_t c = from; n > 0; c += 16) {
    uint32_t b1 = trace_bucket1(c), b2 = trace_bucket2(c);
    bool clash = false;
    for (int i = 0; i < *n_used && !clash; i++) clash = used[i] == b1 || used[i] == b2;
    if (clash) continue;
    used[(*n_used)++] = b1;
    used[(*n_used)++] = b2;
    *out++ = c;
    n--;
  }
}

// The cap's exact edges. Misses are coded while the codewords so far take at
// most 4,086 bytes; a prediction is followed while they take at most 4,084.
static void test_truncation_edges(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  static uint32_t used[2 * (3 + 2 + 420 + 2 + 408) + 1];
  static uint64_t fresh[420], fresh2[408], stack[430];
  used[0] = 0;  // bucket 0: the initial successor of every bucket, kept empty
  int n_used = 1;
  uint64_t h[3], ab[2];
  distinct_codes(0x10, h, 3, used, &n_used);
  distinct_codes(0x20000, ab, 2, used, &n_used);
  distinct_codes(0x100000, fresh, 420, used, &n_used);
  alloc(fx, T0, 1, ab, 2, 0);  // A's successor is B
  for (int i = 0; i < 3; i++) alloc(fx, T0, 1, &h[i], 1, 0);  // cached, none predicting another
  // 3 two-byte hits, then misses: the 409th starts at 6 + 4080 = 4086, the last allowed
  memcpy(stack, h, sizeof h);
  memcpy(stack + 3, fresh, 420 * sizeof *fresh);
  alloc(fx, T0, 1, stack, 423, 0);
  assert_int_equal(trace_writer_backtrace_depth(fx->w), 3 + 409);
  // 2 hits and 408 misses end at 4,084: A's hit still follows its prediction
  // B (ending at 4,086), and then one more miss fits
  alloc(fx, T0, 1, NULL, 0, 0);
  uint64_t more[2];
  distinct_codes(0x900000, more, 2, used, &n_used);
  distinct_codes(0x500000, fresh2, 408, used, &n_used);
  stack[0] = h[0], stack[1] = h[2];  // h[1] followed h[0] above: h[2] is not predicted
  memcpy(stack + 2, fresh2, 408 * sizeof *fresh2);
  stack[410] = ab[0], stack[411] = ab[1], stack[412] = more[0], stack[413] = more[1];
  alloc(fx, T0, 1, stack, 414, 0);
  assert_int_equal(trace_writer_backtrace_depth(fx->w), 2 + 408 + 2 + 1);
}

// The writer reads no frame below known_common: those pages are made
// unreadable between two calls on a 100,000-frame stack.
static void test_known_common_reads_nothing_below(void **state) {
  Fixture *fx = *state;
  const uint32_t depth = 100000;
  size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = depth * sizeof(uint64_t);
  size_t mapped = (bytes + page - 1) / page * page;
  uint64_t *stack = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(stack != MAP_FAILED);
  for (uint32_t i = 0; i < depth; i++) stack[i] = 0x10000 + 16 * (uint64_t)(i % 7);
  alloc(fx, T0, 1, stack, depth, 0);
  size_t locked = (depth - 10) * sizeof(uint64_t) / page * page;
  stack[depth - 1] = 0x999990;
  assert_int_equal(mprotect(stack, locked, PROT_NONE), 0);
  alloc(fx, T0, 1, stack, depth, depth - 10);
  assert_int_equal(trace_writer_backtrace_depth(fx->w), depth);
  assert_int_equal(mprotect(stack, locked, PROT_READ | PROT_WRITE), 0);
  finish(fx);
  Packet e = event_packet(fx, 0);
  const uint8_t *second = e.events + e.events_len - (4 + 5 + 1 + 10);  // short event: vint 254 form, 1 miss
  assert_int_equal(event_code(second), 101);
  assert_int_equal(second[4], 254);
  assert_int_equal(rd(second + 5, 4), depth - 1);
  munmap(stack, mapped);
}

// ================================================================ recursions, trace_writer_alloc_common

// The two tests below with the stacks given as runs: the same bytes. Each
// callstack there shares no frame with the previous one.
static void test_recursion_runs(void **state);
static void test_recursion_at_the_cap(void **state);
static void test_runs_recursion(void **state) {
  alloc_as_runs = true;
  test_recursion_runs(state);
  alloc_as_runs = false;
}
static void test_runs_at_the_cap(void **state) {
  alloc_as_runs = true;
  test_recursion_at_the_cap(state);
  alloc_as_runs = false;
}

// A frame that predicts itself (a recursion) is counted as a run: 255 a
// codeword, the next frame of the run in a new codeword, the run's end
// coded as usual.
static void test_recursion_runs(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  static uint64_t stack[300];
  const uint64_t X = 0x8880, Y = 0x9990;
  uint32_t x = trace_bucket2(X), y = trace_bucket2(Y);
  assert_true(x != y);
  for (int i = 0; i < 300; i++) stack[i] = X;
  uint64_t t = T0;
  alloc(fx, ++t, 1, stack, 257, 0);  // miss, then a hit predicting 255
  alloc(fx, ++t, 1, NULL, 0, 0);
  alloc(fx, ++t, 1, stack, 258, 0);  // hit + 255, hit + 1
  alloc(fx, ++t, 1, NULL, 0, 0);
  alloc(fx, ++t, 1, stack, 256, 0);  // hit + 255: the run ends with the stack
  alloc(fx, ++t, 1, NULL, 0, 0);
  stack[256] = Y;
  alloc(fx, ++t, 1, stack, 257, 0);  // hit + 255, then Y misses
  finish(fx);
  Bytes want = {.n = 0};
  t = T0;
  b_event(&want, TRACE_EV_ALLOC, ++t), b_vint(&want, 1), b_vint(&want, 1), b_put(&want, 0, 1), b_vint(&want, 0);
  b_put(&want, 2, 2), b_miss(&want, x, X), b_hit(&want, x, 255);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 0, 1);
  b_event(&want, TRACE_EV_ALLOC, ++t), b_vint(&want, 1), b_vint(&want, 1), b_put(&want, 0, 1), b_vint(&want, 0);
  b_put(&want, 2, 2), b_hit(&want, x, 255), b_hit(&want, x, 1);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 0, 1);
  b_event(&want, TRACE_EV_ALLOC, ++t), b_vint(&want, 1), b_vint(&want, 1), b_put(&want, 0, 1), b_vint(&want, 0);
  b_put(&want, 1, 2), b_hit(&want, x, 255);
  b_event(&want, 101, ++t), b_vint(&want, 0), b_put(&want, 0, 1);
  b_event(&want, TRACE_EV_ALLOC, ++t), b_vint(&want, 1), b_vint(&want, 1), b_put(&want, 0, 1), b_vint(&want, 0);
  b_put(&want, 2, 2), b_hit(&want, x, 255), b_miss(&want, y, Y);
  Packet e = event_packet(fx, 0);
  assert_bytes(e.events, e.events_len, &want);
}

// A recursion's hit at the 4,096-byte cap: its run is counted when the hit
// starts at byte 4,084 of the codewords (then one more hit fits, without a
// count), not when it starts at 4,086.
static void test_recursion_at_the_cap(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  static uint32_t used[2 * (1 + 3 + 2 * 408) + 1];
  static uint64_t fresh[2 * 408], stack[1000];
  used[0] = 0;  // bucket 0: the initial successor of every bucket, kept empty
  int n_used = 1;
  uint64_t X, h[3];
  distinct_codes(0x8000, &X, 1, used, &n_used);
  distinct_codes(0x10, h, 3, used, &n_used);
  distinct_codes(0x100000, fresh, 2 * 408, used, &n_used);
  uint64_t xx[] = {X, X};
  alloc(fx, T0, 1, xx, 2, 0);  // X's bucket now predicts itself
  for (int i = 0; i < 3; i++) alloc(fx, T0, 1, &h[i], 1, 0);
  // 408 misses (4,080 bytes), h[0] (2): X's hit at 4,082, its run counted
  memcpy(stack, fresh, 408 * sizeof *fresh);
  stack[408] = h[0];
  for (int i = 409; i < 1000; i++) stack[i] = X;
  alloc(fx, T0, 1, stack, 1000, 0);
  assert_int_equal(trace_writer_backtrace_depth(fx->w), 409 + 1 + 255 + 1);
  // 408 other misses, h[0] h[1] h[2] (6): X's hit at 4,086, alone
  memcpy(stack, fresh + 408, 408 * sizeof *fresh);
  stack[408] = h[0], stack[409] = h[1], stack[410] = h[2];
  alloc(fx, T0, 1, NULL, 0, 0);
  alloc(fx, T0, 1, stack, 1000, 0);
  assert_int_equal(trace_writer_backtrace_depth(fx->w), 411 + 1);
}

// A stream of callstacks (recursions up to 600 deep, and frames from a pool
// of 40 codes) for the writers below. Returns the new depth.
static uint32_t next_stream_stack(uint64_t *rng, uint64_t *stack, uint32_t depth) {
  *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
  uint64_t r = *rng;
  uint32_t pop = (uint32_t)(r % 8 == 0 ? r / 8 % 700 : r / 8 % 4);
  depth = depth > pop ? depth - pop : 0;
  uint32_t push = 1 + (uint32_t)(r >> 20) % 4;
  for (uint32_t i = 0; i < push && depth < 3000; i++) {
    uint64_t code = 0x1000 + 16 * ((r >> (24 + 4 * i)) % 40);
    uint32_t run = (r >> (40 + i)) % 5 == 0 ? 1 + (uint32_t)(r >> 44) % 600 : 1;
    for (uint32_t j = 0; j < run && depth < 3000; j++) stack[depth++] = code;
  }
  return depth;
}

// A digest of every event a reader decodes from the trace on `fd`.
static uint64_t decoded_digest(int fd) {
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  TraceReaderError err;
  TraceReader *r = trace_reader_open_fd(dup(fd), &err);
  assert_non_null(r);
  uint64_t h = HASH_FNV_OFFSET;
  TraceEvent ev;
  TraceReaderStatus s;
  while ((s = trace_reader_next(r, &ev)) == TRACE_READER_EVENT) {
    h = hash_fnv_step(h, ev.kind * 1000003ull + ev.id);
    for (uint32_t i = 0; i < ev.backtrace_len; i++) h = hash_fnv_step(h, ev.backtrace[i]);
  }
  assert_int_equal(s, TRACE_READER_END);
  trace_reader_close(r);
  return h;
}

// stack[0 .. depth) as maximal runs; returns their count.
static uint32_t runs_of(const uint64_t *stack, uint32_t depth, TraceRun *runs) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < depth; i++) {
    if (n > 0 && runs[n - 1].code == stack[i]) runs[n - 1].end = i + 1;
    else runs[n++] = (TraceRun){stack[i], i + 1};
  }
  return n;
}

// trace_writer_alloc_common and trace_writer_alloc_runs given the longest
// common prefix write the bytes of trace_writer_alloc; given shorter ones,
// or mixed with trace_writer_alloc, a trace that decodes to the same
// callstacks.
static void test_alloc_common(void **state) {
  (void)state;
  enum { EXACT_PLAIN, EXACT_COMMON, SHORTER, MIXED, EXACT_RUNS, SHORTER_RUNS, WRITERS };
  static TraceRun runs[3100];
  Fixture *fx[WRITERS];
  for (int i = 0; i < WRITERS; i++) fx[i] = fixture_new(2);
  static uint64_t stack[3100], previous[3100];
  uint64_t rng = 88172645463325252ull;
  uint32_t depth = 0;
  for (int k = 0; k < 3000; k++) {
    uint32_t previous_depth = depth, common = 0;
    memcpy(previous, stack, depth * sizeof *stack);
    depth = next_stream_stack(&rng, stack, depth);
    while (common < depth && common < previous_depth && stack[common] == previous[common]) common++;
    uint64_t t = T0 + (uint64_t)k;
    uint32_t lower = common / 2, known = k % 3 ? common : lower;
    trace_writer_alloc(fx[EXACT_PLAIN]->w, t, 2, 1, TRACE_SOURCE_MINOR, stack, depth, known);
    trace_writer_alloc_common(fx[EXACT_COMMON]->w, t, 2, 1, TRACE_SOURCE_MINOR, stack, depth, common);
    trace_writer_alloc_common(fx[SHORTER]->w, t, 2, 1, TRACE_SOURCE_MINOR, stack, depth, lower);
    uint32_t n_runs = runs_of(stack, depth, runs);
    uint64_t id_exact, id_shorter;
    assert_true(trace_writer_alloc_runs(fx[EXACT_RUNS]->w, t, 2, 1, TRACE_SOURCE_MINOR, runs, n_runs, common, &id_exact));
    assert_true(trace_writer_alloc_runs(fx[SHORTER_RUNS]->w, t, 2, 1, TRACE_SOURCE_MINOR, runs, n_runs, lower, &id_shorter));
    assert_int_equal(id_exact, (uint64_t)k);
    assert_int_equal(id_shorter, (uint64_t)k);
    if (k % 2)
      trace_writer_alloc_common(fx[MIXED]->w, t, 2, 1, TRACE_SOURCE_MINOR, stack, depth, k % 4 == 1 ? common : lower);
    else
      trace_writer_alloc(fx[MIXED]->w, t, 2, 1, TRACE_SOURCE_MINOR, stack, depth, known);
    if (k % 3 == 0)
      for (int i = 0; i < WRITERS; i++) trace_writer_collect(fx[i]->w, t, (uint64_t)k / 2);
  }
  for (int i = 0; i < WRITERS; i++) finish(fx[i]);
  assert_int_equal(fx[EXACT_COMMON]->len, fx[EXACT_PLAIN]->len);
  assert_memory_equal(fx[EXACT_COMMON]->bytes, fx[EXACT_PLAIN]->bytes, fx[EXACT_PLAIN]->len);
  assert_int_equal(fx[EXACT_RUNS]->len, fx[EXACT_PLAIN]->len);
  assert_memory_equal(fx[EXACT_RUNS]->bytes, fx[EXACT_PLAIN]->bytes, fx[EXACT_PLAIN]->len);
  assert_int_equal(fx[SHORTER_RUNS]->len, fx[SHORTER]->len);
  assert_memory_equal(fx[SHORTER_RUNS]->bytes, fx[SHORTER]->bytes, fx[SHORTER]->len);
  assert_true(fx[SHORTER]->len > fx[EXACT_PLAIN]->len);
  uint64_t want = decoded_digest(fileno(fx[EXACT_PLAIN]->file));
  assert_true(decoded_digest(fileno(fx[SHORTER]->file)) == want);
  assert_true(decoded_digest(fileno(fx[MIXED]->file)) == want);
  for (int i = 0; i < WRITERS; i++) teardown((void **)&fx[i]);
}

// ================================================================ packets and flush rules

// The cache check: none in the first event packet, then bucket 4242, 9655...
static void test_cache_check(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  uint64_t code = 0x10;
  while (trace_bucket2(code) != TRACE_CACHE_CHECK_START || trace_bucket1(code) == TRACE_CACHE_CHECK_START) code += 16;
  uint64_t other = 0x20;
  const uint32_t third_ix = (TRACE_CACHE_CHECK_START + TRACE_CACHE_CHECK_STEP) % TRACE_CACHE_BUCKETS;
  while (trace_bucket2(other) == TRACE_CACHE_CHECK_START || trace_bucket1(other) == TRACE_CACHE_CHECK_START
         || trace_bucket2(other) == third_ix || trace_bucket2(code) == third_ix)
    other += 16;
  uint64_t stack[] = {code, other};
  alloc(fx, T0, 1, stack, 2, 0);
  trace_writer_flush(fx->w);
  trace_writer_flush(fx->w);
  finish(fx);
  Packet first = event_packet(fx, 0), second = event_packet(fx, 1), third = event_packet(fx, 2);
  assert_int_equal(rd(first.p + 38, 2), 0xFFFF);
  assert_int_equal(rd(second.p + 38, 2), 4242);
  assert_int_equal(rd(second.p + 40, 2), trace_bucket2(other));  // the bucket that followed it
  assert_int_equal(rd(second.p + 42, 8), code);
  assert_int_equal(rd(third.p + 38, 2), (4242 + 5413) % 16384);
  assert_int_equal(rd(third.p + 42, 8), 0);  // an empty bucket reads 0
  assert_int_equal(id_begin(second), 1);
  assert_int_equal(id_end(second), 1);
}

// Room: a packet is flushed when less than 4,196 bytes remain.
static void test_flush_when_full(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  uint64_t frame = 0x400000;
  alloc(fx, T0, 1, &frame, 1, 0);
  for (int i = 0; i < 20000; i++) trace_writer_collect(fx->w, T0 + 1, 0);  // 5 bytes each
  finish(fx);
  int packets = packet_count(fx);
  assert_true(packets >= 5);
  for (int k = 1; k < packets - 1; k++) {
    Packet p = packet(fx, k);
    if (is_location_packet(p)) continue;
    assert_true(p.size <= TRACE_MAX_PACKET);
    assert_true(TRACE_MAX_PACKET - p.size < 4196);
    assert_true(TRACE_MAX_PACKET - (p.size - 5) >= 4196);
  }
}

// More than 128 new locations waiting: the next event starts a packet.
static void check_new_locations_flush(Fixture *fx, uint32_t n, bool flushed) {
  static uint64_t stack[200];
  for (uint32_t i = 0; i < n; i++) stack[i] = 0x100000 + 16 * (uint64_t)i;
  alloc(fx, T0, 1, stack, n, 0);
  trace_writer_collect(fx->w, T0, 0);
  finish(fx);
  // info, location packet, then the events in one or two event packets
  Packet e = event_packet(fx, 0);
  assert_int_equal(e.events_len, flushed ? 4 + 2 + 10 * n : 4 + 2 + 10 * n + 5);
  assert_true(is_location_packet(packet(fx, 1)));
}

static void test_flush_129_new_locations(void **state) { check_new_locations_flush(*state, 129, true); }
static void test_no_flush_128_new_locations(void **state) { check_new_locations_flush(*state, 128, false); }

// Time: a packet spans at most 30 s; headers keep the low 25 bits.
static void test_flush_after_30_seconds(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  uint64_t frame = 0x400000;
  const uint64_t span = 30000000;
  alloc(fx, T0 + 10, 1, &frame, 1, 0);
  trace_writer_collect(fx->w, T0 + span, 0);       // exactly 30 s after the packet's start: same packet
  trace_writer_collect(fx->w, T0 + span + 1, 0);   // past: a new packet
  trace_writer_collect(fx->w, T0 + span + 1 + (1u << 25) + 3, 0);  // past 2^25 us: another
  trace_writer_collect(fx->w, T0 + 5, 0);          // earlier than the last: taken as equal
  finish(fx);
  Packet a = event_packet(fx, 0), b = event_packet(fx, 1), c = event_packet(fx, 2);
  assert_int_equal(time_begin(a), T0);
  assert_int_equal(time_end(a), T0 + span);
  assert_int_equal(a.events_len, 4 + 2 + 10 + 5);
  assert_int_equal(time_begin(b), T0 + span + 1);
  assert_int_equal(b.events_len, 5);
  uint64_t t = T0 + span + 1 + (1u << 25) + 3;
  assert_int_equal(time_begin(c), t);
  assert_int_equal(time_end(c), t);
  assert_int_equal(c.events_len, 10);
  assert_int_equal(rd(c.events, 4), (uint64_t)TRACE_EV_COLLECT << 25 | (t & 0x1FFFFFF));
  assert_int_equal(rd(c.events + 5, 4), (uint64_t)TRACE_EV_COLLECT << 25 | (t & 0x1FFFFFF));
}

// Version 3 starts a packet every 10,000 allocations (memtrace 3's id chunks).
static void test_v3_id_chunks(void **state) {
  (void)state;
  Fixture *fx = fixture_new(3);
  fx->custom_none = true;
  uint64_t frame = 0x400000;
  for (int i = 0; i < 10001; i++) alloc(fx, T0, 1, &frame, 1, 0);
  finish(fx);
  Packet a = event_packet(fx, 0);
  assert_int_equal(a.header, 68);
  assert_int_equal(rd(a.p + 38, 2), 0);  // domain
  // the packet that ends at 10,000 is not full: the chunk ended it
  bool ended = false;
  for (int k = 0; id_end(event_packet(fx, k)) < 10001; k++) {
    Packet p = event_packet(fx, k);
    assert_false(id_begin(p) < 10000 && id_end(p) > 10000);
    if (id_end(p) == 10000) {
      ended = true;
      assert_true(TRACE_MAX_PACKET - p.size > 4196 + 100);
      assert_int_equal(id_begin(event_packet(fx, k + 1)), 10000);
    }
  }
  assert_true(ended);
  teardown((void **)&fx);
}

static void test_promote_collect_distance(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  uint64_t frame = 0x400000;
  for (int i = 0; i < 300; i++) alloc(fx, T0, 1, &frame, 1, 0);
  trace_writer_promote(fx->w, T0, 299);  // distance 0
  trace_writer_collect(fx->w, T0, 0);    // distance 299: u16 vint
  assert_null(trace_writer_error(fx->w));
  TraceWriterStats st;
  trace_writer_stats(fx->w, &st);
  assert_int_equal(st.allocs, 300);
  assert_int_equal(st.promotes, 1);
  assert_int_equal(st.collects, 1);
  trace_writer_collect(fx->w, T0, 300);  // never allocated: a caller bug
  assert_non_null(trace_writer_error(fx->w));
  assert_non_null(strstr(trace_writer_error(fx->w), "300"));
  char err[200];
  assert_false(trace_writer_finish(fx->w, err, sizeof err));
  fx->w = NULL;
  assert_non_null(strstr(err, "never allocated"));
}

static void test_promote_collect_bytes(void **state) {
  Fixture *fx = *state;
  fx->custom_none = true;
  uint64_t frame = 0x400000;
  for (int i = 0; i < 300; i++) alloc(fx, T0, 1, &frame, 1, 0);
  trace_writer_promote(fx->w, T0 + 1, 299);
  trace_writer_collect(fx->w, T0 + 2, 0);
  finish(fx);
  Packet e = event_packet(fx, 0);
  Bytes want = {.n = 0};
  b_event(&want, TRACE_EV_PROMOTE, T0 + 1), b_vint(&want, 0);
  b_event(&want, TRACE_EV_COLLECT, T0 + 2), b_vint(&want, 299);
  assert_true(e.events_len > want.n);
  const uint8_t *tail = e.events + e.events_len - want.n;
  assert_bytes(tail, want.n, &want);
}

static void test_stats_add_up(void **state) {
  Fixture *fx = *state;
  static uint64_t stack[50];
  for (int i = 0; i < 50; i++) stack[i] = 0x1000 + 16 * (uint64_t)(i % 20);
  for (int i = 0; i < 5000; i++) {
    alloc(fx, T0 + (uint64_t)i, 1, stack, 10 + (uint32_t)(i % 40), 5);
    if (i % 3 == 0) trace_writer_collect(fx->w, T0 + (uint64_t)i, (uint64_t)i);
  }
  assert_true(trace_writer_flush(fx->w));
  TraceWriterStats st;
  trace_writer_stats(fx->w, &st);
  off_t size = lseek(fileno(fx->file), 0, SEEK_END);
  assert_int_equal(st.bytes, (uint64_t)size);
  assert_int_equal(st.bytes, st.header_bytes + st.location_bytes + st.backtrace_bytes + st.event_bytes);
  assert_int_equal(st.header_bytes, st.packets * 66);
  assert_int_equal(st.allocs, 5000);
  assert_int_equal(st.collects, 1667);
  assert_true(st.location_bytes > 0 && st.backtrace_bytes > 0);
}

// ================================================================ write errors

static void test_epipe_stops_the_writer(void **state) {
  (void)state;
  struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
  sigaction(SIGPIPE, &ignore, &old);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  TraceInfo info = info_of(2);
  char err[128];
  TraceWriter *w = trace_writer_new(fds[1], true, &info, NULL, NULL, err, sizeof err);
  assert_non_null(w);
  close(fds[0]);
  uint64_t frame = 0x400000;
  assert_int_equal(trace_writer_alloc(w, T0, 1, 1, TRACE_SOURCE_MINOR, &frame, 1, 0), 0);
  assert_false(trace_writer_flush(w));
  const char *e = trace_writer_error(w);
  assert_non_null(e);
  assert_non_null(strstr(e, strerror(EPIPE)));
  // later calls are no-ops; ids keep counting
  assert_int_equal(trace_writer_alloc(w, T0, 1, 1, TRACE_SOURCE_MINOR, &frame, 1, 0), 1);
  TraceRun run = {frame, 1};
  uint64_t id = 0;
  assert_false(trace_writer_alloc_runs(w, T0, 1, 1, TRACE_SOURCE_MINOR, &run, 1, 0, &id));
  assert_int_equal(id, 2);
  trace_writer_promote(w, T0, 0);
  trace_writer_collect(w, T0, 0);
  for (int i = 0; i < 10000; i++) trace_writer_alloc(w, T0, 1, 1, TRACE_SOURCE_MINOR, &frame, 1, 0);
  assert_false(trace_writer_flush(w));
  assert_ptr_equal(trace_writer_error(w), e);
  TraceWriterStats st;
  trace_writer_stats(w, &st);
  assert_int_equal(st.packets, 1);  // the info packet only
  assert_false(trace_writer_finish(w, err, sizeof err));
  assert_non_null(strstr(err, strerror(EPIPE)));
  sigaction(SIGPIPE, &old, NULL);
}

static void test_enospc(void **state) {
  (void)state;
  int full = open("/dev/full", O_WRONLY);
  if (full < 0) {
    print_message("/dev/full cannot be opened: the ENOSPC test did not run\n");
    skip();
  }
  TraceInfo info = info_of(2);
  char err[128] = "";
  assert_null(trace_writer_new(full, false, &info, NULL, NULL, err, sizeof err));
  assert_non_null(strstr(err, strerror(ENOSPC)));
  // a trace that starts well and then meets a full disk
  FILE *f = tmpfile();
  int fd = dup(fileno(f));
  TraceWriter *w = trace_writer_new(fd, true, &info, NULL, NULL, err, sizeof err);
  assert_non_null(w);
  assert_int_equal(dup2(full, fd), fd);
  uint64_t frame = 0x400000;
  for (int i = 0; i < 20000; i++) trace_writer_alloc(w, T0, 1, 1, TRACE_SOURCE_MINOR, &frame, 1, 0);
  assert_non_null(trace_writer_error(w));
  assert_non_null(strstr(trace_writer_error(w), strerror(ENOSPC)));
  assert_false(trace_writer_close(w));
  close(full);
  fclose(f);
}

// ================================================================ main

#define T(name) cmocka_unit_test_setup_teardown(name, setup_v2, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bucket_hashes),
    cmocka_unit_test(test_info_packet_v1),
    cmocka_unit_test(test_info_packet_v2),
    cmocka_unit_test(test_info_packet_v3),
    cmocka_unit_test(test_bad_version_and_long_info),
    T(test_long_alloc_and_vints),
    T(test_short_alloc_conditions),
    T(test_location_layout_and_clamping),
    T(test_location_mtf),
    T(test_location_unknown_fallbacks),
    T(test_location_once),
    T(test_location_relog),
    T(test_codewords_misses_hits_predictions),
    T(test_prediction_runs_past_255),
    T(test_eviction),
    T(test_truncation_at_4096_bytes),
    T(test_truncation_edges),
    T(test_known_common_reads_nothing_below),
    T(test_recursion_runs),
    T(test_recursion_at_the_cap),
    cmocka_unit_test(test_alloc_common),
    T(test_runs_recursion),
    T(test_runs_at_the_cap),
    T(test_cache_check),
    T(test_flush_when_full),
    T(test_flush_129_new_locations),
    T(test_no_flush_128_new_locations),
    T(test_flush_after_30_seconds),
    cmocka_unit_test(test_v3_id_chunks),
    T(test_promote_collect_distance),
    T(test_promote_collect_bytes),
    T(test_stats_add_up),
    cmocka_unit_test(test_epipe_stops_the_writer),
    cmocka_unit_test(test_enospc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
