// test_trace_reader.c - cmocka tests of trace/reader.c: memtrace's fixtures
// decode (counts, invariants, v3 = v2); round trips through an independent
// encoder (tests/trace/mini_encoder.h) in versions 1-3, small packets, deep stacks,
// backtraces the writer cut, several domains, packets of another pid; the
// v1 location quirk; one crafted trace per error the reader reports (kind,
// message, byte offset, events before); every truncation point of a trace
// and flipped bytes (the events before the damaged packet are returned
// unchanged); garbage; follow mode on a growing file.
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
#include <sys/wait.h>
#include <unistd.h>

#include "../../trace/reader.h"
#include "../trace/mini_encoder.h"
#include "test_files.h"

#define FIXTURES "tests/fixtures/memtrace/"

// ================================================================ helpers

static char tmp_dir[64];

static const char *tmp_path(const char *name) {
  static char path[128];
  if (!tmp_dir[0]) {
    // /dev/shm when there is one: thousands of small files are written.
    bool shm = access("/dev/shm", W_OK) == 0;
    snprintf(tmp_dir, sizeof tmp_dir, "%s/trace_reader_test.XXXXXX", shm ? "/dev/shm" : "/tmp");
    assert_non_null(mkdtemp(tmp_dir));
  }
  snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
  return path;
}

static const char *spit(const char *name, const uint8_t *b, size_t n) {
  const char *path = tmp_path(name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, n, f), n);
  fclose(f);
  return path;
}

// An event whose backtrace points into its Events' frame array (fixed up by
// events_seal once all are added: the array moves while it grows).
typedef struct Ev {
  TraceEvent e;
  size_t frames_at;
} Ev;

typedef struct Events {
  Ev *v;
  size_t n, cap;
  uint64_t *frames;
  size_t n_frames, cap_frames;
  bool opened;
  TraceReaderStatus last;
  TraceReaderError err;
  TraceReaderStats stats;
} Events;

// read_events stores (and checks) the first keep_events events only; the
// rest it reads and drops. check_flips keeps those before the damage: a
// flipped byte can hand every later event millions of frames, each a copy.
static size_t keep_events = SIZE_MAX;

static void events_add(Events *es, const TraceEvent *e) {
  if (es->n == es->cap) {
    es->cap = es->cap ? 2 * es->cap : 256;
    es->v = realloc(es->v, es->cap * sizeof *es->v);
  }
  if (es->cap_frames - es->n_frames < e->backtrace_len) {
    es->cap_frames = 2 * es->cap_frames + e->backtrace_len;
    es->frames = realloc(es->frames, es->cap_frames * sizeof *es->frames);
  }
  Ev *ev = &es->v[es->n++];
  ev->e = *e;
  ev->frames_at = es->n_frames;
  if (e->backtrace_len) memcpy(es->frames + es->n_frames, e->backtrace, e->backtrace_len * sizeof *es->frames);
  es->n_frames += e->backtrace_len;
  ev->e.backtrace = es->frames + ev->frames_at;
}

static void events_seal(Events *es) {
  for (size_t i = 0; i < es->n; i++) es->v[i].e.backtrace = es->frames + es->v[i].frames_at;
}

static void events_free(Events *es) {
  free(es->v);
  free(es->frames);
  memset(es, 0, sizeof *es);
}

// Checks what every event must satisfy: the common prefix is shared with
// the previous allocation's backtrace.
static void check_common(const Events *es, const Ev *prev_alloc, const TraceEvent *e) {
  (void)es;
  if (e->kind != TRACE_EVENT_ALLOC) return;
  assert_true(e->common <= e->backtrace_len);
  if (!prev_alloc) return;
  assert_true(e->common <= prev_alloc->e.backtrace_len);
  assert_memory_equal(e->backtrace, es->frames + prev_alloc->frames_at, e->common * sizeof(uint64_t));
  // After a change of domain, `common` is all the two backtraces share.
  if (e->domain != prev_alloc->e.domain && e->common < e->backtrace_len && e->common < prev_alloc->e.backtrace_len)
    assert_true(e->backtrace[e->common] != es->frames[prev_alloc->frames_at + e->common]);
}

static Events read_events(const char *path) {
  Events es = {0};
  TraceReader *r = trace_reader_open(path, &es.err);
  if (!r) {
    es.last = TRACE_READER_ERROR;
    return es;
  }
  es.opened = true;
  TraceEvent e;
  size_t prev_alloc = SIZE_MAX;
  while ((es.last = trace_reader_next(r, &e)) == TRACE_READER_EVENT) {
    if (es.n >= keep_events) continue;
    check_common(&es, prev_alloc == SIZE_MAX ? NULL : &es.v[prev_alloc], &e);
    events_add(&es, &e);
    if (e.kind == TRACE_EVENT_ALLOC) prev_alloc = es.n - 1;
  }
  events_seal(&es);
  es.err = *trace_reader_error(r);
  trace_reader_stats(r, &es.stats);
  trace_reader_close(r);
  return es;
}

static Events read_bytes(const uint8_t *b, size_t n) { return read_events(spit("cut.ctf", b, n)); }

static bool same_event(const TraceEvent *a, const TraceEvent *b, bool with_offset) {
  return a->kind == b->kind && a->id == b->id && a->time_us == b->time_us && a->dtime_us == b->dtime_us &&
         a->domain == b->domain && a->source == b->source && a->length == b->length &&
         a->n_samples == b->n_samples && a->backtrace_len == b->backtrace_len && a->common == b->common &&
         a->coded_prefix == b->coded_prefix && (!with_offset || a->offset == b->offset) &&
         (a->backtrace_len == 0 || memcmp(a->backtrace, b->backtrace, a->backtrace_len * 8) == 0);
}

static void assert_prefix(const Events *part, const Events *full, size_t n) {
  assert_true(part->n >= n);
  assert_true(full->n >= n);
  for (size_t i = 0; i < n; i++)
    if (!same_event(&part->v[i].e, &full->v[i].e, true)) fail_msg("event %zu differs", i);
}

// End offsets of the packets of a well-formed trace.
static size_t packet_ends(const TestBytes *t, uint64_t *ends, size_t max) {
  size_t n = 0, off = 0;
  while (off + 8 <= t->n && n < max) {
    uint32_t bits;
    memcpy(&bits, t->b + off + 4, 4);
    off += bits / 8;
    ends[n++] = off;
  }
  return n;
}

// Events whose packet ends at or before `cut`.
static size_t events_before(const Events *full, const uint64_t *ends, size_t n_ends, uint64_t cut) {
  uint64_t limit = 0;
  for (size_t i = 0; i < n_ends && ends[i] <= cut; i++) limit = ends[i];
  size_t k = 0;
  while (k < full->n && full->v[k].e.offset < limit) k++;
  return k;
}

// ================================================================ fixtures

typedef struct Fixture {
  const char *name;
  uint64_t allocs, promotes, collects;
} Fixture;

static const Fixture fixtures[] = {
    {"bintrees-1e-5.ctf", 1049, 170, 1024},
    {"hashtbl_str-1e-4.ctf", 3714, 649, 3377},
    {"listmap-1e-6.ctf", 182, 13, 182},
};

static void test_fixtures_decode(void **state) {
  (void)state;
  for (size_t f = 0; f < sizeof fixtures / sizeof fixtures[0]; f++) {
    char path[256];
    snprintf(path, sizeof path, FIXTURES "%s", fixtures[f].name);
    Events es = read_events(path);
    assert_true(es.opened);
    assert_int_equal(es.last, TRACE_READER_END);
    assert_int_equal(es.err.kind, TRACE_ERROR_NONE);
    assert_int_equal(es.stats.allocs, fixtures[f].allocs);
    assert_int_equal(es.stats.promotes, fixtures[f].promotes);
    assert_int_equal(es.stats.collects, fixtures[f].collects);
    TestBytes file = test_slurp(path);
    assert_int_equal(es.stats.bytes, file.n);
    assert_int_equal(es.stats.header_bytes + es.stats.info_bytes + es.stats.location_bytes +
                         es.stats.backtrace_bytes + es.stats.event_bytes,
                     file.n);
    for (size_t i = 1; i < es.n; i++) assert_true(es.v[i].e.time_us >= es.v[i - 1].e.time_us);
    free(file.b);
    events_free(&es);
  }
}

