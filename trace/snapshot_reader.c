// snapshot_reader.c - reads the snapshot file beside a trace (contract in
// snapshot_reader.h; the bytes in docs/trace-format.md, section 12).
//
// 1. Storage. Names, paths and hops are allocated from chunks that are
//    never moved or freed before close (an arena), so that every pointer
//    handed out stays valid while the file grows. Snapshots and decisions
//    are allocated one by one and listed in arrays of pointers.
// 2. Paths are interned: a path is its block's id, its root and its hops
//    (names by their string-table index, so equal indices are equal
//    names), encoded (below), hashed and kept once; a snapshot is an array
//    of indices into them, sorted by id. The snapshot being read gathers
//    its (index, id, offset) entries in `pending`; its end record sorts them
//    and checks them (an id twice is damage at the later path's offset).
//    A path is kept encoded: its length, then every field of its root and
//    of each hop as a varint, a name as 0 ("") or its string's index + 1:
//    a tenth of a RetainPath and its RetainHops (32 bytes a hop), which
//    snapshot_path makes on first ask and keeps (`made`); a view decodes
//    into the caller's buffer and keeps nothing. The intern table (`slots`)
//    lives while a read lasts (read_now) and is made again by the next.
// 3. Version 2 is read a record at a time from `offset` (the next record):
//    its 8-byte header, then its body into `body` (reused, at most 16 MiB),
//    the CRC-32 checked before any field is read. A record the file does
//    not hold whole stops the reading there (SnapshotTail); the next update
//    starts again at `offset`. The state between records (the string table,
//    the snapshot begun) is all the parser keeps, so records are parsed
//    once each however the file grows.
// 4. Every field is read through a cursor over the record's body that knows
//    the body's offset in the file: a failure names the offset of the field
//    that failed, or of the path or record a check is about. A count is
//    checked against the bytes left before anything is allocated for it.
// 5. Version 1 (one end state, no records) is read whole, with the checks of
//    its old reader (paths sorted by id, below the alloc count, no more
//    than the live samples, flags consistent), into one snapshot.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot_reader.h"
#include "../base/grow.h"
#include "../base/hash.h"

enum { CHUNK_BYTES = 64 * 1024, HEADER_MAX = RETAIN_MAGIC_BYTES + 1 + 2 * 10 };

typedef struct Chunk {
  struct Chunk *next;
  size_t used, cap;
  max_align_t data[];
} Chunk;

typedef struct Pending {
  uint64_t id;
  uint64_t offset;    // the path's offset in the file
  uint32_t path;      // index into paths
} Pending;

struct SnapshotReader {
  char *name;
  int fd;                          // -1: bytes in memory
  const unsigned char *mem;        // open_bytes: the bytes, while reading
  size_t mem_len;
  uint32_t version;
  uint64_t pid, start_time_us;
  uint64_t offset;                 // version 2: the next record
  bool failed;
  char error[SNAPSHOT_READER_ERROR_MAX];
  Chunk *chunks;
  Chunk *packed;                   // the encoded paths' chunks (packed())
  char **strings;
  uint64_t n_strings, cap_strings;
  const unsigned char **enc;       // distinct paths, encoded (part 2), in the arena
  uint64_t *ids;                   // their allocation ids
  RetainPath **made;               // decoded by snapshot_path, NULL until asked
  uint64_t cap_made;               // made's length (0 until snapshot_path is first called)
  uint64_t n_paths, cap_paths;
  uint32_t *name_slots;            // string pointer -> its index + 1 (open addressing)
  uint64_t name_cap;               // a power of two >= 2 * (n_strings + 1)
  uint32_t *slots;                 // intern table: path index + 1, 0 empty
  uint64_t slot_cap;               // a power of two >= 2 * (n_paths + 1)
  Snapshot **snaps;
  uint32_t **snap_paths;           // per snapshot: path indices by increasing id
  uint32_t n_snaps, cap_snaps;
  SnapshotDecision **decisions;
  uint32_t n_decisions, cap_decisions;
  // the snapshot being read
  bool in_snapshot;
  Snapshot current;
  Pending *pending;
  uint64_t n_pending, cap_pending;
  bool end_state_seen;
  uint64_t next_number;
  SnapshotTail tail;
  unsigned char *body;
  size_t body_cap;
  RetainHop scratch_hops[RETAIN_MAX_HOPS];
  unsigned char scratch_enc[(8 + 4 * RETAIN_MAX_HOPS) * 10 + 10];
};

// The name of no string (a root's or hop's name that has none).
static const char EMPTY[] = "";

// ===========================================================================
// Failure and memory

static void failf(SnapshotReader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failf(SnapshotReader *r, const char *fmt, ...) {
  if (r->failed) return;
  r->failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->error, sizeof r->error, fmt, ap);
  va_end(ap);
}

