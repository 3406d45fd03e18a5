// memtrace_module.c - the C half of stdlib/memtrace.mn: Memtrace.start,
// Memtrace.stop and Memtrace.snapshot, on the trace writer of
// memprof/memtrace.c and the snapshots of lang/runtime/snapshots.c. Contract for
// every primitive: primitives.h.
#include <string.h>

#include "native.h"
#include "../runtime/snapshots.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../../memprof/memtrace.h"
#include "../../trace/format.h"

Value lib_memtrace_start(Vm *vm, Value *args) {
  Value path = args_string(vm, args[0], "Memtrace.start");
  if (strlen(str_bytes(path)) != str_len(path)) gc_raise_error(vm, "Memtrace.start: the file name contains a NUL byte");
  double rate = val_is_int(args[1]) ? (double)val_to_int(args[1]) : args_number(vm, args[1], "Memtrace.start");
  if (!(rate > 0 && rate <= 1)) gc_raise_error(vm, "Memtrace.start: the rate must be in (0, 1], got %g", rate);
  if (vm->memtrace) gc_raise_error(vm, "Memtrace.start: a trace is already being written");
  char err[512];
  if (!memtrace_start(vm, str_bytes(path), rate, TRACE_VERSION_DEFAULT, err, sizeof err))
    gc_raise_error(vm, "Memtrace.start: %s", err);
  snapshots_arm(vm);
  return VAL_NIL;
}

Value lib_memtrace_stop(Vm *vm, Value *args) {
  (void)args;
  snapshots_end_trace(vm);   // the end state, before the trace closes
  if (!memtrace_stop(vm)) gc_raise_error(vm, "Memtrace.stop: no trace is being written");
  return VAL_NIL;
}

Value lib_memtrace_snapshot(Vm *vm, Value *args) {
  (void)args;
  const char *why;
  int64_t n = snapshots_take_now(vm, &why);
  if (n < 0) gc_raise_error(vm, "Memtrace.snapshot: %s", why);
  return val_of_int(n);
}
