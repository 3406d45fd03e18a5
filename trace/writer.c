// writer.c - the memtrace trace encoder (writer.h). Byte layouts are in
// trace/format.h and docs/trace-format.md; what follows is how the writer
// produces them and which of memtrace's choices it reproduces.
//
// 1. Packets. The first packet holds the trace-info event only. Events then
//    go into one event packet buffer (w->packet, TRACE_MAX_PACKET bytes)
//    whose header is written when the packet opens (it carries the cache
//    check of that moment) and completed when it is flushed. Each packet
//    goes out in one write(2), retried on EINTR and short writes.
// 2. Flush rules (memtrace's, checked before each event): less than
//    MAX_EVENT_BYTES of room left, more than 128 new locations waiting, the
//    event more than 30 s after the packet's first time, or (version 3) the
//    id chunk exhausted (memtrace 3 numbers allocations in chunks of 10,000
//    and starts a packet with each chunk). Also on trace_writer_flush and at
//    the end. A flush writes the waiting location packets first, then the
//    event packet, even an empty one, as memtrace does.
// 3. Locations. A frame code is resolved (TraceLocate) and its location
//    event encoded the first time it is written in a cache-miss codeword;
//    `seen` remembers every code resolved so that this happens once per run
//    (memtrace writes a location again when a code misses again, as
//    trace_writer_relog_locations makes this writer do for tests; readers
//    accept both). Location events are encoded at once, with the name tables'
//    state of that moment, into location packets kept in `locs` until the
//    flush that writes them just before the event packet that needs them.
//    Their headers take the event packet's first time and id.
// 4. Backtraces. trace_writer_alloc keeps a copy of the previous callstack
//    (prev_stack) and finds the common prefix by comparing from the caller's
//    known_common onwards; only the frames past it are copied.
//    trace_writer_alloc_common takes the prefix from a caller that keeps the
//    previous callstack itself, and copies nothing. The prefix is
//    capped at reader_depth, the frames the reader holds from the previous
//    backtrace (fewer than its depth when the 4,096-byte cap cut it), so
//    that a reader never has to invent frames. A callstack deeper than
//    TRACE_MAX_FRAMES is taken as its outermost TRACE_MAX_FRAMES frames
//    (format.h part 3: what every reader holds whole). The rest is coded against a
//    16,384-bucket cache, two-way skewed: see encode_backtrace.
// 5. The cache holds each code plus one (cache_key): an empty bucket is 0,
//    as the writer's calloc leaves it (no 128 KiB fill per trace), and a
//    frame code 0 still misses like any other (memtrace's empty buckets hold
//    0 itself). The cache check writes an empty bucket as 0, the reader's
//    initial value. For codes other than 0 the choices are memtrace's, so
//    the bytes are too.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "writer.h"

enum {
  LOC_MAX_BYTES = TRACE_MAX_LOCATION_BYTES,  // a location event's payload, at most (else "unknown")
  LOC_MAX_CHAIN = TRACE_MAX_LOCATIONS,       // locations per code, at most (else "unknown")
  MAX_EVENT_BYTES = 100 + 4096,    // an event's fields (< 100) and backtrace (<= 4096)
  BACKTRACE_SLACK = 2 + 8,         // the largest codeword: a miss
  MAX_NEW_LOCATIONS = 128,         // more waiting: flush
  ID_CHUNK = 10000,                // version 3: allocations per id chunk
  SEEN_INITIAL = 1024,             // slots of the seen-code set (a power of two)
};

// What a bucket holding `code` stores (part 5); 0: empty.
static inline uint64_t cache_key(uint64_t code) { return code + 1; }
static const uint64_t SEEN_EMPTY = UINT64_MAX;
static const uint32_t TIME_MASK = (1u << TRACE_TIME_BITS) - 1;

// A move-to-front table of names: names[0] is the most recent; the used
// entries come first, NULL after them. In the file table, inner[i] is the
// function table of file names[i]; function tables have no inner tables.
typedef struct NameTable {
  char *names[TRACE_MTF_ENTRIES];
  struct NameTable *inner[TRACE_MTF_ENTRIES];
} NameTable;

struct TraceWriter {
  // ---- the event packet in progress
  uint32_t pos;                    // bytes used in packet, header included
  uint32_t header_size;            // TRACE_HEADER_V2 or _V3
  uint64_t packet_time_start;      // its first time; packet_time_end its last
  uint64_t packet_time_end;
  // Part 2's rules as two bounds, so that an event tests them in three
  // compares: an event at a time past packet_time_limit (the first time plus
  // TRACE_PACKET_MAX_SPAN_US), or from a position past flush_pos (room for
  // MAX_EVENT_BYTES; 0 while more than MAX_NEW_LOCATIONS wait), flushes first.
  uint64_t packet_time_limit;
  uint32_t flush_pos;
  uint64_t start_alloc_id;         // id of its first allocation
  uint64_t next_alloc_id;          // id of the next allocation
  uint64_t id_chunk_end;           // version 3: flush when next_alloc_id gets here
  uint64_t packet_backtrace_bytes; // codeword bytes in the packet (stats)
  bool failed;
  bool relog;                      // a location event at every miss (memtrace's way)

