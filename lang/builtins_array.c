// builtins_array.c - the C parts of Array, Float and Int.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builtins.h"
#include "ops.h"
#include "vm.h"

Value builtins_float(Vm *vm, double d) {
  Value v = gc_alloc(vm, 1, TAG_FLOAT);
  memcpy(val_fields(v), &d, sizeof d);
  return v;
}

double builtins_number(Vm *vm, Value v, const char *what) {
  if (val_has_tag(v, TAG_FLOAT)) return float_of_val(v);
  vm_raise_error(vm, "type error: %s expects a float, got %s", what, vm_type_name(v));
}

// Array.make(n, v): young when small, else in the major heap (every field
// initialised through the barrier there).
Value prim_array_make(Vm *vm, Value *args) {
  int64_t n = builtins_int(vm, args[0], "Array.make");
  if (n < 0) vm_raise_error(vm, "Array.make: negative length %lld", (long long)n);
  if (n > ((int64_t)1 << 40)) vm_raise_error(vm, "out of memory");
  if (n == 0) return vm->empty_array;
  Value a = gc_alloc(vm, (uint64_t)n, TAG_ARRAY);
  Value v = args[1];
  if (gc_is_young(vm, a)) {
    for (int64_t i = 0; i < n; i++) val_fields(a)[i] = v;
  } else {
    for (int64_t i = 0; i < n; i++) gc_init_field(vm, a, (uint64_t)i, v);
  }
  return a;
}

Value prim_array_length(Vm *vm, Value *args) {
  Value a = args[0];
  if (a == vm->empty_array) return val_of_int(0);
  if (!val_has_tag(a, TAG_ARRAY)) vm_raise_error(vm, "type error: Array.length expects an array, got %s", vm_type_name(a));
  return val_of_int((int64_t)val_wosize(a));
}

Value prim_array_blit(Vm *vm, Value *args) {
  Value src = args[0], dst = args[2];
  int64_t si = builtins_int(vm, args[1], "Array.blit"), di = builtins_int(vm, args[3], "Array.blit");
  int64_t n = builtins_int(vm, args[4], "Array.blit");
  uint64_t sl = src == vm->empty_array ? 0 : val_wosize(src), dl = dst == vm->empty_array ? 0 : val_wosize(dst);
  if ((src != vm->empty_array && !val_has_tag(src, TAG_ARRAY)) || (dst != vm->empty_array && !val_has_tag(dst, TAG_ARRAY)))
    vm_raise_error(vm, "type error: Array.blit expects arrays");
  if (n < 0 || si < 0 || di < 0 || (uint64_t)(si + n) > sl || (uint64_t)(di + n) > dl)
    vm_raise_error(vm, "Array.blit: range out of bounds");
  if (src == dst && si < di) {
    for (int64_t i = n - 1; i >= 0; i--) gc_write(vm, dst, (uint64_t)(di + i), val_field(src, (uint64_t)(si + i)));
  } else {
    for (int64_t i = 0; i < n; i++) gc_write(vm, dst, (uint64_t)(di + i), val_field(src, (uint64_t)(si + i)));
  }
  return VAL_NIL;
}

Value prim_float_of_int(Vm *vm, Value *args) {
  return builtins_float(vm, (double)builtins_int(vm, args[0], "Float.of_int"));
}

#define FLOAT_FN(name, expr)                                        \
  Value prim_float_##name(Vm *vm, Value *args) {                    \
    double x = builtins_number(vm, args[0], "Float." #name);        \
    return builtins_float(vm, expr);                                \
  }
FLOAT_FN(sqrt, sqrt(x))
FLOAT_FN(floor, floor(x))
FLOAT_FN(log, log(x))
FLOAT_FN(exp, exp(x))
#undef FLOAT_FN

Value prim_float_pow(Vm *vm, Value *args) {
  double x = builtins_number(vm, args[0], "Float.pow"), y = builtins_number(vm, args[1], "Float.pow");
  return builtins_float(vm, pow(x, y));
}

Value prim_float_to_string(Vm *vm, Value *args) {
  double x = builtins_number(vm, args[0], "Float.to_string");
  int64_t digits = builtins_int(vm, args[1], "Float.to_string");
  if (digits < 0 || digits > 60) vm_raise_error(vm, "Float.to_string: digits must be in 0..60");
  char buf[400];
  if (isnan(x) || isinf(x)) ops_format_float(x, buf, sizeof buf);
  else snprintf(buf, sizeof buf, "%.*f", (int)digits, x);
  return ops_string(vm, buf, strlen(buf));
}

Value prim_int_of_float(Vm *vm, Value *args) {
  double x = builtins_number(vm, args[0], "Int.of_float");
  if (isnan(x) || x >= 4.611686018427387904e18 || x < -4.611686018427387904e18) {
    char buf[64];
    ops_format_float(x, buf, sizeof buf);
    vm_raise_error(vm, "Int.of_float: %s is out of range", buf);
  }
  return val_of_int((int64_t)x);
}
