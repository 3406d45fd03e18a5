// engine.c - placeholder: the sampling engine is being written (issue 3).
// No profile can be started yet; every hook is inactive.
#include <stdlib.h>

#include "memprof.h"
#include "memtrace.h"
#include "../lang/builtins.h"
#include "../lang/vm.h"

struct Memprof {
  int unused;
};

Memprof *memprof_new(Vm *vm) {
  (void)vm;
  return calloc(1, sizeof(Memprof));
}
void memprof_free(Vm *vm) { free(vm->memprof); vm->memprof = NULL; }
void memprof_sample_young(Vm *vm, Value *old, uint64_t whsize, const uint32_t *subs, uint32_t n) {
  (void)vm; (void)old; (void)whsize; (void)subs; (void)n;
}
void memprof_sample_major(Vm *vm, Value block, uint64_t wosize) { (void)vm; (void)block; (void)wosize; }
void memprof_renew_trigger(Vm *vm) { vm->young_trigger = NULL; }
void memprof_minor_gc_done(Vm *vm) { (void)vm; }
void memprof_major_mark_done(Vm *vm) { (void)vm; }
void memprof_scan_roots(Vm *vm, RootVisitor visit, void *data) { (void)vm; (void)visit; (void)data; }
void memprof_run_callbacks(Vm *vm) { vm->memprof_pending = false; }
bool memprof_pending(const Vm *vm) { return vm->memprof_pending; }
const uint32_t *memprof_original_ret(const Memprof *mp, const uint32_t *ret) { (void)mp; return ret; }
const uint32_t *memprof_stub_return(Vm *vm, const uint32_t *pc) { (void)vm; return pc; }
void memprof_unwind(Vm *vm, const Value *base) { (void)vm; (void)base; }

Value prim_memprof_start(Vm *vm, Value *args) { (void)args; vm_raise_error(vm, "Memprof.start: not available yet"); }
Value prim_memprof_stop(Vm *vm, Value *args) { (void)args; vm_raise_error(vm, "Memprof.stop: not available yet"); }
Value prim_memprof_discard(Vm *vm, Value *args) { (void)args; vm_raise_error(vm, "Memprof.discard: not available yet"); }
Value prim_memprof_frames(Vm *vm, Value *args) { (void)args; vm_raise_error(vm, "Memprof.frames: not available yet"); }

bool memtrace_start(Vm *vm, const char *path) {
  (void)vm;
  fprintf(stderr, "vm: --memtrace %s: the trace writer is not available yet\n", path);
  return false;
}
void memtrace_finish(Vm *vm) { (void)vm; }