  // ---- the previous callstack
  uint64_t *prev_stack;            // outermost first, prev_depth frames valid
  uint32_t prev_depth, prev_cap;
  uint32_t reader_depth;           // frames of it a reader holds: <= prev_depth

  // ---- locations waiting for the next flush
  uint8_t *locs;                   // complete location packets, the last one open
  size_t locs_len, locs_cap;
  size_t locs_open;                // offset of the open packet; SIZE_MAX: none
  uint32_t new_locations;          // location events in `locs`
  uint64_t locs_event_bytes;       // their bytes (stats)

  // ---- codes already resolved: open addressing, linear probing
  uint64_t *seen;
  size_t seen_cap, seen_count;     // seen_count * 2 <= seen_cap

  NameTable files;
  TraceLocate locate;
  void *locate_data;
  int fd;
  bool close_fd;
  uint16_t version;
  uint64_t pid;
  uint32_t verify_ix;              // bucket the next cache check reports
  TraceWriterStats stats;
  char error[256];

  TraceLocation scratch[LOC_MAX_CHAIN + 1];

  // ---- the backtrace cache: code + 1 (part 5), date (allocation id of its last use) and
  // successor (the bucket that followed it last time) of each bucket
  uint64_t cache_code[TRACE_CACHE_BUCKETS];
  uint64_t cache_date[TRACE_CACHE_BUCKETS];
  uint16_t cache_next[TRACE_CACHE_BUCKETS];

  uint8_t packet[TRACE_MAX_PACKET];
};

// ================================================================ bytes

static inline uint8_t *put8(uint8_t *p, uint8_t v) {
  *p = v;
  return p + 1;
}

static inline uint8_t *put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  return p + 2;
}

static inline uint8_t *put32(uint8_t *p, uint32_t v) {
  put16(p, (uint16_t)v);
  put16(p + 2, (uint16_t)(v >> 16));
  return p + 4;
}

static inline uint8_t *put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
  return p + 8;
}

static inline uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// memtrace's vint: 0..252 in one byte; then 253 + u16, 254 + u32 for what
// fits a signed 32-bit int, 255 + u64.
static uint8_t *put_vint_big(uint8_t *p, uint64_t v) {
  if (v <= 0xFFFF) return put16(put8(p, 253), (uint16_t)v);
  if (v <= INT32_MAX) return put32(put8(p, 254), (uint32_t)v);
  return put64(put8(p, 255), v);
}

static inline uint8_t *put_vint(uint8_t *p, uint64_t v) {
  return v <= 252 ? put8(p, (uint8_t)v) : put_vint_big(p, v);
}

// Copies at most `max` bytes of s, then a NUL.
static uint8_t *put_string(uint8_t *p, const char *s, size_t max) {
  size_t len = strnlen(s ? s : "", max);
  memcpy(p, s ? s : "", len);
  p[len] = 0;
  return p + len + 1;
}

// ================================================================ errors and writes

static void fail(TraceWriter *w, const char *fmt, ...) {
  if (w->failed) return;
  w->failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->error, sizeof w->error, fmt, ap);
  va_end(ap);
}

// A trace written to a pipe whose reader has gone gets EPIPE, and one past
// the file size limit EFBIG: errors that stop the writer, not SIGPIPE or
// SIGXFSZ, which would end the traced program. Both signals are blocked
// around the write and, if the write raised one, it is taken off the pending
// set before they are unblocked, whatever the write returned (a reader that
// leaves during a write gets a short count and a SIGPIPE). The program's own
// writes (stdout) keep the signals' usual dispositions.
static const int QUIET_SIGNALS[] = {SIGPIPE, SIGXFSZ};

static ssize_t write_quietly(int fd, const uint8_t *buf, size_t len) {
  enum { N_QUIET = sizeof QUIET_SIGNALS / sizeof QUIET_SIGNALS[0] };
  sigset_t quiet, old, was_pending, pending;
  sigemptyset(&quiet);
  for (int i = 0; i < N_QUIET; i++) sigaddset(&quiet, QUIET_SIGNALS[i]);
  bool blocked = pthread_sigmask(SIG_BLOCK, &quiet, &old) == 0;
  sigemptyset(&was_pending);
  if (blocked) sigpending(&was_pending);
  ssize_t n = write(fd, buf, len);
  int saved = errno;
  if (blocked) {
    if (sigpending(&pending) == 0) {
      for (int i = 0; i < N_QUIET; i++) {
        int sig = QUIET_SIGNALS[i];
        if (sigismember(&was_pending, sig) || !sigismember(&pending, sig)) continue;
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        struct timespec zero = {0, 0};
        while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR) {}
      }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  errno = saved;
  return n;
}

static bool write_all(TraceWriter *w, const uint8_t *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write_quietly(w->fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fail(w, "writing the trace: %s", n < 0 ? strerror(errno) : "write returned 0");
      return false;
    }
    buf += n;
    len -= (size_t)n;
  }
  return true;
}