static void test_fixture_v3_same_events(void **state) {
  (void)state;
  Events v2 = read_events(FIXTURES "bintrees-1e-5.ctf");
  Events v3 = read_events(FIXTURES "bintrees-1e-5.v3.ctf");
  assert_int_equal(v3.last, TRACE_READER_END);
  assert_int_equal(v2.n, v3.n);
  for (size_t i = 0; i < v2.n; i++) assert_true(same_event(&v2.v[i].e, &v3.v[i].e, false));
  TraceReaderError err;
  TraceReader *r = trace_reader_open(FIXTURES "bintrees-1e-5.v3.ctf", &err);
  assert_non_null(r);
  assert_int_equal(trace_reader_info(r)->version, 3);
  assert_string_equal(trace_reader_info(r)->executable, "bench/bintrees.exe");
  trace_reader_close(r);
  events_free(&v2);
  events_free(&v3);
}

// Every frame of every backtrace has locations (memtrace's dump would fail
// otherwise), and an unknown code has none.
static void test_fixture_locations(void **state) {
  (void)state;
  TraceReaderError err;
  TraceReader *r = trace_reader_open(FIXTURES "hashtbl_str-1e-4.ctf", &err);
  assert_non_null(r);
  TraceEvent e;
  uint64_t frames = 0;
  while (trace_reader_next(r, &e) == TRACE_READER_EVENT)
    for (uint32_t i = 0; i < e.backtrace_len; i++, frames++) {
      const TraceReaderLocation *locs;
      int n = trace_reader_locations(r, e.backtrace[i], &locs);
      assert_true(n >= 0);
      for (int k = 0; k < n; k++) assert_non_null(locs[k].function);
    }
  assert_true(frames > 30000);
  const TraceReaderLocation *locs;
  assert_int_equal(trace_reader_locations(r, 12345, &locs), -1);
  trace_reader_close(r);
}

// trace_reader_done, mid-trace and at its end: no event after it, and the
// info, the locations of the codes read and the stats stay as they were.
static void test_done(void **state) {
  (void)state;
  for (int at_end = 0; at_end < 2; at_end++) {
    TraceReaderError err;
    TraceReader *r = trace_reader_open(FIXTURES "hashtbl_str-1e-4.ctf", &err);
    assert_non_null(r);
    TraceEvent e;
    uint64_t code = 0, events = 0;
    TraceReaderStatus s;
    while ((s = trace_reader_next(r, &e)) == TRACE_READER_EVENT && (at_end || events < 500)) {
      events++;
      const TraceReaderLocation *some;
      for (uint32_t i = 0; i < e.backtrace_len; i++)
        if (trace_reader_locations(r, e.backtrace[i], &some) > 0) code = e.backtrace[i];
    }
    assert_int_equal(s, at_end ? TRACE_READER_END : TRACE_READER_EVENT);
    assert_true(code != 0);
    TraceReaderStats before, after;
    trace_reader_stats(r, &before);
    const TraceReaderLocation *locs;
    int n = trace_reader_locations(r, code, &locs);
    assert_true(n > 0);
    trace_reader_done(r);
    assert_int_equal(trace_reader_next(r, &e), TRACE_READER_END);
    assert_int_equal(trace_reader_next(r, &e), TRACE_READER_END);
    trace_reader_stats(r, &after);
    assert_memory_equal(&before, &after, sizeof before);
    assert_int_equal(trace_reader_locations(r, code, &locs), n);
    assert_non_null(locs[0].function);
    assert_string_equal(trace_reader_info(r)->executable, "bench/hashtbl_str.exe");
    assert_int_equal(trace_reader_error(r)->kind, TRACE_ERROR_NONE);
    trace_reader_close(r);
  }
}

// ================================================================ round trips through mini_encoder.h

enum { MAX_DEPTH = 12000 };

typedef struct Model {
  Events expect;                  // events as written (backtrace = full stack)
  uint64_t stack[MAX_DEPTH];
  uint32_t depth;
  uint64_t rng, time, live[4096];
  uint32_t n_live;
  uint32_t grow;                  // frames pushed per step below min_depth (default 3)
  bool recursive;                 // frame codes cycle with the depth (predictions hold)
} Model;

static uint64_t rnd(Model *m) {
  m->rng ^= m->rng << 13;
  m->rng ^= m->rng >> 7;
  m->rng ^= m->rng << 17;
  return m->rng;
}

// One step of a random program: the stack pops and pushes a few frames
// (codes from `pool`), then an allocation, promotion or collection.
static void model_step(Model *m, MiniEncoder *s, uint32_t pool, uint32_t min_depth, uint32_t max_depth) {
  // Below min_depth the stack grows a few frames a step: a stack of many
  // fresh codes at once would not fit the 4,086 bytes of one backtrace.
  uint32_t pop = (uint32_t)(rnd(m) % 4), push = (uint32_t)(rnd(m) % 4);
  if (m->depth < min_depth) pop = 0, push = m->grow ? m->grow : 3;
  else m->depth = m->depth > pop + min_depth ? m->depth - pop : min_depth;
  for (uint32_t i = 0; i < push && m->depth < max_depth; i++, m->depth++)
    m->stack[m->depth] = m->recursive ? 1 + m->depth % pool : 1 + rnd(m) % pool;
  uint64_t r = rnd(m) % 100;
  m->time += r < 2 ? (1u << 25) + 12345 : r < 3 ? 40000000 : rnd(m) % 50;
  TraceEvent e = {.time_us = m->time};
  if (r < 60 || m->n_live == 0) {
    uint64_t len = r < 50 ? 1 + rnd(m) % 16 : r < 55 ? 70000 : r < 58 ? 5000000000ull : 300;
    uint64_t samples = r % 7 == 0 ? 1 + rnd(m) % 300 : 1;
    unsigned source = r % 11 == 0 ? TRACE_SOURCE_MAJOR : r % 13 == 0 ? TRACE_SOURCE_EXTERNAL : TRACE_SOURCE_MINOR;
    e.kind = TRACE_EVENT_ALLOC;
    e.id = menc_alloc(s, m->time, len, samples, source, m->stack, m->depth);
    e.length = len;
    e.n_samples = samples;
    e.source = (TraceSource)source;
    e.backtrace = m->stack;
    e.backtrace_len = m->depth;
    if (m->n_live < 4096) m->live[m->n_live++] = e.id;
  } else {
    uint32_t k = (uint32_t)(rnd(m) % m->n_live);
    e.id = m->live[k];
    if (r < 75) {
      e.kind = TRACE_EVENT_PROMOTE;
      menc_promote(s, m->time, e.id);
    } else {
      e.kind = TRACE_EVENT_COLLECT;
      menc_collect(s, m->time, e.id);
      m->live[k] = m->live[--m->n_live];
    }
  }
  events_add(&m->expect, &e);
}

// Compares what was read with the model (times as clamped by the writer).
static void assert_roundtrip(const Events *got, const Model *m, uint64_t start) {
  if (got->last != TRACE_READER_END) fail_msg("after %zu events: %s", got->n, got->err.message);
  assert_int_equal(got->n, m->expect.n);
  for (size_t i = 0; i < got->n; i++) {
    const TraceEvent *g = &got->v[i].e, *x = &m->expect.v[i].e;
    assert_int_equal(g->kind, x->kind);
    assert_int_equal(g->id, x->id);
    assert_int_equal(g->time_us, x->time_us);
    assert_int_equal(g->dtime_us, x->time_us - start);
    if (g->kind != TRACE_EVENT_ALLOC) continue;
    assert_int_equal(g->length, x->length);
    assert_int_equal(g->n_samples, x->n_samples);
    assert_int_equal(g->source, x->source);
    assert_int_equal(g->backtrace_len, x->backtrace_len);
    assert_memory_equal(g->backtrace, x->backtrace, x->backtrace_len * 8);
  }
}

static void check_synth_locations(const char *path) {
  TraceReaderError err;
  TraceReader *r = trace_reader_open(path, &err);
  assert_non_null(r);
  TraceEvent e;
  while (trace_reader_next(r, &e) == TRACE_READER_EVENT)
    for (uint32_t i = 0; i < e.backtrace_len; i++) {
      MiniEncoderLoc want[2];
      uint32_t n_want;
      menc_locations(e.backtrace[i], want, &n_want);
      const TraceReaderLocation *got;
      assert_int_equal(trace_reader_locations(r, e.backtrace[i], &got), (int)n_want);
      for (uint32_t k = 0; k < n_want; k++) {
        assert_string_equal(got[k].function, want[k].function);
        assert_string_equal(got[k].file, want[k].file);
        assert_int_equal(got[k].line, want[k].line);
        assert_int_equal(got[k].start_col, want[k].start);
        assert_int_equal(got[k].end_col, want[k].end);
      }
    }
  assert_int_equal(trace_reader_next(r, &e), TRACE_READER_END);
  trace_reader_close(r);
}