// Damage at a byte offset of the file (contract 2).
static void damage(SnapshotReader *r, uint64_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void damage(SnapshotReader *r, uint64_t at, const char *fmt, ...) {
  if (r->failed) return;
  char what[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  failf(r, "%s: damaged snapshot file at byte %llu: %s", r->name, (unsigned long long)at, what);
}

static void out_of_memory(SnapshotReader *r) { failf(r, "%s: out of memory", r->name); }

// n bytes from the chunks of `list` (part 1); NULL (and the reader failed)
// when memory is short.
static void *chunk_bytes(SnapshotReader *r, Chunk **list, size_t n) {
  Chunk *c = *list;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
    c = malloc(sizeof *c + cap);
    if (!c) {
      out_of_memory(r);
      return NULL;
    }
    c->used = 0;
    c->cap = cap;
    c->next = *list;
    *list = c;
  }
  void *p = (char *)c->data + c->used;
  c->used += n;
  return p;
}

// Bytes from the arena (part 1), aligned.
static void *arena(SnapshotReader *r, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  return chunk_bytes(r, &r->chunks, n);
}

// Bytes for the encoded paths, packed byte to byte (their own chunks: the
// arena's stay aligned).
static void *packed(SnapshotReader *r, size_t n) { return chunk_bytes(r, &r->packed, n); }

// Grows *array (of `size`-byte items, *cap of them) to hold `need`.
static bool grow(SnapshotReader *r, void **array, uint64_t *cap, uint64_t need, size_t size) {
  void *p = grow_array64(*array, cap, need, size, 16);
  if (!p) {
    out_of_memory(r);
    return false;
  }
  *array = p;
  return true;
}

static bool grow32(SnapshotReader *r, void **array, uint32_t *cap, uint32_t need, size_t size) {
  // the count's next + 1 must not wrap
  void *p = need < UINT32_MAX ? grow_array(*array, cap, need, size, 16) : NULL;
  if (!p) {
    out_of_memory(r);
    return false;
  }
  *array = p;
  return true;
}

// ===========================================================================
// Cursor over bytes whose first byte is at file offset `base` (part 4)

typedef struct Cursor {
  SnapshotReader *r;
  const unsigned char *p, *start, *end;
  uint64_t base;
} Cursor;

static uint64_t here(const Cursor *c) { return c->base + (uint64_t)(c->p - c->start); }
static size_t left(const Cursor *c) { return (size_t)(c->end - c->p); }
static bool bad(const Cursor *c) { return c->r->failed; }

static uint64_t get_varint(Cursor *c, const char *what) {
  if (bad(c)) return 0;
  uint64_t at = here(c), v = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (c->p == c->end) {
      damage(c->r, at, "%s: the record ends inside its number", what);
      return 0;
    }
    unsigned char byte = *c->p++;
    if (shift == 63 && byte > 1) {
      damage(c->r, at, "%s: a number wider than 64 bits", what);
      return 0;
    }
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
}

static uint32_t get_u32(Cursor *c, const char *what) {
  uint64_t at = here(c), v = get_varint(c, what);
  if (!bad(c) && v > UINT32_MAX) damage(c->r, at, "%s %llu is out of range", what, (unsigned long long)v);
  return (uint32_t)v;
}

// A count of entries that each take at least `min_bytes` bytes.
static uint64_t get_count(Cursor *c, size_t min_bytes, const char *what) {
  uint64_t at = here(c), n = get_varint(c, what);
  if (!bad(c) && n > left(c) / min_bytes)
    damage(c->r, at, "%llu %s cannot fit the %zu bytes left", (unsigned long long)n, what, left(c));
  return bad(c) ? 0 : n;
}

// A string, copied into the arena.
static const char *get_string(Cursor *c, const char *what) {
  uint64_t at = here(c), n = get_varint(c, what);
  if (bad(c)) return "";
  if (n > RETAIN_MAX_STRING || n > left(c)) {
    damage(c->r, at, "%s: a string of %llu bytes (at most %d, %zu left)", what, (unsigned long long)n,
           RETAIN_MAX_STRING, left(c));
    return "";
  }
  if (memchr(c->p, 0, n)) {
    damage(c->r, at, "%s: a NUL byte inside a string", what);
    return "";
  }
  char *s = arena(c->r, n + 1);
  if (!s) return "";
  memcpy(s, c->p, n);
  s[n] = 0;
  c->p += n;
  return s;
}

// A name: an index into the string table, defined before.
static const char *get_name(Cursor *c, const char *what) {
  uint64_t at = here(c), i = get_varint(c, what);
  if (bad(c)) return "";
  if (i >= c->r->n_strings) {
    damage(c->r, at, "%s: string %llu of a table of %llu", what, (unsigned long long)i,
           (unsigned long long)c->r->n_strings);
    return "";
  }
  return c->r->strings[i];
}

static uint64_t ptr_hash(const char *s) { return hash_mix((uint64_t)(uintptr_t)s); }

static void add_string(SnapshotReader *r, const char *s) {
  if (!grow(r, (void **)&r->strings, &r->cap_strings, r->n_strings + 1, sizeof *r->strings)) return;
  r->strings[r->n_strings++] = (char *)s;
  if (2 * (r->n_strings + 1) > r->name_cap) {
    uint64_t cap = r->name_cap ? 2 * r->name_cap : 256;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots || r->n_strings >= UINT32_MAX - 1) {
      free(slots);
      out_of_memory(r);
      return;
    }
    for (uint64_t i = 0; i + 1 < r->n_strings; i++) {
      uint64_t j = ptr_hash(r->strings[i]) & (cap - 1);
      while (slots[j]) j = (j + 1) & (cap - 1);
      slots[j] = (uint32_t)(i + 1);
    }
    free(r->name_slots);
    r->name_slots = slots;
    r->name_cap = cap;
  }
  uint64_t j = ptr_hash(s) & (r->name_cap - 1);
  while (r->name_slots[j]) j = (j + 1) & (r->name_cap - 1);
  r->name_slots[j] = (uint32_t)r->n_strings;
}

// A name's code in an encoded path: 0 for EMPTY (or a name read from a
// field that failed: the path is then dropped), else its index + 1.
static uint64_t name_code(const SnapshotReader *r, const char *s) {
  if (s == EMPTY || !r->name_cap) return 0;
  for (uint64_t j = ptr_hash(s) & (r->name_cap - 1); r->name_slots[j]; j = (j + 1) & (r->name_cap - 1))
    if (r->strings[r->name_slots[j] - 1] == s) return r->name_slots[j];
  return 0;
}

// ===========================================================================
// Paths (part 2)

static unsigned char *put_varint(unsigned char *o, uint64_t v) {
  while (v >= 0x80) *o++ = (unsigned char)(v | 0x80), v >>= 7;
  *o++ = (unsigned char)v;
  return o;
}

static uint64_t take_varint(const unsigned char **in) {
  const unsigned char *p = *in;
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    unsigned char b = *p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  *in = p;
  return v;
}

