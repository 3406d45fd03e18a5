// native.h - the native API: what a primitive of the standard library's data
// modules (lang/lib/: args, array, buffer, file, float, hashtbl, int, prelude,
// random, stdin, string, sys) may use, and the one header such a file
// includes (besides its own module's header and libc). Contract:
//
//   values        core/value.h: Value, val_*, hd_*, the tags; a block's
//                 fields are read with val_field/val_fields.
//   allocation    gc_alloc (may collect: every Value held across it is a
//                 root), gc_alloc_no_collect (never collects: for a
//                 message or a result made where nothing may move);
//                 fields filled with gc_init_field, or plain stores into a
//                 block known young (vm_is_young).
//   stores        gc_write for a field of a block that existed before.
//   roots         vm_push_root(vm, &v) / vm_pop_roots(vm, n): a C local
//                 holding a Value across an allocation.
//   raising       gc_raise_error (a formatted runtime error), vm_raise (a
//                 value), vm_raise_out_of_memory (allocates nothing),
//                 args_type_error and the args_* checks (args.h); vm_exit.
//   helpers       lang/runtime/ops.h (strings, printing, equality, hash,
//                 compare), lang/runtime/checked.h (overflow-checked sizes).
//   VM facts      the accessors below: the one empty array, the Hashtbl
//                 shape, the script's arguments.
//
// A native reads no field of Vm itself and includes no other header of the
// runtime (core/, gc/, memprof/, lang/runtime/): tests/suites/layout.sh
// checks both, so that the VM's state can change without touching the
// library. The runtime's own modules (gc_module.c, memprof_module.c,
// memtrace_module.c), which drive the collector, memprof and the trace
// writer, include this header and their subsystem's.
#ifndef MINNOW_NATIVE_H
#define MINNOW_NATIVE_H

#include "args.h"
#include "primitives.h"
#include "../runtime/checked.h"
#include "../runtime/ops.h"
#include "../../core/value.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"

// The one block of 0 fields (static): every empty array is this block.
static inline Value native_empty_array(const Vm *vm) { return vm->empty_array; }
// The shape id a Hashtbl's record holds in field 0 (what tells a table
// from a user's record of the same fields).
static inline uint32_t native_hashtbl_shape(const Vm *vm) { return vm->hashtbl_shape; }
// The script's path then its arguments (*argc of them).
static inline char *const *native_argv(const Vm *vm, int *argc) {
  *argc = vm->argc;
  return vm->argv;
}

#endif