static void roundtrip(uint16_t version, uint32_t packet_bytes, uint32_t pool, uint32_t min_depth,
                      uint32_t max_depth, uint32_t steps, uint32_t grow, bool recursive) {
  Model *m = calloc(1, sizeof *m);
  m->grow = grow;
  m->recursive = recursive;
  m->rng = 0x9E3779B97F4A7C15ull ^ version ^ packet_bytes;
  // 300 us before a multiple of 2^25 us: the first packet's low time bits wrap.
  m->time = 1700000000000000ull - 1700000000000000ull % (1u << 25) + (1u << 25) - 300;
  const char *path = tmp_path("synth.ctf");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  MiniEncoderOptions o = {.version = version, .pid = 4242, .start_us = m->time, .rate = 1e-4, .packet_bytes = packet_bytes};
  MiniEncoder *s = menc_open(fd, &o);
  for (uint32_t i = 0; i < steps; i++) model_step(m, s, pool, min_depth, max_depth);
  menc_close(s);
  close(fd);
  Events got = read_events(path);
  events_seal(&m->expect);
  assert_roundtrip(&got, m, o.start_us);
  assert_int_equal(got.stats.skipped_packets, 0);
  check_synth_locations(path);
  events_free(&got);
  events_free(&m->expect);
  free(m);
}

static void test_roundtrip_versions(void **state) {
  (void)state;
  for (uint16_t v = 1; v <= 3; v++) {
    roundtrip(v, 0, 300, 1, 40, 20000, 0, false);
    roundtrip(v, 200, 300, 1, 40, 5000, 0, false);  // many small packets
  }
}

// Deep stacks changing at the leaf: long common prefixes, long prediction
// runs (255-frame codewords chained), a pool large enough to miss often.
// The stacks first grow 3 frames a step (40 from a small pool: all hits).
// A recursive program's frames repeat with the depth: its backtraces are
// mostly predicted frames, chains of 255.
static void test_roundtrip_deep(void **state) {
  (void)state;
  roundtrip(2, 0, 6000, 3000, 4000, 3000, 3, false);
  roundtrip(2, 0, 40, 9000, 10000, 600, 40, false);
  roundtrip(2, 0, 7, 9000, 10000, 600, 40, true);
}

// A stack of 3,000 fresh codes does not fit the 4,086 bytes a backtrace may
// take: the writer cuts it. The next allocation's common prefix then exceeds
// what the reader has, and memtrace's reader keeps the cut backtrace.
static void test_cut_backtrace(void **state) {
  (void)state;
  const char *path = tmp_path("cut_bt.ctf");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  MiniEncoderOptions o = {.version = 2, .pid = 7, .start_us = 5000000, .rate = 1e-3};
  MiniEncoder *s = menc_open(fd, &o);
  static uint64_t stack[3001];
  for (uint32_t i = 0; i < 3001; i++) stack[i] = 1000 + i;
  menc_alloc(s, 5000001, 2, 1, 0, stack, 3000);
  menc_alloc(s, 5000002, 2, 1, 0, stack, 3001);   // shares 3,000 frames
  stack[1] = 77;
  menc_alloc(s, 5000003, 2, 1, 0, stack, 5);       // shares 1 frame
  menc_close(s);
  close(fd);
  Events got = read_events(path);
  assert_int_equal(got.last, TRACE_READER_END);
  assert_int_equal(got.n, 3);
  const TraceEvent *a = &got.v[0].e, *b = &got.v[1].e, *c = &got.v[2].e;
  assert_true(a->backtrace_len > 300 && a->backtrace_len < 3000);  // cut: ~408 frames
  assert_memory_equal(a->backtrace, stack, 8);
  assert_int_equal(b->coded_prefix, 3000);
  assert_int_equal(b->backtrace_len, a->backtrace_len);  // kept
  assert_int_equal(b->common, a->backtrace_len);
  assert_memory_equal(b->backtrace, a->backtrace, a->backtrace_len * 8);
  assert_int_equal(c->backtrace_len, 5);
  assert_int_equal(c->common, 1);
  assert_memory_equal(c->backtrace, stack, 5 * 8);
  events_free(&got);
}

// Two v3 domains writing to one file, packets interleaved: each domain has
// its own codec state; `common` is relative to the previous allocation of
// any domain.
static void test_domains(void **state) {
  (void)state;
  const char *path = tmp_path("domains.ctf");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  MiniEncoderOptions o0 = {.version = 3, .pid = 9, .start_us = 1000, .rate = 1e-4, .packet_bytes = 300};
  MiniEncoderOptions o1 = o0;
  o1.domain = 1;
  o1.no_info = true;
  o1.first_id = 1000000;
  Model *m[2] = {calloc(1, sizeof(Model)), calloc(1, sizeof(Model))};
  MiniEncoder *s[2] = {menc_open(fd, &o0), menc_open(fd, &o1)};
  Events all = {0};
  for (int d = 0; d < 2; d++) {
    m[d]->rng = 99 + (uint64_t)d;
    m[d]->time = 1000;
  }
  // Each domain writes a batch, then flushes: packets alternate.
  for (int round = 0; round < 40; round++)
    for (int d = 0; d < 2; d++) {
      for (int i = 0; i < 30; i++) {
        m[d]->time = m[d]->time > m[1 - d]->time ? m[d]->time : m[1 - d]->time;
        model_step(m[d], s[d], 50, 1, 20);
        events_add(&all, &m[d]->expect.v[m[d]->expect.n - 1].e);
        all.v[all.n - 1].e.domain = (uint16_t)d;
      }
      menc_flush_at(s[d], m[d]->time);
    }
  for (int d = 0; d < 2; d++) menc_close(s[d]);
  close(fd);
  Events got = read_events(path);
  events_seal(&all);
  assert_int_equal(got.last, TRACE_READER_END);
  assert_int_equal(got.n, all.n);
  for (size_t i = 0; i < got.n; i++) {
    const TraceEvent *g = &got.v[i].e, *x = &all.v[i].e;
    assert_int_equal(g->domain, x->domain);
    assert_int_equal(g->id, x->id);
    assert_int_equal(g->kind, x->kind);
    assert_int_equal(g->backtrace_len, x->backtrace_len);
    if (g->backtrace_len) assert_memory_equal(g->backtrace, x->backtrace, g->backtrace_len * 8);
  }
  events_free(&got);
  events_free(&all);
  for (int d = 0; d < 2; d++) {
    events_free(&m[d]->expect);
    free(m[d]);
  }
}

// Packets of another pid (a forked child writing to the same file) are
// skipped and counted.
static void test_other_pid(void **state) {
  (void)state;
  const char *path = tmp_path("pids.ctf");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  MiniEncoderOptions o = {.version = 2, .pid = 100, .start_us = 1000, .rate = 1e-4, .packet_bytes = 300};
  MiniEncoderOptions other = o;
  other.pid = 200;
  other.no_info = true;
  Model *m = calloc(1, sizeof *m), *junk = calloc(1, sizeof *junk);
  m->rng = 5;
  junk->rng = 6;
  m->time = junk->time = 1000;
  MiniEncoder *s = menc_open(fd, &o), *t = menc_open(fd, &other);
  for (int round = 0; round < 20; round++) {
    for (int i = 0; i < 40; i++) model_step(m, s, 60, 1, 15);
    menc_flush_at(s, m->time);
    for (int i = 0; i < 40; i++) model_step(junk, t, 60, 1, 15);
    menc_flush_at(t, junk->time);
  }
  menc_close(s);
  menc_close(t);
  close(fd);
  Events got = read_events(path);
  events_seal(&m->expect);
  assert_roundtrip(&got, m, 1000);
  assert_true(got.stats.skipped_packets >= 20);
  assert_true(got.stats.skipped_bytes > 0);
  TestBytes file = test_slurp(path);
  assert_int_equal(got.stats.bytes, file.n);
  free(file.b);
  events_free(&got);
  events_free(&m->expect);
  events_free(&junk->expect);
  free(m);
  free(junk);
}

// ================================================================ crafted traces

typedef struct Raw {
  uint8_t b[70000];
  size_t n;
  uint16_t version;
} Raw;

