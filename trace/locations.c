// locations.c - decoding memtrace's location events: move-to-front name
// tables, interned names, and the code -> locations table (locations.h).
// Everything the table hands out lives in an arena freed only with the
// table, so pointers stay valid until trace_reader_close.
#include "locations.h"
#include "../base/hash.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- arena

typedef struct ArenaBlock {
  struct ArenaBlock *next;
  size_t used, size;
  _Alignas(8) char data[];
} ArenaBlock;

enum { ARENA_BLOCK = 64 * 1024 };
static const uint64_t LOC_MAX_CODE = (uint64_t)1 << 62;

// Invariants: `codes` has a power-of-two number of slots, at most half of
// them used (`used` marks them, as any u64 is a valid code); `names` the
// same for interned strings (NULL = free).
struct LocTable {
  ArenaBlock *arena;
  struct CodeEntry { uint64_t code; const TraceReaderLocation *locs; uint32_t count; bool used; } *codes;
  uint64_t code_slots, code_count;
  const char **names;
  uint64_t name_slots, name_count;
};

static void *table_alloc(LocTable *t, size_t n) {
  n = (n + 7) & ~(size_t)7;
  ArenaBlock *b = t->arena;
  if (!b || b->size - b->used < n) {
    size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;
    b = malloc(sizeof *b + size);
    if (!b) return NULL;
    b->next = t->arena;
    b->used = 0;
    b->size = size;
    t->arena = b;
  }
  void *p = b->data + b->used;
  b->used += n;
  return p;
}

// ---------------------------------------------------------------- interned names

static bool grow_names(LocTable *t) {
  uint64_t slots = t->name_slots ? t->name_slots * 2 : 256;
  const char **names = calloc(slots, sizeof *names);
  if (!names) return false;
  for (uint64_t i = 0; i < t->name_slots; i++) {
    const char *s = t->names[i];
    if (!s) continue;
    uint64_t j = hash_fnv_bytes(s, strlen(s)) & (slots - 1);
    while (names[j]) j = (j + 1) & (slots - 1);
    names[j] = s;
  }
  free(t->names);
  t->names = names;
  t->name_slots = slots;
  return true;
}

// The interned copy of s[0 .. len); NULL when out of memory.
static const char *intern(LocTable *t, const char *s, size_t len) {
  if (2 * (t->name_count + 1) > t->name_slots && !grow_names(t)) return NULL;
  uint64_t j = hash_fnv_bytes(s, len) & (t->name_slots - 1);
  for (const char *n; (n = t->names[j]); j = (j + 1) & (t->name_slots - 1))
    if (strncmp(n, s, len) == 0 && n[len] == '\0') return n;
  char *copy = table_alloc(t, len + 1);
  if (!copy) return NULL;
  memcpy(copy, s, len);
  copy[len] = '\0';
  t->names[j] = copy;
  t->name_count++;
  return copy;
}

// ---------------------------------------------------------------- code table

static uint64_t code_slot(uint64_t code, uint64_t slots) {
  return (code * 0x9E3779B97F4A7C15ull >> 20) & (slots - 1);
}

static struct CodeEntry *find_entry(const LocTable *t, uint64_t code) {
  if (!t->code_slots) return NULL;
  for (uint64_t j = code_slot(code, t->code_slots);; j = (j + 1) & (t->code_slots - 1)) {
    struct CodeEntry *e = &t->codes[j];
    if (!e->used) return NULL;
    if (e->code == code) return e;
  }
}

static bool grow_codes(LocTable *t) {
  uint64_t slots = t->code_slots ? t->code_slots * 2 : 1024;
  struct CodeEntry *codes = calloc(slots, sizeof *codes);
  if (!codes) return false;
  for (uint64_t i = 0; i < t->code_slots; i++) {
    if (!t->codes[i].used) continue;
    uint64_t j = code_slot(t->codes[i].code, slots);
    while (codes[j].used) j = (j + 1) & (slots - 1);
    codes[j] = t->codes[i];
  }
  free(t->codes);
  t->codes = codes;
  t->code_slots = slots;
  return true;
}

static bool add_code(LocTable *t, uint64_t code, const TraceReaderLocation *locs, uint32_t count) {
  if (2 * (t->code_count + 1) > t->code_slots && !grow_codes(t)) return false;
  TraceReaderLocation *copy = NULL;
  if (count) {
    copy = table_alloc(t, count * sizeof *copy);
    if (!copy) return false;
    memcpy(copy, locs, count * sizeof *copy);
  }
  uint64_t j = code_slot(code, t->code_slots);
  while (t->codes[j].used) j = (j + 1) & (t->code_slots - 1);
  t->codes[j] = (struct CodeEntry){code, copy, count, true};
  t->code_count++;
  return true;
}

static bool same_locations(const TraceReaderLocation *a, const TraceReaderLocation *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (a[i].function != b[i].function || a[i].file != b[i].file || a[i].line != b[i].line ||
        a[i].start_col != b[i].start_col || a[i].end_col != b[i].end_col)
      return false;
  return true;
}

LocTable *loc_table_new(void) { return calloc(1, sizeof(LocTable)); }

