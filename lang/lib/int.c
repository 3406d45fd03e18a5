// int.c - the C half of stdlib/int.mn. Contract for every primitive:
// primitives.h.
#include <math.h>

#include "native.h"

Value lib_int_of_float(Vm *vm, Value *args) {
  double x = args_number(vm, args[0], "Int.of_float");
  if (isnan(x) || x >= 4.611686018427387904e18 || x < -4.611686018427387904e18) {
    char buf[64];
    ops_format_float(x, buf, sizeof buf);
    gc_raise_error(vm, "Int.of_float: %s is out of range", buf);
  }
  return val_of_int((int64_t)x);
}
