// snapshot_writer.c - appends snapshots to the file beside a trace
// (contract in snapshot_writer.h; the bytes in docs/trace-format.md, 12).
//
// 1. Buffers. `pending` holds whole records not yet written; `body` the
//    paths of the paths record being filled, `fresh` the strings first seen
//    since the last strings record. A paths record closes when its paths
//    pass FLUSH_BYTES, and the snapshot's end: the strings record (if any
//    string is fresh) goes before it, so that a name is always defined
//    before a record uses it. `pending` is written once it passes
//    FLUSH_BYTES, and at each end record.
// 2. A record is appended to `pending` as its 8-byte header (left blank),
//    its body, then the header filled: the body's length and CRC-32.
// 3. The string table interns each name once a file (open addressing over
//    indices into `strings`); names are cut to RETAIN_MAX_STRING bytes.
// 4. Failure is sticky (w->error): nothing more is written after the first,
//    so the file never holds a record whose bytes were not all meant.
// 5. Decision records: their names are interned at once (a name's strings
//    record always precedes the record using it: during a snapshot, the
//    snapshot's next strings record). Between snapshots a decision is
//    appended and written at once (decisions are rare, and a run killed
//    later keeps them); during one its record goes to `held`, whole, and
//    `held` follows the end record into `pending`.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshot_writer.h"
#include "../base/hash.h"

enum { FLUSH_BYTES = 64 * 1024 };

typedef struct Bytes {
  unsigned char *data;
  size_t len, cap;
} Bytes;

struct SnapshotWriter {
  int fd;
  char *path;                 // for messages
  Bytes pending, body, fresh;
  Bytes held;                 // decision records made during a snapshot (part 5)
  uint64_t held_count;
  uint64_t decisions;         // decision records written
  uint64_t body_paths;        // paths in `body`
  uint64_t fresh_count;       // strings in `fresh`
  char **strings;             // the table, by index
  uint64_t string_count, string_cap;
  uint32_t *slots;            // 0: empty, else index + 1
  uint64_t slot_cap;          // a power of two, at least twice string_count
  uint64_t number;            // the snapshot begun, or the next one
  bool in_snapshot;
  uint64_t paths;             // paths of the snapshot begun (or the last ended)
  uint64_t snapshots;         // ended
  bool end_state;             // a snapshot of trigger RETAIN_TRIGGER_END was begun
  char error[256];
};

static bool failed(const SnapshotWriter *w) { return w->error[0] != 0; }

static void fail(SnapshotWriter *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(SnapshotWriter *w, const char *fmt, ...) {
  if (failed(w)) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->error, sizeof w->error, fmt, ap);
  va_end(ap);
  if (!w->error[0]) snprintf(w->error, sizeof w->error, "failed");
}

// --- bytes -------------------------------------------------------------------

static bool reserve(SnapshotWriter *w, Bytes *b, size_t more) {
  if (failed(w)) return false;
  if (b->len + more <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + more) cap *= 2;
  unsigned char *d = realloc(b->data, cap);
  if (!d) {
    fail(w, "%s: out of memory", w->path);
    return false;
  }
  b->data = d;
  b->cap = cap;
  return true;
}