// One complete packet of `len` bytes, counted in the stats once written.
static bool write_packet(TraceWriter *w, const uint8_t *buf, size_t len) {
  if (!write_all(w, buf, len)) return false;
  w->stats.bytes += len;
  w->stats.header_bytes += w->header_size;
  w->stats.packets++;
  return true;
}

// ================================================================ packet headers

// Writes a packet header at p: times and ids both set to (time, id), the
// size left 0 (finish_header sets them). `verify`: the cache check of this
// moment, advancing the checked bucket; otherwise the "no check" fields.
static uint8_t *put_header(TraceWriter *w, uint8_t *p, uint64_t time, uint64_t id, bool verify) {
  p = put32(p, TRACE_MAGIC);
  p = put32(p, 0);
  p = put64(p, time);
  p = put64(p, time);
  p = put32(p, 0);
  p = put16(p, w->version);
  p = put64(p, w->pid);
  if (w->version >= 3) p = put16(p, 0);  // domain
  if (verify) {
    uint32_t ix = w->verify_ix;
    w->verify_ix = (ix + TRACE_CACHE_CHECK_STEP) & (TRACE_CACHE_BUCKETS - 1);
    uint64_t key = w->cache_code[ix];
    p = put16(p, (uint16_t)ix);
    p = put16(p, w->cache_next[ix]);
    p = put64(p, key == 0 ? 0 : key - 1);
  } else {
    p = put16(p, TRACE_CACHE_CHECK_NONE);
    p = put16(p, 0);
    p = put64(p, 0);
  }
  p = put64(p, id);
  return put64(p, id);
}

static void finish_header(const TraceWriter *w, uint8_t *packet, size_t len,
                          uint64_t time_end, uint64_t id_end) {
  put32(packet + 4, (uint32_t)(len * 8));
  put64(packet + 16, time_end);
  put64(packet + w->header_size - 8, id_end);
}

// ================================================================ name tables

static void names_free(NameTable *t) {
  for (int i = 0; i < TRACE_MTF_ENTRIES; i++) {
    free(t->names[i]);
    if (t->inner[i]) names_free(t->inner[i]);
    free(t->inner[i]);
  }
}

// The position of `name` in t, moved to the front; TRACE_MTF_ENTRIES if absent.
static uint32_t names_find(NameTable *t, const char *name) {
  for (uint32_t i = 0; i < TRACE_MTF_ENTRIES && t->names[i]; i++) {
    if (strcmp(t->names[i], name) != 0) continue;
    char *found = t->names[i];
    NameTable *inner = t->inner[i];
    memmove(t->names + 1, t->names, i * sizeof *t->names);
    memmove(t->inner + 1, t->inner, i * sizeof *t->inner);
    t->names[0] = found;
    t->inner[0] = inner;
    return i;
  }
  return TRACE_MTF_ENTRIES;
}

// Pushes a copy of `name` at the front (the last entry drops out).
static bool names_push(TraceWriter *w, NameTable *t, const char *name, bool with_inner) {
  char *copy = strdup(name);
  NameTable *inner = with_inner ? calloc(1, sizeof *inner) : NULL;
  if (!copy || (with_inner && !inner)) {
    free(copy);
    free(inner);
    fail(w, "trace writer: out of memory");
    return false;
  }
  const int last = TRACE_MTF_ENTRIES - 1;
  free(t->names[last]);
  if (t->inner[last]) names_free(t->inner[last]);
  free(t->inner[last]);
  memmove(t->names + 1, t->names, last * sizeof *t->names);
  memmove(t->inner + 1, t->inner, last * sizeof *t->inner);
  t->names[0] = copy;
  t->inner[0] = inner;
  return true;
}

// ================================================================ location events

static const char *file_or_unknown(const TraceLocation *l) { return l->file ? l->file : "<unknown>"; }
static const char *function_or_unknown(const TraceLocation *l) { return l->function ? l->function : "??"; }

static uint32_t clamp(uint32_t v, uint32_t max) { return v > max ? max : v; }

// The payload bound memtrace checks: code, count, and per location its 6
// bytes and both names in full.
static size_t location_bound(const TraceLocation *locs, uint32_t n) {
  size_t bound = 8 + 1;
  for (uint32_t i = 0; i < n; i++)
    bound += 6 + strlen(file_or_unknown(&locs[i])) + 1 + strlen(function_or_unknown(&locs[i])) + 1;
  return bound;
}

