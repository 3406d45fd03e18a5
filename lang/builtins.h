// builtins.h - declarations of the C primitives (lang/builtins_*.c,
// lang/builtins_memprof.c) for the table in lang/primitives.c, and helpers they share.
#ifndef MINNOW_BUILTINS_H
#define MINNOW_BUILTINS_H

#include <string.h>

#include "../core/value.h"

typedef struct Vm Vm;

// A new boxed float. May GC.
Value builtins_float(Vm *vm, double d);
// The type error of an argument `v` of the wrong kind given to builtin
// `what` (e.g. "String.sub"), which expects `kind` ("an int"). Never returns.
_Noreturn void builtins_type_error(Vm *vm, const char *what, const char *kind, Value v);
// The int in v, or a type error naming `what`. Inline: every primitive
// taking a count checks one (the cost of a call on string code).
static inline int64_t builtins_int(Vm *vm, Value v, const char *what) {
  if (!val_is_int(v)) builtins_type_error(vm, what, "an int", v);
  return val_to_int(v);
}
// The string v (a type error otherwise).
static inline Value builtins_string(Vm *vm, Value v, const char *what) {
  if (!val_has_tag(v, TAG_STRING)) builtins_type_error(vm, what, "a string", v);
  return v;
}
// The double in the float v (a type error otherwise).
static inline double builtins_number(Vm *vm, Value v, const char *what) {
  if (!val_has_tag(v, TAG_FLOAT)) builtins_type_error(vm, what, "a float", v);
  return float_of_val(v);
}

#define PRIMITIVE_LIST(X)                                                            \
  X(print, 1) X(println, 1) X(str, 1) X(raise, 1) X(compare, 2) X(hash, 1)           \
  X(sys_argv, 0) X(sys_time, 0) X(sys_exit, 1)                                       \
  X(string_length, 1) X(string_sub, 3) X(string_concat, 2) X(string_split, 2)        \
  X(string_of_int, 1) X(string_of_float, 1) X(string_to_int, 1)                      \
  X(string_to_float, 1) X(string_repeat, 2) X(string_get, 2) X(string_of_byte, 1)    \
  X(string_index_of, 2)                                                              \
  X(buffer_create, 1) X(buffer_add, 2) X(buffer_length, 1) X(buffer_contents, 1)     \
  X(buffer_clear, 2)                                                                 \
  X(array_make, 2) X(array_length, 1) X(array_blit, 5) X(array_to_list, 1)          \
  X(array_to_tuple, 1)                                                               \
  X(float_of_int, 1) X(float_sqrt, 1) X(float_floor, 1) X(float_log, 1)              \
  X(float_exp, 1) X(float_pow, 2) X(float_to_string, 2) X(int_of_float, 1)           \
  X(gc_minor, 0) X(gc_major, 0) X(gc_full_major, 0) X(gc_stat, 0) X(gc_set, 1)       \
  X(gc_verify, 0)                                                                    \
  X(memprof_start, 1) X(memprof_stop, 0) X(memprof_discard, 1) X(memprof_frames, 1)         \
  X(memtrace_start, 2) X(memtrace_stop, 0)

#define X(name, arity) Value prim_##name(Vm *vm, Value *args);
PRIMITIVE_LIST(X)
#undef X

#endif
