// vm.c - creating and destroying the VM, running the main script, exiting.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "bytecode.h"
#include "compiler.h"
#include "frames.h"
#include "interp.h"
#include "shapes.h"
#include "vm.h"
#include "../memprof/memprof.h"
#include "../memprof/counter.h"
#include "../memprof/memtrace.h"

Vm *vm_new(const VmOptions *options) {
  Vm *vm = calloc(1, sizeof *vm);
  if (!vm) return NULL;
  vm->options = *options;
  vm->stack_start = calloc(options->stack_words, sizeof(Value));
  if (!vm->stack_start || !gc_init(vm, options->minor_words)) {
    fprintf(stderr, "minnow: cannot allocate the stack and heap\n");
    free(vm->stack_start);
    free(vm);
    return NULL;
  }
  vm->stack_end = vm->stack_start + options->stack_words;
  vm->trampoline_code[0] = 0;   // destination register (the return slot)
  vm->trampoline_code[1] = frames_step(0);   // caller frame step
  vm->trampoline_code[2] = BC_EXIT_NESTED;
  vm->trampoline_ret = &vm->trampoline_code[1];
  vm->frames = frames_new();
  vm->shapes = shapes_new();
  vm->empty_array = gc_alloc_static(vm, 0, TAG_ARRAY);
  vm->exn = VAL_NIL;
  vm->memprof = MEMPROF_BUILT ? memprof_new(vm) : NULL;
  return vm;
}

void vm_free(Vm *vm) {
  if (!vm) return;
  memprof_free(vm);
  compiler_free(vm);
  for (uint32_t i = 0; i < vm->proto_count; i++) {
    Proto *p = vm->protos[i];
    free(p->code);
    free(p->lines);
    free((void *)p->name);
    free(p);
  }
  for (uint32_t i = 0; i < vm->global_count; i++) free(vm->global_names[i]);
  free(vm->global_names);
  free(vm->globals);
  free(vm->protos);
  free(vm->fn_targets);
  free(vm->global_targets);
  free(vm->constants);
  free(vm->handlers);
  frames_free(vm->frames);
  shapes_free(vm->shapes);
  gc_free(vm);
  free(vm->stack_start);
  free(vm);
}

int vm_run_main(Vm *vm, const char *path) {
  vm->main_path = path;
  Proto *entry = compiler_compile_program(vm, path);
  if (!entry) return 2;
  vm->entry_proto = entry;
  if (vm->options.dump_bytecode) {
    compiler_dump(vm, stdout);
    return 0;
  }
  if (vm->options.memtrace_path && !memtrace_start(vm, vm->options.memtrace_path)) return 2;
  if (vm->options.memprof_count_rate > 0 && !memprof_counter_start(vm, vm->options.memprof_count_rate)) {
    fprintf(stderr, "vm: --memprof-count: cannot start the profiler\n");
    return 2;
  }
  bool ok;
  interp_run_entry(vm, entry, &ok);
  fflush(stdout);
  memprof_counter_report(vm, stderr);
  if (vm->options.memtrace_path) memtrace_finish(vm);
  return ok ? 0 : 1;
}

_Noreturn void vm_exit(Vm *vm, int status) {
  fflush(stdout);
  memprof_counter_report(vm, stderr);
  if (vm->options.memtrace_path) memtrace_finish(vm);
  exit(status);
}
