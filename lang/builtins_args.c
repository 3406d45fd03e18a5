// builtins_args.c - the argument checks and conversions every builtin shares
// (builtins.h): an argument of the wrong kind is a type error naming the
// builtin, raised before any field is read.
#include "builtins.h"
#include "ops.h"
#include "vm.h"
#include <string.h>

Value builtins_string(Vm *vm, Value v, const char *what) {
  if (!val_has_tag(v, TAG_STRING)) vm_raise_error(vm, "type error: %s expects a string, got %s", what, vm_type_name(v));
  return v;
}

int64_t builtins_int(Vm *vm, Value v, const char *what) {
  if (!val_is_int(v)) vm_raise_error(vm, "type error: %s expects an int, got %s", what, vm_type_name(v));
  return val_to_int(v);
}

double builtins_number(Vm *vm, Value v, const char *what) {
  if (val_has_tag(v, TAG_FLOAT)) return float_of_val(v);
  vm_raise_error(vm, "type error: %s expects a float, got %s", what, vm_type_name(v));
}

Value builtins_float(Vm *vm, double d) {
  Value v = gc_alloc(vm, 1, TAG_FLOAT);
  memcpy(val_fields(v), &d, sizeof d);
  return v;
}