// One location, names move-to-front coded. NULL if out of memory.
static uint8_t *put_location(TraceWriter *w, uint8_t *p, const TraceLocation *l) {
  const char *file = file_or_unknown(l), *function = function_or_unknown(l);
  uint32_t file_code = names_find(&w->files, file);
  if (file_code == TRACE_MTF_ENTRIES && !names_push(w, &w->files, file, true)) return NULL;
  NameTable *functions = w->files.inner[0];
  uint32_t function_code = names_find(functions, function);
  if (function_code == TRACE_MTF_ENTRIES && !names_push(w, functions, function, false)) return NULL;
  uint64_t bits = (uint64_t)clamp(l->line, TRACE_LOC_LINE_MAX)
                | (uint64_t)clamp(l->start_col, TRACE_LOC_START_MAX) << 20
                | (uint64_t)clamp(l->end_col, TRACE_LOC_END_MAX) << 28
                | (uint64_t)file_code << 38 | (uint64_t)function_code << 43;
  p = put16(put32(p, (uint32_t)bits), (uint16_t)(bits >> 32));
  if (file_code == TRACE_MTF_ENTRIES) p = put_string(p, file, SIZE_MAX);
  if (function_code == TRACE_MTF_ENTRIES) p = put_string(p, function, SIZE_MAX);
  return p;
}

// A location event for `code` at p (room for 4 + LOC_MAX_BYTES bytes).
static uint8_t *put_location_event(TraceWriter *w, uint8_t *p, uint64_t code) {
  uint32_t n = w->locate ? w->locate(w->locate_data, code, w->scratch, LOC_MAX_CHAIN + 1) : 0;
  const TraceLocation *locs = w->scratch;
  static const TraceLocation unknown = {"??", "<unknown>", 1, 1, 1};
  if (n > LOC_MAX_CHAIN || location_bound(locs, n) > LOC_MAX_BYTES) {
    locs = &unknown;
    n = 1;
  }
  p = put32(p, (uint32_t)TRACE_EV_LOCATION << TRACE_TIME_BITS | (uint32_t)(w->packet_time_start & TIME_MASK));
  p = put8(put64(p, code), (uint8_t)n);
  for (uint32_t i = 0; i < n && p; i++) p = put_location(w, p, &locs[i]);
  return p;
}

static bool locs_reserve(TraceWriter *w, size_t extra) {
  if (w->locs_len + extra <= w->locs_cap) return true;
  size_t cap = w->locs_cap ? w->locs_cap : 2 * TRACE_MAX_PACKET;
  while (cap < w->locs_len + extra) cap *= 2;
  uint8_t *grown = realloc(w->locs, cap);
  if (!grown) {
    fail(w, "trace writer: out of memory");
    return false;
  }
  w->locs = grown;
  w->locs_cap = cap;
  return true;
}

static void locs_close_packet(TraceWriter *w, size_t end) {
  if (w->locs_open == SIZE_MAX) return;
  finish_header(w, w->locs + w->locs_open, end - w->locs_open, w->packet_time_start, w->start_alloc_id);
  w->locs_open = SIZE_MAX;
}

static void locs_open_packet(TraceWriter *w, size_t at) {
  w->locs_open = at;
  put_header(w, w->locs + at, w->packet_time_start, w->start_alloc_id, false);
}

// Encodes code's location event into the waiting location packets. As
// memtrace, a packet takes another event while more than LOC_MAX_BYTES
// bytes remain; an event that still does not fit starts the next packet.
static void log_location(TraceWriter *w, uint64_t code) {
  const size_t hs = w->header_size;
  if (!locs_reserve(w, 2 * hs + 4 + LOC_MAX_BYTES)) return;
  if (w->locs_open == SIZE_MAX || w->locs_open + TRACE_MAX_PACKET - w->locs_len <= LOC_MAX_BYTES) {
    locs_close_packet(w, w->locs_len);
    locs_open_packet(w, w->locs_len);
    w->locs_len += hs;
  }
  size_t start = w->locs_len;
  uint8_t *end = put_location_event(w, w->locs + start, code);
  if (!end) return;
  size_t len = (size_t)(end - (w->locs + start));
  if (start + len - w->locs_open > TRACE_MAX_PACKET) {
    locs_close_packet(w, start);
    memmove(w->locs + start + hs, w->locs + start, len);
    locs_open_packet(w, start);
    start += hs;
  }
  w->locs_len = start + len;
  w->locs_event_bytes += len;
  if (++w->new_locations > MAX_NEW_LOCATIONS) w->flush_pos = 0;
}

// Writes the waiting location packets, one write each.
static bool write_locations(TraceWriter *w) {
  locs_close_packet(w, w->locs_len);
  for (size_t off = 0; off < w->locs_len;) {
    size_t len = get32(w->locs + off + 4) / 8;
    if (!write_packet(w, w->locs + off, len)) return false;
    off += len;
  }
  w->stats.location_bytes += w->locs_event_bytes;
  w->locs_len = 0;
  w->locs_event_bytes = 0;
  w->new_locations = 0;
  w->flush_pos = TRACE_MAX_PACKET - MAX_EVENT_BYTES;
  return true;
}

// ================================================================ seen codes

