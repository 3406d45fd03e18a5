// roots.c - the one function that enumerates the roots (gc_scan_roots).
// Stack frames are scanned precisely: only the slots a descriptor lists as
// live are roots (a dead slot is not). The walker (core/frames.c) crosses C
// boundaries and memprof's redirected return addresses.
#include "gc_internal.h"
#include "../core/frames.h"
#include "../memprof/memprof.h"

static void scan_stack(Vm *vm, RootVisitor visit, void *data) {
  if (!vm->base) return;
  FrameCursor c;
  frames_top(vm, &c);
  do {
    const FrameDesc *d = c.desc;
    if (!d) {
      // A top frame stopped at an instruction without descriptor cannot be
      // collecting: only safe points allocate.
      continue;
    }
    for (uint32_t i = 0; i < d->live_count; i++) visit(vm, &c.base[d->live[i]], data);
  } while (frames_next(&c));
}

void gc_scan_roots(Vm *vm, RootVisitor visit, void *data) {
  scan_stack(vm, visit, data);
  for (uint32_t i = 0; i < vm->global_count; i++) visit(vm, &vm->globals[i], data);
  for (uint32_t i = 0; i < vm->root_count; i++) visit(vm, vm->roots[i], data);
  visit(vm, &vm->exn, data);
  if (vm->memprof) memprof_scan_roots(vm, visit, data);
}
