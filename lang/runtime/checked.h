// checked.h - overflow-checked arithmetic for every size, count, range and
// exit status computed from input (primitive arguments, file sizes; numbers
// on the command line are read by base/number.h). Each helper says whether the result is exact; the
// caller turns `false` into an error message, never into a wrapped value.
#ifndef MINNOW_CHECKED_H
#define MINNOW_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

// *out = a + b, a * b; false (and *out unspecified) when it does not fit.
static inline bool checked_add(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline bool checked_mul(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}

// Whether [start, start + len) lies within [0, size): both non-negative and
// start + len <= size, with no wrap-around whatever the inputs.
static inline bool checked_range(int64_t start, int64_t len, uint64_t size) {
  return start >= 0 && len >= 0 && (uint64_t)start <= size && (uint64_t)len <= size - (uint64_t)start;
}

#endif
