// builtins_args.c - the argument checks and conversions every builtin shares
// (builtins.h): an argument of the wrong kind is a type error naming the
// builtin, raised before any field is read.
#include <string.h>

#include "builtins.h"
#include "ops.h"
#include "vm.h"

_Noreturn void builtins_type_error(Vm *vm, const char *what, const char *kind, Value v) {
  vm_raise_error(vm, "type error: %s expects %s, got %s", what, kind, vm_type_name(v));
}

Value builtins_float(Vm *vm, double d) {
  Value v = gc_alloc(vm, 1, TAG_FLOAT);
  memcpy(val_fields(v), &d, sizeof d);
  return v;
}
