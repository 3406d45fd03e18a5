// interp.h - entry points of the interpreter used by vm.c (the rest of the
// VM uses vm_call / vm_raise from vm.h).
#ifndef MINNOW_INTERP_H
#define MINNOW_INTERP_H

#include "compiler.h"
#include "vm.h"

// Runs the program's entry function (compiler_compile_program's result).
// *ok is false when an exception escaped (only possible if a handler existed
// at an outer level; uncaught errors exit in vm_raise).
Value interp_run_entry(Vm *vm, const Proto *entry, bool *ok);

_Noreturn void vm_raise_stack_overflow(Vm *vm);

// Prints an uncaught error at the raise point, `file:line:col: error: v`,
// then its backtrace (vm->uncaught: vm_raise then exits with status 1).
void interp_print_uncaught(Vm *vm, Value v);

#endif
