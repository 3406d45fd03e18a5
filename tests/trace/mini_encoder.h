// mini_encoder.h - a small memtrace CTF encoder for tests and benchmarks of
// trace/reader.c (header-only: the unit-test rule links no extra .c). It
// follows memtrace's writer (src/trace.ml, backtrace_codec.ml,
// location_codec.ml): two-way skewed cache with LRU by allocation id,
// predictions, the 4,086-byte backtrace cut, move-to-front names, location
// packets before the event packet that needs them, cache checks. Knobs that
// memtrace does not have make small packets (many packet boundaries). It is
// an independent second implementation of the format for differential
// tests; the product's writer is trace/writer.c.
//
// Frame code c gets a deterministic location list (menc_locations): none
// when c % 13 == 0, two (an inlined frame) when c % 5 == 0, else one; names
// drawn from 40 files and 50 functions so the tables evict.
#ifndef MINNOW_TESTS_MINI_ENCODER_H
#define MINNOW_TESTS_MINI_ENCODER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../trace/format.h"

typedef struct MiniEncoderOptions {
  uint16_t version;        // 1, 2 or 3
  uint64_t pid;
  uint16_t domain;         // v3
  uint64_t start_us;
  double rate;
  uint32_t packet_bytes;   // flush when an event packet reaches this (0: as memtrace)
  uint64_t first_id;       // first allocation id (v3 domains other than the first)
  bool no_info;            // do not write the trace-info packet (another domain's writer)
} MiniEncoderOptions;

typedef struct MiniEncoderLoc {
  char function[32], file[32];
  uint32_t line, start, end;
} MiniEncoderLoc;

typedef struct MiniEncoder {
  int fd;
  MiniEncoderOptions o;
  uint8_t pkt[TRACE_MAX_PACKET];
  uint32_t len;               // bytes in pkt (header included)
  uint64_t t_first, t_last;
  uint64_t id_begin, next_id;
  bool packet_has_check;
  uint16_t next_check;
  uint64_t cache[TRACE_CACHE_BUCKETS];
  uint64_t date[TRACE_CACHE_BUCKETS];
  uint16_t succ[TRACE_CACHE_BUCKETS];
  uint64_t *last_stack;       // last full callstack, outermost first
  uint32_t last_depth, last_cap;
  uint64_t new_codes[512];    // codes whose locations the next flush writes
  uint32_t n_new;
  // move-to-front names: files[i] with its own function table
  char files[31][32];
  char funcs[31][31][32];
  uint8_t n_files, n_funcs[31];
  bool failed;
} MiniEncoder;

static inline void menc_locations(uint64_t code, MiniEncoderLoc out[2], uint32_t *n) {
  *n = code % 13 == 0 ? 0 : code % 5 == 0 ? 2 : 1;
  for (uint32_t i = 0; i < *n; i++) {
    uint64_t c = code + i * 7;
    snprintf(out[i].function, sizeof out[i].function, "Mod%u.fn_%u", (unsigned)(c % 3), (unsigned)(c % 50));
    snprintf(out[i].file, sizeof out[i].file, "src/file_%u.mn", (unsigned)(c / 3 % 40));
    out[i].line = (uint32_t)(c % 100000);
    out[i].start = (uint32_t)(c % 256);
    out[i].end = (uint32_t)(c % 1024);
  }
}

// ---------------------------------------------------------------- bytes

static inline void menc_put(MiniEncoder *s, const void *p, uint32_t n) {
  memcpy(s->pkt + s->len, p, n);
  s->len += n;
}
static inline void menc_u8(MiniEncoder *s, uint8_t v) { menc_put(s, &v, 1); }
static inline void menc_u16(MiniEncoder *s, uint16_t v) { menc_put(s, &v, 2); }
static inline void menc_u32(MiniEncoder *s, uint32_t v) { menc_put(s, &v, 4); }
static inline void menc_u64(MiniEncoder *s, uint64_t v) { menc_put(s, &v, 8); }
static inline void menc_vint(MiniEncoder *s, uint64_t v) {
  if (v <= 252) menc_u8(s, (uint8_t)v);
  else if (v <= 0xFFFF) { menc_u8(s, 253); menc_u16(s, (uint16_t)v); }
  else if (v <= 0x7FFFFFFF) { menc_u8(s, 254); menc_u32(s, (uint32_t)v); }
  else { menc_u8(s, 255); menc_u64(s, v); }
}
static inline void menc_str(MiniEncoder *s, const char *str) { menc_put(s, str, (uint32_t)strlen(str) + 1); }

