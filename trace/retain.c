// retain.c - the end-state file beside a trace: its encoder and its reader
// (contract and kinds in retain.h; the bytes in docs/trace-format.md, "The
// end state").
//
// 1. Layout. The magic "MNRETAIN", a version byte, the header's numbers as
//    LEB128 varints and its reason as a string, then a string table, then
//    the paths sorted by allocation id. A string is a varint length and its
//    bytes (no NUL inside); names in paths are indices into the table, so a
//    name shared by thousands of paths is written once.
// 2. Reading never trusts a count: a table or a path of n entries needs at
//    least n more bytes, so each count is checked against what remains
//    before anything is allocated, and memory follows the file's size.
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

// ===========================================================================
// Reader

typedef struct Cursor {
  const unsigned char *p, *start, *end;
  const char *name;
  char *err;
  size_t err_len;
  bool failed;
} Cursor;

static void fail_at(Cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_at(Cursor *c, const char *fmt, ...) {
  if (c->failed) return;
  c->failed = true;
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(c->err, c->err_len, "%s: damaged end-state file at byte %zu: %s", c->name, (size_t)(c->p - c->start),
           what);
}

static size_t remaining(const Cursor *c) { return (size_t)(c->end - c->p); }

static uint64_t get_varint(Cursor *c) {
  uint64_t v = 0;
  for (unsigned shift = 0; !c->failed; shift += 7) {
    if (c->p == c->end) {
      fail_at(c, "truncated number");
      break;
    }
    unsigned char byte = *c->p++;
    if (shift == 63 && byte > 1) {
      fail_at(c, "number wider than 64 bits");
      break;
    }
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
  return 0;
}

// A count of entries that each take at least `min_bytes` bytes.
static uint64_t get_count(Cursor *c, size_t min_bytes, const char *what) {
  uint64_t n = get_varint(c);
  if (!c->failed && n > remaining(c) / min_bytes) fail_at(c, "%llu %s cannot fit the %zu bytes left",
                                                           (unsigned long long)n, what, remaining(c));
  return c->failed ? 0 : n;
}

static char *get_string(Cursor *c) {
  uint64_t n = get_varint(c);
  if (c->failed) return NULL;
  if (n > RETAIN_MAX_STRING || n > remaining(c)) {
    fail_at(c, "a string of %llu bytes (at most %d, %zu left)", (unsigned long long)n, RETAIN_MAX_STRING,
            remaining(c));
    return NULL;
  }
  if (memchr(c->p, 0, n)) {
    fail_at(c, "a NUL byte inside a string");
    return NULL;
  }
  char *s = malloc(n + 1);
  if (!s) {
    fail_at(c, "out of memory");
    return NULL;
  }
  memcpy(s, c->p, n);
  s[n] = 0;
  c->p += n;
  return s;
}

static const char *get_name(Cursor *c, const RetainFile *f) {
  uint64_t i = get_varint(c);
  if (c->failed) return "";
  if (i >= f->string_count) {
    fail_at(c, "string %llu of a table of %llu", (unsigned long long)i, (unsigned long long)f->string_count);
    return "";
  }
  return f->strings[i];
}

static uint32_t get_u32(Cursor *c, const char *what) {
  uint64_t v = get_varint(c);
  if (!c->failed && v > UINT32_MAX) fail_at(c, "%s %llu is out of range", what, (unsigned long long)v);
  return (uint32_t)v;
}

void retain_file_free(RetainFile *f) {
  for (uint64_t i = 0; i < f->string_count; i++) free(f->strings[i]);
  free(f->strings);
  free(f->paths);
  free(f->hop_storage);
  free(f->reason_storage);
  memset(f, 0, sizeof *f);
}


// ---------------------------------------------------------------------------
// Version 2 (snapshots), until the tools read it themselves: the last whole
// snapshot, re-encoded as a version-1 file and read as one. Damage is left
// to the version-1 checks where it shows there; records are checked for
// their lengths and CRCs.

typedef struct V2Span {
  uint64_t id;
  const unsigned char *p;
  size_t n;
} V2Span;

static int by_span_id(const void *a, const void *b) {
  uint64_t x = ((const V2Span *)a)->id, y = ((const V2Span *)b)->id;
  return x < y ? -1 : x > y;
}

static uint64_t v2_varint(const unsigned char **p, const unsigned char *end, bool *bad) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (*p >= end) break;
    unsigned char b = *(*p)++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  *bad = true;
  return 0;
}

// One path's bytes after its id: root, hops.
static void v2_skip_path(const unsigned char **p, const unsigned char *end, bool *bad) {
  uint64_t kind = v2_varint(p, end, bad);
  if (kind == RETAIN_ROOT_GLOBAL || kind == RETAIN_ROOT_C) v2_varint(p, end, bad);
  if (kind == RETAIN_ROOT_STACK)
    for (int i = 0; i < 5; i++) v2_varint(p, end, bad);
  uint64_t hops = v2_varint(p, end, bad);
  for (uint64_t k = 0; k < hops && !*bad; k++) {
    uint64_t hk = v2_varint(p, end, bad);
    v2_varint(p, end, bad);
    if (hk == RETAIN_HOP_FIELD || hk == RETAIN_HOP_TUPLE || hk == RETAIN_HOP_ARRAY || hk == RETAIN_HOP_OTHER)
      v2_varint(p, end, bad);
    if (hk == RETAIN_HOP_CAPTURE) {
      v2_varint(p, end, bad);
      v2_varint(p, end, bad);
    }
  }
}

static bool v2_to_v1(const unsigned char *bytes, size_t len, const char *name, Bytes *out, char *err,
                     size_t err_len) {
  bool bad = false;
  const unsigned char *p = bytes + sizeof MAGIC + 1, *end = bytes + len;
  uint64_t pid = v2_varint(&p, end, &bad), start = v2_varint(&p, end, &bad);
  Bytes strings = {0};
  uint64_t string_count = 0;
  V2Span *spans = NULL, *last = NULL;
  uint64_t span_count = 0, span_cap = 0, last_count = 0;
  uint64_t begin_time = 0, alloc_count = 0, numbers[8] = {0};
  const unsigned char *reason = NULL;
  size_t reason_len = 0;
  bool in_snapshot = false, have = false;
  while (!bad && end - p >= RETAIN_RECORD_HEADER) {
    uint32_t n = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
    uint32_t crc = p[4] | p[5] << 8 | p[6] << 16 | (uint32_t)p[7] << 24;
    if (n == 0 || (size_t)(end - p - RETAIN_RECORD_HEADER) < n) break;   // cut short: the end
    const unsigned char *q = p + RETAIN_RECORD_HEADER, *rend = q + n;
    if (retain_crc32(0, q, n) != crc) {
      snprintf(err, err_len, "%s: damaged snapshot file at byte %zu: a record whose check does not match", name,
               (size_t)(p - bytes));
      free(strings.data);
      free(spans);
      free(last);
      return false;
    }
    unsigned kind = *q++;
    if (kind == RETAIN_RECORD_STRINGS) {
      uint64_t k = v2_varint(&q, rend, &bad);
      string_count += k;
      put_bytes(&strings, q, (size_t)(rend - q));
    } else if (kind == RETAIN_RECORD_BEGIN) {
      v2_varint(&q, rend, &bad);
      v2_varint(&q, rend, &bad);
      begin_time = v2_varint(&q, rend, &bad);
      alloc_count = v2_varint(&q, rend, &bad);
      span_count = 0;
      in_snapshot = true;
    } else if (kind == RETAIN_RECORD_PATHS && in_snapshot) {
      v2_varint(&q, rend, &bad);
      uint64_t k = v2_varint(&q, rend, &bad);
      for (uint64_t i = 0; i < k && !bad; i++) {
        if (span_count == span_cap) {
          span_cap = span_cap ? 2 * span_cap : 256;
          V2Span *grown = realloc(spans, span_cap * sizeof *spans);
          if (!grown) {
            bad = true;
            break;
          }
          spans = grown;
        }
        V2Span *sp = &spans[span_count++];
        sp->id = v2_varint(&q, rend, &bad);
        sp->p = q;
        v2_skip_path(&q, rend, &bad);
        sp->n = (size_t)(q - sp->p);
      }
    } else if (kind == RETAIN_RECORD_END && in_snapshot) {
      v2_varint(&q, rend, &bad);
      for (int i = 0; i < 8; i++) numbers[i] = v2_varint(&q, rend, &bad);
      reason_len = (size_t)v2_varint(&q, rend, &bad);
      reason = q;
      if (reason_len > (size_t)(rend - q)) bad = true;
      free(last);
      last = spans;
      last_count = span_count;
      spans = NULL;
      span_count = span_cap = 0;
      in_snapshot = false;
      have = true;
    }
    p += RETAIN_RECORD_HEADER + n;
  }
  if (!bad && !have) {
    snprintf(err, err_len, "%s: no whole snapshot yet (it ends at byte %zu%s: the run is still writing it, or died)",
             name, len, p < end ? ", inside a record" : "");
    free(strings.data);
    free(spans);
    free(last);
    return false;
  }
  if (last_count > 1) qsort(last, last_count, sizeof *last, by_span_id);
  put_bytes(out, MAGIC, sizeof MAGIC);
  unsigned char v1 = RETAIN_VERSION_1;
  put_bytes(out, &v1, 1);
  // numbers: flags, live, paths, marked blocks, words, heap words, pause, paths us
  const uint64_t header[] = {pid, start, alloc_count, begin_time, numbers[0], numbers[1], numbers[3], numbers[4],
                             numbers[6] - numbers[7], numbers[7]};
  for (size_t i = 0; i < sizeof header / sizeof header[0]; i++) put_varint(out, header[i]);
  put_varint(out, reason_len);
  if (reason) put_bytes(out, reason, reason_len);
  put_varint(out, string_count);
  put_bytes(out, strings.data, strings.len);
  put_varint(out, last_count);
  for (uint64_t i = 0; i < last_count; i++) {
    put_varint(out, last[i].id);
    put_bytes(out, last[i].p, last[i].n);
  }
  free(strings.data);
  free(spans);
  free(last);
  if (bad || out->failed) {
    snprintf(err, err_len, "%s: damaged snapshot file", name);
    return false;
  }
  return true;
}

bool retain_read_bytes(const unsigned char *bytes, size_t len, const char *name, RetainFile *out, char *err,
                       size_t err_len) {
  memset(out, 0, sizeof *out);
  if (len > sizeof MAGIC && memcmp(bytes, MAGIC, sizeof MAGIC) == 0 && bytes[sizeof MAGIC] == RETAIN_VERSION) {
    Bytes v1 = {0};
    bool ok = v2_to_v1(bytes, len, name, &v1, err, err_len) &&
              retain_read_bytes(v1.data, v1.len, name, out, err, err_len);
    free(v1.data);
    return ok;
  }
  Cursor c = {bytes, bytes, bytes + len, name, err, err_len, false};
  if (len < sizeof MAGIC + 1 || memcmp(bytes, MAGIC, sizeof MAGIC) != 0) {
    snprintf(err, err_len, "%s: not an end-state file (no MNRETAIN magic)", name);
    return false;
  }
  c.p += sizeof MAGIC;
  unsigned version = *c.p++;
  if (version != RETAIN_VERSION_1) {
    snprintf(err, err_len, "%s: end-state file version %u (this tool reads %d)", name, version, RETAIN_VERSION_1);
    return false;
  }
  RetainHeader *h = &out->header;
  h->pid = get_varint(&c);
  h->start_time_us = get_varint(&c);
  h->alloc_count = get_varint(&c);
  h->end_time_us = get_varint(&c);
  h->flags = get_u32(&c, "flags");
  h->live_samples = get_varint(&c);
  h->reachable_blocks = get_varint(&c);
  h->reachable_words = get_varint(&c);
  h->gc_us = get_varint(&c);
  h->walk_us = get_varint(&c);
  out->reason_storage = get_string(&c);
  h->reason = out->reason_storage ? out->reason_storage : "";
  if (!c.failed && (h->flags & ~(uint32_t)(RETAIN_FINAL_GC | RETAIN_PATHS)))
    fail_at(&c, "unknown flags %#x", h->flags);
  if (!c.failed && (h->flags & RETAIN_PATHS) && !(h->flags & RETAIN_FINAL_GC))
    fail_at(&c, "paths without a final collection");
  uint64_t n = get_count(&c, 1, "strings");
  if (!c.failed && n) {
    out->strings = calloc(n, sizeof *out->strings);
    if (!out->strings) fail_at(&c, "out of memory");
  }
  for (uint64_t i = 0; i < n && !c.failed; i++) {
    out->strings[i] = get_string(&c);
    if (out->strings[i]) out->string_count = i + 1;
  }
  // A path takes at least 3 bytes: its id, its root's kind, its hop count.
  uint64_t paths = get_count(&c, 3, "paths");
  if (!c.failed && paths && !(h->flags & RETAIN_PATHS)) fail_at(&c, "paths in a file that says it has none");
  if (!c.failed && paths > h->live_samples) fail_at(&c, "%llu paths for %llu live samples",
                                                    (unsigned long long)paths, (unsigned long long)h->live_samples);
  // Each hop takes at least 2 bytes: so the whole file bounds them.
  size_t hop_cap = remaining(&c) / 2 + 1;
  if (!c.failed && paths) {
    out->paths = calloc(paths, sizeof *out->paths);
    out->hop_storage = calloc(hop_cap, sizeof *out->hop_storage);
    if (!out->paths || !out->hop_storage) fail_at(&c, "out of memory");
  }
  size_t hops_used = 0;
  for (uint64_t i = 0; i < paths && !c.failed; i++) {
    RetainPath *p = &out->paths[i];
    p->alloc_id = get_varint(&c);
    if (!c.failed && p->alloc_id >= h->alloc_count)
      fail_at(&c, "a path for allocation %llu of a trace of %llu", (unsigned long long)p->alloc_id,
              (unsigned long long)h->alloc_count);
    if (!c.failed && i > 0 && p->alloc_id <= out->paths[i - 1].alloc_id)
      fail_at(&c, "paths out of order (allocation %llu after %llu)", (unsigned long long)p->alloc_id,
              (unsigned long long)out->paths[i - 1].alloc_id);
    RetainRoot *r = &p->root;
    uint64_t kind = get_varint(&c);
    if (!c.failed && kind >= RETAIN_ROOT_KINDS) fail_at(&c, "unknown root kind %llu", (unsigned long long)kind);
    r->kind = (RetainRootKind)kind;
    r->name = r->file = r->local = "";
    if (r->kind == RETAIN_ROOT_GLOBAL) r->name = get_name(&c, out);
    if (r->kind == RETAIN_ROOT_STACK) {
      r->name = get_name(&c, out);
      r->file = get_name(&c, out);
      r->line = get_u32(&c, "line");
      r->local = get_name(&c, out);
      r->index = get_varint(&c);
    }
    if (r->kind == RETAIN_ROOT_C) r->index = get_varint(&c);
    uint64_t hop_count = get_varint(&c);
    if (!c.failed && (hop_count > RETAIN_MAX_HOPS || hop_count > hop_cap - hops_used))
      fail_at(&c, "a path of %llu hops (at most %d)", (unsigned long long)hop_count, RETAIN_MAX_HOPS);
    if (c.failed) break;
    RetainHop *hops = out->hop_storage + hops_used;
    for (uint64_t k = 0; k < hop_count && !c.failed; k++) {
      RetainHop *hp = &hops[k];
      uint64_t hk = get_varint(&c);
      if (!c.failed && hk >= RETAIN_HOP_KINDS) fail_at(&c, "unknown hop kind %llu", (unsigned long long)hk);
      hp->kind = (RetainHopKind)hk;
      hp->count = get_varint(&c);
      if (!c.failed && hp->count == 0) fail_at(&c, "a hop repeated 0 times");
      hp->name = "";
      if (hp->kind == RETAIN_HOP_FIELD || hp->kind == RETAIN_HOP_CAPTURE) hp->name = get_name(&c, out);
      if (hp->kind == RETAIN_HOP_CAPTURE || hp->kind == RETAIN_HOP_TUPLE || hp->kind == RETAIN_HOP_ARRAY ||
          hp->kind == RETAIN_HOP_OTHER)
        hp->index = get_varint(&c);
    }
    p->hops = hops;
    p->hop_count = (uint32_t)hop_count;
    hops_used += hop_count;
    if (!c.failed) out->path_count = i + 1;
  }
  if (!c.failed && c.p != c.end) fail_at(&c, "%zu bytes after the last path", remaining(&c));
  if (c.failed) {
    retain_file_free(out);
    return false;
  }
  return true;
}

bool retain_read(const char *path, RetainFile *out, char *err, size_t err_len) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(err, err_len, "cannot read %s: not a regular file", path);
    fclose(f);
    return false;
  }
  size_t len = (size_t)st.st_size;
  unsigned char *bytes = malloc(len ? len : 1);
  if (!bytes) {
    snprintf(err, err_len, "cannot read %s: out of memory (%zu bytes)", path, len);
    fclose(f);
    return false;
  }
  size_t got = fread(bytes, 1, len, f);
  fclose(f);
  if (got != len) {
    snprintf(err, err_len, "cannot read %s: short read (%zu of %zu bytes)", path, got, len);
    free(bytes);
    return false;
  }
  bool ok = retain_read_bytes(bytes, len, path, out, err, err_len);
  free(bytes);
  return ok;
}

const RetainPath *retain_find(const RetainFile *f, uint64_t id) {
  uint64_t lo = 0, hi = f->path_count;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (f->paths[mid].alloc_id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < f->path_count && f->paths[lo].alloc_id == id ? &f->paths[lo] : NULL;
}
