// vm.c - creating and destroying the VM, running the main script, exiting.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/bytecode.h"
#include "../core/frames.h"
#include "../core/image.h"
#include "../gc/gc.h"
#include "front/compiler.h"
#include "lib/primitives.h"
#include "runtime/disasm.h"
#include "runtime/interp.h"
#include "runtime/pretenure_from.h"
#include "runtime/snapshots.h"
#include "runtime/shapes.h"
#include "vm.h"
#include "../memprof/memprof.h"
#include "../memprof/counter.h"
#include "../memprof/memtrace.h"
#include "../memprof/pretenure.h"

// What vm_new and vm_reset set up beyond the stack and the heaps.
static void init_program_state(Vm *vm) {
  // Returning to the trampoline leaves base where it was (a step of 0) and
  // writes the result over slot 0 of the level's first frame, done by then:
  // EXIT_NESTED hands it to interp_call.
  vm->trampoline_code[0] = 0;   // destination register
  vm->trampoline_code[1] = frames_step(0);   // caller frame step
  vm->trampoline_code[2] = BC_EXIT_NESTED;
  vm->trampoline_ret = &vm->trampoline_code[1];
  vm->primitives = primitives_table();
  vm->frames = frames_new();
  vm->shapes = shapes_new();
  uint32_t hashtbl_fields[2] = {shapes_symbol(vm->shapes, "size"), shapes_symbol(vm->shapes, "data")};
  vm->hashtbl_shape = shapes_make_private(vm->shapes, hashtbl_fields, 2);
  vm->empty_array = gc_alloc_static(vm, 0, TAG_ARRAY);
  static const char oom[] = "out of memory";
  vm->oom_message = gc_alloc_static(vm, str_wosize_for(sizeof oom - 1), TAG_STRING);
  memcpy(val_fields(vm->oom_message), oom, sizeof oom - 1);
  str_finish(vm->oom_message, sizeof oom - 1);
  vm->exn = VAL_NIL;
  vm->uncaught = interp_print_uncaught;
  vm->end_trace = snapshots_end_trace;
  vm->memprof_module = -1;
  vm->memprof = MEMPROF_BUILT ? memprof_new(vm) : NULL;
  vm_register(vm);
}

Vm *vm_new(const VmOptions *options) {
  Vm *vm = calloc(1, sizeof *vm);
  if (!vm) return NULL;
  vm->options = *options;
  vm->stack_start = calloc(options->stack_words, sizeof(Value));
  // A frame holds at least its closure: at most stack_words frames.
  vm->ret_stack = calloc(options->stack_words, sizeof *vm->ret_stack);
  if (!vm->stack_start || !vm->ret_stack || !gc_init(vm, options->minor_words)) {
    fprintf(stderr, "minnow: cannot allocate the stack and heap\n");
    free(vm->stack_start);
    free(vm->ret_stack);
    free(vm);
    return NULL;
  }
  vm->stack_end = vm->stack_start + options->stack_words;
  vm->stack_limit = options->stack_words > VM_CALL_HEADROOM ? vm->stack_end - VM_CALL_HEADROOM : vm->stack_start;
  vm->ret_sp = vm->ret_stack;
  init_program_state(vm);
  return vm;
}

// Frees the program: code, tables, profiler state (not the heaps or stack).
static void free_program_state(Vm *vm) {
  memprof_free(vm);
  pretenure_free(vm);   // after the profiles' release (the feedback's names it)
  compiler_free(vm);
  image_free(vm);
  free(vm->handlers);
  frames_free(vm->frames);
  shapes_free(vm->shapes);
}

void vm_free(Vm *vm) {
  if (!vm) return;
  vm_unregister(vm);
  free_program_state(vm);
  gc_free(vm);
  free(vm->stack_start);
  free(vm->ret_stack);
  free(vm);
}

bool vm_reset(Vm *vm, const VmOptions *options) {
  if (options->stack_words != (uint64_t)(vm->stack_end - vm->stack_start)) return false;
  free_program_state(vm);
  // Everything but the stack, the heaps' memory and GcState goes back to zero.
  Vm keep = *vm;
  memset(vm, 0, sizeof *vm);
  vm->stack_start = keep.stack_start;
  vm->stack_end = keep.stack_end;
  vm->stack_limit = keep.stack_limit;
  vm->ret_stack = vm->ret_sp = keep.ret_stack;
  vm->young_start = keep.young_start;
  vm->young_end = keep.young_end;
  vm->gc = keep.gc;
  vm->options = *options;
  if (!gc_reset(vm, options->minor_words)) return false;
  init_program_state(vm);
  return true;
}

static int run_entry(Vm *vm, Proto *entry);

int vm_run_main(Vm *vm, const char *path) {
  vm->main_path = path;
  return run_entry(vm, compiler_compile_program(vm, path));
}

int vm_run_text(Vm *vm, const char *path, char *text, size_t len) {
  vm->main_path = path;
  return run_entry(vm, compiler_compile_text(vm, path, text, len));
}

// Runs the compiled program (NULL: it did not compile).
static int run_entry(Vm *vm, Proto *entry) {
  if (!entry) return VM_EXIT_USAGE;
  if (vm->options.dump_bytecode) {
    image_link_calls(vm);   // the listing shows the calls as they run
    disasm_program(vm, stdout);
    return VM_EXIT_OK;
  }
  char err[512];
  if (vm->options.memtrace_path && !memtrace_start(vm, vm->options.memtrace_path, vm->options.memtrace_rate,
                                                   vm->options.memtrace_format, err, sizeof err)) {
    fprintf(stderr, "vm: --memtrace: %s\n", err);
    return VM_EXIT_USAGE;
  }
  if (vm->options.memtrace_path) snapshots_arm(vm);
  if (vm->options.memprof_count_rate > 0 && !memprof_counter_start(vm, vm->options.memprof_count_rate)) {
    fprintf(stderr, "vm: --memprof-count: cannot start the profiler\n");
    return VM_EXIT_USAGE;
  }
  if (vm->options.pretenure_log) pretenure_set_log(vm, true);
  if (vm->options.pretenure_from) {
    bool read = pretenure_from_trace(vm, vm->options.pretenure_from, err, sizeof err);
    if (err[0]) fprintf(stderr, "vm: --pretenure-from %s\n", err);
    if (!read) return VM_EXIT_USAGE;
  }
  if (vm->options.pretenure && !pretenure_start(vm, vm->options.pretenure_rate, vm->options.pretenure_log, err,
                                                sizeof err)) {
    fprintf(stderr, "vm: --pretenure: %s\n", err);
    return VM_EXIT_USAGE;
  }
  bool ok;
  interp_run_entry(vm, entry, &ok);
  return ok ? VM_EXIT_OK : VM_EXIT_ERROR;
}