// *p encoded into r->scratch_enc (part 2, without its length); returns the
// bytes written.
static size_t encode_path(SnapshotReader *r, const RetainPath *p) {
  unsigned char *o = r->scratch_enc;
  const RetainRoot *root = &p->root;
  o = put_varint(o, p->alloc_id);
  o = put_varint(o, root->kind);
  o = put_varint(o, name_code(r, root->name));
  o = put_varint(o, name_code(r, root->file));
  o = put_varint(o, root->line);
  o = put_varint(o, name_code(r, root->local));
  o = put_varint(o, root->index);
  o = put_varint(o, p->hop_count);
  for (uint32_t i = 0; i < p->hop_count; i++) {
    const RetainHop *h = &p->hops[i];
    o = put_varint(o, h->kind);
    o = put_varint(o, h->count);
    o = put_varint(o, h->index);
    o = put_varint(o, name_code(r, h->name));
  }
  return (size_t)(o - r->scratch_enc);
}

static const char *name_of(const SnapshotReader *r, uint64_t code) { return code ? r->strings[code - 1] : EMPTY; }

// Distinct path `idx` decoded into *p, its hops into `hops`.
static void decode_path(const SnapshotReader *r, uint32_t idx, RetainPath *p, RetainHop *hops) {
  const unsigned char *in = r->enc[idx];
  take_varint(&in);  // its length
  p->alloc_id = take_varint(&in);
  RetainRoot *root = &p->root;
  root->kind = (RetainRootKind)take_varint(&in);
  root->name = name_of(r, take_varint(&in));
  root->file = name_of(r, take_varint(&in));
  root->line = (uint32_t)take_varint(&in);
  root->local = name_of(r, take_varint(&in));
  root->index = take_varint(&in);
  p->hop_count = (uint32_t)take_varint(&in);
  for (uint32_t i = 0; i < p->hop_count; i++) {
    RetainHop *h = &hops[i];
    h->kind = (RetainHopKind)take_varint(&in);
    h->count = take_varint(&in);
    h->index = take_varint(&in);
    h->name = name_of(r, take_varint(&in));
  }
  p->hops = p->hop_count ? hops : NULL;
}

// The encoded bytes of distinct path `idx` (*len: how many).
static const unsigned char *enc_bytes(const SnapshotReader *r, uint32_t idx, size_t *len) {
  const unsigned char *in = r->enc[idx];
  *len = (size_t)take_varint(&in);
  return in;
}

static uint64_t bytes_hash(const unsigned char *b, size_t n) { return hash_memory((const char *)b, n); }

static bool grow_slots(SnapshotReader *r) {
  uint64_t cap = r->slot_cap ? 2 * r->slot_cap : 1024;
  while (cap < 2 * (r->n_paths + 1)) cap *= 2;   // made again: every path so far
  uint32_t *slots = calloc(cap, sizeof *slots);
  if (!slots) {
    out_of_memory(r);
    return false;
  }
  for (uint64_t i = 0; i < r->n_paths; i++) {
    size_t n;
    const unsigned char *b = enc_bytes(r, (uint32_t)i, &n);
    uint64_t j = bytes_hash(b, n) & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = (uint32_t)(i + 1);
  }
  free(r->slots);
  r->slots = slots;
  r->slot_cap = cap;
  return true;
}

// The index of the path equal to *p (its hops in scratch), stored if new.
static uint32_t intern_path(SnapshotReader *r, const RetainPath *p) {
  if (r->failed) return 0;
  if (2 * (r->n_paths + 1) > r->slot_cap && !grow_slots(r)) return 0;
  if (r->n_paths >= UINT32_MAX - 1) {
    out_of_memory(r);
    return 0;
  }
  size_t n = encode_path(r, p);
  uint64_t j = bytes_hash(r->scratch_enc, n) & (r->slot_cap - 1);
  for (; r->slots[j]; j = (j + 1) & (r->slot_cap - 1)) {
    size_t m;
    const unsigned char *b = enc_bytes(r, r->slots[j] - 1, &m);
    if (m == n && memcmp(b, r->scratch_enc, n) == 0) return r->slots[j] - 1;
  }
  unsigned char head[10];
  size_t h = (size_t)(put_varint(head, n) - head);
  unsigned char *copy = packed(r, h + n);
  if (!copy) return 0;
  memcpy(copy, head, h);
  memcpy(copy + h, r->scratch_enc, n);
  uint64_t cap = r->cap_paths;
  if (!grow(r, (void **)&r->enc, &cap, r->n_paths + 1, sizeof *r->enc)) return 0;
  uint64_t cap2 = r->cap_paths;
  if (!grow(r, (void **)&r->ids, &cap2, r->n_paths + 1, sizeof *r->ids)) return 0;
  r->cap_paths = cap;
  r->enc[r->n_paths] = copy;
  r->ids[r->n_paths] = p->alloc_id;
  r->slots[j] = (uint32_t)(r->n_paths + 1);
  return (uint32_t)r->n_paths++;
}

// One path after its id (12.2) into *p, its hops in r->scratch_hops.
static void get_path_body(Cursor *c, RetainPath *p) {
  RetainRoot *root = &p->root;
  uint64_t at = here(c), kind = get_varint(c, "root kind");
  if (!bad(c) && kind >= RETAIN_ROOT_KINDS) damage(c->r, at, "unknown root kind %llu", (unsigned long long)kind);
  *root = (RetainRoot){.kind = (RetainRootKind)kind, .name = EMPTY, .file = EMPTY, .local = EMPTY};
  if (root->kind == RETAIN_ROOT_GLOBAL) root->name = get_name(c, "global's name");
  if (root->kind == RETAIN_ROOT_STACK) {
    root->name = get_name(c, "frame's function");
    root->file = get_name(c, "frame's file");
    root->line = get_u32(c, "line");
    root->local = get_name(c, "local's name");
    root->index = get_varint(c, "slot");
  }
  if (root->kind == RETAIN_ROOT_C) root->index = get_varint(c, "C root");
  at = here(c);
  uint64_t hop_count = get_varint(c, "hop count");
  if (!bad(c) && hop_count > RETAIN_MAX_HOPS)
    damage(c->r, at, "a path of %llu hops (at most %d)", (unsigned long long)hop_count, RETAIN_MAX_HOPS);
  if (bad(c)) return;
  RetainHop *hops = c->r->scratch_hops;
  for (uint64_t k = 0; k < hop_count && !bad(c); k++) {
    RetainHop *h = &hops[k];
    at = here(c);
    uint64_t hk = get_varint(c, "hop kind");
    if (!bad(c) && hk >= RETAIN_HOP_KINDS) damage(c->r, at, "unknown hop kind %llu", (unsigned long long)hk);
    *h = (RetainHop){.kind = (RetainHopKind)hk, .name = EMPTY};
    at = here(c);
    h->count = get_varint(c, "hop's count");
    if (!bad(c) && h->count == 0) damage(c->r, at, "a hop repeated 0 times");
    if (h->kind == RETAIN_HOP_FIELD || h->kind == RETAIN_HOP_CAPTURE) h->name = get_name(c, "hop's name");
    if (h->kind == RETAIN_HOP_CAPTURE || h->kind == RETAIN_HOP_TUPLE || h->kind == RETAIN_HOP_ARRAY ||
        h->kind == RETAIN_HOP_OTHER)
      h->index = get_varint(c, "hop's index");
  }
  p->hop_count = (uint32_t)hop_count;
  p->hops = hops;
}

