// fail.c - raising and leaving (core/vm_state.h): an exception unwinds to the
// innermost handler, or ends the program through the interpreter's uncaught
// hook; every way out of the process goes through vm_exit, which finishes the
// trackers first (the hook memprof plugs in); signals end the run at the next
// safe point. Nothing here allocates: the layers below the interpreter raise
// the message made at start-up (vm_raise_out_of_memory).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "debug.h"
#include "vm_state.h"

// The VM that vm_out_of_memory(NULL, ...) and the signal handler finish: the
// one process-wide pointer of the runtime, since neither a signal handler nor
// the compiler's table code has a Vm at hand (vm_register).
static Vm *process_vm;

void vm_register(Vm *vm) { process_vm = vm; }

void vm_unregister(Vm *vm) {
  if (process_vm == vm) process_vm = NULL;
}

_Noreturn void vm_raise(Vm *vm, Value v) {
  vm->exn = v;
  if (vm->handler_count == 0) {
    if (vm->uncaught) vm->uncaught(vm, v);
    vm_exit(vm, VM_EXIT_ERROR);
  }
  longjmp(*vm->levels[vm->level].escape, 1);
}

_Noreturn void vm_raise_out_of_memory(Vm *vm) { vm_raise(vm, vm->oom_message); }

// Every way out: the trace's end state, then the trackers finish.
static void finish(Vm *vm) {
  if (vm->end_trace) vm->end_trace(vm);
  if (vm->finish_trackers) vm->finish_trackers(vm);
}

_Noreturn void vm_exit(Vm *vm, int status) {
  fflush(stdout);
  if (vm) finish(vm);
  fflush(stderr);
  if (vm && vm->exit_hook) vm->exit_hook(vm, status);
  exit(status);
}

_Noreturn void vm_out_of_memory(Vm *vm, const char *what) {
  fprintf(stderr, "minnow: out of memory (%s)\n", what);
  vm_exit(vm ? vm : process_vm, VM_EXIT_ERROR);
}

void *vm_realloc_or_die(void *p, size_t bytes, const char *what) {
  void *q = realloc(p, bytes ? bytes : 1);
  if (!q) vm_out_of_memory(NULL, what);
  return q;
}

static void on_signal(int sig) {
  Vm *vm = process_vm;
  if (!vm) _exit(128 + sig);
  vm->pending_signal = sig;
  vm->young_limit = vm->young_end;   // the next interpreter allocation stops
}

void vm_catch_signals(Vm *vm) {
  vm_register(vm);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND;   // a second signal takes the default action
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

static void on_snapshot_signal(int sig) {
  Vm *vm = process_vm;
  if (vm) vm_request_snapshot(vm, sig == SIGUSR1 ? VM_SNAPSHOT_SIGNAL : VM_SNAPSHOT_PERIOD);
}

void vm_catch_snapshot_signals(Vm *vm, double period_s) {
  vm_register(vm);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_snapshot_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  if (period_s > 0) {
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it;
    it.it_interval.tv_sec = (time_t)period_s;
    it.it_interval.tv_usec = (suseconds_t)((period_s - (double)(time_t)period_s) * 1e6);
    if (it.it_interval.tv_sec == 0 && it.it_interval.tv_usec == 0) it.it_interval.tv_usec = 1;
    it.it_value = it.it_interval;
    setitimer(ITIMER_REAL, &it, NULL);
  }
}

void vm_release_snapshot_signals(Vm *vm) {
  (void)vm;
  struct itimerval off;
  memset(&off, 0, sizeof off);
  setitimer(ITIMER_REAL, &off, NULL);
  signal(SIGALRM, SIG_DFL);
  signal(SIGUSR1, SIG_DFL);
}

_Noreturn void vm_handle_signal(Vm *vm) {
  int sig = vm->pending_signal;
  fflush(stdout);
  finish(vm);
  fflush(stderr);
  signal(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig);
}

_Noreturn void debug_fail(const char *file, int line, const char *cond, const char *what) {
  fflush(stdout);
  fprintf(stderr, "minnow: internal error: invariant broken at %s:%d: %s (%s)\n", file, line, cond, what);
  abort();
}