static inline uint32_t menc_header_size(const MiniEncoder *s) {
  return s->o.version >= 3 ? TRACE_HEADER_V3 : TRACE_HEADER_V2;
}

// Starts a packet in pkt: header with the fields known now.
static inline void menc_begin_packet(MiniEncoder *s, bool check) {
  s->len = 0;
  menc_u32(s, TRACE_MAGIC);
  menc_u32(s, 0);   // size, at the end
  menc_u64(s, 0);   // times, at the end
  menc_u64(s, 0);
  menc_u32(s, 0);   // flush duration
  menc_u16(s, s->o.version);
  menc_u64(s, s->o.pid);
  if (s->o.version >= 3) menc_u16(s, s->o.domain);
  if (check) {
    uint16_t ix = s->next_check;
    s->next_check = (uint16_t)((ix + TRACE_CACHE_CHECK_STEP) & (TRACE_CACHE_BUCKETS - 1));
    menc_u16(s, ix);
    menc_u16(s, s->succ[ix]);
    menc_u64(s, s->cache[ix]);
  } else {
    menc_u16(s, TRACE_CACHE_CHECK_NONE);
    menc_u16(s, 0);
    menc_u64(s, 0);
  }
  menc_u64(s, 0);   // ids, at the end
  menc_u64(s, 0);
}

static inline void menc_write(MiniEncoder *s, const uint8_t *p, uint32_t n) {
  while (n) {
    ssize_t w = write(s->fd, p, n);
    if (w <= 0) { s->failed = true; return; }
    p += w;
    n -= (uint32_t)w;
  }
}

static inline void menc_end_packet(MiniEncoder *s, uint64_t t0, uint64_t t1, uint64_t id0, uint64_t id1) {
  uint32_t bits = s->len * 8, tail = s->o.version >= 3 ? 2 : 0;
  memcpy(s->pkt + 4, &bits, 4);
  memcpy(s->pkt + 8, &t0, 8);
  memcpy(s->pkt + 16, &t1, 8);
  memcpy(s->pkt + 50 + tail, &id0, 8);
  memcpy(s->pkt + 58 + tail, &id1, 8);
  menc_write(s, s->pkt, s->len);
}

static inline void menc_event_header(MiniEncoder *s, unsigned code, uint64_t t) {
  menc_u32(s, (uint32_t)code << TRACE_TIME_BITS | (uint32_t)(t & ((1u << TRACE_TIME_BITS) - 1)));
}

// ---------------------------------------------------------------- locations

// Index of `name` in a move-to-front table (moved to the front), or 31
// after pushing it; `n` is the table's fill.
static inline unsigned menc_mtf(char (*table)[32], uint8_t *n, const char *name) {
  for (unsigned i = 0; i < *n; i++)
    if (strcmp(table[i], name) == 0) {
      char moved[32];
      memcpy(moved, table[i], 32);
      memmove(table[1], table[0], i * 32);
      memcpy(table[0], moved, 32);
      return i;
    }
  memmove(table[1], table[0], 30 * 32);
  size_t len = strlen(name) < 31 ? strlen(name) : 31;  // MiniEncoderLoc names fit
  memcpy(table[0], name, len);
  table[0][len] = '\0';
  if (*n < 31) (*n)++;
  return 31;
}

static inline void menc_location(MiniEncoder *s, const MiniEncoderLoc *l) {
  // The file's own function table moves with it; a new file gets an empty one.
  unsigned fc = menc_mtf(s->files, &s->n_files, l->file);
  if (fc == 31) {
    memmove(s->funcs[1], s->funcs[0], 30 * sizeof s->funcs[0]);
    memmove(&s->n_funcs[1], &s->n_funcs[0], 30);
    s->n_funcs[0] = 0;
  } else if (fc > 0) {
    char moved[31][32];
    uint8_t moved_n = s->n_funcs[fc];
    memcpy(moved, s->funcs[fc], sizeof moved);
    memmove(s->funcs[1], s->funcs[0], fc * sizeof s->funcs[0]);
    memmove(&s->n_funcs[1], &s->n_funcs[0], fc);
    memcpy(s->funcs[0], moved, sizeof moved);
    s->n_funcs[0] = moved_n;
  }
  unsigned dc = menc_mtf(s->funcs[0], &s->n_funcs[0], l->function);
  uint64_t bits = (uint64_t)l->line | (uint64_t)l->start << 20 | (uint64_t)l->end << 28 | (uint64_t)fc << 38 |
                  (uint64_t)dc << 43;
  menc_u32(s, (uint32_t)bits);
  menc_u16(s, (uint16_t)(bits >> 32));
  if (fc == 31) menc_str(s, l->file);
  if (dc == 31) menc_str(s, l->function);
}