static void raw_put(Raw *r, const void *p, size_t n) {
  memcpy(r->b + r->n, p, n);
  r->n += n;
}
static void raw8(Raw *r, uint8_t v) { raw_put(r, &v, 1); }
static void raw16(Raw *r, uint16_t v) { raw_put(r, &v, 2); }
static void raw32(Raw *r, uint32_t v) { raw_put(r, &v, 4); }
static void raw64(Raw *r, uint64_t v) { raw_put(r, &v, 8); }

enum { T0 = 1000000 };

// A packet header; returns the packet's start (raw_end patches the size).
static size_t raw_begin(Raw *r, uint64_t pid, uint64_t t1, uint64_t id0, uint64_t id1) {
  size_t start = r->n;
  raw32(r, TRACE_MAGIC);
  raw32(r, 0);
  raw64(r, T0);
  raw64(r, t1);
  raw32(r, 0);
  raw16(r, r->version);
  raw64(r, pid);
  if (r->version >= 3) raw16(r, 0);
  raw16(r, TRACE_CACHE_CHECK_NONE);
  raw16(r, 0);
  raw64(r, 0);
  raw64(r, id0);
  raw64(r, id1);
  return start;
}

static void raw_end(Raw *r, size_t start) {
  uint32_t bits = (uint32_t)(r->n - start) * 8;
  memcpy(r->b + start + 4, &bits, 4);
}

static void raw_event(Raw *r, unsigned code, uint64_t t) {
  raw32(r, (uint32_t)code << TRACE_TIME_BITS | (uint32_t)(t & ((1u << TRACE_TIME_BITS) - 1)));
}

static void raw_info(Raw *r, uint16_t version) {
  r->n = 0;
  r->version = version;
  size_t p = raw_begin(r, 1, T0, 0, 0);
  raw_event(r, TRACE_EV_INFO, T0);
  double rate = 1e-4;
  raw_put(r, &rate, 8);
  raw8(r, 64);
  raw_put(r, "exe\0host\0params", 16);
  raw64(r, 1);
  if (version >= 2) raw_put(r, "ctx", 4);
  raw_end(r, p);
}

// A location event for `code` with one location: new file and function names.
static void raw_location(Raw *r, uint64_t code, unsigned fc, unsigned dc, const char *file, const char *fn) {
  raw_event(r, TRACE_EV_LOCATION, T0);
  raw64(r, code);
  raw8(r, 1);
  uint64_t bits = 10 | (uint64_t)fc << 38 | (uint64_t)dc << 43;
  raw32(r, (uint32_t)bits);
  raw16(r, (uint16_t)(bits >> 32));
  if (fc == 31) raw_put(r, file, strlen(file) + 1);
  if (dc == 31) raw_put(r, fn, strlen(fn) + 1);
}

// A short allocation whose backtrace is one miss with `code`.
static void raw_alloc_miss(Raw *r, uint64_t t, uint64_t code, unsigned bucket) {
  raw_event(r, TRACE_EV_SHORT_ALLOC + 1, t);
  raw8(r, 0);   // common prefix
  raw8(r, 1);   // one codeword
  raw16(r, (uint16_t)(bucket << 2 | 3));
  raw64(r, code);
}

// A location packet defining code 77, then a packet with one allocation.
static void raw_valid_prefix(Raw *r) {
  raw_info(r, 2);
  size_t p = raw_begin(r, 1, T0, 0, 0);
  raw_location(r, 77, 31, 31, "f.ml", "F.g");
  raw_end(r, p);
  p = raw_begin(r, 1, T0 + 10, 0, 1);
  raw_alloc_miss(r, T0 + 5, 77, 9);
  raw_end(r, p);
}

typedef struct Expect {
  const char *name;
  TraceErrorKind kind;
  const char *text;
  size_t events;    // returned before the error
  size_t offset;
} Expect;

static void expect_error(const Raw *r, const Expect *x) {
  Events es = read_bytes(r->b, r->n);
  if (es.err.kind != x->kind || !strstr(es.err.message, x->text) || es.n != x->events ||
      es.err.offset != x->offset)
    fail_msg("%s: got kind %d, %zu events, offset %llu, \"%s\"; want kind %d, %zu events, offset %zu, \"%s\"",
             x->name, es.err.kind, es.n, (unsigned long long)es.err.offset, es.err.message, x->kind, x->events,
             x->offset, x->text);
  assert_int_equal(es.last, x->kind == TRACE_ERROR_NONE ? TRACE_READER_END : TRACE_READER_ERROR);
  if (x->kind == TRACE_ERROR_NONE) {
    events_free(&es);
    return;
  }
  char at[32];
  snprintf(at, sizeof at, "byte %zu: ", x->offset);
  if (x->kind != TRACE_ERROR_IO) assert_true(strncmp(es.err.message, at, strlen(at)) == 0);
  events_free(&es);
}

static void test_error_header(void **state) {
  (void)state;
  Raw *r = calloc(1, sizeof *r);
  memset(r->b, 0, 100);
  r->n = 100;
  expect_error(r, &(Expect){"zeros", TRACE_ERROR_CORRUPT, "bad magic 0x00000000", 0, 0});

  raw_info(r, 2);
  size_t info = r->n, p = raw_begin(r, 1, T0, 0, 0);
  memcpy(r->b + p + 4, &(uint32_t){12 * 8}, 4);
  expect_error(r, &(Expect){"tiny", TRACE_ERROR_CORRUPT, "packet size 12 smaller than its 66-byte header", 0, p + 4});
  memcpy(r->b + p + 4, &(uint32_t){70000 * 8}, 4);
  expect_error(r, &(Expect){"huge", TRACE_ERROR_CORRUPT, "larger than the format's 32768-byte maximum", 0, p + 4});
  memcpy(r->b + p + 4, &(uint32_t){66 * 8 + 3}, 4);
  expect_error(r, &(Expect){"bits", TRACE_ERROR_CORRUPT, "not a whole number of bytes", 0, p + 4});
  raw_end(r, p);
  memcpy(r->b + p + 28, &(uint16_t){4}, 2);
  expect_error(r, &(Expect){"v4", TRACE_ERROR_VERSION, "trace format version 4", 0, p + 28});
  memcpy(r->b + p + 28, &(uint16_t){1}, 2);
  expect_error(r, &(Expect){"mixed", TRACE_ERROR_CORRUPT, "format version 1 in a version 2 trace", 0, p + 28});
  memcpy(r->b + p + 28, &(uint16_t){2}, 2);
  memcpy(r->b + p + 16, &(uint64_t){T0 - 1}, 8);
  expect_error(r, &(Expect){"times", TRACE_ERROR_CORRUPT, "is after its last time", 0, p + 8});
  memcpy(r->b + p + 16, &(uint64_t){T0}, 8);
  memcpy(r->b + p + 50, &(uint64_t){3}, 8);
  expect_error(r, &(Expect){"ids", TRACE_ERROR_CORRUPT, "allocation ids run backwards", 0, p + 50});
  memcpy(r->b + p + 50, &(uint64_t){0}, 8);
  memcpy(r->b + p + 38, &(uint16_t){20000}, 2);
  expect_error(r, &(Expect){"bucket", TRACE_ERROR_CORRUPT, "cache check names bucket 20000", 0, p + 38});
  r->n = info;
  expect_error(r, &(Expect){"ok", TRACE_ERROR_NONE, "", 0, 0});
  r->n = info + 40;
  expect_error(r, &(Expect){"cut header", TRACE_ERROR_TRUNCATED, "truncated: the file ends 40 bytes into", 0, info});
  free(r);
}

static void test_error_info(void **state) {
  (void)state;
  Raw *r = calloc(1, sizeof *r);
  expect_error(r, &(Expect){"empty", TRACE_ERROR_TRUNCATED, "the file is empty", 0, 0});
  raw_info(r, 2);
  size_t n = r->n;
  r->n = 66;
  expect_error(r, &(Expect){"header only", TRACE_ERROR_TRUNCATED, "ends 66 bytes into a ", 0, 0});
  r->n = n;
  r->b[66 + 3] = 1 << 1;  // event code 1
  expect_error(r, &(Expect){"not info", TRACE_ERROR_CORRUPT, "has code 1, not trace info", 0, 66});
  raw_info(r, 2);
  memcpy(r->b + 70, &(double){0.0}, 8);
  expect_error(r, &(Expect){"rate", TRACE_ERROR_CORRUPT, "sampling rate 0 is not in (0, 1]", 0, 70});
  raw_info(r, 2);
  r->b[r->n - 1] = 'x';  // context loses its NUL
  expect_error(r, &(Expect){"string", TRACE_ERROR_CORRUPT, "trace-info string runs past", 0, r->n - 4});
  raw_info(r, 1);
  r->n++;
  raw_end(r, 0);
  expect_error(r, &(Expect){"extra", TRACE_ERROR_CORRUPT, "1 bytes after the trace-info event", 0, r->n - 1});
  raw_info(r, 1);  // v1: no context
  expect_error(r, &(Expect){"v1 info", TRACE_ERROR_NONE, "", 0, 0});
  free(r);
}

