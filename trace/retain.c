// retain.c - the end-state file beside a trace, version 1: its encoder
// (contract and kinds in retain.h; the bytes in docs/trace-format.md, 12.3).
// trace/snapshot_reader.c reads it.
//
// 1. Layout. The magic "MNRETAIN", a version byte, the header's numbers as
//    LEB128 varints and its reason as a string, then a string table, then
//    the paths sorted by allocation id. A string is a varint length and its
//    bytes (no NUL inside); names in paths are indices into the table, so a
//    name shared by thousands of paths is written once.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retain.h"

static const char MAGIC[8] = {'M', 'N', 'R', 'E', 'T', 'A', 'I', 'N'};

// ===========================================================================
// Growable bytes
typedef struct Bytes {
  unsigned char *data;
  size_t len, cap;
  bool failed;
} Bytes;

static void bytes_reserve(Bytes *b, size_t more) {
  if (b->failed || b->len + more <= b->cap) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + more) cap *= 2;
  unsigned char *d = realloc(b->data, cap);
  if (!d) {
    b->failed = true;
    return;
  }
  b->data = d;
  b->cap = cap;
}

static void put_bytes(Bytes *b, const void *p, size_t n) {
  if (n == 0) return; /* p may be NULL for an empty table */
  bytes_reserve(b, n);
  if (b->failed) return;
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void put_varint(Bytes *b, uint64_t v) {
  unsigned char tmp[10];
  size_t n = 0;
  do {
    unsigned char byte = v & 0x7f;
    v >>= 7;
    tmp[n++] = byte | (v ? 0x80 : 0);
  } while (v);
  put_bytes(b, tmp, n);
}

static void put_string(Bytes *b, const char *s) {
  size_t n = strnlen(s, RETAIN_MAX_STRING);
  put_varint(b, n);
  put_bytes(b, s, n);
}

// ===========================================================================
// Writer

typedef struct PathRecord {
  uint64_t alloc_id;
  size_t offset, len;   // its bytes in the writer's `paths`
} PathRecord;

struct RetainWriter {
  // string table: open addressing over indices into `strings`
  char **strings;
  uint64_t string_count, string_cap;
  uint32_t *slots;        // 0: empty, else index + 1
  uint64_t slot_cap;      // a power of two, at least twice string_count
  Bytes paths;
  PathRecord *records;
  uint64_t record_count, record_cap;
  bool failed;
};

static uint64_t hash_string(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
  return h ^ (h >> 29);
}

RetainWriter *retain_writer_new(void) {
  RetainWriter *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->slot_cap = 256;
  w->slots = calloc(w->slot_cap, sizeof *w->slots);
  if (!w->slots) {
    free(w);
    return NULL;
  }
  return w;
}

static bool grow_slots(RetainWriter *w) {
  uint64_t cap = w->slot_cap * 2;
  uint32_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (uint64_t i = 0; i < w->string_count; i++) {
    const char *s = w->strings[i];
    uint64_t h = hash_string(s, strlen(s)) & (cap - 1);
    while (slots[h]) h = (h + 1) & (cap - 1);
    slots[h] = (uint32_t)(i + 1);
  }
  free(w->slots);
  w->slots = slots;
  w->slot_cap = cap;
  return true;
}

// The index of `s` (cut to RETAIN_MAX_STRING bytes) in the string table.
static uint64_t intern(RetainWriter *w, const char *s) {
  if (!s) s = "";
  size_t n = strnlen(s, RETAIN_MAX_STRING);
  uint64_t h = hash_string(s, n) & (w->slot_cap - 1);
  while (w->slots[h]) {
    const char *t = w->strings[w->slots[h] - 1];
    if (strlen(t) == n && memcmp(t, s, n) == 0) return w->slots[h] - 1;
    h = (h + 1) & (w->slot_cap - 1);
  }
  if ((w->string_count + 1) * 2 > w->slot_cap || w->string_count == UINT32_MAX - 1) {
    if (w->string_count == UINT32_MAX - 1 || !grow_slots(w)) {
      w->failed = true;
      return 0;
    }
    return intern(w, s);
  }
  if (w->string_count == w->string_cap) {
    uint64_t cap = w->string_cap ? w->string_cap * 2 : 64;
    char **strings = realloc(w->strings, cap * sizeof *strings);
    if (!strings) {
      w->failed = true;
      return 0;
    }
    w->strings = strings;
    w->string_cap = cap;
  }
  char *copy = malloc(n + 1);
  if (!copy) {
    w->failed = true;
    return 0;
  }
  memcpy(copy, s, n);
  copy[n] = 0;
  w->strings[w->string_count] = copy;
  w->slots[h] = (uint32_t)(w->string_count + 1);
  return w->string_count++;
}

bool retain_writer_add(RetainWriter *w, const RetainPath *path) {
  if (w->failed) return false;
  if (w->record_count == w->record_cap) {
    uint64_t cap = w->record_cap ? w->record_cap * 2 : 256;
    PathRecord *r = realloc(w->records, cap * sizeof *r);
    if (!r) return !(w->failed = true);
    w->records = r;
    w->record_cap = cap;
  }
  Bytes *b = &w->paths;
  size_t start = b->len;
  const RetainRoot *root = &path->root;
  put_varint(b, root->kind);
  switch (root->kind) {
  case RETAIN_ROOT_GLOBAL: put_varint(b, intern(w, root->name)); break;
  case RETAIN_ROOT_STACK:
    put_varint(b, intern(w, root->name));
    put_varint(b, intern(w, root->file));
    put_varint(b, root->line);
    put_varint(b, intern(w, root->local));
    put_varint(b, root->index);
    break;
  case RETAIN_ROOT_C: put_varint(b, root->index); break;
  default: break;
  }
  uint32_t hops = path->hop_count < RETAIN_MAX_HOPS ? path->hop_count : RETAIN_MAX_HOPS;
  put_varint(b, hops);
  for (uint32_t i = 0; i < hops; i++) {
    const RetainHop *h = &path->hops[i];
    put_varint(b, h->kind);
    put_varint(b, h->count ? h->count : 1);
    switch (h->kind) {
    case RETAIN_HOP_FIELD: put_varint(b, intern(w, h->name)); break;
    case RETAIN_HOP_CAPTURE:
      put_varint(b, intern(w, h->name));
      put_varint(b, h->index);
      break;
    case RETAIN_HOP_TUPLE:
    case RETAIN_HOP_ARRAY:
    case RETAIN_HOP_OTHER: put_varint(b, h->index); break;
    default: break;
    }
  }
  if (b->failed) w->failed = true;
  w->records[w->record_count++] = (PathRecord){path->alloc_id, start, b->len - start};
  return !w->failed;
}

static int by_alloc_id(const void *a, const void *b) {
  uint64_t x = ((const PathRecord *)a)->alloc_id, y = ((const PathRecord *)b)->alloc_id;
  return x < y ? -1 : x > y;
}

void retain_writer_free(RetainWriter *w) {
  if (!w) return;
  for (uint64_t i = 0; i < w->string_count; i++) free(w->strings[i]);
  free(w->strings);
  free(w->slots);
  free(w->paths.data);
  free(w->records);
  free(w);
}

bool retain_writer_finish(RetainWriter *w, const RetainHeader *h, const char *path, char *err, size_t err_len) {
  Bytes out = {0};
  put_bytes(&out, MAGIC, sizeof MAGIC);
  unsigned char version = RETAIN_VERSION_1;
  put_bytes(&out, &version, 1);
  const uint64_t numbers[] = {h->pid,          h->start_time_us,    h->alloc_count,     h->end_time_us,
                              h->flags,        h->live_samples,     h->reachable_blocks, h->reachable_words,
                              h->gc_us,        h->walk_us};
  for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) put_varint(&out, numbers[i]);
  put_string(&out, h->reason ? h->reason : "");
  put_varint(&out, w->string_count);
  for (uint64_t i = 0; i < w->string_count; i++) put_string(&out, w->strings[i]);
  if (w->record_count > 1) qsort(w->records, w->record_count, sizeof *w->records, by_alloc_id);
  // Each id once: a block has one path (the first added is kept).
  uint64_t distinct = 0;
  for (uint64_t i = 0; i < w->record_count; i++)
    if (i == 0 || w->records[i].alloc_id != w->records[i - 1].alloc_id) w->records[distinct++] = w->records[i];
  put_varint(&out, distinct);
  for (uint64_t i = 0; i < distinct; i++) {
    put_varint(&out, w->records[i].alloc_id);
    put_bytes(&out, w->paths.data + w->records[i].offset, w->records[i].len);
  }
  bool ok = !out.failed && !w->failed;
  if (!ok) snprintf(err, err_len, "%s: out of memory", path);
  retain_writer_free(w);
  if (ok) {
    size_t n = strlen(path);
    char *tmp = malloc(n + 5);
    FILE *f = NULL;
    if (tmp) {
      memcpy(tmp, path, n);
      memcpy(tmp + n, ".tmp", 5);
      f = fopen(tmp, "wb");
    }
    if (!f) {
      snprintf(err, err_len, "cannot write %s.tmp: %s", path, tmp ? strerror(errno) : "out of memory");
      ok = false;
    } else {
      bool written = fwrite(out.data, 1, out.len, f) == out.len;
      int saved = errno;
      if (fclose(f) != 0 && written) {
        written = false;
        saved = errno;
      }
      if (!written) {
        snprintf(err, err_len, "cannot write %s: %s", tmp, strerror(saved));
        remove(tmp);
        ok = false;
      } else if (rename(tmp, path) != 0) {
        snprintf(err, err_len, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        remove(tmp);
        ok = false;
      }
    }
    free(tmp);
  }
  free(out.data);
  return ok;
}
