// ops.h - operations on any value: structural equality, ordering, hashing,
// printing (str), string making and ++. Used by the interpreter and builtins.
#ifndef MINNOW_OPS_H
#define MINNOW_OPS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../core/value.h"

typedef struct Vm Vm;

// The type name of a value as used in error messages ("int", "record", ...).
const char *ops_type_name(Value v);

// Structural equality (==): values of different types differ; records are
// equal when they have the same field names and equal fields, whatever the
// order they were written in; ends on cyclic values (bisimilarity). Raises
// only `out of memory`.
bool ops_equal(Vm *vm, Value a, Value b);
// Ordering (<): ints, floats, strings, tuples and lists (lexicographic),
// arrays, bools, records (field names, then fields in name order); 0 exactly
// when == holds (floats aside: nan == nan is false, compare(nan, nan) is 0);
// raises `type error: cannot compare T and U` otherwise.
int ops_compare(Vm *vm, Value a, Value b);
// Structural hash in 0 .. 2^62 - 1, consistent with ops_equal (equal values
// hash equal: records whatever their field order, 0.0 and -0.0), every bit
// of the value's words mixed into the low bits; looks at a bounded part of
// a large or cyclic value, and at the whole of each string it reaches.
uint64_t ops_hash(const Vm *vm, Value v);
// Prints v as `str` does; `quoted`: strings quoted with escapes.
void ops_print(Vm *vm, FILE *out, Value v, bool quoted);
// str(v) as a new string. May GC.
Value ops_to_string(Vm *vm, Value v);
// repr(v): as str, but a string quoted with escapes at top level too. May GC.
Value ops_to_repr(Vm *vm, Value v);
// repr(v) if it is at most max_bytes (>= 3) long; else as many of its first
// bytes as leave room for "..." and end on a whole UTF-8 character, then
// "...". Reads only as much of v as it keeps, whatever v's size. May GC.
Value ops_to_repr_cut(Vm *vm, Value v, size_t max_bytes);
// The longest string (and buffer) any operation makes: longer requests
// raise `out of memory` before allocating.
#define OPS_MAX_STRING_BYTES ((uint64_t)1 << 40)
// A new string holding len bytes. May GC, so `bytes` must not point into
// the heap (a collection may move the block they belong to).
Value ops_string(Vm *vm, const char *bytes, size_t len);
// A new string of len bytes whose padding and length byte are written but
// whose bytes [0, len) are not: the caller fills them before the next
// allocation (the GC never looks inside a string). May GC.
Value ops_string_uninit(Vm *vm, size_t len);
// Copies n bytes from src to dst (not overlapping), touching no byte outside
// either range: short copies are two overlapping moves of 8, 4, 2 or 1
// bytes, long ones memcpy.
static inline void ops_copy_bytes(char *dst, const char *src, size_t n) {
  uint64_t w8[2];
  uint32_t w4[2];
  uint16_t w2[2];
  if (n > 16) {
    memcpy(dst, src, n);
  } else if (n >= 8) {
    memcpy(&w8[0], src, 8); memcpy(&w8[1], src + n - 8, 8);
    memcpy(dst, &w8[0], 8); memcpy(dst + n - 8, &w8[1], 8);
  } else if (n >= 4) {
    memcpy(&w4[0], src, 4); memcpy(&w4[1], src + n - 4, 4);
    memcpy(dst, &w4[0], 4); memcpy(dst + n - 4, &w4[1], 4);
  } else if (n >= 2) {
    memcpy(&w2[0], src, 2); memcpy(&w2[1], src + n - 2, 2);
    memcpy(dst, &w2[0], 2); memcpy(dst + n - 2, &w2[1], 2);
  } else if (n == 1) {
    *dst = *src;
  }
}
// str(n) for an int n, written straight into a new string. May GC.
Value ops_string_of_int(Vm *vm, int64_t n);
// Writes n in decimal ('-' first if negative) and a NUL into buf, which
// holds at least OPS_INT_CHARS bytes; returns the length without the NUL.
enum { OPS_INT_CHARS = 24 };
size_t ops_format_int(int64_t n, char *buf);
// a ++ b for strings or lists; a and b are root slots (re-read after GC).
Value ops_concat(Vm *vm, Value *a, Value *b);
// Shortest decimal form of d that reads back, with a '.' or exponent.
void ops_format_float(double d, char *buf, size_t size);

// A new record {names[0]: vals[0], ...}. The vals are roots during the
// allocation (the array is updated if they move). May GC.
Value ops_record(Vm *vm, const char *const *names, Value *vals, uint32_t n);
// Field `name` of record r into *out; false if r is not a record with it.
bool ops_record_get(Vm *vm, Value r, const char *name, Value *out);
// Checks an options record (Gc.set, Memprof.start): raises a type error
// naming `what` unless r is a record, and an error naming the first field
// that is not one of names[0..n) (a misspelt option is never ignored).
void ops_check_options(Vm *vm, Value r, const char *const *names, uint32_t n, const char *what);
#endif
