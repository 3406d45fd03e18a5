// vm.h - the interpreter's entry points: creating a VM, running a program,
// calling Minnow code from C, raising formatted errors. The VM's state and
// the services every layer shares are core/vm_state.h; this header brings them
// and the heap's funnels (gc/gc.h) along, since most of lang/ uses all three.
#ifndef MINNOW_VM_H
#define MINNOW_VM_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/vm_state.h"
#include "../gc/gc.h"

// Creates a VM with the given options. Returns NULL (after printing why) when
// memory for the heap or stack cannot be had.
Vm *vm_new(const VmOptions *options);
void vm_free(Vm *vm);
// Makes vm what vm_new(options) would return, reusing its stack, minor heap
// and mark stack (an embedder running many programs, such as the fuzz
// driver, skips their allocation and first-touch cost). The stack size must
// not change. False when memory is short (vm is then only fit for vm_free).
bool vm_reset(Vm *vm, const VmOptions *options);

// Loads, compiles and runs `path` as the main script. Returns the process exit
// status: 0, 1 (uncaught runtime error) or 2 (syntax or compile error).
int vm_run_main(Vm *vm, const char *path);
// The same for a main script already in memory (text[0..len), malloc'ed,
// owned by the VM from now on), named `path` in messages.
int vm_run_text(Vm *vm, const char *path, char *text, size_t len);

// Calls a Minnow function value from C with `argc` arguments. May GC; the
// arguments are read before anything allocates. On an exception, returns
// false and leaves the raised value in vm->exn (the caller decides whether to
// re-raise with vm_raise(vm, vm->exn)).
bool vm_call(Vm *vm, Value fn, int argc, const Value *args, Value *result);


// The type name of a value as used in error messages ("int", "record", ...).
const char *vm_type_name(Value v);

#endif
