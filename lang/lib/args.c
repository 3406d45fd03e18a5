// args.c - the argument checks and conversions every primitive shares
// (args.h): an argument of the wrong kind is a type error naming the
// builtin, raised before any field is read.
#include <string.h>

#include "native.h"

_Noreturn void args_type_error(Vm *vm, const char *what, const char *kind, Value v) {
  gc_raise_error(vm, "type error: %s expects %s, got %s", what, kind, ops_type_name(v));
}

Value args_float(Vm *vm, double d) {
  Value v = gc_alloc(vm, 1, TAG_FLOAT);
  memcpy(val_fields(v), &d, sizeof d);
  return v;
}
