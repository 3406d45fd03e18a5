// primitives.c - the table of C primitives, generated from PRIMITIVE_LIST.
#include <string.h>

#include "builtins.h"
#include "primitives.h"

static const Primitive table[] = {
#define X(name, arity) {#name, arity, prim_##name, true},
    PRIMITIVE_LIST(X)
#undef X
};

// Primitives that never allocate in the GC heap: their calls compile to
// CALLPRIM_NA. (Raising a runtime error allocates its message, but the
// exception leaves the instruction: nothing runs after it there.)
static const char *const no_alloc[] = {
    "compare", "hash", "string_length", "string_get", "string_index_of", "array_length", "array_blit",
};

bool prim_allocates(int index) {
  for (size_t i = 0; i < sizeof no_alloc / sizeof no_alloc[0]; i++)
    if (strcmp(table[index].name, no_alloc[i]) == 0) return false;
  return true;
}

int prim_lookup(const char *name) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, name) == 0) return (int)i;
  return -1;
}

const Primitive *prim_get(int index) { return &table[index]; }
