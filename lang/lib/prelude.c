// prelude.c - the C half of stdlib/prelude.mn: print, println, eprint,
// eprintln, str, repr, repr_cut, raise, compare, hash. Contract for every primitive: primitives.h.
#include <stdio.h>

#include "native.h"

Value lib_print(Vm *vm, Value *args) {
  ops_print(vm, stdout, args[0], false);
  return VAL_NIL;
}

Value lib_println(Vm *vm, Value *args) {
  ops_print(vm, stdout, args[0], false);
  fputc('\n', stdout);
  return VAL_NIL;
}

Value lib_str(Vm *vm, Value *args) { return ops_to_string(vm, args[0]); }

Value lib_repr(Vm *vm, Value *args) { return ops_to_repr(vm, args[0]); }

// A bound past the longest string is no bound (printing fails first).
Value lib_repr_cut(Vm *vm, Value *args) {
  int64_t n = args_int(vm, args[1], "repr_cut");
  if (n < 3) gc_raise_error(vm, "repr_cut: the length must be at least 3 (room for \"...\"), got %lld", (long long)n);
  return ops_to_repr_cut(vm, args[0], (uint64_t)n > OPS_MAX_STRING_BYTES ? OPS_MAX_STRING_BYTES : (size_t)n);
}

// eprint, eprintln: standard output is flushed first, so that the two
// streams interleave in program order on one terminal.
Value lib_eprint(Vm *vm, Value *args) {
  fflush(stdout);
  ops_print(vm, stderr, args[0], false);
  return VAL_NIL;
}

Value lib_eprintln(Vm *vm, Value *args) {
  fflush(stdout);
  ops_print(vm, stderr, args[0], false);
  fputc('\n', stderr);
  return VAL_NIL;
}

Value lib_raise(Vm *vm, Value *args) { vm_raise(vm, args[0]); }

Value lib_compare(Vm *vm, Value *args) { return val_of_int(ops_compare(vm, args[0], args[1])); }

Value lib_hash(Vm *vm, Value *args) {
  return val_of_int((int64_t)ops_hash(vm, args[0]));
}
