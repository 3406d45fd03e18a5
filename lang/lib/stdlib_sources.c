// stdlib_sources.c - lookup in the embedded standard library.
#include <string.h>

#include "stdlib_sources.h"

typedef struct Embedded {
  const char *name;
  const char *text;
} Embedded;

static const Embedded embedded[] = {
#include "stdlib.inc"
};

const char *stdlib_source(const char *name) {
  for (size_t i = 0; i < sizeof embedded / sizeof embedded[0]; i++)
    if (strcmp(embedded[i].name, name) == 0) return embedded[i].text;
  return NULL;
}