static void test_error_events(void **state) {
  (void)state;
  Raw *r = calloc(1, sizeof *r);
  raw_valid_prefix(r);
  expect_error(r, &(Expect){"valid", TRACE_ERROR_NONE, "", 1, 0});
  size_t p = raw_begin(r, 1, T0 + 20, 1, 1), at = r->n;
  raw_event(r, 50, T0 + 11);
  raw_end(r, p);
  expect_error(r, &(Expect){"code", TRACE_ERROR_CORRUPT, "unknown event code 50", 1, at});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 1), at = r->n;
  raw_event(r, TRACE_EV_PROMOTE, T0 + 11);
  raw8(r, 253);
  raw_end(r, p);
  expect_error(r, &(Expect){"past end", TRACE_ERROR_CORRUPT, "event runs past the end of its packet", 1, at});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 1), at = r->n;
  raw_event(r, TRACE_EV_PROMOTE, T0 + 21);
  raw8(r, 0);
  raw_end(r, p);
  expect_error(r, &(Expect){"late", TRACE_ERROR_CORRUPT, "is past its packet's last time", 1, at});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 1), at = r->n;
  raw_event(r, TRACE_EV_PROMOTE, T0 + 4);  // before the allocation at T0 + 5... but in packet bounds
  raw8(r, 0);
  raw_end(r, p);
  expect_error(r, &(Expect){"backwards", TRACE_ERROR_CORRUPT, "is before the previous event's", 1, at});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 1), at = r->n;
  raw_event(r, TRACE_EV_COLLECT, T0 + 11);
  raw8(r, 1);  // allocation -1
  raw_end(r, p);
  expect_error(r, &(Expect){"ref", TRACE_ERROR_CORRUPT, "collection of allocation 1 back", 1, at});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 1), at = r->n;
  raw_event(r, TRACE_EV_INFO, T0 + 11);
  raw_end(r, p);
  expect_error(r, &(Expect){"info", TRACE_ERROR_CORRUPT, "a second trace-info event", 1, at});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 3);
  raw_end(r, p);
  expect_error(r, &(Expect){"sync", TRACE_ERROR_CORRUPT, "declares allocations 1 to 3 but holds 0", 1, p + 58});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 5, 5);
  raw_end(r, p);
  expect_error(r, &(Expect){"gap", TRACE_ERROR_CORRUPT, "first allocation id 5 does not follow", 1, p + 50});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2), at = r->n;
  raw_event(r, TRACE_EV_ALLOC, T0 + 11);
  raw_put(r, "\x05\x01\x03\x00\x00\x00", 6);  // source 3
  raw_end(r, p);
  expect_error(r, &(Expect){"source", TRACE_ERROR_CORRUPT, "allocation source 3", 1, at});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2), at = r->n;
  raw_event(r, TRACE_EV_ALLOC, T0 + 11);
  raw_put(r, "\xfe\xff\xff\xff\xff\x01\x00\x00\x00\x00", 10);  // length -1
  raw_end(r, p);
  expect_error(r, &(Expect){"negative", TRACE_ERROR_CORRUPT, "negative allocation field (length -1", 1, at});
  free(r);
}

static void test_error_backtraces(void **state) {
  (void)state;
  Raw *r = calloc(1, sizeof *r);
  raw_valid_prefix(r);
  size_t p = raw_begin(r, 1, T0 + 20, 1, 2), at = r->n;
  raw_event(r, TRACE_EV_SHORT_ALLOC + 2, T0 + 11);
  raw8(r, 0);
  raw8(r, 1);
  raw16(r, 5 << 2);
  raw_end(r, p);
  expect_error(r, &(Expect){"empty bucket", TRACE_ERROR_CORRUPT, "codeword names an empty bucket (5)", 1, at + 6});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2), at = r->n;
  raw_event(r, TRACE_EV_SHORT_ALLOC + 2, T0 + 11);
  raw8(r, 0);
  raw8(r, 1);
  raw16(r, 9 << 2 | 2);  // bucket 9 holds 77; its successor (0) is empty
  raw8(r, 3);
  raw_end(r, p);
  expect_error(r, &(Expect){"prediction", TRACE_ERROR_CORRUPT, "predicts an empty bucket (0)", 1, at + 6});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2), at = r->n;
  raw_alloc_miss(r, T0 + 11, 78, 10);
  raw_end(r, p);
  expect_error(r, &(Expect){"undefined", TRACE_ERROR_CORRUPT, "frame code 78, which no location event defined", 1,
                            at + 6});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2), at = r->n;
  raw_alloc_miss(r, T0 + 11, UINT64_MAX, 10);
  raw_end(r, p);
  expect_error(r, &(Expect){"code -1", TRACE_ERROR_CORRUPT, "frame code 0xffffffffffffffff, which no writer uses", 1,
                            at + 6});

  // Frame code 0 is a code like any other: missed, then hit.
  raw_info(r, 2);
  p = raw_begin(r, 1, T0, 0, 0);
  raw_location(r, 0, 31, 31, "zero.ml", "Zero.f");
  raw_end(r, p);
  p = raw_begin(r, 1, T0 + 10, 0, 2);
  raw_alloc_miss(r, T0 + 5, 0, 12);
  raw_event(r, TRACE_EV_SHORT_ALLOC + 1, T0 + 6);
  raw8(r, 0);
  raw8(r, 1);
  raw16(r, 12 << 2);  // a hit on bucket 12: code 0
  raw_end(r, p);
  Events zero = read_bytes(r->b, r->n);
  assert_int_equal(zero.last, TRACE_READER_END);
  assert_int_equal(zero.n, 2);
  assert_int_equal(zero.v[1].e.backtrace_len, 1);
  assert_int_equal(zero.v[1].e.backtrace[0], 0);
  events_free(&zero);

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2), at = r->n;
  raw_event(r, TRACE_EV_SHORT_ALLOC + 2, T0 + 11);
  raw8(r, 0);
  raw8(r, 2);  // two codewords, room for one
  raw16(r, 9 << 2);
  raw_end(r, p);
  expect_error(r, &(Expect){"short", TRACE_ERROR_CORRUPT, "backtrace of 2 codewords runs past", 1, at + 6});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2), at = r->n;
  raw_event(r, TRACE_EV_SHORT_ALLOC + 2, T0 + 11);
  raw8(r, 0);
  raw8(r, 1);
  raw16(r, 9 << 2 | 3);  // a miss whose code runs past the packet
  raw_put(r, "\x4d\0\0\0\0\0\0", 7);
  raw_end(r, p);
  expect_error(r, &(Expect){"miss past end", TRACE_ERROR_CORRUPT, "codeword runs past the end", 1, at + 6});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2), at = r->n;
  raw_event(r, TRACE_EV_SHORT_ALLOC + 2, T0 + 11);
  raw8(r, 5);  // prefix 5, the last backtrace has 1 frame
  raw8(r, 0);
  raw_end(r, p);
  expect_error(r, &(Expect){"prefix", TRACE_ERROR_CORRUPT, "common prefix 5 is longer than the previous backtrace", 1,
                            at + 6});

  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 1);
  memcpy(r->b + p + 38, &(uint16_t){9}, 2);
  memcpy(r->b + p + 42, &(uint64_t){76}, 8);
  raw_end(r, p);
  expect_error(r, &(Expect){"check", TRACE_ERROR_CORRUPT, "cache check failed: bucket 9 holds code 77", 1, p + 38});
  memcpy(r->b + p + 42, &(uint64_t){77}, 8);
  expect_error(r, &(Expect){"check ok", TRACE_ERROR_NONE, "", 1, 0});
  free(r);
}

