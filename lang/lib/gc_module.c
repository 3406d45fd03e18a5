// gc_module.c - the C half of stdlib/gc.mn: collections, statistics, settings, verifier.
#include <stdio.h>

#include "native.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../../memprof/memprof.h"
#include "../../memprof/pretenure.h"

Value lib_gc_minor(Vm *vm, Value *args) {
  (void)args;
  gc_minor(vm);
  return VAL_NIL;
}

Value lib_gc_major(Vm *vm, Value *args) {
  (void)args;
  gc_major(vm);
  return VAL_NIL;
}

// Two cycles; the dealloc callbacks of the first run before the second, so
// that what they drop is freed too.
Value lib_gc_full_major(Vm *vm, Value *args) {
  (void)args;
  gc_major(vm);
  if (vm->memprof_pending) memprof_run_callbacks(vm);
  gc_major(vm);
  return VAL_NIL;
}

Value lib_gc_stat(Vm *vm, Value *args) {
  (void)args;
  static const char *const names[] = {"minor_words", "promoted_words", "major_words",
                                      "minor_collections", "major_collections",
                                      "heap_words", "live_words", "minor_heap_words", "pretenured_words"};
  GcStats *s = &vm->gc.stats;
  Value vals[9] = {
      val_of_int((int64_t)gc_minor_words_now(vm)), val_of_int((int64_t)s->promoted_words),
      val_of_int((int64_t)s->major_words), val_of_int((int64_t)s->minor_collections),
      val_of_int((int64_t)s->major_collections), val_of_int((int64_t)s->heap_words),
      val_of_int((int64_t)s->live_words), val_of_int((int64_t)vm->options.minor_words),
      val_of_int((int64_t)s->pretenured_words),
  };
  return ops_record(vm, names, vals, 9);
}

Value lib_gc_set(Vm *vm, Value *args) {
  static const char *const fields[] = {"max_heap_words", "minor_heap_words"};
  Value v;
  ops_check_options(vm, args[0], fields, 2, "Gc.set");
  if (ops_record_get(vm, args[0], "max_heap_words", &v)) {
    int64_t n = args_int(vm, v, "Gc.set");
    if (n < 0 || (uint64_t)n > GC_MAX_HEAP_WORDS)
      gc_raise_error(vm, "Gc.set: max_heap_words must be in 0..%llu (0: no limit), got %lld",
                     (unsigned long long)GC_MAX_HEAP_WORDS, (long long)n);
    gc_set_max_heap(vm, (uint64_t)n);
  }
  if (ops_record_get(vm, args[0], "minor_heap_words", &v)) {
    int64_t n = args_int(vm, v, "Gc.set");
    if (n < 1 || (uint64_t)n > GC_MAX_MINOR_WORDS)
      gc_raise_error(vm, "Gc.set: minor_heap_words must be in 1..%llu, got %lld",
                     (unsigned long long)GC_MAX_MINOR_WORDS, (long long)n);
    if (!gc_set_minor_size(vm, (uint64_t)n)) vm_raise_out_of_memory(vm);
  }
  return VAL_NIL;
}

Value lib_gc_verify(Vm *vm, Value *args) {
  (void)args;
  return val_of_bool(gc_verify(vm));
}

// Gc.set_pretenure(on): starts or stops pretenuring's online feedback (the
// rate of --pretenure-rate, or its default); stopping switches every site
// it made old back. Already as asked: nothing happens.
Value lib_gc_set_pretenure(Vm *vm, Value *args) {
  if (args[0] != VAL_TRUE && args[0] != VAL_FALSE)
    gc_raise_error(vm, "type error: Gc.set_pretenure expects a bool, got %s", ops_type_name(args[0]));
  bool on = args[0] == VAL_TRUE;
  if (on == pretenure_running(vm)) return VAL_NIL;
  char err[256];
  if (on && !pretenure_start(vm, vm->options.pretenure_rate, vm->options.pretenure_log, err, sizeof err))
    gc_raise_error(vm, "Gc.set_pretenure: %s", err);
  if (!on) pretenure_stop(vm);
  return VAL_NIL;
}