// ===========================================================================
// Snapshots

static int by_id(const void *a, const void *b) {
  const Pending *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void add_pending(SnapshotReader *r, uint64_t id, uint64_t offset, uint32_t path) {
  if (r->failed || !grow(r, (void **)&r->pending, &r->cap_pending, r->n_pending + 1, sizeof *r->pending)) return;
  r->pending[r->n_pending++] = (Pending){id, offset, path};
}

// The snapshot being read, whole: sorted, checked, kept.
static void keep_snapshot(SnapshotReader *r) {
  if (r->failed) return;
  if (r->n_pending > 1) qsort(r->pending, r->n_pending, sizeof *r->pending, by_id);
  for (uint64_t i = 1; i < r->n_pending; i++)
    if (r->pending[i].id == r->pending[i - 1].id) {
      damage(r, r->pending[i].offset, "allocation %llu listed twice in snapshot %llu (first at byte %llu)",
             (unsigned long long)r->pending[i].id, (unsigned long long)r->current.number,
             (unsigned long long)r->pending[i - 1].offset);
      return;
    }
  Snapshot *s = malloc(sizeof *s);
  uint32_t *idx = malloc((r->n_pending ? r->n_pending : 1) * sizeof *idx);
  if (!s || !idx || !grow32(r, (void **)&r->snaps, &r->cap_snaps, r->n_snaps + 1, sizeof *r->snaps)) {
    free(s);
    free(idx);
    out_of_memory(r);
    return;
  }
  uint32_t cap = r->cap_snaps;  // snap_paths grows with snaps
  uint32_t **sp = realloc(r->snap_paths, (size_t)cap * sizeof *sp);
  if (!sp) {
    free(s);
    free(idx);
    out_of_memory(r);
    return;
  }
  r->snap_paths = sp;
  for (uint64_t i = 0; i < r->n_pending; i++) idx[i] = r->pending[i].path;
  *s = r->current;
  s->paths = r->n_pending;
  r->snaps[r->n_snaps] = s;
  r->snap_paths[r->n_snaps] = idx;
  r->n_snaps++;
  r->n_pending = 0;
  free(r->pending);   // scratch: 24 bytes a path of the largest snapshot otherwise
  r->pending = NULL;
  r->cap_pending = 0;
  r->in_snapshot = false;
  if (s->trigger == RETAIN_TRIGGER_END) r->end_state_seen = true;
}

// ===========================================================================
// Version 2 records (part 3)

static void read_strings(Cursor *c) {
  uint64_t n = get_count(c, 1, "strings");
  for (uint64_t i = 0; i < n && !bad(c); i++) {
    const char *s = get_string(c, "string");
    if (!bad(c)) add_string(c->r, s);
  }
}

// Snapshot number `n` read at `at` must be the one begun.
static bool same_snapshot(Cursor *c, uint64_t at, uint64_t n, const char *kind) {
  SnapshotReader *r = c->r;
  if (bad(c)) return false;
  if (!r->in_snapshot) {
    damage(r, at, "%s record of snapshot %llu, which was not begun", kind, (unsigned long long)n);
    return false;
  }
  if (n != r->current.number) {
    damage(r, at, "%s record of snapshot %llu inside snapshot %llu", kind, (unsigned long long)n,
           (unsigned long long)r->current.number);
    return false;
  }
  return true;
}

static void read_begin(Cursor *c, uint64_t record) {
  SnapshotReader *r = c->r;
  uint64_t at = here(c), n = get_varint(c, "snapshot number");
  if (bad(c)) return;
  if (r->in_snapshot) {
    damage(r, record, "snapshot %llu begins inside snapshot %llu (begun at byte %llu)", (unsigned long long)n,
           (unsigned long long)r->current.number, (unsigned long long)r->current.offset);
    return;
  }
  if (r->end_state_seen) {
    damage(r, record, "snapshot %llu begins after the end state, which is the last", (unsigned long long)n);
    return;
  }
  if (n != r->next_number) {
    damage(r, at, "snapshot number %llu out of order (%llu expected)", (unsigned long long)n,
           (unsigned long long)r->next_number);
    return;
  }
  at = here(c);
  uint64_t trigger = get_varint(c, "trigger");
  if (!bad(c) && trigger >= RETAIN_TRIGGERS) damage(r, at, "unknown trigger %llu", (unsigned long long)trigger);
  uint64_t time = get_varint(c, "time");
  uint64_t allocs = get_varint(c, "alloc count");
  if (bad(c)) return;
  r->current = (Snapshot){.number = n, .trigger = (RetainTrigger)trigger, .time_us = time, .alloc_count = allocs,
                          .offset = record};
  r->in_snapshot = true;
  r->n_pending = 0;
  r->next_number = n + 1;
}

static void read_paths(Cursor *c) {
  SnapshotReader *r = c->r;
  uint64_t at = here(c), n = get_varint(c, "snapshot number");
  if (!same_snapshot(c, at, n, "a paths")) return;
  // A path takes at least 3 bytes: its id, its root's kind, its hop count.
  uint64_t count = get_count(c, 3, "paths");
  for (uint64_t i = 0; i < count && !bad(c); i++) {
    uint64_t path_at = here(c);
    RetainPath p = {0};
    p.alloc_id = get_varint(c, "allocation id");
    if (!bad(c) && p.alloc_id >= r->current.alloc_count)
      damage(r, path_at, "a path for allocation %llu in snapshot %llu, begun at %llu allocations",
             (unsigned long long)p.alloc_id, (unsigned long long)r->current.number,
             (unsigned long long)r->current.alloc_count);
    get_path_body(c, &p);
    if (bad(c)) return;
    uint32_t idx = intern_path(r, &p);
    add_pending(r, p.alloc_id, path_at, idx);
  }
}

static void read_end(Cursor *c) {
  SnapshotReader *r = c->r;
  uint64_t at = here(c), n = get_varint(c, "snapshot number");
  if (!same_snapshot(c, at, n, "an end")) return;
  RetainSnapshotEnd *e = &r->current.end;
  uint64_t flags_at = here(c);
  e->flags = get_u32(c, "flags");
  e->live_samples = get_varint(c, "live samples");
  uint64_t paths_at = here(c), paths = get_varint(c, "paths");
  e->marked_blocks = get_varint(c, "marked blocks");
  e->marked_words = get_varint(c, "marked words");
  e->heap_words = get_varint(c, "heap words");
  e->pause_us = get_varint(c, "pause");
  e->paths_us = get_varint(c, "paths time");
  e->reason = get_string(c, "reason");
  if (bad(c)) return;
  if (e->flags & ~(uint32_t)(RETAIN_COLLECTED | RETAIN_PATHS)) {
    damage(r, flags_at, "unknown flags %#x", e->flags);
    return;
  }
  if ((e->flags & RETAIN_PATHS) && !(e->flags & RETAIN_COLLECTED)) {
    damage(r, flags_at, "flags: every block has its path, but no collection ran");
    return;
  }
  if (paths != r->n_pending) {
    damage(r, paths_at, "snapshot %llu says %llu paths; its paths records gave %llu", (unsigned long long)n,
           (unsigned long long)paths, (unsigned long long)r->n_pending);
    return;
  }
  if (paths > e->live_samples) {
    damage(r, paths_at, "%llu paths for %llu live samples", (unsigned long long)paths,
           (unsigned long long)e->live_samples);
    return;
  }
  if (paths && !(e->flags & RETAIN_COLLECTED)) {
    damage(r, flags_at, "%llu paths, but no collection ran", (unsigned long long)paths);
    return;
  }
  if ((e->flags & RETAIN_PATHS) && paths != e->live_samples) {
    damage(r, flags_at, "flags: every live block has its path, but %llu paths for %llu live samples",
           (unsigned long long)paths, (unsigned long long)e->live_samples);
    return;
  }
  keep_snapshot(r);
}

static void read_decision(Cursor *c, uint64_t record) {
  SnapshotReader *r = c->r;
  if (r->in_snapshot) {
    damage(r, record, "a decision record inside snapshot %llu (begun at byte %llu)",
           (unsigned long long)r->current.number, (unsigned long long)r->current.offset);
    return;
  }
  SnapshotDecision d = {.offset = record};
  d.time_us = get_varint(c, "time");
  d.alloc_count = get_varint(c, "alloc count");
  uint64_t at = here(c);
  d.action = get_u32(c, "action");
  if (!bad(c) && d.action > 2) damage(r, at, "unknown action %u", d.action);
  d.function = get_name(c, "site's function");
  d.file = get_name(c, "site's file");
  d.line = get_varint(c, "line");
  d.first_col = get_varint(c, "first column");
  d.last_col = get_varint(c, "last column");
  d.sampled = get_varint(c, "sampled blocks");
  d.counted = get_varint(c, "counted blocks");
  d.bound_millionths = get_varint(c, "bound");
  d.threshold_millionths = get_varint(c, "threshold");
  if (bad(c)) return;
  SnapshotDecision *copy = malloc(sizeof *copy);
  if (!copy || !grow32(r, (void **)&r->decisions, &r->cap_decisions, r->n_decisions + 1, sizeof *r->decisions)) {
    free(copy);
    out_of_memory(r);
    return;
  }
  *copy = d;
  r->decisions[r->n_decisions++] = copy;
}

static void read_record(SnapshotReader *r, const unsigned char *body, size_t n, uint64_t record) {
  Cursor c = {r, body, body, body + n, record + RETAIN_RECORD_HEADER};
  unsigned kind = *c.p++;
  switch (kind) {
    case RETAIN_RECORD_STRINGS: read_strings(&c); break;
    case RETAIN_RECORD_BEGIN: read_begin(&c, record); break;
    case RETAIN_RECORD_PATHS: read_paths(&c); break;
    case RETAIN_RECORD_END: read_end(&c); break;
    case RETAIN_RECORD_DECISION: read_decision(&c, record); break;
    default: damage(r, record + RETAIN_RECORD_HEADER, "unknown record kind %u", kind); return;
  }
  if (!r->failed && c.p != c.end)
    damage(r, here(&c), "%zu bytes left over in a record of kind %u", left(&c), kind);
}

// ===========================================================================
// Sources: a file (read with pread) or bytes in memory

// Up to n bytes at `at`; how many were there. -1 on a read error.
static ssize_t source_read(SnapshotReader *r, uint64_t at, void *buf, size_t n) {
  if (r->fd < 0) {
    if (at >= r->mem_len) return 0;
    size_t k = r->mem_len - at < n ? (size_t)(r->mem_len - at) : n;
    memcpy(buf, r->mem + at, k);
    return (ssize_t)k;
  }
  size_t got = 0;
  while (got < n) {
    ssize_t k = pread(r->fd, (char *)buf + got, n - got, (off_t)(at + got));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      failf(r, "cannot read %s: %s", r->name, strerror(errno));
      return -1;
    }
    if (k == 0) break;
    got += (size_t)k;
  }
  return (ssize_t)got;
}