static void test_error_locations(void **state) {
  (void)state;
  Raw *r = calloc(1, sizeof *r);
  raw_info(r, 2);
  size_t p = raw_begin(r, 1, T0, 0, 0), at = r->n;
  raw_location(r, 5, 31, 0, "a.ml", NULL);
  raw_end(r, p);
  expect_error(r, &(Expect){"fn entry", TRACE_ERROR_CORRUPT, "function table entry 0, which is empty", 0, at + 13});

  raw_info(r, 2);
  p = raw_begin(r, 1, T0, 0, 0), at = r->n;
  raw_location(r, 5, 2, 31, NULL, "g");
  raw_end(r, p);
  expect_error(r, &(Expect){"file entry", TRACE_ERROR_CORRUPT, "file table entry 2, which is empty", 0, at + 13});

  raw_info(r, 2);
  p = raw_begin(r, 1, T0, 0, 0);
  raw_location(r, 5, 31, 31, "a.ml", "f");
  at = r->n;
  raw_location(r, 5, 0, 31, NULL, "g");  // code 5 again, another function
  raw_end(r, p);
  expect_error(r, &(Expect){"redefined", TRACE_ERROR_CORRUPT, "defined again with other locations", 0, at + 4});

  raw_info(r, 2);
  p = raw_begin(r, 1, T0, 0, 0);
  raw_location(r, 5, 31, 31, "a.ml", "f");
  raw_location(r, 5, 0, 0, NULL, NULL);  // the same again: fine
  at = r->n;
  raw_location(r, 6, 31, 31, "b.ml", "unterminated");
  r->n--;
  raw_end(r, p);
  expect_error(r, &(Expect){"name", TRACE_ERROR_CORRUPT, "a name in a location event runs past", 0, at + 24});
  free(r);
}

// Issue 23, class 4: every field the format bounds is checked. A packet
// spanning 2^25 us or more would rebuild its events' times wrongly (an
// event 40 s in read back as 6.4 s): refused; 2^25 - 1 still reads exactly.
static void test_error_bounds(void **state) {
  (void)state;
  Raw *r = calloc(1, sizeof *r);
  const uint64_t span = (1u << TRACE_TIME_BITS) - 1;
  raw_valid_prefix(r);
  size_t p = raw_begin(r, 1, T0 + 40000000, 1, 1);
  raw_event(r, TRACE_EV_PROMOTE, T0 + 40000000);
  raw8(r, 0);
  raw_end(r, p);
  expect_error(r, &(Expect){"40 s", TRACE_ERROR_CORRUPT, "packet spans 40000000 us", 1, p + 16});
  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + span + 1, 1, 1);
  raw_end(r, p);
  expect_error(r, &(Expect){"2^25", TRACE_ERROR_CORRUPT, "packet spans 33554432 us", 1, p + 16});
  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + span, 1, 1);
  raw_event(r, TRACE_EV_PROMOTE, T0 + span);
  raw8(r, 0);
  raw_end(r, p);
  Events es = read_bytes(r->b, r->n);
  assert_int_equal(es.last, TRACE_READER_END);
  assert_int_equal(es.n, 2);
  assert_int_equal(es.v[1].e.time_us, T0 + span);
  events_free(&es);

  // The trace-info packet: one time, no allocation, no cache check, the
  // event's pid; a word size of 32 or 64 bits.
  raw_info(r, 2);
  memcpy(r->b + 16, &(uint64_t){T0 + 1}, 8);
  expect_error(r, &(Expect){"info times", TRACE_ERROR_CORRUPT, "trace-info packet's last time", 0, 16});
  raw_info(r, 3);
  memcpy(r->b + 60, &(uint64_t){2}, 8);
  expect_error(r, &(Expect){"info ids", TRACE_ERROR_CORRUPT, "trace-info packet declares allocations 0 to 2", 0, 52});
  raw_info(r, 2);
  memcpy(r->b + 38, &(uint16_t){7}, 2);
  expect_error(r, &(Expect){"info check", TRACE_ERROR_CORRUPT, "trace-info packet carries a cache check", 0, 38});
  raw_info(r, 2);
  r->b[66 + 12] = 0;
  expect_error(r, &(Expect){"word size", TRACE_ERROR_CORRUPT, "word size 0 bits", 0, 78});
  raw_info(r, 2);
  r->b[66 + 13 + 16] = 2;  // the event's pid: 2, the packet's 1
  expect_error(r, &(Expect){"info pid", TRACE_ERROR_CORRUPT, "pid 2 differs from its packet's 1", 0, 95});
  raw_info(r, 2);
  r->b[78] = 32;
  expect_error(r, &(Expect){"32-bit", TRACE_ERROR_NONE, "", 0, 0});

  // An allocation with no sample.
  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2);
  size_t at = r->n;
  raw_event(r, TRACE_EV_ALLOC, T0 + 11);
  raw_put(r, "\x05\x00\x00\x01\x00\x00", 6);  // 5 words, 0 samples, minor, prefix 1, no codeword
  raw_end(r, p);
  expect_error(r, &(Expect){"no sample", TRACE_ERROR_CORRUPT, "allocation of 5 words with no sample", 1, at});

  // Frame codes are below 2^62 (memtrace keeps 63 bits of them).
  raw_info(r, 2);
  p = raw_begin(r, 1, T0, 0, 0);
  at = r->n;
  raw_location(r, (uint64_t)1 << 62, 31, 31, "a.ml", "f");
  raw_end(r, p);
  expect_error(r, &(Expect){"code 2^62", TRACE_ERROR_CORRUPT, "frame code 0x4000000000000000 is not below 2^62", 0,
                            at + 4});

  // Versions 1 and 2: nothing happens to a collected block (the tools,
  // which skip what names no live block, counted one collection less than
  // info); promoting an old block is let through (a no-op for the tools).
  for (unsigned second = TRACE_EV_PROMOTE; second <= TRACE_EV_COLLECT; second++) {
    raw_valid_prefix(r);
    p = raw_begin(r, 1, T0 + 20, 1, 1);
    raw_event(r, TRACE_EV_PROMOTE, T0 + 11);
    raw8(r, 0);
    raw_event(r, TRACE_EV_PROMOTE, T0 + 12);
    raw8(r, 0);
    raw_event(r, TRACE_EV_COLLECT, T0 + 13);
    raw8(r, 0);
    at = r->n;
    raw_event(r, second, T0 + 14);
    raw8(r, 0);
    raw_end(r, p);
    expect_error(r, &(Expect){"after collection", TRACE_ERROR_CORRUPT,
                              second == TRACE_EV_PROMOTE ? "promotion of allocation 0, which was already collected"
                                                         : "collection of allocation 0, which was already collected",
                              4, at});
  }

  // Version 3: two domains' packets declaring the same allocation ids (the
  // tools, which key blocks by id, counted one block where info counted two).
  raw_info(r, 3);
  p = raw_begin(r, 1, T0, 0, 0);
  raw_location(r, 77, 31, 31, "f.ml", "F.g");
  raw_end(r, p);
  for (uint16_t dom = 0; dom < 2; dom++) {
    p = raw_begin(r, 1, T0 + 20, 5, 7);
    memcpy(r->b + p + 38, &dom, 2);
    raw_alloc_miss(r, T0 + 11, 77, 9);
    raw_alloc_miss(r, T0 + 12, 77, 9);
    raw_end(r, p);
  }
  expect_error(r, &(Expect){"v3 ids twice", TRACE_ERROR_CORRUPT,
                            "packet of domain 1 declares allocations 5 to 7, which domain 0's packets already numbered",
                            2, p + 52});
  memcpy(r->b + p + 52, &(uint64_t){7}, 8);  // the next block: fine
  memcpy(r->b + p + 60, &(uint64_t){9}, 8);
  expect_error(r, &(Expect){"v3 ids apart", TRACE_ERROR_NONE, "", 4, 0});
  free(r);
}

// Version 3: domains taking turns, each backtrace changing below, at or
// above what the two share: after each switch, `common` is exactly the
// frames shared with the other domain's last backtrace (the reader keeps it
// per pair of domains and compares only from the first frame that changed).
static void test_domain_switches(void **state) {
  (void)state;
  Raw *r = calloc(1, sizeof *r);
  raw_info(r, 3);
  size_t p = raw_begin(r, 1, T0, 0, 0);
  for (uint64_t code = 1; code <= 7; code++) raw_location(r, code, 31, 31, "f.ml", "g");
  raw_end(r, p);
  static const struct { uint16_t dom; uint8_t prefix, n; uint64_t codes[3]; uint32_t common, len; } steps[] = {
      {0, 0, 3, {1, 2, 3}, 0, 3}, {1, 0, 3, {1, 2, 4}, 2, 3}, {0, 1, 1, {5}, 1, 2},    {1, 3, 0, {0}, 1, 3},
      {0, 1, 3, {2, 4, 6}, 3, 4}, {1, 3, 2, {6, 7}, 4, 5},    {0, 4, 0, {0}, 4, 4},
  };
  uint64_t next_id[2] = {0, 100};
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    uint16_t dom = steps[i].dom;
    p = raw_begin(r, 1, T0 + 20, next_id[dom], next_id[dom] + 1);
    next_id[dom]++;
    memcpy(r->b + p + 38, &dom, 2);
    raw_event(r, TRACE_EV_SHORT_ALLOC + 1, T0 + 10 + i);
    raw8(r, steps[i].prefix);
    raw8(r, steps[i].n);
    for (unsigned k = 0; k < steps[i].n; k++) {
      raw16(r, (uint16_t)(steps[i].codes[k] << 2 | 3));  // a miss into the bucket named by the code
      raw64(r, steps[i].codes[k]);
    }
    raw_end(r, p);
  }
  Events es = read_bytes(r->b, r->n);
  if (es.last != TRACE_READER_END) fail_msg("%s", es.err.message);
  assert_int_equal(es.n, sizeof steps / sizeof steps[0]);
  for (size_t i = 0; i < es.n; i++) {
    assert_int_equal(es.v[i].e.common, steps[i].common);
    assert_int_equal(es.v[i].e.backtrace_len, steps[i].len);
  }
  events_free(&es);
  free(r);
}