void loc_table_free(LocTable *t) {
  if (!t) return;
  for (ArenaBlock *b = t->arena, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(t->codes);
  free(t->names);
  free(t);
}

int loc_table_find(const LocTable *t, uint64_t code, const TraceReaderLocation **locs) {
  const struct CodeEntry *e = find_entry(t, code);
  *locs = e ? e->locs : NULL;
  return e ? (int)e->count : -1;
}

uint64_t loc_table_codes(const LocTable *t) { return t->code_count; }

// ---------------------------------------------------------------- move-to-front tables

void loc_names_init(LocNames *names) { memset(names, 0, sizeof *names); }

static void slot_to_front(uint8_t *order, unsigned i) {
  uint8_t moved = order[i];
  memmove(&order[1], &order[0], i * sizeof order[0]);
  order[0] = moved;
}

static void name_to_front(const char **names, unsigned i) {
  const char *moved = names[i];
  memmove(&names[1], &names[0], i * sizeof names[0]);
  names[0] = moved;
}

// Records the error; returns NULL for any pointer type.
static void *fail(LocError *err, const uint8_t *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  err->at = at;
  vsnprintf(err->text, sizeof err->text, fmt, ap);
  va_end(ap);
  return NULL;
}

// Reads a NUL-terminated name at *p and interns it; NULL on error.
static const char *read_name(LocTable *t, const uint8_t **p, const uint8_t *end, LocError *err) {
  const uint8_t *nul = memchr(*p, 0, (size_t)(end - *p));
  if (!nul) return fail(err, *p, "a name in a location event runs past the end of its packet");
  const char *name = intern(t, (const char *)*p, (size_t)(nul - *p));
  if (!name) {
    err->out_of_memory = true;
    return fail(err, *p, "out of memory for location names");
  }
  *p = nul + 1;
  return name;
}

// File entry `code` (LOC_MTF_NEW: a name follows) moved or pushed to the
// front; returns its slot, or NULL on error.
static LocFileSlot *decode_file(LocTable *t, LocNames *m, unsigned code, const uint8_t *bits_at,
                                const uint8_t **p, const uint8_t *end, LocError *err) {
  if (code == LOC_MTF_NEW) {
    const char *name = read_name(t, p, end, err);
    if (!name) return NULL;
    // A fresh slot while the table has room; else the evicted entry's slot,
    // whose function table carries over.
    uint8_t slot = m->n_files < LOC_MTF_SIZE ? m->n_files++ : m->order[LOC_MTF_SIZE - 1];
    memmove(&m->order[1], &m->order[0], (LOC_MTF_SIZE - 1) * sizeof m->order[0]);
    m->order[0] = slot;
    m->slots[slot].file = name;
    return &m->slots[slot];
  }
  if (code >= m->n_files)
    return fail(err, bits_at, "a location names file table entry %u, which is empty", code);
  slot_to_front(m->order, code);
  return &m->slots[m->order[0]];
}

static const char *decode_function(LocTable *t, LocFileSlot *f, unsigned code, const uint8_t *bits_at,
                                   const uint8_t **p, const uint8_t *end, LocError *err) {
  if (code == LOC_MTF_NEW) {
    const char *name = read_name(t, p, end, err);
    if (!name) return NULL;
    memmove(&f->funcs[1], &f->funcs[0], (LOC_MTF_SIZE - 1) * sizeof f->funcs[0]);
    f->funcs[0] = name;
    if (f->n_funcs < LOC_MTF_SIZE) f->n_funcs++;
    return name;
  }
  if (code >= f->n_funcs)
    return fail(err, bits_at, "a location names function table entry %u, which is empty", code);
  name_to_front(f->funcs, code);
  return f->funcs[0];
}

// One 48-bit location and the names that follow it.
static const uint8_t *decode_location(LocTable *t, LocNames *m, const uint8_t *p, const uint8_t *end,
                                      TraceReaderLocation *out, LocError *err) {
  if (end - p < 6) return fail(err, p, "a location runs past the end of its packet");
  uint32_t low;
  uint16_t high;
  memcpy(&low, p, 4);
  memcpy(&high, p + 4, 2);
  uint64_t bits = low | (uint64_t)high << 32;
  const uint8_t *bits_at = p;
  p += 6;
  out->line = bits & TRACE_LOC_LINE_MAX;
  out->start_col = (bits >> 20) & TRACE_LOC_START_MAX;
  out->end_col = (bits >> 28) & TRACE_LOC_END_MAX;
  LocFileSlot *f = decode_file(t, m, (bits >> 38) & 31, bits_at, &p, end, err);
  if (!f) return NULL;
  out->file = f->file;
  out->function = decode_function(t, f, (bits >> 43) & 31, bits_at, &p, end, err);
  return out->function ? p : NULL;
}

const uint8_t *loc_table_read_event(LocTable *t, LocNames *names, const uint8_t *p,
                                    const uint8_t *end, LocError *err) {
  TraceReaderLocation locs[255];
  const uint8_t *start = p;
  if (end - p < 9) return fail(err, p, "a location event runs past the end of its packet");
  uint64_t code;
  memcpy(&code, p, 8);
  // Frame codes are OCaml ints, below 2^62: memtrace's reader keeps 63 bits
  // of the u64 and would read a larger code as another (or negative) one.
  if (code >= LOC_MAX_CODE) return fail(err, p, "frame code %#" PRIx64 " is not below 2^62", code);
  uint32_t count = p[8];
  p += 9;
  for (uint32_t i = 0; i < count; i++)
    if (!(p = decode_location(t, names, p, end, &locs[i], err))) return NULL;
  const struct CodeEntry *known = find_entry(t, code);
  if (known) {
    if (known->count != count || !same_locations(known->locs, locs, count))
      return fail(err, start, "location code defined again with other locations");
  } else if (!add_code(t, code, locs, count)) {
    err->out_of_memory = true;
    return fail(err, start, "out of memory for the location table");
  }
  return p;
}