static void put(SnapshotWriter *w, Bytes *b, const void *p, size_t n) {
  if (!reserve(w, b, n)) return;
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void put_byte(SnapshotWriter *w, Bytes *b, unsigned v) {
  unsigned char c = (unsigned char)v;
  put(w, b, &c, 1);
}

static void put_varint(SnapshotWriter *w, Bytes *b, uint64_t v) {
  unsigned char tmp[10];
  size_t n = 0;
  do {
    unsigned char byte = v & 0x7f;
    v >>= 7;
    tmp[n++] = byte | (v ? 0x80 : 0);
  } while (v);
  put(w, b, tmp, n);
}

static void put_string(SnapshotWriter *w, Bytes *b, const char *s, size_t n) {
  put_varint(w, b, n);
  put(w, b, s, n);
}

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

// --- records (part 2) ----------------------------------------------------------

// A record of `kind` opened at the end of `b`: where its header starts.
static size_t record_open_in(SnapshotWriter *w, Bytes *b, unsigned kind) {
  size_t at = b->len;
  unsigned char blank[RETAIN_RECORD_HEADER] = {0};
  put(w, b, blank, sizeof blank);
  put_byte(w, b, kind);
  return at;
}

static size_t record_open(SnapshotWriter *w, unsigned kind) { return record_open_in(w, &w->pending, kind); }

static void record_close_in(SnapshotWriter *w, Bytes *b, size_t at) {
  if (failed(w)) return;
  unsigned char *hd = b->data + at;
  size_t len = b->len - at - RETAIN_RECORD_HEADER;
  if (len > RETAIN_MAX_RECORD) {
    fail(w, "%s: a record of %zu bytes (the limit is %d)", w->path, len, RETAIN_MAX_RECORD);
    return;
  }
  put_u32(hd, (uint32_t)len);
  put_u32(hd + 4, retain_crc32(0, hd + RETAIN_RECORD_HEADER, len));
}

static void record_close(SnapshotWriter *w, size_t at) { record_close_in(w, &w->pending, at); }

static void write_all(SnapshotWriter *w, const unsigned char *p, size_t n) {
  while (n > 0 && !failed(w)) {
    ssize_t k = write(w->fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      fail(w, "cannot write %s: %s", w->path, k < 0 ? strerror(errno) : "nothing written");
      return;
    }
    p += k;
    n -= (size_t)k;
  }
}

static void write_pending(SnapshotWriter *w) {
  write_all(w, w->pending.data, w->pending.len);
  w->pending.len = 0;
}

// Part 1: the fresh strings, then the paths in `body`, as records.
static void close_paths(SnapshotWriter *w) {
  if (w->fresh_count > 0) {
    size_t at = record_open(w, RETAIN_RECORD_STRINGS);
    put_varint(w, &w->pending, w->fresh_count);
    put(w, &w->pending, w->fresh.data, w->fresh.len);
    record_close(w, at);
    w->fresh.len = 0;
    w->fresh_count = 0;
  }
  if (w->body_paths > 0) {
    size_t at = record_open(w, RETAIN_RECORD_PATHS);
    put_varint(w, &w->pending, w->number);
    put_varint(w, &w->pending, w->body_paths);
    put(w, &w->pending, w->body.data, w->body.len);
    record_close(w, at);
    w->body.len = 0;
    w->body_paths = 0;
  }
  if (w->pending.len >= FLUSH_BYTES) write_pending(w);
}

// --- strings (part 3) ----------------------------------------------------------

static bool grow_slots(SnapshotWriter *w) {
  uint64_t cap = w->slot_cap ? w->slot_cap * 2 : 256;
  uint32_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (uint64_t i = 0; i < w->string_count; i++) {
    const char *s = w->strings[i];
    uint64_t h = hash_memory(s, strlen(s)) & (cap - 1);
    while (slots[h]) h = (h + 1) & (cap - 1);
    slots[h] = (uint32_t)(i + 1);
  }
  free(w->slots);
  w->slots = slots;
  w->slot_cap = cap;
  return true;
}

// The index of `s` (cut to RETAIN_MAX_STRING bytes) in the file's table; a
// string seen for the first time joins `fresh`.
static uint64_t intern(SnapshotWriter *w, const char *s) {
  if (failed(w)) return 0;
  if (!s) s = "";
  size_t n = strnlen(s, RETAIN_MAX_STRING);
  if ((w->string_count + 1) * 2 > w->slot_cap) {
    if (w->string_count >= UINT32_MAX / 2 || !grow_slots(w)) {
      fail(w, "%s: out of memory (string table)", w->path);
      return 0;
    }
  }
  uint64_t h = hash_memory(s, n) & (w->slot_cap - 1);
  for (; w->slots[h]; h = (h + 1) & (w->slot_cap - 1)) {
    const char *t = w->strings[w->slots[h] - 1];
    if (strlen(t) == n && memcmp(t, s, n) == 0) return w->slots[h] - 1;
  }
  if (w->string_count == w->string_cap) {
    uint64_t cap = w->string_cap ? w->string_cap * 2 : 64;
    char **strings = realloc(w->strings, cap * sizeof *strings);
    if (!strings) {
      fail(w, "%s: out of memory (string table)", w->path);
      return 0;
    }
    w->strings = strings;
    w->string_cap = cap;
  }
  char *copy = malloc(n + 1);
  if (!copy) {
    fail(w, "%s: out of memory (string table)", w->path);
    return 0;
  }
  memcpy(copy, s, n);
  copy[n] = 0;
  w->strings[w->string_count] = copy;
  w->slots[h] = (uint32_t)(w->string_count + 1);
  put_string(w, &w->fresh, copy, n);
  w->fresh_count++;
  return w->string_count++;
}

// --- the API -------------------------------------------------------------------

SnapshotWriter *snapshot_writer_open(const char *path, uint64_t pid, uint64_t start_time_us, char *err,
                                     size_t err_len) {
  SnapshotWriter *w = calloc(1, sizeof *w);
  if (w) {
    w->fd = -1;
    w->path = strdup(path);
  }
  if (!w || !w->path || !grow_slots(w)) {
    snprintf(err, err_len, "%s: out of memory", path);
    snapshot_writer_close(w);
    return NULL;
  }
  w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (w->fd < 0) {
    snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
    snapshot_writer_close(w);
    return NULL;
  }
  put(w, &w->pending, RETAIN_MAGIC, RETAIN_MAGIC_BYTES);
  put_byte(w, &w->pending, RETAIN_VERSION);
  put_varint(w, &w->pending, pid);
  put_varint(w, &w->pending, start_time_us);
  write_pending(w);
  if (failed(w)) {
    snprintf(err, err_len, "%s", w->error);
    snapshot_writer_close(w);
    return NULL;
  }
  return w;
}

bool snapshot_writer_begin(SnapshotWriter *w, RetainTrigger trigger, uint64_t time_us, uint64_t alloc_count) {
  if (failed(w)) return false;
  if (w->in_snapshot) {
    fail(w, "%s: a snapshot begun inside another", w->path);
    return false;
  }
  w->in_snapshot = true;
  w->paths = 0;
  if (trigger == RETAIN_TRIGGER_END) w->end_state = true;
  size_t at = record_open(w, RETAIN_RECORD_BEGIN);
  put_varint(w, &w->pending, w->number);
  put_varint(w, &w->pending, trigger);
  put_varint(w, &w->pending, time_us);
  put_varint(w, &w->pending, alloc_count);
  record_close(w, at);
  return !failed(w);
}

bool snapshot_writer_path(SnapshotWriter *w, const RetainPath *path) {
  if (failed(w)) return false;
  if (!w->in_snapshot) {
    fail(w, "%s: a path outside a snapshot", w->path);
    return false;
  }
  Bytes *b = &w->body;
  put_varint(w, b, path->alloc_id);
  const RetainRoot *root = &path->root;
  put_varint(w, b, root->kind);
  switch (root->kind) {
  case RETAIN_ROOT_GLOBAL: put_varint(w, b, intern(w, root->name)); break;
  case RETAIN_ROOT_STACK:
    put_varint(w, b, intern(w, root->name));
    put_varint(w, b, intern(w, root->file));
    put_varint(w, b, root->line);
    put_varint(w, b, intern(w, root->local));
    put_varint(w, b, root->index);
    break;
  case RETAIN_ROOT_C: put_varint(w, b, root->index); break;
  default: break;
  }
  uint32_t hops = path->hop_count < RETAIN_MAX_HOPS ? path->hop_count : RETAIN_MAX_HOPS;
  put_varint(w, b, hops);
  for (uint32_t i = 0; i < hops; i++) {
    const RetainHop *h = &path->hops[i];
    put_varint(w, b, h->kind);
    put_varint(w, b, h->count ? h->count : 1);
    switch (h->kind) {
    case RETAIN_HOP_FIELD: put_varint(w, b, intern(w, h->name)); break;
    case RETAIN_HOP_CAPTURE:
      put_varint(w, b, intern(w, h->name));
      put_varint(w, b, h->index);
      break;
    case RETAIN_HOP_TUPLE:
    case RETAIN_HOP_ARRAY:
    case RETAIN_HOP_OTHER: put_varint(w, b, h->index); break;
    default: break;
    }
  }
  w->body_paths++;
  w->paths++;
  if (w->body.len >= FLUSH_BYTES) close_paths(w);
  return !failed(w);
}

bool snapshot_writer_end(SnapshotWriter *w, const RetainSnapshotEnd *e) {
  if (failed(w)) return false;
  if (!w->in_snapshot) {
    fail(w, "%s: a snapshot ended that was not begun", w->path);
    return false;
  }
  close_paths(w);
  size_t at = record_open(w, RETAIN_RECORD_END);
  Bytes *b = &w->pending;
  put_varint(w, b, w->number);
  const uint64_t numbers[] = {e->flags, e->live_samples, w->paths, e->marked_blocks, e->marked_words,
                              e->heap_words, e->pause_us, e->paths_us};
  for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) put_varint(w, b, numbers[i]);
  const char *reason = e->reason ? e->reason : "";
  put_string(w, b, reason, strnlen(reason, RETAIN_MAX_STRING));
  record_close(w, at);
  if (w->held_count > 0) {   // part 5
    put(w, &w->pending, w->held.data, w->held.len);
    w->held.len = 0;
  }
  write_pending(w);
  w->in_snapshot = false;
  w->number++;
  if (!failed(w)) w->decisions += w->held_count;
  w->held_count = 0;
  if (failed(w)) return false;
  w->snapshots++;
  return true;
}

