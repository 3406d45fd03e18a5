// vm.c - creating and destroying the VM, running the main script, exiting.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

// The VM that vm_out_of_memory(NULL, ...) and the signal handler finish: the
// one process-wide pointer of the runtime, since neither a signal handler nor
// the compiler's table code has a Vm at hand. Set by vm_new.
static Vm *process_vm;

// What vm_new and vm_reset set up beyond the stack and the heaps.
static void init_program_state(Vm *vm) {
  vm->trampoline_code[0] = 0;   // destination register (the return slot)
  vm->trampoline_code[1] = frames_step(0);   // caller frame step
  vm->trampoline_code[2] = BC_EXIT_NESTED;
  vm->trampoline_ret = &vm->trampoline_code[1];
  vm->frames = frames_new();
  vm->shapes = shapes_new();
  vm->empty_array = gc_alloc_static(vm, 0, TAG_ARRAY);
  static const char oom[] = "out of memory";
  vm->oom_message = gc_alloc_static(vm, str_wosize_for(sizeof oom - 1), TAG_STRING);
  memcpy(val_fields(vm->oom_message), oom, sizeof oom - 1);
  str_finish(vm->oom_message, sizeof oom - 1);
  vm->exn = VAL_NIL;
  vm->memprof = MEMPROF_BUILT ? memprof_new(vm) : NULL;
  process_vm = vm;
}

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
  init_program_state(vm);
  return vm;
}

// Frees the program: code, tables, profiler state (not the heaps or stack).
static void free_program_state(Vm *vm) {
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
}

void vm_free(Vm *vm) {
  if (!vm) return;
  if (process_vm == vm) process_vm = NULL;
  free_program_state(vm);
  gc_free(vm);
  free(vm->stack_start);
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
    compiler_dump(vm, stdout);
    return VM_EXIT_OK;
  }
  char err[512];
  if (vm->options.memtrace_path && !memtrace_start(vm, vm->options.memtrace_path, vm->options.memtrace_rate,
                                                   vm->options.memtrace_format, err, sizeof err)) {
    fprintf(stderr, "vm: --memtrace: %s\n", err);
    return VM_EXIT_USAGE;
  }
  if (vm->options.memprof_count_rate > 0 && !memprof_counter_start(vm, vm->options.memprof_count_rate)) {
    fprintf(stderr, "vm: --memprof-count: cannot start the profiler\n");
    return VM_EXIT_USAGE;
  }
  bool ok;
  interp_run_entry(vm, entry, &ok);
  return ok ? VM_EXIT_OK : VM_EXIT_ERROR;
}

// =====================================================================
// Leaving the process
// =====================================================================

_Noreturn void vm_exit(Vm *vm, int status) {
  fflush(stdout);
  if (vm) memprof_finish(vm);
  fflush(stderr);
  if (vm && vm->exit_hook) vm->exit_hook(vm, status);
  exit(status);
}

_Noreturn void vm_out_of_memory(Vm *vm, const char *what) {
  fprintf(stderr, "minnow: out of memory (%s)\n", what);
  vm_exit(vm ? vm : process_vm, VM_EXIT_ERROR);
}

static void on_signal(int sig) {
  Vm *vm = process_vm;
  if (!vm) _exit(128 + sig);
  vm->pending_signal = sig;
  vm->young_limit = vm->young_end;   // the next interpreter allocation stops
}

void vm_catch_signals(Vm *vm) {
  process_vm = vm;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND;   // a second signal takes the default action
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

_Noreturn void vm_handle_signal(Vm *vm) {
  int sig = vm->pending_signal;
  fflush(stdout);
  memprof_finish(vm);
  fflush(stderr);
  signal(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig);
}
