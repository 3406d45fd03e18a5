// primitives.h - the C primitives that `external` declarations bind (the
// calling convention: PrimFn in core/image.h). Primitive `name` is the
// function lib_<name>, defined in the file of lang/lib/ named after its
// stdlib module: lib_string_sub in string.c (stdlib/string.mn), lib_print in
// prelude.c (stdlib/prelude.mn). The compiler looks primitives up by name;
// the interpreter calls them through vm->primitives (primitives_table()).
#ifndef MINNOW_PRIMITIVES_H
#define MINNOW_PRIMITIVES_H

#include "../../core/image.h"
#include "../../core/value.h"

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
  X(hashtbl_make, 1) X(hashtbl_find_opt, 2) X(hashtbl_add, 3) X(hashtbl_replace, 3)  \
  X(float_of_int, 1) X(float_sqrt, 1) X(float_floor, 1) X(float_log, 1)              \
  X(float_exp, 1) X(float_pow, 2) X(float_to_string, 2) X(int_of_float, 1)           \
  X(gc_minor, 0) X(gc_major, 0) X(gc_full_major, 0) X(gc_stat, 0) X(gc_set, 1)       \
  X(gc_verify, 0) X(gc_set_pretenure, 1)                                             \
  X(memprof_start, 1) X(memprof_stop, 0) X(memprof_discard, 1) X(memprof_frames, 1)  \
  X(memtrace_start, 2) X(memtrace_stop, 0) X(memtrace_snapshot, 0)                    \
  X(repr, 1) X(repr_cut, 2) X(eprint, 1) X(eprintln, 1)                              \
  X(sys_getenv, 1)                                                                   \
  X(file_read, 1) X(stdin_read_line, 0) X(stdin_read_all, 0)                         \
  X(random_seed, 2) X(random_self_seed, 1) X(random_int, 2) X(random_float, 1)

#define PRIMITIVE_DECLARE(name, arity) Value lib_##name(Vm *vm, Value *args);
PRIMITIVE_LIST(PRIMITIVE_DECLARE)
#undef PRIMITIVE_DECLARE

// Index of the primitive called `name`, or -1.
int primitives_lookup(const char *name);
// Every primitive, by index (PRIMITIVE_LIST's order).
const Primitive *primitives_table(void);

#endif
