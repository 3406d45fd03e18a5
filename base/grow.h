// grow.h - the one grower of the project's arrays, header-only (so that any
// program linking a few objects gets it), depending on nothing but libc.
//
// grow_array(p, &cap, need, size, first) returns the array p, of *cap items
// of `size` bytes, made to hold `need` items: p itself when it already does;
// else p reallocated to a capacity doubled from *cap (from `first`, >= 1,
// when *cap is 0) until it holds `need`, and *cap set to it; an array still
// unallocated (p NULL) is allocated even for need 0, so that NULL always
// means a failure. NULL when the
// capacity would pass the counter's range (UINT32_MAX; UINT64_MAX for
// grow_array64), the bytes SIZE_MAX, or realloc fails: then p is untouched
// and *cap unchanged, and the caller says what failed in its own way (the
// VM's out of memory, a reader's error, the tool's exit).
#ifndef MINNOW_BASE_GROW_H
#define MINNOW_BASE_GROW_H

#include <stdint.h>
#include <stdlib.h>

static inline void *grow_array_within(void *p, uint64_t *cap, uint64_t need, size_t size, uint64_t first,
                                      uint64_t max) {
  if (need == 0 && !p) need = 1;   // an empty array is still an array: NULL means failure alone
  if (need <= *cap) return p;
  if (need > max) return NULL;
  uint64_t n = *cap ? *cap : first;
  while (n < need) n = n > max / 2 ? max : 2 * n;
  if (size && n > SIZE_MAX / size) return NULL;
  size_t bytes = (size_t)(n * size);
  void *q = realloc(p, bytes ? bytes : 1);
  if (!q) return NULL;
  *cap = n;
  return q;
}

static inline void *grow_array64(void *p, uint64_t *cap, uint64_t need, size_t size, uint64_t first) {
  return grow_array_within(p, cap, need, size, first, UINT64_MAX);
}

static inline void *grow_array(void *p, uint32_t *cap, uint64_t need, size_t size, uint32_t first) {
  uint64_t c = *cap;
  void *q = grow_array_within(p, &c, need, size, first, UINT32_MAX);
  if (q) *cap = (uint32_t)c;
  return q;
}

#endif