// A long allocation (prefix 0) whose backtrace is a miss of code 77 into
// bucket 9, then `runs` hits on bucket 9, which predicts itself, each with
// `n` predicted frames: 1 + runs * (n + 1) frames in 10 + 3 * runs bytes.
static void raw_alloc_runs(Raw *r, uint64_t t, uint32_t runs, uint8_t n) {
  raw_event(r, TRACE_EV_ALLOC, t);
  raw_put(r, "\x01\x01\x00\x00", 4);  // 1 word, 1 sample, minor, prefix 0
  raw16(r, (uint16_t)(1 + runs));
  raw16(r, 9 << 2 | 3);
  raw64(r, 77);
  for (uint32_t i = 0; i < runs; i++) {
    raw16(r, 9 << 2 | 2);
    raw8(r, n);
  }
}

// Backtraces past the reader's old limit of 2^20 frames (issue 23) read
// whole: the limit is format.h's TRACE_MAX_FRAMES now, what a writer writes
// at most; past it a backtrace is cut, not refused
// (tests/unit/test_trace_limits.c).
static void test_frame_limits(void **state) {
  (void)state;
  _Static_assert(TRACE_READER_MAX_FRAMES > 1 << 21, "the runs below pass 2^20 frames, not the limit");
  Raw *r = calloc(1, sizeof *r);
  raw_valid_prefix(r);
  size_t p = raw_begin(r, 1, T0 + 20, 1, 3);
  raw_alloc_runs(r, T0 + 11, 4095, 255);  // 1 + 4095 * 256 = 2^20 - 255 frames
  raw_event(r, TRACE_EV_SHORT_ALLOC + 1, T0 + 12);
  raw_put(r, "\xfe\x01\xff\x0f\x00\x01", 6);  // prefix 2^20 - 255 (i32 form), 1 codeword
  raw16(r, 9 << 2 | 2);
  raw8(r, 255);  // 256 frames more: 2^20 + 1
  raw_end(r, p);
  Events es = read_bytes(r->b, r->n);
  if (es.last != TRACE_READER_END) fail_msg("%s", es.err.message);
  assert_int_equal(es.n, 3);
  assert_int_equal(es.v[2].e.backtrace_len, (1 << 20) + 1);
  assert_false(es.v[2].e.cut);
  events_free(&es);
  // A single event of 4097 runs of 256 frames.
  raw_valid_prefix(r);
  p = raw_begin(r, 1, T0 + 20, 1, 2);
  raw_alloc_runs(r, T0 + 11, 4097, 255);
  raw_end(r, p);
  es = read_bytes(r->b, r->n);
  if (es.last != TRACE_READER_END) fail_msg("%s", es.err.message);
  assert_int_equal(es.v[1].e.backtrace_len, 1 + 4097 * 256);
  events_free(&es);
  free(r);
}

// Version 1's quirk: a new file name, once the table is full, takes over the
// function table of the file it evicts. Code 100's function is code 0 of
// that inherited table: the evicted file's only function.
static void test_v1_location_quirk(void **state) {
  (void)state;
  Raw *r = calloc(1, sizeof *r);
  raw_info(r, 1);
  size_t p = raw_begin(r, 1, T0, 0, 0);
  char file[16], fn[16];
  for (int i = 1; i <= 31; i++) {
    snprintf(file, sizeof file, "f%d.ml", i);
    snprintf(fn, sizeof fn, "g%d", i);
    raw_location(r, (uint64_t)i, 31, 31, file, fn);
  }
  raw_location(r, 100, 31, 0, "new.ml", NULL);
  raw_end(r, p);
  TraceReader *t = trace_reader_open(spit("quirk.ctf", r->b, r->n), NULL);
  assert_non_null(t);
  TraceEvent e;
  assert_int_equal(trace_reader_next(t, &e), TRACE_READER_END);
  const TraceReaderLocation *locs;
  assert_int_equal(trace_reader_locations(t, 100, &locs), 1);
  assert_string_equal(locs[0].file, "new.ml");
  assert_string_equal(locs[0].function, "g1");
  assert_int_equal(trace_reader_locations(t, 7, &locs), 1);
  assert_string_equal(locs[0].function, "g7");
  trace_reader_close(t);
  free(r);
}

// ================================================================ damage

// Cutting the trace anywhere gives the events of the packets before the cut
// and then: the end (at a packet boundary), or a truncation error naming
// the start of the cut packet.
static void check_cuts(const char *fixture, size_t stride) {
  TestBytes t = test_slurp(fixture);
  Events full = read_events(fixture);
  uint64_t ends[4096];
  size_t n_ends = packet_ends(&t, ends, 4096);
  for (size_t cut = 0; cut <= t.n; cut += stride) {
    Events part = read_bytes(t.b, cut);
    size_t want = events_before(&full, ends, n_ends, cut);
    bool boundary = false;
    for (size_t i = 0; i < n_ends; i++) boundary |= ends[i] == cut;
    if (cut < ends[0]) {
      assert_false(part.opened);
      assert_int_equal(part.err.kind, TRACE_ERROR_TRUNCATED);
    } else if (boundary) {
      assert_int_equal(part.last, TRACE_READER_END);
    } else {
      assert_int_equal(part.last, TRACE_READER_ERROR);
      if (part.err.kind != TRACE_ERROR_TRUNCATED) fail_msg("cut at %zu: %s", cut, part.err.message);
    }
    assert_int_equal(part.n, want);
    assert_prefix(&part, &full, want);
    events_free(&part);
  }
  // Every packet boundary, and the bytes around it.
  for (size_t i = 0; i < n_ends; i++)
    for (size_t d = 0; d < 3; d++) {
      if (ends[i] < d) continue;
      Events part = read_bytes(t.b, ends[i] - d);
      assert_int_equal(part.n, events_before(&full, ends, n_ends, ends[i] - d));
      assert_prefix(&part, &full, part.n);
      events_free(&part);
    }
  events_free(&full);
  free(t.b);
}

static void test_truncation(void **state) {
  (void)state;
  check_cuts(FIXTURES "bintrees-1e-5.ctf", 1);  // every byte
  check_cuts(FIXTURES "hashtbl_str-1e-4.ctf", 53);
  check_cuts(FIXTURES "listmap-1e-6.ctf", 97);
  check_cuts(FIXTURES "bintrees-1e-5.v3.ctf", 41);
}

// Damaging byte i (with each of `masks`) leaves the events of the packets
// that end before i unchanged; the reader stops or goes on, never crashes.
static void check_flips(const char *fixture, size_t stride, const uint8_t *masks, size_t n_masks) {
  TestBytes t = test_slurp(fixture);
  Events full = read_events(fixture);
  uint64_t ends[4096];
  size_t n_ends = packet_ends(&t, ends, 4096);
  size_t errors = 0;
  for (size_t i = 0; i < t.n; i += stride)
    for (size_t k = 0; k < n_masks; k++) {
      size_t want = events_before(&full, ends, n_ends, i);
      t.b[i] ^= masks[k];
      keep_events = want;
      Events part = read_bytes(t.b, t.n);
      keep_events = SIZE_MAX;
      t.b[i] ^= masks[k];
      assert_prefix(&part, &full, want);
      errors += part.last == TRACE_READER_ERROR;
      if (part.last == TRACE_READER_ERROR && part.err.offset > t.n) fail_msg("offset past the file");
      events_free(&part);
    }
  assert_true(errors > 0);
  events_free(&full);
  free(t.b);
}

