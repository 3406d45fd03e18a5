// builtins_gc.c - the Gc module: collections, statistics, settings, verifier.
#include <stdio.h>

#include "builtins.h"
#include "ops.h"
#include "vm.h"
#include "../memprof/memprof.h"

Value prim_gc_minor(Vm *vm, Value *args) {
  (void)args;
  gc_minor(vm);
  return VAL_NIL;
}

Value prim_gc_major(Vm *vm, Value *args) {
  (void)args;
  gc_major(vm);
  return VAL_NIL;
}

// Two cycles; the dealloc callbacks of the first run before the second, so
// that what they drop is freed too.
Value prim_gc_full_major(Vm *vm, Value *args) {
  (void)args;
  gc_major(vm);
  if (vm->memprof_pending) memprof_run_callbacks(vm);
  gc_major(vm);
  return VAL_NIL;
}

Value prim_gc_stat(Vm *vm, Value *args) {
  (void)args;
  static const char *const names[] = {"minor_words", "promoted_words", "major_words",
                                      "minor_collections", "major_collections",
                                      "heap_words", "live_words", "minor_heap_words"};
  GcStats *s = &vm->gc.stats;
  Value vals[8] = {
      val_of_int((int64_t)gc_minor_words_now(vm)), val_of_int((int64_t)s->promoted_words),
      val_of_int((int64_t)s->major_words), val_of_int((int64_t)s->minor_collections),
      val_of_int((int64_t)s->major_collections), val_of_int((int64_t)s->heap_words),
      val_of_int((int64_t)s->live_words), val_of_int((int64_t)vm->options.minor_words),
  };
  return ops_record(vm, names, vals, 8);
}

Value prim_gc_set(Vm *vm, Value *args) {
  Value v;
  if (!val_has_tag(args[0], TAG_RECORD)) vm_raise_error(vm, "type error: Gc.set expects a record, got %s", vm_type_name(args[0]));
  if (ops_record_get(vm, args[0], "max_heap_words", &v))
    gc_set_max_heap(vm, (uint64_t)builtins_int(vm, v, "Gc.set"));
  if (ops_record_get(vm, args[0], "minor_heap_words", &v)) {
    int64_t n = builtins_int(vm, v, "Gc.set");
    if (n < 1 || n > ((int64_t)1 << 32)) vm_raise_error(vm, "Gc.set: minor_heap_words out of range");
    if (!gc_set_minor_size(vm, (uint64_t)n)) vm_raise_error(vm, "out of memory");
  }
  return VAL_NIL;
}

Value prim_gc_verify(Vm *vm, Value *args) {
  (void)args;
  return val_of_bool(gc_verify(vm));
}
