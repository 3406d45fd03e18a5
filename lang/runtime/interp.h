// interp.h - the interpreter: running the program's entry function (lang/vm.c),
// calling Minnow code from C (the primitives of lang/lib/), and the uncaught
// error's report. It reads the code image (core/image.h) and never the
// compiler's tables.
#ifndef MINNOW_INTERP_H
#define MINNOW_INTERP_H

#include <stdbool.h>

#include "../../core/image.h"
#include "../../core/vm_state.h"

// Runs the program's entry function (compiler_compile_program's result).
// *ok is false when an exception escaped (only possible if a handler existed
// at an outer level; uncaught errors exit in vm_raise).
Value interp_run_entry(Vm *vm, const Proto *entry, bool *ok);

// Calls a Minnow function value from C with `argc` arguments. May GC; the
// arguments are read before anything allocates. On an exception, returns
// false and leaves the raised value in vm->exn (the caller decides whether to
// re-raise with vm_raise(vm, vm->exn)).
bool interp_call(Vm *vm, Value fn, int argc, const Value *args, Value *result);

// Raises `stack overflow` (the VM stack is full).
_Noreturn void interp_raise_stack_overflow(Vm *vm);

// Prints an uncaught error at the raise point, `file:line:col: error: v`,
// then its backtrace (vm->uncaught: vm_raise then exits with status 1).
void interp_print_uncaught(Vm *vm, Value v);

#endif
