// pprof_writer.c - pprof profiles, streamed to a sink (pprof_writer.h).
//
// 1. The protobuf wire format used here: a field is a key varint (field
//    number << 3 | wire type) then its value: wire type 0 a varint (int64 as
//    its 64-bit two's complement, so negatives take 10 bytes), wire type 2 a
//    length varint then that many bytes (strings, sub-messages, packed
//    repeated varints).
// 2. Failure is sticky (w->error): the scratch buffers and tables fail
//    softly (a flag, nothing written after), so no call aborts and the sink
//    never receives a message whose bytes were not all meant.
#include "pprof_writer.h"
#include "../base/hash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Field numbers of profile.proto.
enum {
  PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
  PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10,
  PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12, PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
  VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
  SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
  LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4,
  MAPPING_ID = 1, MAPPING_FILENAME = 5, MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
  MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
  LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_LINE = 4,
  LINE_FUNCTION_ID = 1, LINE_LINE = 2,
  FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_FILENAME = 4, FUNCTION_START_LINE = 5,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

// ---------------------------------------------------------------- encoding

typedef struct PbBuf {
  uint8_t *data;
  size_t len, cap;
  bool failed;       // memory: nothing more is added
} PbBuf;

static bool pb_reserve(PbBuf *b, size_t n) {
  if (b->failed) return false;
  if (b->cap - b->len >= n) return true;
  size_t cap = 2 * b->cap + n + 64;
  uint8_t *data = cap > b->cap ? realloc(b->data, cap) : NULL;
  if (!data) {
    b->failed = true;
    return false;
  }
  b->data = data;
  b->cap = cap;
  return true;
}

static void pb_varint(PbBuf *b, uint64_t v) {
  if (!pb_reserve(b, 10)) return;
  while (v >= 0x80) {
    b->data[b->len++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  b->data[b->len++] = (uint8_t)v;
}

static void pb_key(PbBuf *b, unsigned field, unsigned wire) { pb_varint(b, (uint64_t)field << 3 | wire); }

// A varint field; proto3 leaves out zeros (the default), and so does this.
static void pb_uint(PbBuf *b, unsigned field, uint64_t v) {
  if (v == 0) return;
  pb_key(b, field, WIRE_VARINT);
  pb_varint(b, v);
}

static void pb_int(PbBuf *b, unsigned field, int64_t v) { pb_uint(b, field, (uint64_t)v); }

static void pb_bytes(PbBuf *b, unsigned field, const void *data, size_t n) {
  pb_key(b, field, WIRE_LEN);
  pb_varint(b, n);
  if (!pb_reserve(b, n)) return;
  if (n) memcpy(b->data + b->len, data, n);
  b->len += n;
}

static void pb_packed(PbBuf *b, unsigned field, const uint64_t *v, size_t n) {
  if (n == 0) return;
  size_t bytes = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t x = v[i];
    do bytes++; while (x >>= 7);
  }
  pb_key(b, field, WIRE_LEN);
  pb_varint(b, bytes);
  for (size_t i = 0; i < n; i++) pb_varint(b, v[i]);
}

// ---------------------------------------------------------------- interning


// Open addressing, linear probing. Invariant: n_slots is a power of two and
// at most half the slots are used; a slot with id 0 is free.
typedef struct Slot {
  uint64_t hash;
  uint64_t a, b, c;  // the key: a string's pool offset and length, or a function's (name, file, line)
  uint64_t id;
} Slot;

typedef struct Table {
  Slot *slots;
  size_t n_slots, n_used;
} Table;

static bool table_grow(Table *t) {
  size_t n_slots = t->n_slots ? 2 * t->n_slots : 256;
  Slot *slots = calloc(n_slots, sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < t->n_slots; i++) {
    if (!t->slots[i].id) continue;
    size_t j = t->slots[i].hash & (n_slots - 1);
    while (slots[j].id) j = (j + 1) & (n_slots - 1);
    slots[j] = t->slots[i];
  }
  free(t->slots);
  t->slots = slots;
  t->n_slots = n_slots;
  return true;
}

// ---------------------------------------------------------------- the writer

struct PprofWriter {
  PprofSink sink;
  void *ctx;
  char error[256];   // the first failure; "" if none
  PbBuf msg, sub;    // scratch: the message being built, a sub-message of it
  PbBuf top;         // scratch: one top-level field (key, length, message)
  Table strings;     // key: offset and length in `pool`; id: index + 1
  char *pool;
  size_t pool_len, pool_cap;
  int64_t n_strings;
  Table functions;   // key: name index, file index, start line
  uint64_t n_functions, n_mappings, n_locations;
};

static void out_of_memory(PprofWriter *w) {
  if (!w->error[0]) snprintf(w->error, sizeof w->error, "out of memory");
}

static bool failed(PprofWriter *w) {
  if (!w->error[0] && (w->msg.failed || w->sub.failed || w->top.failed)) out_of_memory(w);
  return w->error[0] != 0;
}

static void write_top(PprofWriter *w) {
  if (failed(w)) return;
  errno = 0;
  if (!w->sink(w->ctx, w->top.data, w->top.len))
    snprintf(w->error, sizeof w->error, "write failed: %s", errno ? strerror(errno) : "the sink refused it");
}

// Appends top-level field `field` holding the bytes data[0 .. n) (a string
// or an encoded message) to the stream.
static void emit_bytes(PprofWriter *w, unsigned field, const void *data, size_t n) {
  w->top.len = 0;
  pb_bytes(&w->top, field, data, n);
  write_top(w);
}

static void emit(PprofWriter *w, unsigned field, const PbBuf *m) { emit_bytes(w, field, m->data, m->len); }

static void emit_varint(PprofWriter *w, unsigned field, uint64_t v) {
  w->top.len = 0;
  pb_key(&w->top, field, WIRE_VARINT);
  pb_varint(&w->top, v);
  write_top(w);
}

PprofWriter *pprof_writer_new(PprofSink sink, void *ctx) {
  PprofWriter *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->sink = sink;
  w->ctx = ctx;
  pprof_writer_string(w, "");
  return w;
}

const char *pprof_writer_error(const PprofWriter *w) { return w->error; }

bool pprof_sink_fd(void *ctx, const void *bytes, size_t n) {
  int fd = *(const int *)ctx;
  const char *p = bytes;
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

int64_t pprof_writer_string(PprofWriter *w, const char *s) {
  if (failed(w)) return 0;
  size_t n = strlen(s);
  uint64_t h = hash_memory(s, n);
  if (2 * (w->strings.n_used + 1) > w->strings.n_slots && !table_grow(&w->strings)) {
    out_of_memory(w);
    return 0;
  }
  size_t mask = w->strings.n_slots - 1, j = h & mask;
  for (Slot *e; (e = &w->strings.slots[j])->id; j = (j + 1) & mask)
    if (e->hash == h && e->b == n && (n == 0 || memcmp(w->pool + e->a, s, n) == 0)) return (int64_t)e->id - 1;
  if (w->pool_cap - w->pool_len < n) {
    size_t cap = 2 * w->pool_cap + n + 4096;
    char *pool = realloc(w->pool, cap);
    if (!pool) {
      out_of_memory(w);
      return 0;
    }
    w->pool = pool;
    w->pool_cap = cap;
  }
  if (n) memcpy(w->pool + w->pool_len, s, n);
  w->strings.slots[j] = (Slot){h, w->pool_len, n, 0, (uint64_t)++w->n_strings};
  w->strings.n_used++;
  w->pool_len += n;
  emit_bytes(w, PROFILE_STRING_TABLE, s, n);
  return w->n_strings - 1;
}

static void value_type(PprofWriter *w, const char *type, const char *unit) {
  int64_t t = pprof_writer_string(w, type), u = pprof_writer_string(w, unit);
  w->msg.len = 0;
  pb_int(&w->msg, VALUE_TYPE_TYPE, t);
  pb_int(&w->msg, VALUE_TYPE_UNIT, u);
}

void pprof_writer_sample_type(PprofWriter *w, const char *type, const char *unit) {
  value_type(w, type, unit);
  emit(w, PROFILE_SAMPLE_TYPE, &w->msg);
}

void pprof_writer_period(PprofWriter *w, const char *type, const char *unit, int64_t period) {
  value_type(w, type, unit);
  emit(w, PROFILE_PERIOD_TYPE, &w->msg);
  emit_varint(w, PROFILE_PERIOD, (uint64_t)period);
}

void pprof_writer_times(PprofWriter *w, int64_t time_nanos, int64_t duration_nanos) {
  emit_varint(w, PROFILE_TIME_NANOS, (uint64_t)time_nanos);
  emit_varint(w, PROFILE_DURATION_NANOS, (uint64_t)duration_nanos);
}

void pprof_writer_comment(PprofWriter *w, const char *text) {
  emit_varint(w, PROFILE_COMMENT, (uint64_t)pprof_writer_string(w, text));
}

void pprof_writer_default_sample_type(PprofWriter *w, const char *type) {
  emit_varint(w, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)pprof_writer_string(w, type));
}

uint64_t pprof_writer_mapping(PprofWriter *w, const char *file) {
  int64_t name = pprof_writer_string(w, file);
  if (failed(w)) return 0;
  uint64_t id = ++w->n_mappings;
  w->msg.len = 0;
  pb_uint(&w->msg, MAPPING_ID, id);
  pb_int(&w->msg, MAPPING_FILENAME, name);
  pb_uint(&w->msg, MAPPING_HAS_FUNCTIONS, 1);
  pb_uint(&w->msg, MAPPING_HAS_FILENAMES, 1);
  pb_uint(&w->msg, MAPPING_HAS_LINE_NUMBERS, 1);
  pb_uint(&w->msg, MAPPING_HAS_INLINE_FRAMES, 1);
  emit(w, PROFILE_MAPPING, &w->msg);
  return id;
}

uint64_t pprof_writer_function(PprofWriter *w, const char *name, const char *file, int64_t start_line) {
  uint64_t a = (uint64_t)pprof_writer_string(w, name), b = (uint64_t)pprof_writer_string(w, file);
  uint64_t c = (uint64_t)start_line, h = hash_combine(hash_combine(hash_mix(a), b), c);
  if (failed(w)) return 0;
  if (2 * (w->functions.n_used + 1) > w->functions.n_slots && !table_grow(&w->functions)) {
    out_of_memory(w);
    return 0;
  }
  size_t mask = w->functions.n_slots - 1, j = h & mask;
  for (Slot *e; (e = &w->functions.slots[j])->id; j = (j + 1) & mask)
    if (e->hash == h && e->a == a && e->b == b && e->c == c) return e->id;
  uint64_t id = ++w->n_functions;
  w->functions.slots[j] = (Slot){h, a, b, c, id};
  w->functions.n_used++;
  w->msg.len = 0;
  pb_uint(&w->msg, FUNCTION_ID, id);
  pb_uint(&w->msg, FUNCTION_NAME, a);
  // No system_name: pprof demangles a name equal to it as C++ ("<top>"
  // became ""), and leaves it alone when they differ.
  pb_uint(&w->msg, FUNCTION_FILENAME, b);
  pb_int(&w->msg, FUNCTION_START_LINE, start_line);
  emit(w, PROFILE_FUNCTION, &w->msg);
  return id;
}

uint64_t pprof_writer_location(PprofWriter *w, uint64_t mapping_id, const PprofLine *lines, size_t n) {
  if (failed(w)) return 0;
  uint64_t id = ++w->n_locations;
  w->msg.len = 0;
  pb_uint(&w->msg, LOCATION_ID, id);
  pb_uint(&w->msg, LOCATION_MAPPING_ID, mapping_id);
  for (size_t i = 0; i < n; i++) {
    w->sub.len = 0;
    pb_uint(&w->sub, LINE_FUNCTION_ID, lines[i].function_id);
    pb_int(&w->sub, LINE_LINE, lines[i].line);
    pb_bytes(&w->msg, LOCATION_LINE, w->sub.data, w->sub.len);
  }
  emit(w, PROFILE_LOCATION, &w->msg);
  return id;
}

void pprof_writer_sample(PprofWriter *w, const uint64_t *location_ids, size_t n_locations, const int64_t *values,
                         size_t n_values) {
  pprof_writer_sample_labels(w, location_ids, n_locations, values, n_values, NULL, 0);
}

void pprof_writer_sample_labels(PprofWriter *w, const uint64_t *location_ids, size_t n_locations,
                                const int64_t *values, size_t n_values, const PprofLabel *labels, size_t n_labels) {
  if (failed(w)) return;
  if (n_labels > PPROF_MAX_LABELS) {
    snprintf(w->error, sizeof w->error, "a sample of %zu labels (at most %d)", n_labels, PPROF_MAX_LABELS);
    return;
  }
  // The labels' strings first: interning writes to the stream.
  int64_t keys[PPROF_MAX_LABELS], strs[PPROF_MAX_LABELS], units[PPROF_MAX_LABELS];
  for (size_t i = 0; i < n_labels; i++) {
    keys[i] = pprof_writer_string(w, labels[i].key);
    strs[i] = labels[i].str ? pprof_writer_string(w, labels[i].str) : 0;
    units[i] = labels[i].num_unit ? pprof_writer_string(w, labels[i].num_unit) : 0;
  }
  if (failed(w)) return;
  w->msg.len = 0;
  pb_packed(&w->msg, SAMPLE_LOCATION_ID, location_ids, n_locations);
  // int64 values are packed as their two's complement bits.
  w->sub.len = 0;
  for (size_t i = 0; i < n_values; i++) pb_varint(&w->sub, (uint64_t)values[i]);
  if (n_values) pb_bytes(&w->msg, SAMPLE_VALUE, w->sub.data, w->sub.len);
  for (size_t i = 0; i < n_labels; i++) {
    w->sub.len = 0;
    pb_int(&w->sub, LABEL_KEY, keys[i]);
    pb_int(&w->sub, LABEL_STR, strs[i]);
    if (!labels[i].str) pb_int(&w->sub, LABEL_NUM, labels[i].num);
    pb_int(&w->sub, LABEL_NUM_UNIT, units[i]);
    pb_bytes(&w->msg, SAMPLE_LABEL, w->sub.data, w->sub.len);
  }
  emit(w, PROFILE_SAMPLE, &w->msg);
}

int pprof_writer_free(PprofWriter *w) {
  int result = failed(w) ? -1 : 0;
  free(w->msg.data);
  free(w->sub.data);
  free(w->top.data);
  free(w->strings.slots);
  free(w->functions.slots);
  free(w->pool);
  free(w);
  return result;
}