static inline void menc_flush_locations(MiniEncoder *s) {
  uint32_t i = 0;
  while (i < s->n_new) {
    menc_begin_packet(s, false);
    while (i < s->n_new && TRACE_MAX_PACKET - s->len > 4096) {
      MiniEncoderLoc locs[2];
      uint32_t n;
      menc_locations(s->new_codes[i], locs, &n);
      menc_event_header(s, TRACE_EV_LOCATION, s->t_first);
      menc_u64(s, s->new_codes[i]);
      menc_u8(s, (uint8_t)n);
      for (uint32_t k = 0; k < n; k++) menc_location(s, &locs[k]);
      i++;
    }
    menc_end_packet(s, s->t_first, s->t_first, s->id_begin, s->id_begin);
  }
  s->n_new = 0;
}

// ---------------------------------------------------------------- packets

// The event packet in pkt is written (after its location packets) and a new
// one begun; `now` is the next packet's first time.
static inline void menc_flush_at(MiniEncoder *s, uint64_t now) {
  uint8_t events[TRACE_MAX_PACKET];
  uint32_t n = s->len;
  memcpy(events, s->pkt, n);
  menc_flush_locations(s);
  memcpy(s->pkt, events, n);
  s->len = n;
  menc_end_packet(s, s->t_first, s->t_last, s->id_begin, s->next_id);
  s->t_first = s->t_last = now;
  s->id_begin = s->next_id;
  menc_begin_packet(s, true);
}

static inline void menc_begin_event(MiniEncoder *s, unsigned code, uint64_t now) {
  uint32_t room = s->o.packet_bytes ? s->o.packet_bytes : TRACE_MAX_PACKET - 4096 - 100;
  if (now < s->t_last) now = s->t_last;
  if (s->len > room || s->n_new > 128 || now - s->t_first > TRACE_PACKET_MAX_SPAN_US) menc_flush_at(s, now);
  s->t_last = now;
  menc_event_header(s, code, now);
}

static inline MiniEncoder *menc_open(int fd, const MiniEncoderOptions *o) {
  MiniEncoder *s = calloc(1, sizeof *s);
  s->fd = fd;
  s->o = *o;
  s->next_check = TRACE_CACHE_CHECK_START;
  s->t_first = s->t_last = o->start_us;
  s->id_begin = s->next_id = o->first_id;
  if (!o->no_info) {
    menc_begin_packet(s, false);
    menc_event_header(s, TRACE_EV_INFO, o->start_us);
    menc_put(s, &o->rate, 8);
    menc_u8(s, 64);
    menc_str(s, "synth.exe");
    menc_str(s, "synthhost");
    menc_str(s, "synth params");
    menc_u64(s, o->pid);
    if (o->version >= 2) menc_str(s, "synthetic trace");
    menc_end_packet(s, o->start_us, o->start_us, 0, 0);
  }
  menc_begin_packet(s, false);
  return s;
}

// Flushes and frees `s`; false if a write failed.
static inline bool menc_close(MiniEncoder *s) {
  menc_flush_at(s, s->t_last);
  bool written = !s->failed;
  free(s->last_stack);
  free(s);
  return written;
}

// ---------------------------------------------------------------- backtraces

static inline void menc_put_hit(MiniEncoder *s, uint32_t bucket, uint32_t n) {
  if (n == 0) menc_u16(s, (uint16_t)(bucket << 2));
  else if (n == 1) menc_u16(s, (uint16_t)(bucket << 2 | 1));
  else { menc_u16(s, (uint16_t)(bucket << 2 | 2)); menc_u8(s, (uint8_t)n); }
}