static inline size_t seen_slot(uint64_t code, size_t cap) {
  return (size_t)((code * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static bool seen_grow(TraceWriter *w) {
  size_t cap = w->seen_cap ? 2 * w->seen_cap : SEEN_INITIAL;
  uint64_t *slots = malloc(cap * sizeof *slots);
  if (!slots) {
    fail(w, "trace writer: out of memory");
    return false;
  }
  memset(slots, 0xFF, cap * sizeof *slots);
  for (size_t i = 0; i < w->seen_cap; i++) {
    uint64_t code = w->seen[i];
    if (code == SEEN_EMPTY) continue;
    size_t s = seen_slot(code, cap);
    while (slots[s] != SEEN_EMPTY) s = (s + 1) & (cap - 1);
    slots[s] = code;
  }
  free(w->seen);
  w->seen = slots;
  w->seen_cap = cap;
  return true;
}

// Adds code; true if it was not there yet.
static bool seen_add(TraceWriter *w, uint64_t code) {
  if ((w->seen_count + 1) * 2 > w->seen_cap && !seen_grow(w)) return false;
  size_t s = seen_slot(code, w->seen_cap);
  for (; w->seen[s] != SEEN_EMPTY; s = (s + 1) & (w->seen_cap - 1))
    if (w->seen[s] == code) return false;
  w->seen[s] = code;
  w->seen_count++;
  return true;
}

static __attribute__((noinline)) void frame_missed(TraceWriter *w, uint64_t code) {
  if (seen_add(w, code) || w->relog) log_location(w, code);
}

// ================================================================ backtraces

static inline uint8_t *put_hit(uint8_t *p, uint32_t bucket, uint32_t predicted) {
  uint16_t word = (uint16_t)(bucket << 2);
  if (predicted == 0) return put16(p, word);
  if (predicted == 1) return put16(p, word | 1);
  return put8(put16(p, word | 2), (uint8_t)predicted);
}

// The frames to code, outermost first: frames [k, n) of a flat array
// (`flat`), or of a stack given as runs (`r` the run holding frame k; runs
// are maximal: the frame after a run differs). The walker below is inlined
// with `runs` a constant, so each form is its own loop.
typedef struct Frames {
  const uint64_t *flat;
  const TraceRun *r;
  uint32_t k, n;
} Frames;

static inline __attribute__((always_inline)) uint64_t frame_code(const Frames *f, bool runs) {
  return runs ? f->r->code : f->flat[f->k];
}

static inline __attribute__((always_inline)) void frame_step(Frames *f, bool runs) {
  if (!runs) f->k++;
  else if (++f->k == f->r->end) f->r++;
}

// Takes the frames from k on equal to `code`, at most `max`: the rest of a
// recursion's run (flat: four frames a step; runs: at once). Returns how many.
static inline __attribute__((always_inline)) uint32_t take_same(Frames *f, bool runs, uint64_t code, uint32_t max) {
  if (f->k >= f->n) return 0;
  if (runs) {
    if (f->r->code != code) return 0;
    uint32_t stop = f->r->end < f->n ? f->r->end : f->n;  // a stack cut at TRACE_MAX_FRAMES ends inside its run
    uint32_t left = stop - f->k, taken = left < max ? left : max;
    f->k += taken;
    if (f->k == f->r->end) f->r++;
    return taken;
  }
  const uint64_t *frames = f->flat + f->k;
  uint32_t left = f->n - f->k, end = left < max ? left : max, i = 0;
  while (i + 4 <= end && ((frames[i] ^ code) | (frames[i + 1] ^ code) | (frames[i + 2] ^ code) | (frames[i + 3] ^ code)) == 0)
    i += 4;
  while (i < end && frames[i] == code) i++;
  f->k += i;
  return i;
}

// Codes the frames of `f` at p as memtrace does, stopping once the
// codewords pass TRACE_BACKTRACE_MAX_BYTES - BACKTRACE_SLACK bytes (so at
// most TRACE_BACKTRACE_MAX_BYTES). `predictor` is the bucket coded last (0
// at the start); each hit or miss becomes its successor. After a hit, the
// frames that follow the successor chain are counted, not coded (at most
// TRACE_MAX_PREDICTED per codeword). A miss takes the bucket of the two
// used longest ago (the second on a tie). Sets *codewords and *covered (the
// frames coded, predicted ones included); returns the end.
static inline __attribute__((always_inline)) uint8_t *
encode_backtrace(TraceWriter *w, uint8_t *p, Frames f, bool runs, uint64_t date, uint32_t *codewords,
                 uint32_t *covered) {
  uint8_t *const limit = p + TRACE_BACKTRACE_MAX_BYTES - BACKTRACE_SLACK;
  uint64_t *code_of = w->cache_code, *date_of = w->cache_date;
  uint16_t *next_of = w->cache_next;
  uint32_t predictor = 0, words = 0, from = f.k;
  while (f.k < f.n && p <= limit) {
    uint64_t code = frame_code(&f, runs), key = cache_key(code);
    uint32_t b1 = trace_bucket1(code), b2 = trace_bucket2(code), hit;
    if (code_of[b1] == key) {
      hit = b1;
    } else if (code_of[b2] == key) {
      hit = b2;
    } else {
      frame_missed(w, code);
      uint32_t bucket = date_of[b1] < date_of[b2] ? b1 : b2;
      code_of[bucket] = key;
      date_of[bucket] = date;
      next_of[predictor] = (uint16_t)bucket;
      p = put64(put16(p, (uint16_t)(bucket << 2 | 3)), code);
      predictor = bucket;
      frame_step(&f, runs);
      words++;
      continue;
    }
    for (;;) {  // a hit on `hit`, then the frames its successors predict
      date_of[hit] = date;
      next_of[predictor] = (uint16_t)hit;
      frame_step(&f, runs);
      words++;
      uint32_t at = hit, predicted = 0;
      bool full = false;
      if (p + 2 > limit) {
        // no room for a prediction count
      } else if (next_of[hit] == hit) {  // a recursion: the frame predicts itself
        uint64_t same = code_of[hit] - 1;
        predicted = take_same(&f, runs, same, TRACE_MAX_PREDICTED);
        full = predicted == TRACE_MAX_PREDICTED && f.k < f.n && frame_code(&f, runs) == same;
      } else {
        while (f.k < f.n && code_of[next_of[at]] == cache_key(frame_code(&f, runs))) {
          if (predicted == TRACE_MAX_PREDICTED) {
            full = true;
            break;
          }
          at = next_of[at];
          predicted++;
          frame_step(&f, runs);
        }
      }
      p = put_hit(p, hit, predicted);
      predictor = at;
      if (!full) break;
      hit = next_of[at];  // a new codeword for the frame that did not fit
    }
  }
  *codewords = words;
  *covered = f.k - from;
  return p;
}

// encode_backtrace over frames [common, depth) of a stack given as runs.
static __attribute__((noinline)) uint8_t *encode_runs(TraceWriter *w, uint8_t *p, const TraceRun *runs,
                                                      uint32_t run_count, uint32_t common, uint32_t depth,
                                                      uint64_t date, uint32_t *codewords, uint32_t *covered) {
  // The run holding frame `common`: the first whose end is past it.
  uint32_t lo = 0, hi = run_count - 1;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (runs[mid].end > common) hi = mid;
    else lo = mid + 1;
  }
  return encode_backtrace(w, p, (Frames){NULL, runs + lo, common, depth}, true, date, codewords, covered);
}

// The common prefix of stack and prev_stack, searched from `known` on; then
// prev_stack becomes stack (only the frames past the prefix are copied).
static uint32_t take_stack(TraceWriter *w, const uint64_t *stack, uint32_t depth, uint32_t known) {
  uint32_t both = depth < w->prev_depth ? depth : w->prev_depth;
  uint32_t common = known < both ? known : both;
  while (common < both && stack[common] == w->prev_stack[common]) common++;
  if (depth > w->prev_cap) {
    uint32_t cap = w->prev_cap ? w->prev_cap : 64;
    while (cap < depth) cap = cap > UINT32_MAX / 2 ? depth : 2 * cap;
    uint64_t *grown = realloc(w->prev_stack, (size_t)cap * sizeof *grown);
    if (!grown) {
      fail(w, "trace writer: out of memory (callstack of %u frames)", depth);
      return 0;
    }
    w->prev_stack = grown;
    w->prev_cap = cap;
  }
  if (depth > common)
    memcpy(w->prev_stack + common, stack + common, (size_t)(depth - common) * sizeof *stack);
  w->prev_depth = depth;
  return common;
}

// ================================================================ event packets

static void open_event_packet(TraceWriter *w, uint64_t time, bool verify) {
  w->packet_time_start = w->packet_time_end = time;
  w->packet_time_limit = time > UINT64_MAX - TRACE_PACKET_MAX_SPAN_US ? UINT64_MAX : time + TRACE_PACKET_MAX_SPAN_US;
  w->start_alloc_id = w->next_alloc_id;
  w->packet_backtrace_bytes = 0;
  w->pos = (uint32_t)(put_header(w, w->packet, time, w->start_alloc_id, verify) - w->packet);
}

// Writes the waiting locations and the event packet; the next packet starts at `now`.
static bool flush_at(TraceWriter *w, uint64_t now) {
  if (w->failed || !write_locations(w)) return false;
  finish_header(w, w->packet, w->pos, w->packet_time_end, w->next_alloc_id);
  if (!write_packet(w, w->packet, w->pos)) return false;
  w->stats.backtrace_bytes += w->packet_backtrace_bytes;
  w->stats.event_bytes += w->pos - w->header_size - w->packet_backtrace_bytes;
  if (w->next_alloc_id == w->id_chunk_end) w->id_chunk_end += ID_CHUNK;
  open_event_packet(w, now, true);
  return true;
}

// Flushes if a rule says so, then writes the event header. Returns the
// position after it, NULL if the writer failed.
static inline uint8_t *begin_event(TraceWriter *w, uint32_t event, uint64_t time) {
  if (time < w->packet_time_end) time = w->packet_time_end;
  if (w->pos > w->flush_pos || time > w->packet_time_limit || w->next_alloc_id == w->id_chunk_end) {
    if (!flush_at(w, time)) return NULL;
  }
  w->packet_time_end = time;
  return put32(w->packet + w->pos, event << TRACE_TIME_BITS | (uint32_t)(time & TIME_MASK));
}

// ================================================================ public entry points

// An allocation event whose callstack shares its first `common` frames with
// the previous one's, given as `stack` (flat, a constant) or as `runs`.
// Inlined into the three entry points: a call here cost trace_writer_alloc
// 20 Ir an event, and each then holds one walker only.
static inline __attribute__((always_inline)) uint64_t
alloc_event(TraceWriter *w, uint64_t time_us, uint64_t wosize, uint32_t n_samples, TraceSource source, bool flat,
            const uint64_t *stack, const TraceRun *runs, uint32_t run_count, uint32_t depth, uint32_t common) {
  uint64_t id = w->next_alloc_id;
  if (__builtin_expect(depth > TRACE_MAX_FRAMES, 0)) {  // format.h part 3: the outermost frames
    depth = TRACE_MAX_FRAMES;
    if (common > depth) common = depth;
    w->stats.cut_deep++;
  }
  if (common > w->reader_depth) common = w->reader_depth;
  uint32_t fresh = depth - common;
  bool is_short = wosize >= 1 && wosize <= TRACE_SHORT_ALLOC_MAX && source == TRACE_SOURCE_MINOR
                  && n_samples == 1 && fresh <= 255;
  uint8_t *p = w->failed ? NULL : begin_event(w, is_short ? TRACE_EV_SHORT_ALLOC + (uint32_t)wosize : TRACE_EV_ALLOC, time_us);
  w->next_alloc_id++;
  if (!p) return id;
  uint8_t *count_at;
  if (is_short) {
    count_at = put_vint(p, common);
    p = count_at + 1;
  } else {
    p = put8(put_vint(put_vint(p, wosize), n_samples), (uint8_t)source);
    count_at = put_vint(p, common);
    p = count_at + 2;
  }
  uint32_t codewords, covered;
  uint8_t *end;
  if (!flat) {
    // No frame to code (the same callstack as the previous allocation's, as
    // a loop's samples often are): nothing to walk, and the walker's
    // registers are not saved.
    if (common < depth) {
      end = encode_runs(w, p, runs, run_count, common, depth, id, &codewords, &covered);
    } else {
      end = p;
      codewords = covered = 0;
    }
  } else {
    end = encode_backtrace(w, p, (Frames){stack + common, NULL, 0, fresh}, false, id, &codewords, &covered);
  }
  if (is_short) put8(count_at, (uint8_t)codewords);
  else put16(count_at, (uint16_t)codewords);
  w->reader_depth = common + covered;
  w->packet_backtrace_bytes += (uint64_t)(end - p);
  w->pos = (uint32_t)(end - w->packet);
  w->stats.allocs++;
  return id;
}

// A bad source stops the writer; true if the event may be written.
static bool alloc_allowed(TraceWriter *w, TraceSource source) {
  if (w->failed) return false;
  if ((unsigned)source <= TRACE_SOURCE_EXTERNAL) return true;
  fail(w, "trace_writer_alloc: allocation source %u is not 0, 1 or 2", (unsigned)source);
  return false;
}

uint64_t trace_writer_alloc(TraceWriter *w, uint64_t time_us, uint64_t wosize,
                            uint32_t n_samples, TraceSource source,
                            const uint64_t *stack, uint32_t depth, uint32_t known_common) {
  if (!alloc_allowed(w, source)) return w->next_alloc_id++;
  uint32_t common = take_stack(w, stack, depth, known_common);
  return alloc_event(w, time_us, wosize, n_samples, source, true, stack, NULL, 0, depth, common);
}

uint64_t trace_writer_alloc_common(TraceWriter *w, uint64_t time_us, uint64_t wosize,
                                   uint32_t n_samples, TraceSource source,
                                   const uint64_t *stack, uint32_t depth, uint32_t common) {
  if (!alloc_allowed(w, source)) return w->next_alloc_id++;
  w->prev_depth = 0;  // prev_stack no longer holds the previous callstack
  return alloc_event(w, time_us, wosize, n_samples, source, true, stack, NULL, 0, depth,
                     common < depth ? common : depth);
}

bool trace_writer_alloc_runs(TraceWriter *w, uint64_t time_us, uint64_t wosize,
                             uint32_t n_samples, TraceSource source,
                             const TraceRun *runs, uint32_t run_count, uint32_t common, uint64_t *id) {
  if (!alloc_allowed(w, source)) {
    *id = w->next_alloc_id++;
    return false;
  }
  w->prev_depth = 0;  // prev_stack no longer holds the previous callstack
  // An empty callstack takes the runs path too, with nothing to code: the
  // flat walker is not inlined here (its registers would cost every event).
  uint32_t depth = run_count ? runs[run_count - 1].end : 0;
  *id = alloc_event(w, time_us, wosize, n_samples, source, false, NULL, runs, run_count, depth,
                    common < depth ? common : depth);
  return !w->failed;
}

static void put_lifetime_event(TraceWriter *w, TraceEventCode event, const char *what,
                               uint64_t time_us, uint64_t id) {
  if (w->failed) return;
  if (id >= w->next_alloc_id) {
    fail(w, "trace_writer_%s: allocation id %llu was never allocated (next id %llu)",
         what, (unsigned long long)id, (unsigned long long)w->next_alloc_id);
    return;
  }
  uint8_t *p = begin_event(w, event, time_us);
  if (!p) return;
  w->pos = (uint32_t)(put_vint(p, w->next_alloc_id - 1 - id) - w->packet);
}

bool trace_writer_promote(TraceWriter *w, uint64_t time_us, uint64_t id) {
  put_lifetime_event(w, TRACE_EV_PROMOTE, "promote", time_us, id);
  if (w->failed) return false;
  w->stats.promotes++;
  return true;
}

bool trace_writer_collect(TraceWriter *w, uint64_t time_us, uint64_t id) {
  put_lifetime_event(w, TRACE_EV_COLLECT, "collect", time_us, id);
  if (w->failed) return false;
  w->stats.collects++;
  return true;
}

bool trace_writer_flush(TraceWriter *w) { return flush_at(w, w->packet_time_end); }

void trace_writer_relog_locations(TraceWriter *w) { w->relog = true; }

uint32_t trace_writer_backtrace_depth(const TraceWriter *w) { return w->reader_depth; }

const char *trace_writer_error(const TraceWriter *w) { return w->failed ? w->error : NULL; }

void trace_writer_stats(const TraceWriter *w, TraceWriterStats *out) { *out = w->stats; }

static void writer_free(TraceWriter *w) {
  names_free(&w->files);
  free(w->prev_stack);
  free(w->locs);
  free(w->seen);
  free(w);
}

bool trace_writer_finish(TraceWriter *w, char *err, size_t err_len) {
  flush_at(w, w->packet_time_end);
  if (w->close_fd && close(w->fd) != 0) fail(w, "closing the trace: %s", strerror(errno));
  bool ok = !w->failed;
  if (err && err_len) snprintf(err, err_len, "%s", ok ? "" : w->error);
  writer_free(w);
  return ok;
}

bool trace_writer_close(TraceWriter *w) { return trace_writer_finish(w, NULL, 0); }

// The first packet: the trace-info event alone.
static bool write_info_packet(TraceWriter *w, const TraceInfo *info) {
  const size_t max = TRACE_WRITER_MAX_INFO_STRING;
  uint64_t rate_bits;
  memcpy(&rate_bits, &info->sample_rate, sizeof rate_bits);
  uint8_t *p = put_header(w, w->packet, info->start_time_us, 0, false);
  uint8_t *event = p;
  p = put32(p, (uint32_t)TRACE_EV_INFO << TRACE_TIME_BITS | (uint32_t)(info->start_time_us & TIME_MASK));
  p = put8(put64(p, rate_bits), (uint8_t)info->word_size);
  p = put_string(p, info->executable, max);
  p = put_string(p, info->host, max);
  p = put_string(p, info->runtime_params, max);
  p = put64(p, info->pid);
  if (info->version >= 2) p = put_string(p, info->context, max);
  size_t len = (size_t)(p - w->packet);
  finish_header(w, w->packet, len, info->start_time_us, 0);
  if (!write_packet(w, w->packet, len)) return false;
  w->stats.event_bytes += (uint64_t)(p - event);
  return true;
}

TraceWriter *trace_writer_new(int fd, bool close_fd, const TraceInfo *info,
                              TraceLocate locate, void *locate_data,
                              char *err, size_t err_len) {
  if (!err || !err_len) err = NULL, err_len = 0;
  if (!info || info->version < TRACE_VERSION_MIN || info->version > TRACE_VERSION_MAX) {
    snprintf(err, err_len, "trace writer: format version %u is not 1, 2 or 3", info ? info->version : 0u);
    return NULL;
  }
  TraceWriter *w = calloc(1, sizeof *w);
  if (!w) {
    snprintf(err, err_len, "trace writer: out of memory");
    return NULL;
  }
  w->fd = fd;
  w->version = info->version;
  w->header_size = info->version >= 3 ? TRACE_HEADER_V3 : TRACE_HEADER_V2;
  w->pid = info->pid;
  w->locate = locate;
  w->locate_data = locate_data;
  w->locs_open = SIZE_MAX;
  w->verify_ix = TRACE_CACHE_CHECK_START;
  w->id_chunk_end = info->version >= 3 ? ID_CHUNK : UINT64_MAX;
  w->flush_pos = TRACE_MAX_PACKET - MAX_EVENT_BYTES;
  if (!seen_grow(w) || !write_info_packet(w, info)) {
    snprintf(err, err_len, "%s", w->error);
    writer_free(w);
    return NULL;
  }
  w->close_fd = close_fd;
  open_event_packet(w, info->start_time_us, false);
  return w;
}
