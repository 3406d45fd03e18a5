// roots.c - the one place that enumerates the roots: gc_scan_roots for the
// collectors, gc_scan_roots_named (each root with what it is) for retaining
// paths; both visit the same slots.
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

// The same slots as gc_scan_roots, named; memprof's through an adapter.
typedef struct NamedAdapter {
  void (*visit)(Vm *vm, Value *slot, const GcRootInfo *info, void *data);
  void *data;
} NamedAdapter;

static void profiler_root(Vm *vm, Value *slot, void *data) {
  NamedAdapter *a = data;
  GcRootInfo info = {.kind = GC_ROOT_PROFILER, .slot = slot};
  a->visit(vm, slot, &info, a->data);
}

void gc_scan_roots_named(Vm *vm, void (*visit)(Vm *vm, Value *slot, const GcRootInfo *info, void *data), void *data) {
  GcRootInfo info = {.kind = GC_ROOT_GLOBAL};
  for (uint32_t i = 0; i < vm->global_count; i++) {
    info.index = i;
    info.slot = &vm->globals[i];
    visit(vm, info.slot, &info, data);
  }
  if (vm->base) {
    FrameCursor c;
    frames_top(vm, &c);
    uint32_t depth = 0;
    do {
      const FrameDesc *d = c.desc;
      if (d) {
        for (uint32_t i = 0; i < d->live_count; i++) {
          info = (GcRootInfo){GC_ROOT_STACK, d->live[i], depth, d, &c.base[d->live[i]]};
          visit(vm, info.slot, &info, data);
        }
      }
      depth++;
    } while (frames_next(&c));
  }
  for (uint32_t i = 0; i < vm->root_count; i++) {
    info = (GcRootInfo){.kind = GC_ROOT_C, .index = i, .slot = vm->roots[i]};
    visit(vm, info.slot, &info, data);
  }
  info = (GcRootInfo){.kind = GC_ROOT_EXCEPTION, .slot = &vm->exn};
  visit(vm, info.slot, &info, data);
  if (vm->memprof) {
    NamedAdapter a = {visit, data};
    bool minor = vm->gc.scanning_for_minor;
    vm->gc.scanning_for_minor = false;   // every state, not only the fresh ones
    memprof_scan_roots(vm, profiler_root, &a);
    vm->gc.scanning_for_minor = minor;
  }
}