bool snapshot_writer_decision(SnapshotWriter *w, const RetainDecision *d) {
  if (failed(w)) return false;
  uint64_t function = intern(w, d->function), file = intern(w, d->file);
  if (!w->in_snapshot) close_paths(w);   // the fresh names' strings record first
  Bytes *b = w->in_snapshot ? &w->held : &w->pending;
  size_t at = record_open_in(w, b, RETAIN_RECORD_DECISION);
  const uint64_t fields[] = {d->time_us, d->alloc_count, d->action, function, file, d->line, d->first_col,
                             d->last_col, d->sampled, d->counted, d->bound_millionths, d->threshold_millionths};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) put_varint(w, b, fields[i]);
  record_close_in(w, b, at);
  if (w->in_snapshot) {
    w->held_count++;
    return !failed(w);
  }
  write_pending(w);
  if (failed(w)) return false;
  w->decisions++;
  return true;
}

uint64_t snapshot_writer_decisions(const SnapshotWriter *w) { return w->decisions; }

const char *snapshot_writer_error(const SnapshotWriter *w) { return w->error; }

uint64_t snapshot_writer_path_count(const SnapshotWriter *w) { return w->paths; }

uint64_t snapshot_writer_snapshots(const SnapshotWriter *w) { return w->snapshots; }

bool snapshot_writer_has_end_state(const SnapshotWriter *w) { return w->end_state; }

void snapshot_writer_close(SnapshotWriter *w) {
  if (!w) return;
  if (w->fd >= 0) close(w->fd);
  for (uint64_t i = 0; i < w->string_count; i++) free(w->strings[i]);
  free(w->strings);
  free(w->slots);
  free(w->pending.data);
  free(w->body.data);
  free(w->fresh.data);
  free(w->held.data);
  free(w->path);
  free(w);
}
