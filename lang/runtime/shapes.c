// shapes.c - interned field-name symbols and record shapes (shapes.h).
// Both tables only grow; ids are indices. A private shape
// (shapes_make_private) is never in the index, so no literal is given it. Symbols are found through a
// NameMap and shapes through a hash of their symbol lists, so interning
// costs the length of what is interned; GETFIELD caches (shape, index).
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/namemap.h"
#include "shapes.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../../base/grow.h"
#include "../../base/hash.h"

typedef struct Shape {
  uint32_t count;
  uint32_t *symbols;     // in written order
  uint32_t *canon;       // field indices in bytewise name order
  uint32_t set;          // the shape of the same names sorted (itself if sorted)
  uint64_t hash;         // of the symbol list (interning)
  uint64_t set_hash;     // of the sorted names (record hashing)
  bool unlisted;         // shapes_make_private's: never in the index
} Shape;

struct Shapes {
  char **names;
  uint32_t name_count, name_cap;
  NameMap by_name;       // name -> symbol
  Shape *shapes;
  uint32_t shape_count, shape_cap;
  uint32_t *index;       // open addressing: shape id + 1, or 0
  uint32_t index_cap;
};

// The shapes' memory, or out of memory (core/vm_state.h).
static void *xrealloc(void *p, size_t bytes) { return vm_realloc_or_die(p, bytes, "record shapes"); }

// Room for one more item in a full array (base/grow.h).
static void *grow(void *p, uint32_t *cap, size_t elem) {
  void *q = grow_array(p, cap, (uint64_t)*cap + 1, elem, 64);
  if (!q) vm_out_of_memory(NULL, "record shapes");
  return q;
}

Shapes *shapes_new(void) {
  Shapes *s = xrealloc(NULL, sizeof *s);
  memset(s, 0, sizeof *s);
  return s;
}

void shapes_free(Shapes *s) {
  if (!s) return;
  for (uint32_t i = 0; i < s->name_count; i++) free(s->names[i]);
  for (uint32_t i = 0; i < s->shape_count; i++) {
    free(s->shapes[i].symbols);
    free(s->shapes[i].canon);
  }
  namemap_free(&s->by_name);
  free(s->names);
  free(s->shapes);
  free(s->index);
  free(s);
}

uint32_t shapes_symbol(Shapes *s, const char *name) {
  uint32_t found = namemap_get(&s->by_name, name);
  if (found != NAMEMAP_NONE) return found;
  if (s->name_count == s->name_cap) s->names = grow(s->names, &s->name_cap, sizeof(char *));
  size_t n = strlen(name) + 1;
  char *copy = xrealloc(NULL, n);
  memcpy(copy, name, n);
  s->names[s->name_count] = copy;
  *namemap_slot(&s->by_name, copy) = s->name_count;
  return s->name_count++;
}

const char *shapes_symbol_name(const Shapes *s, uint32_t symbol) {
  return symbol < s->name_count ? s->names[symbol] : "?";
}

// ---------------------------------------------------------------------------
// Interning

static uint64_t hash_symbols(const uint32_t *symbols, uint32_t count) {
  uint64_t h = HASH_FNV_OFFSET ^ count;
  for (uint32_t i = 0; i < count; i++) h = hash_fnv_step(h, symbols[i]);
  return h;
}

// The index slot of the shape with these symbols, or the empty slot for it.
static uint32_t *index_slot(const Shapes *s, const uint32_t *symbols, uint32_t count, uint64_t h) {
  uint32_t mask = s->index_cap - 1;
  for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
    uint32_t id = s->index[i];
    if (id == 0) return &s->index[i];
    const Shape *sh = &s->shapes[id - 1];
    if (sh->hash == h && sh->count == count && memcmp(sh->symbols, symbols, count * sizeof *symbols) == 0)
      return &s->index[i];
  }
}

static void grow_index(Shapes *s) {
  free(s->index);
  s->index_cap = s->index_cap ? s->index_cap * 2 : 64;
  s->index = xrealloc(NULL, s->index_cap * sizeof *s->index);
  memset(s->index, 0, s->index_cap * sizeof *s->index);
  for (uint32_t id = 0; id < s->shape_count; id++) {
    const Shape *sh = &s->shapes[id];
    if (!sh->unlisted) *index_slot(s, sh->symbols, sh->count, sh->hash) = id + 1;
  }
}

// qsort_r's comparison of two field indices of one shape by their names.
typedef struct SortContext { char **names; const uint32_t *symbols; } SortContext;

static int compare_fields(const void *a, const void *b, void *data) {
  const SortContext *c = data;
  return strcmp(c->names[c->symbols[*(const uint32_t *)a]], c->names[c->symbols[*(const uint32_t *)b]]);
}

