// args.h - the argument checks and conversions every primitive of lang/lib/
// shares (args.c): an argument of the wrong kind is a type error naming the
// primitive (e.g. "String.sub"), raised before any field is read.
#ifndef MINNOW_ARGS_H
#define MINNOW_ARGS_H

#include <stdint.h>

#include "../../core/value.h"

typedef struct Vm Vm;

// A new boxed float. May GC.
Value args_float(Vm *vm, double d);
// The type error of an argument `v` of the wrong kind given to primitive
// `what`, which expects `kind` ("an int"). Never returns.
_Noreturn void args_type_error(Vm *vm, const char *what, const char *kind, Value v);
// The int in v, or a type error naming `what`. Inline: every primitive
// taking a count checks one (the cost of a call on string code).
static inline int64_t args_int(Vm *vm, Value v, const char *what) {
  if (!val_is_int(v)) args_type_error(vm, what, "an int", v);
  return val_to_int(v);
}
// The string v (a type error otherwise).
static inline Value args_string(Vm *vm, Value v, const char *what) {
  if (!val_has_tag(v, TAG_STRING)) args_type_error(vm, what, "a string", v);
  return v;
}
// The double in the float v (a type error otherwise).
static inline double args_number(Vm *vm, Value v, const char *what) {
  if (!val_has_tag(v, TAG_FLOAT)) args_type_error(vm, what, "a float", v);
  return float_of_val(v);
}

#endif
