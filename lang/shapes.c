// shapes.c - interned field-name symbols and record shapes (shapes.h).
// Both tables only grow; ids are indices. Lookups by name are linear in the
// table during compilation only; at run time GETFIELD caches (shape, index).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapes.h"
#include "vm.h"

typedef struct Shape {
  uint32_t count;
  uint32_t *symbols;
} Shape;

struct Shapes {
  char **names;
  uint32_t name_count, name_cap;
  Shape *shapes;
  uint32_t shape_count, shape_cap;
};

static void *grow(void *p, uint32_t *cap, size_t elem) {
  *cap = *cap ? *cap * 2 : 64;
  p = realloc(p, *cap * elem);
  if (!p) vm_out_of_memory(NULL, "record shapes");
  return p;
}

Shapes *shapes_new(void) { return calloc(1, sizeof(Shapes)); }

void shapes_free(Shapes *s) {
  if (!s) return;
  for (uint32_t i = 0; i < s->name_count; i++) free(s->names[i]);
  for (uint32_t i = 0; i < s->shape_count; i++) free(s->shapes[i].symbols);
  free(s->names);
  free(s->shapes);
  free(s);
}

uint32_t shapes_symbol(Shapes *s, const char *name) {
  for (uint32_t i = 0; i < s->name_count; i++)
    if (strcmp(s->names[i], name) == 0) return i;
  if (s->name_count == s->name_cap) s->names = grow(s->names, &s->name_cap, sizeof(char *));
  size_t n = strlen(name) + 1;
  s->names[s->name_count] = malloc(n);
  if (!s->names[s->name_count]) vm_out_of_memory(NULL, "record shapes");
  memcpy(s->names[s->name_count], name, n);
  return s->name_count++;
}

const char *shapes_symbol_name(const Shapes *s, uint32_t symbol) {
  return symbol < s->name_count ? s->names[symbol] : "?";
}

uint32_t shapes_intern(Shapes *s, const uint32_t *symbols, uint32_t count) {
  for (uint32_t i = 0; i < s->shape_count; i++)
    if (s->shapes[i].count == count && memcmp(s->shapes[i].symbols, symbols, count * sizeof(uint32_t)) == 0)
      return i;
  if (s->shape_count == s->shape_cap) s->shapes = grow(s->shapes, &s->shape_cap, sizeof(Shape));
  Shape *sh = &s->shapes[s->shape_count];
  sh->count = count;
  sh->symbols = malloc((count ? count : 1) * sizeof(uint32_t));
  if (!sh->symbols) vm_out_of_memory(NULL, "record shapes");
  memcpy(sh->symbols, symbols, count * sizeof(uint32_t));
  return s->shape_count++;
}

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