// Fills canon, set and set_hash of the new shape `id`.
static void canonicalise(Shapes *s, uint32_t id) {
  uint32_t n = s->shapes[id].count;
  uint32_t *canon = xrealloc(NULL, (n ? n : 1) * sizeof *canon);
  uint32_t *sorted = xrealloc(NULL, (n ? n : 1) * sizeof *sorted);
  for (uint32_t k = 0; k < n; k++) canon[k] = k;
  SortContext context = {s->names, s->shapes[id].symbols};
  qsort_r(canon, n, sizeof *canon, compare_fields, &context);
  uint64_t h = HASH_FNV_OFFSET;
  bool already_sorted = true;
  for (uint32_t k = 0; k < n; k++) {
    sorted[k] = s->shapes[id].symbols[canon[k]];
    already_sorted &= canon[k] == k;
    for (const unsigned char *p = (const unsigned char *)s->names[sorted[k]]; *p; p++) h = hash_fnv_step(h, *p);
    h = hash_fnv_step(h, 0xff);   // a separator no name contains
  }
  s->shapes[id].canon = canon;
  s->shapes[id].set_hash = h;
  uint32_t set = already_sorted ? id : shapes_intern(s, sorted, n);   // may move s->shapes
  s->shapes[id].set = set;
  free(sorted);
}

uint32_t shapes_intern(Shapes *s, const uint32_t *symbols, uint32_t count) {
  uint64_t h = hash_symbols(symbols, count);
  if ((s->shape_count + 1) * 2 > s->index_cap) grow_index(s);
  uint32_t *slot = index_slot(s, symbols, count, h);
  if (*slot) return *slot - 1;
  if (s->shape_count == s->shape_cap) s->shapes = grow(s->shapes, &s->shape_cap, sizeof(Shape));
  uint32_t id = s->shape_count++;
  Shape *sh = &s->shapes[id];
  memset(sh, 0, sizeof *sh);
  sh->count = count;
  sh->hash = h;
  sh->symbols = xrealloc(NULL, (count ? count : 1) * sizeof(uint32_t));
  memcpy(sh->symbols, symbols, count * sizeof(uint32_t));
  *slot = id + 1;
  canonicalise(s, id);   // may intern the sorted shape (slot is stale after)
  return id;
}

uint32_t shapes_make_private(Shapes *s, const uint32_t *symbols, uint32_t count) {
  uint32_t set = shapes_field_set(s, shapes_intern(s, symbols, count));   // the interned field set
  if (s->shape_count == s->shape_cap) s->shapes = grow(s->shapes, &s->shape_cap, sizeof(Shape));
  uint32_t id = s->shape_count++;
  Shape *sh = &s->shapes[id];
  memset(sh, 0, sizeof *sh);
  sh->count = count;
  sh->unlisted = true;
  sh->hash = hash_symbols(symbols, count);
  sh->symbols = xrealloc(NULL, (count ? count : 1) * sizeof(uint32_t));
  memcpy(sh->symbols, symbols, count * sizeof(uint32_t));
  canonicalise(s, id);   // may move s->shapes
  s->shapes[id].set = set;
  return id;
}

// ---------------------------------------------------------------------------
// Queries

uint32_t shapes_count(const Shapes *s) { return s->shape_count; }

uint32_t shapes_field_count(const Shapes *s, uint32_t shape) { return s->shapes[shape].count; }

uint32_t shapes_field_symbol(const Shapes *s, uint32_t shape, uint32_t i) {
  return s->shapes[shape].symbols[i];
}

int shapes_find(const Shapes *s, uint32_t shape, uint32_t symbol) {
  if (shape >= s->shape_count) return -1;
  const Shape *sh = &s->shapes[shape];
  for (uint32_t i = 0; i < sh->count; i++)
    if (sh->symbols[i] == symbol) return (int)i;
  return -1;
}

uint32_t shapes_field_set(const Shapes *s, uint32_t shape) { return s->shapes[shape].set; }

const uint32_t *shapes_canon(const Shapes *s, uint32_t shape) { return s->shapes[shape].canon; }

uint64_t shapes_set_hash(const Shapes *s, uint32_t set) { return s->shapes[set].set_hash; }

int shapes_compare_sets(const Shapes *s, uint32_t set_a, uint32_t set_b) {
  const Shape *a = &s->shapes[set_a], *b = &s->shapes[set_b];
  for (uint32_t k = 0; k < a->count && k < b->count; k++) {
    int c = strcmp(s->names[a->symbols[k]], s->names[b->symbols[k]]);
    if (c) return c < 0 ? -1 : 1;
  }
  return a->count < b->count ? -1 : a->count > b->count;
}
