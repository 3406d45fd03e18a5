// float.c - the C half of stdlib/float.mn. Contract for every primitive:
// primitives.h.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "native.h"

Value lib_float_of_int(Vm *vm, Value *args) {
  return args_float(vm, (double)args_int(vm, args[0], "Float.of_int"));
}

#define FLOAT_FN(name, expr)                                        \
  Value lib_float_##name(Vm *vm, Value *args) {                    \
    double x = args_number(vm, args[0], "Float." #name);        \
    return args_float(vm, expr);                                \
  }
FLOAT_FN(sqrt, sqrt(x))
FLOAT_FN(floor, floor(x))
FLOAT_FN(log, log(x))
FLOAT_FN(exp, exp(x))
#undef FLOAT_FN

Value lib_float_pow(Vm *vm, Value *args) {
  double x = args_number(vm, args[0], "Float.pow"), y = args_number(vm, args[1], "Float.pow");
  return args_float(vm, pow(x, y));
}

Value lib_float_to_string(Vm *vm, Value *args) {
  double x = args_number(vm, args[0], "Float.to_string");
  int64_t digits = args_int(vm, args[1], "Float.to_string");
  if (digits < 0 || digits > 60) gc_raise_error(vm, "Float.to_string: digits must be in 0..60, got %lld", (long long)digits);
  char buf[400];
  if (isnan(x) || isinf(x)) ops_format_float(x, buf, sizeof buf);
  else snprintf(buf, sizeof buf, "%.*f", (int)digits, x);
  return ops_string(vm, buf, strlen(buf));
}