static uint64_t source_size(SnapshotReader *r) {
  if (r->fd < 0) return r->mem_len;
  struct stat st;
  if (fstat(r->fd, &st) != 0) {
    failf(r, "cannot read %s: %s", r->name, strerror(errno));
    return 0;
  }
  return (uint64_t)st.st_size;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// Version 2: every record the file holds whole from r->offset.
static void read_records(SnapshotReader *r) {
  uint64_t size = source_size(r);
  if (r->failed) return;
  if (size < r->offset) {
    failf(r, "%s: the file shrank from %llu to %llu bytes while being read", r->name, (unsigned long long)r->offset,
          (unsigned long long)size);
    return;
  }
  r->tail.cut_bytes = 0;
  while (!r->failed) {
    uint64_t avail = size - r->offset;
    unsigned char head[RETAIN_RECORD_HEADER];
    if (avail < RETAIN_RECORD_HEADER) {
      if (avail) r->tail.cut_bytes = avail, r->tail.cut_offset = r->offset;
      break;
    }
    ssize_t got = source_read(r, r->offset, head, sizeof head);
    if (got < 0) return;
    if ((size_t)got < sizeof head) {  // the file shrank under us: take it as cut
      r->tail.cut_bytes = (uint64_t)got, r->tail.cut_offset = r->offset;
      break;
    }
    uint32_t len = le32(head), check = le32(head + 4);
    if (len == 0 || len > RETAIN_MAX_RECORD) {
      damage(r, r->offset, "a record of %u bytes (1 to %d)", len, RETAIN_MAX_RECORD);
      return;
    }
    if (avail - RETAIN_RECORD_HEADER < len) {
      r->tail.cut_bytes = avail, r->tail.cut_offset = r->offset;
      break;
    }
    if (len > r->body_cap) {
      unsigned char *b = realloc(r->body, len);
      if (!b) { out_of_memory(r); return; }
      r->body = b;
      r->body_cap = len;
    }
    got = source_read(r, r->offset + RETAIN_RECORD_HEADER, r->body, len);
    if (got < 0) return;
    if ((size_t)got < len) {
      r->tail.cut_bytes = RETAIN_RECORD_HEADER + (uint64_t)got, r->tail.cut_offset = r->offset;
      break;
    }
    uint32_t crc = retain_crc32(0, r->body, len);
    if (crc != check) {
      damage(r, r->offset, "a record whose check does not match (CRC-32 %08x, the record says %08x)", crc, check);
      return;
    }
    uint32_t before = r->n_snaps;
    read_record(r, r->body, len, r->offset);
    if (r->failed) return;
    r->offset += RETAIN_RECORD_HEADER + len;
    if (r->n_snaps != before) r->snaps[r->n_snaps - 1]->end_offset = r->offset;
  }
  r->tail.file_bytes = size;
  r->tail.unfinished = r->in_snapshot;
  if (r->in_snapshot) {
    r->tail.unfinished_number = r->current.number;
    r->tail.unfinished_offset = r->current.offset;
    r->tail.unfinished_paths = r->n_pending;
  }
}

// ===========================================================================
// Version 1 (part 5)

static void read_version1(SnapshotReader *r, const unsigned char *bytes, size_t len) {
  Cursor c = {r, bytes + RETAIN_MAGIC_BYTES + 1, bytes, bytes + len, 0};
  Snapshot *s = &r->current;
  *s = (Snapshot){.trigger = RETAIN_TRIGGER_END};
  r->pid = get_varint(&c, "pid");
  r->start_time_us = get_varint(&c, "start time");
  s->alloc_count = get_varint(&c, "alloc count");
  s->time_us = get_varint(&c, "end time");
  uint64_t flags_at = here(&c);
  s->end.flags = get_u32(&c, "flags");
  s->end.live_samples = get_varint(&c, "live samples");
  s->end.marked_blocks = get_varint(&c, "reachable blocks");
  s->end.marked_words = get_varint(&c, "reachable words");
  uint64_t gc_us = get_varint(&c, "collection time");
  s->end.paths_us = get_varint(&c, "walk time");
  s->end.pause_us = gc_us + s->end.paths_us;
  s->end.reason = get_string(&c, "reason");
  if (bad(&c)) return;
  if (s->end.flags & ~(uint32_t)(RETAIN_COLLECTED | RETAIN_PATHS)) {
    damage(r, flags_at, "unknown flags %#x", s->end.flags);
    return;
  }
  if ((s->end.flags & RETAIN_PATHS) && !(s->end.flags & RETAIN_COLLECTED)) {
    damage(r, flags_at, "paths without a final collection");
    return;
  }
  uint64_t n = get_count(&c, 1, "strings");
  for (uint64_t i = 0; i < n && !bad(&c); i++) {
    const char *str = get_string(&c, "string");
    if (!bad(&c)) add_string(r, str);
  }
  uint64_t at = here(&c), paths = get_count(&c, 3, "paths");
  if (!bad(&c) && paths && !(s->end.flags & RETAIN_PATHS)) {
    damage(r, at, "paths in a file that says it has none");
    return;
  }
  if (!bad(&c) && paths > s->end.live_samples) {
    damage(r, at, "%llu paths for %llu live samples", (unsigned long long)paths,
           (unsigned long long)s->end.live_samples);
    return;
  }
  r->in_snapshot = true;
  for (uint64_t i = 0; i < paths && !bad(&c); i++) {
    uint64_t path_at = here(&c);
    RetainPath p = {0};
    p.alloc_id = get_varint(&c, "allocation id");
    if (!bad(&c) && p.alloc_id >= s->alloc_count)
      damage(r, path_at, "a path for allocation %llu of a trace of %llu", (unsigned long long)p.alloc_id,
             (unsigned long long)s->alloc_count);
    if (!bad(&c) && r->n_pending && p.alloc_id <= r->pending[r->n_pending - 1].id)
      damage(r, path_at, "paths out of order (allocation %llu after %llu)", (unsigned long long)p.alloc_id,
             (unsigned long long)r->pending[r->n_pending - 1].id);
    get_path_body(&c, &p);
    if (bad(&c)) return;
    add_pending(r, p.alloc_id, path_at, intern_path(r, &p));
  }
  if (!bad(&c) && c.p != c.end) {
    damage(r, here(&c), "%zu bytes after the last path", left(&c));
    return;
  }
  if (bad(&c)) return;
  keep_snapshot(r);
  if (!r->failed) r->snaps[0]->end_offset = len;
  r->tail.file_bytes = len;
}

// ===========================================================================
// Opening

// The header from the source. Sets version (0 while the file is shorter
// than its header) and r->offset past it.
static void read_header(SnapshotReader *r) {
  unsigned char head[HEADER_MAX];
  ssize_t got = source_read(r, 0, head, sizeof head);
  if (got < 0) return;
  size_t n = (size_t)got;
  size_t magic = n < RETAIN_MAGIC_BYTES ? n : RETAIN_MAGIC_BYTES;
  if (memcmp(head, RETAIN_MAGIC, magic) != 0) {
    failf(r, "%s: not a snapshot file (no MNRETAIN magic)", r->name);
    return;
  }
  r->tail.header_missing = true;
  if (n <= RETAIN_MAGIC_BYTES) return;
  unsigned version = head[RETAIN_MAGIC_BYTES];
  if (version != RETAIN_VERSION && version != RETAIN_VERSION_1) {
    failf(r, "%s: snapshot file version %u (this tool reads %d and %d)", r->name, version, RETAIN_VERSION_1,
          RETAIN_VERSION);
    return;
  }
  if (version == RETAIN_VERSION_1) {
    r->tail.header_missing = false;
    r->version = RETAIN_VERSION_1;
    return;
  }
  // pid and start time: two varints, the header whole once both end.
  const unsigned char *p = head + RETAIN_MAGIC_BYTES + 1, *end = head + n;
  uint64_t v[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    for (unsigned shift = 0;; shift += 7) {
      if (p == end) {
        if (n == sizeof head) damage(r, (uint64_t)(p - head), "a header number longer than 10 bytes");
        return;  // the header is not whole yet
      }
      unsigned char b = *p++;
      if (shift == 63 && b > 1) {
        damage(r, (uint64_t)(p - 1 - head), "a header number wider than 64 bits");
        return;
      }
      v[i] |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
  }
  r->pid = v[0];
  r->start_time_us = v[1];
  r->offset = (uint64_t)(p - head);
  r->version = RETAIN_VERSION;
  r->tail.header_missing = false;
}

// Reads whatever the source holds now (header, then records).
static void read_all(SnapshotReader *r);

// The intern table serves one read: the next (a growing file) makes it
// again from the encoded paths (4 bytes a path and more, not held between).
static void drop_slots(SnapshotReader *r) {
  free(r->slots);
  r->slots = NULL;
  r->slot_cap = 0;
}

static void read_now(SnapshotReader *r) {
  read_all(r);
  drop_slots(r);
}

static void read_all(SnapshotReader *r) {
  if (r->version == 0) read_header(r);
  if (r->failed || r->version == 0) {
    if (!r->failed) r->tail.file_bytes = source_size(r);
    return;
  }
  if (r->version == RETAIN_VERSION) {
    read_records(r);
    return;
  }
  if (r->n_snaps) return;  // version 1: read once, whole
  uint64_t size = source_size(r);
  if (r->failed) return;
  if (size > SIZE_MAX / 2) {
    out_of_memory(r);
    return;
  }
  unsigned char *bytes = malloc(size ? (size_t)size : 1);
  if (!bytes) { out_of_memory(r); return; }
  ssize_t got = source_read(r, 0, bytes, (size_t)size);
  if (got >= 0 && (uint64_t)got != size) failf(r, "cannot read %s: short read", r->name);
  if (!r->failed) read_version1(r, bytes, (size_t)size);
  free(bytes);
}

static SnapshotReader *new_reader(const char *name, char *err, size_t err_len) {
  SnapshotReader *r = calloc(1, sizeof *r);
  if (r) r->name = strdup(name);
  if (!r || !r->name) {
    snprintf(err, err_len, "%s: out of memory", name);
    free(r);
    return NULL;
  }
  r->fd = -1;
  return r;
}

static SnapshotReader *opened(SnapshotReader *r, char *err, size_t err_len) {
  if (!r->failed) return r;
  snprintf(err, err_len, "%s", r->error);
  snapshot_reader_close(r);
  return NULL;
}

SnapshotReader *snapshot_reader_open(const char *path, char *err, size_t err_len) {
  SnapshotReader *r = new_reader(path, err, err_len);
  if (!r) return NULL;
  r->fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (r->fd < 0) failf(r, "cannot read %s: %s", path, strerror(errno));
  else if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) failf(r, "cannot read %s: not a regular file", path);
  if (!r->failed) read_now(r);
  return opened(r, err, err_len);
}

SnapshotReader *snapshot_reader_open_bytes(const unsigned char *bytes, size_t len, const char *name, char *err,
                                           size_t err_len) {
  SnapshotReader *r = new_reader(name, err, err_len);
  if (!r) return NULL;
  r->mem = bytes;
  r->mem_len = len;
  read_now(r);
  r->mem = NULL;
  r->mem_len = 0;
  return opened(r, err, err_len);
}

int snapshot_reader_update(SnapshotReader *r, char *err, size_t err_len) {
  uint32_t before = r->n_snaps;
  if (!r->failed && r->fd < 0) failf(r, "%s: read from memory: nothing to update", r->name);
  if (!r->failed) read_now(r);
  if (r->failed) {
    snprintf(err, err_len, "%s", r->error);
    return -1;
  }
  return (int)(r->n_snaps - before);
}

void snapshot_reader_close(SnapshotReader *r) {
  if (!r) return;
  if (r->fd >= 0) close(r->fd);
  for (Chunk **list = &r->chunks; list; list = list == &r->chunks ? &r->packed : NULL)
    while (*list) {
      Chunk *next = (*list)->next;
      free(*list);
      *list = next;
    }
  for (uint32_t i = 0; i < r->n_snaps; i++) {
    free(r->snaps[i]);
    free(r->snap_paths[i]);
  }
  for (uint32_t i = 0; i < r->n_decisions; i++) free(r->decisions[i]);
  free(r->snaps);
  free(r->snap_paths);
  free(r->decisions);
  free(r->strings);
  free(r->enc);
  free(r->ids);
  free(r->made);
  free(r->name_slots);
  free(r->slots);
  free(r->pending);
  free(r->body);
  free(r->name);
  free(r);
}

// ===========================================================================
// Reading

uint32_t snapshot_reader_version(const SnapshotReader *r) { return r->version; }
uint64_t snapshot_reader_pid(const SnapshotReader *r) { return r->pid; }
uint64_t snapshot_reader_start_time(const SnapshotReader *r) { return r->start_time_us; }
const char *snapshot_reader_name(const SnapshotReader *r) { return r->name; }
uint32_t snapshot_count(const SnapshotReader *r) { return r->n_snaps; }
const Snapshot *snapshot_get(const SnapshotReader *r, uint32_t k) { return k < r->n_snaps ? r->snaps[k] : NULL; }

int64_t snapshot_end_state(const SnapshotReader *r) {
  return r->n_snaps && r->snaps[r->n_snaps - 1]->trigger == RETAIN_TRIGGER_END ? (int64_t)r->n_snaps - 1 : -1;
}

const RetainPath *snapshot_path(const SnapshotReader *r, uint32_t k, uint64_t i) {
  if (k >= r->n_snaps || i >= r->snaps[k]->paths) return NULL;
  uint32_t idx = r->snap_paths[k][i];
  if (idx < r->cap_made && r->made[idx]) return r->made[idx];
  // Decoded once, into the arena (contract 5: kept until close). The
  // reader is the caller's only as a const; what changes is this cache,
  // made on the first ask (a reader of views alone never has it).
  SnapshotReader *w = (SnapshotReader *)r;
  if (idx >= r->cap_made) {
    uint64_t cap = r->n_paths;
    RetainPath **made = realloc(w->made, cap * sizeof *made);
    if (!made) return NULL;
    memset(made + r->cap_made, 0, (cap - r->cap_made) * sizeof *made);
    w->made = made;
    w->cap_made = cap;
  }
  RetainPath tmp;
  decode_path(r, idx, &tmp, w->scratch_hops);
  RetainPath *p = arena(w, sizeof *p);
  RetainHop *hops = tmp.hop_count ? arena(w, tmp.hop_count * sizeof *hops) : NULL;
  if (!p || (tmp.hop_count && !hops)) return NULL;
  if (tmp.hop_count) memcpy(hops, tmp.hops, tmp.hop_count * sizeof *hops);
  *p = tmp;
  p->hops = hops;
  w->made[idx] = p;
  return p;
}

const RetainPath *snapshot_path_view(const SnapshotReader *r, uint32_t k, uint64_t i, SnapshotPathView *v) {
  if (k >= r->n_snaps || i >= r->snaps[k]->paths) return NULL;
  decode_path(r, r->snap_paths[k][i], &v->path, v->hops);
  return &v->path;
}

uint64_t snapshot_path_id(const SnapshotReader *r, uint32_t k, uint64_t i) {
  return k < r->n_snaps && i < r->snaps[k]->paths ? r->ids[r->snap_paths[k][i]] : UINT64_MAX;
}

uint32_t snapshot_path_index(const SnapshotReader *r, uint32_t k, uint64_t i) {
  return k < r->n_snaps && i < r->snaps[k]->paths ? r->snap_paths[k][i] : UINT32_MAX;
}

// The position in snapshot k of the block `id`'s path, or UINT64_MAX.
static uint64_t find_position(const SnapshotReader *r, uint32_t k, uint64_t id) {
  if (k >= r->n_snaps) return UINT64_MAX;
  const uint32_t *idx = r->snap_paths[k];
  uint64_t lo = 0, hi = r->snaps[k]->paths;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (r->ids[idx[mid]] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < r->snaps[k]->paths && r->ids[idx[lo]] == id ? lo : UINT64_MAX;
}

const RetainPath *snapshot_find(const SnapshotReader *r, uint32_t k, uint64_t id) {
  uint64_t i = find_position(r, k, id);
  return i == UINT64_MAX ? NULL : snapshot_path(r, k, i);
}

bool snapshot_lists(const SnapshotReader *r, uint32_t k, uint64_t id) { return find_position(r, k, id) != UINT64_MAX; }

uint32_t snapshot_decision_count(const SnapshotReader *r) { return r->n_decisions; }
const SnapshotDecision *snapshot_decision(const SnapshotReader *r, uint32_t i) {
  return i < r->n_decisions ? r->decisions[i] : NULL;
}

const SnapshotTail *snapshot_reader_tail(const SnapshotReader *r) { return &r->tail; }
uint64_t snapshot_reader_distinct_paths(const SnapshotReader *r) { return r->n_paths; }
uint64_t snapshot_reader_strings(const SnapshotReader *r) { return r->n_strings; }

void snapshot_tail_text(const SnapshotTail *t, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = 0;
  if (t->header_missing) {
    snprintf(buf, len, "the file does not hold its whole header yet (%llu bytes)", (unsigned long long)t->file_bytes);
    return;
  }
  if (t->unfinished) {
    int k = snprintf(buf, len, "snapshot %llu (begun at byte %llu, %llu paths so far) is not finished: being taken, "
                     "or the run died; left out", (unsigned long long)t->unfinished_number,
                     (unsigned long long)t->unfinished_offset, (unsigned long long)t->unfinished_paths);
    n = k > 0 && (size_t)k < len ? (size_t)k : len - 1;
  }
  if (t->cut_bytes)
    snprintf(buf + n, len - n, "%sthe last record (%llu bytes at byte %llu) is cut short: being written, or the run "
             "died mid-write; left out", n ? "; " : "", (unsigned long long)t->cut_bytes,
             (unsigned long long)t->cut_offset);
}
