// fuzz_vm.c - the in-process fuzz target of the VM (make fuzz; issue 17).
// Each input is a main script, compiled and run in a fresh VM inside this
// process: a small stack and minor heap, a major-heap limit, and a step
// budget (MINNOW_FUZZ builds burn fuel at every jump back and call). Every
// way out of the run (its end, Sys.exit, an uncaught error, out of memory,
// the budget) comes back here through vm->exit_hook, and the VM is reset
// (vm_reset) for the next input: nothing of one run is seen by the next.
// Entry point: LLVMFuzzerTestOneInput, driven by afl++'s libAFLDriver.a in
// persistent mode (build/fuzz/fuzz_vm) or by fuzz_replay.c (build/fuzzreplay).
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lang/vm.h"

// Resources of one run, bounded so that one input costs milliseconds.
enum {
  FUZZ_STACK_WORDS = 1 << 13,
  FUZZ_MINOR_WORDS = 1 << 16,
  FUZZ_MAX_HEAP_WORDS = 1 << 22,   // 32 MiB
  FUZZ_FUEL_STEPS = 1 << 15,
};

typedef struct Run {
  jmp_buf escape;
  int status;
} Run;

static void leave_run(Vm *vm, int status) {
  Run *run = vm->exit_hook_data;
  run->status = status;
  longjmp(run->escape, 1);
}

// The VM of the previous input, reset for the next (vm_reset keeps its
// stack and heaps' memory: allocating them anew cost most of a run). The
// one global of the driver: LLVMFuzzerTestOneInput takes no context.
static Vm *reusable;

// A VM as vm_new would make it: the previous one reset, or a new one.
static Vm *fresh_vm(const VmOptions *opt) {
  if (reusable && vm_reset(reusable, opt)) return reusable;
  vm_free(reusable);
  reusable = vm_new(opt);
  return reusable;
}

// Runs `text` as the script "fuzz.mn"; returns its status (VM_EXIT_FUEL when
// the budget ran out).
static int run_script(const uint8_t *data, size_t size) {
  VmOptions opt = {.stack_words = FUZZ_STACK_WORDS, .minor_words = FUZZ_MINOR_WORDS,
                   .max_heap_words = FUZZ_MAX_HEAP_WORDS};
  Vm *vm = fresh_vm(&opt);
  if (!vm) return VM_EXIT_ERROR;
  static char name[] = "fuzz.mn";
  static char *argv[] = {name, NULL};
  vm->argc = 1;
  vm->argv = argv;
  vm->fuel = FUZZ_FUEL_STEPS;
  Run run = {.status = VM_EXIT_OK};
  vm->exit_hook = leave_run;
  vm->exit_hook_data = &run;
  char *text = malloc(size + 1);
  if (!text) abort();
  memcpy(text, data, size);
  text[size] = 0;
  if (setjmp(run.escape) == 0) run.status = vm_run_text(vm, name, text, size);
  fflush(stdout);
  return run.status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int status = run_script(data, size);
  // A run ends with a process status (Sys.exit's 0..255 included) or out of
  // fuel; anything else is a bug worth a crash.
  if (status != VM_EXIT_FUEL && (status < 0 || status > 255)) abort();
  return 0;
}
