// vm.h - a whole VM: creating one (heap, stack, code image, profiler, the
// primitives' table), compiling and running a main script with the options
// of VmOptions (core/vm_state.h), freeing it. The one file that joins the
// front end (lang/front/) to the runtime (lang/runtime/) and the library
// (lang/lib/); the command line (main.c), the fuzz driver and the unit tests
// call it.
#ifndef MINNOW_VM_H
#define MINNOW_VM_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/vm_state.h"

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

#endif