// Codes stack[from .. depth) (outermost first) as memtrace's writer does;
// returns the number of codewords.
static inline uint32_t menc_backtrace(MiniEncoder *s, const uint64_t *stack, uint32_t from, uint32_t depth, uint64_t id) {
  uint32_t limit = s->len + TRACE_BACKTRACE_MAX_BYTES - 10, n_coded = 0, pred = 0, i = from;
  while (i < depth && s->len <= limit) {
    uint64_t code = stack[i];
    uint32_t h1 = trace_bucket1(code), h2 = trace_bucket2(code), hit;
    if (s->cache[h1] == code) hit = h1;
    else if (s->cache[h2] == code) hit = h2;
    else {
      uint32_t b = s->date[h1] < s->date[h2] ? h1 : h2;
      if (s->n_new < sizeof s->new_codes / sizeof s->new_codes[0]) s->new_codes[s->n_new++] = code;
      s->cache[b] = code;
      s->date[b] = id;
      s->succ[pred] = (uint16_t)b;
      menc_u16(s, (uint16_t)(b << 2 | 3));
      menc_u64(s, code);
      n_coded++;
      pred = b;
      i++;
      continue;
    }
    // A hit, then as many correct predictions as follow (at most 255 each).
    for (;;) {
      s->date[hit] = id;
      s->succ[pred] = (uint16_t)hit;
      n_coded++;
      uint32_t orig = hit, n = 0;
      pred = hit;
      i++;
      while (i < depth && s->len + 2 <= limit && s->cache[s->succ[pred]] == stack[i] && n < 255) {
        pred = s->succ[pred];
        n++;
        i++;
      }
      if (n == 255 && i < depth && s->len + 2 <= limit && s->cache[s->succ[pred]] == stack[i]) {
        menc_put_hit(s, orig, n);
        hit = s->succ[pred];
        continue;
      }
      menc_put_hit(s, orig, n);
      break;
    }
  }
  return n_coded;
}

// Records an allocation of `len` words with the callstack stack[0 .. depth)
// (outermost first); returns its id.
static inline uint64_t menc_alloc(MiniEncoder *s, uint64_t t, uint64_t len, uint64_t n_samples, unsigned source,
                                   const uint64_t *stack, uint32_t depth) {
  uint32_t common = 0;
  while (common < depth && common < s->last_depth && stack[common] == s->last_stack[common]) common++;
  bool is_short = len >= 1 && len <= 16 && source == TRACE_SOURCE_MINOR && n_samples == 1 && depth - common < 256;
  // Room for the worst-case backtrace before flushing.
  menc_begin_event(s, is_short ? TRACE_EV_SHORT_ALLOC + (unsigned)len : TRACE_EV_ALLOC, t);
  uint64_t id = s->next_id++;
  uint32_t count_at;
  if (is_short) {
    menc_vint(s, common);
    count_at = s->len;
    menc_u8(s, 0);
  } else {
    menc_vint(s, len);
    menc_vint(s, n_samples);
    menc_u8(s, (uint8_t)source);
    menc_vint(s, common);
    count_at = s->len;
    menc_u16(s, 0);
  }
  uint32_t n = menc_backtrace(s, stack, common, depth, id);
  if (is_short) s->pkt[count_at] = (uint8_t)n;
  else memcpy(s->pkt + count_at, &(uint16_t){(uint16_t)n}, 2);
  if (s->last_cap < depth) {
    s->last_cap = depth * 2;
    s->last_stack = realloc(s->last_stack, s->last_cap * sizeof *s->last_stack);
  }
  memcpy(s->last_stack + common, stack + common, (depth - common) * sizeof *stack);
  s->last_depth = depth;
  return id;
}

static inline void menc_ref(MiniEncoder *s, unsigned code, uint64_t t, uint64_t id) {
  menc_begin_event(s, code, t);
  menc_vint(s, s->next_id - 1 - id);
}
static inline void menc_promote(MiniEncoder *s, uint64_t t, uint64_t id) { menc_ref(s, TRACE_EV_PROMOTE, t, id); }
static inline void menc_collect(MiniEncoder *s, uint64_t t, uint64_t id) { menc_ref(s, TRACE_EV_COLLECT, t, id); }

#endif