static void test_flipped_bytes(void **state) {
  (void)state;
  static const uint8_t masks[] = {0xFF, 0x01, 0x80, 0x10};
  check_flips(FIXTURES "bintrees-1e-5.ctf", 5, masks, 4);
  check_flips(FIXTURES "listmap-1e-6.ctf", 151, masks, 1);
  check_flips(FIXTURES "hashtbl_str-1e-4.ctf", 71, masks, 4);
}

// Random bytes, alone and after a valid trace-info packet or packet header.
static void test_garbage(void **state) {
  (void)state;
  TestBytes t = test_slurp(FIXTURES "bintrees-1e-5.ctf");
  uint64_t ends[8];
  packet_ends(&t, ends, 8);
  uint8_t *b = malloc(40000);
  uint64_t rng = 12345;
  for (int round = 0; round < 600; round++) {
    size_t keep = round % 3 == 0 ? 0 : round % 3 == 1 ? ends[0] : ends[0] + 66;
    size_t n = keep + (size_t)(round * 53 % 33000);
    memcpy(b, t.b, keep);
    for (size_t i = keep; i < n; i++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      b[i] = (uint8_t)rng;
    }
    Events es = read_bytes(b, n);
    assert_true(es.last == TRACE_READER_ERROR || es.last == TRACE_READER_END);
    if (keep == 0 && n > 0) assert_false(es.opened);
    events_free(&es);
  }
  free(b);
  free(t.b);
}

// ================================================================ follow mode

// A writer appends the trace in random pieces; a following reader returns
// every event exactly once, never an error, and ends where the file ends.
static void test_follow(void **state) {
  (void)state;
  TestBytes t = test_slurp(FIXTURES "hashtbl_str-1e-4.ctf");
  Events full = read_events(FIXTURES "hashtbl_str-1e-4.ctf");
  uint64_t ends[8];
  packet_ends(&t, ends, 8);
  const char *path = tmp_path("growing.ctf");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_int_equal(write(fd, t.b, ends[0]), (ssize_t)ends[0]);
  TraceReader *r = trace_reader_open(path, NULL);
  assert_non_null(r);
  trace_reader_follow(r, true);
  Events got = {0};
  size_t written = ends[0];
  uint64_t rng = 77;
  TraceEvent e;
  while (written < t.n) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    size_t n = 1 + rng % 3000;
    if (n > t.n - written) n = t.n - written;
    assert_int_equal(write(fd, t.b + written, n), (ssize_t)n);
    written += n;
    TraceReaderStatus s;
    while ((s = trace_reader_next(r, &e)) == TRACE_READER_EVENT) events_add(&got, &e);
    assert_int_equal(s, TRACE_READER_END);
  }
  events_seal(&got);
  assert_int_equal(got.n, full.n);
  assert_prefix(&got, &full, full.n);
  trace_reader_close(r);
  close(fd);

  // Without follow: an incomplete last packet is an error, a complete one
  // the end, after which the reader reads on if the file grew.
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_int_equal(write(fd, t.b, ends[1]), (ssize_t)ends[1]);
  r = trace_reader_open(path, NULL);
  while (trace_reader_next(r, &e) == TRACE_READER_EVENT) {}
  assert_int_equal(trace_reader_next(r, &e), TRACE_READER_END);
  assert_int_equal(write(fd, t.b + ends[1], 100), 100);
  assert_int_equal(trace_reader_next(r, &e), TRACE_READER_ERROR);
  assert_int_equal(trace_reader_error(r)->kind, TRACE_ERROR_TRUNCATED);
  assert_int_equal(trace_reader_error(r)->offset, ends[1]);
  trace_reader_close(r);
  close(fd);
  events_free(&got);
  events_free(&full);
  free(t.b);
}

// A file opened small gets a buffer of its size + 64 KiB; one that grows
// past that while followed gets the large buffer (and its unread bytes).
static void test_follow_grows(void **state) {
  (void)state;
  const char *full_path = tmp_path("big.ctf");
  int fd = open(full_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  MiniEncoderOptions o = {.version = 2, .pid = 3, .start_us = 1000, .rate = 1e-4};
  MiniEncoder *enc = menc_open(fd, &o);
  Model *m = calloc(1, sizeof *m);
  m->rng = 42;
  m->time = 1000;
  for (int i = 0; i < 40000; i++) model_step(m, enc, 300, 1, 40);
  assert_true(menc_close(enc));
  close(fd);
  TestBytes t = test_slurp(full_path);
  assert_true(t.n > 300000);
  Events full = read_events(full_path);
  uint64_t ends[2];
  packet_ends(&t, ends, 2);
  const char *path = tmp_path("growing-big.ctf");
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_int_equal(write(fd, t.b, ends[0]), (ssize_t)ends[0]);
  TraceReader *r = trace_reader_open(path, NULL);
  trace_reader_follow(r, true);
  Events got = {0};
  TraceEvent e;
  for (size_t written = ends[0]; written < t.n;) {
    size_t n = t.n - written < 40000 ? t.n - written : 40000;
    assert_int_equal(write(fd, t.b + written, n), (ssize_t)n);
    written += n;
    while (trace_reader_next(r, &e) == TRACE_READER_EVENT) events_add(&got, &e);
    assert_int_equal(trace_reader_error(r)->kind, TRACE_ERROR_NONE);
  }
  events_seal(&got);
  assert_int_equal(got.n, full.n);
  assert_prefix(&got, &full, full.n);
  trace_reader_close(r);
  close(fd);
  events_free(&got);
  events_free(&full);
  events_free(&m->expect);
  free(m);
  free(t.b);
}

// Reading from a pipe (no seeking, short reads).
static void test_pipe(void **state) {
  (void)state;
  TestBytes t = test_slurp(FIXTURES "bintrees-1e-5.ctf");
  Events full = read_events(FIXTURES "bintrees-1e-5.ctf");
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    for (size_t off = 0; off < t.n; off += 777) {
      size_t n = t.n - off < 777 ? t.n - off : 777;
      if (write(fds[1], t.b + off, n) != (ssize_t)n) _exit(1);
      usleep(100);
    }
    _exit(0);
  }
  close(fds[1]);
  TraceReader *r = trace_reader_open_fd(fds[0], NULL);
  assert_non_null(r);
  TraceEvent e;
  size_t n = 0;
  while (trace_reader_next(r, &e) == TRACE_READER_EVENT) {
    assert_true(same_event(&e, &full.v[n].e, true));
    n++;
  }
  assert_int_equal(n, full.n);
  assert_int_equal(trace_reader_error(r)->kind, TRACE_ERROR_NONE);
  trace_reader_close(r);
  waitpid(child, NULL, 0);
  events_free(&full);
  free(t.b);
}

static void test_open_errors(void **state) {
  (void)state;
  TraceReaderError err;
  assert_null(trace_reader_open("/nonexistent/trace.ctf", &err));
  assert_int_equal(err.kind, TRACE_ERROR_IO);
  assert_non_null(strstr(err.message, "No such file"));
  assert_null(trace_reader_open("/", &err));  // a directory: read fails
  assert_int_equal(err.kind, TRACE_ERROR_IO);
  assert_non_null(strstr(err.message, "read failed"));
}

// An argument runs only the tests whose names match it (cmocka's filter).
int main(int argc, char **argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures_decode),   cmocka_unit_test(test_fixture_v3_same_events),
      cmocka_unit_test(test_fixture_locations), cmocka_unit_test(test_roundtrip_versions),
      cmocka_unit_test(test_roundtrip_deep),    cmocka_unit_test(test_cut_backtrace),
      cmocka_unit_test(test_domains),           cmocka_unit_test(test_other_pid),
      cmocka_unit_test(test_error_header),      cmocka_unit_test(test_error_info),
      cmocka_unit_test(test_error_events),      cmocka_unit_test(test_error_backtraces),
      cmocka_unit_test(test_error_locations),   cmocka_unit_test(test_v1_location_quirk),
      cmocka_unit_test(test_truncation),        cmocka_unit_test(test_flipped_bytes),
      cmocka_unit_test(test_garbage),           cmocka_unit_test(test_follow),
      cmocka_unit_test(test_follow_grows),      cmocka_unit_test(test_pipe),
      cmocka_unit_test(test_open_errors),        cmocka_unit_test(test_error_bounds),
      cmocka_unit_test(test_frame_limits),       cmocka_unit_test(test_domain_switches),
      cmocka_unit_test(test_done),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  if (tmp_dir[0]) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_dir);
  }
  return failed;
}
