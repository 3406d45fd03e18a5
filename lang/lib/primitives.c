// primitives.c - the table of C primitives, generated from PRIMITIVE_LIST.
#include <string.h>

#include "primitives.h"

static const Primitive table[] = {
#define PRIMITIVE_ENTRY(name, arity) {#name, arity, lib_##name},
    PRIMITIVE_LIST(PRIMITIVE_ENTRY)
#undef PRIMITIVE_ENTRY
};

int primitives_lookup(const char *name) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, name) == 0) return (int)i;
  return -1;
}

const Primitive *primitives_table(void) { return table; }
