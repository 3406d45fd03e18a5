// xalloc.c - memory or an exit (xalloc.h).
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Set once by main before any command runs; read only by xalloc_fail.
static const char *command_name;

void xalloc_name(const char *name) { command_name = name; }

_Noreturn void xalloc_fail(void) {
  if (command_name) fprintf(stderr, "memtrace %s: out of memory\n", command_name);
  else fputs("memtrace: out of memory\n", stderr);
  exit(1);
}

void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) xalloc_fail();
  return p;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) xalloc_fail();
  return p;
}

char *xstrdup(const char *s) {
  char *copy = strdup(s);
  if (!copy) xalloc_fail();
  return copy;
}
