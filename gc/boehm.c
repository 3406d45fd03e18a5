// boehm.c - gc.h implemented on Boehm GC (make vm-boehm): the baseline
// collector. Every block is a GC_MALLOC'ed object (GC_MALLOC_ATOMIC when it
// holds no values); there is no minor heap, no write barrier work and no
// sampling. Roots: the live part of the VM stack, the globals and the C roots,
// pushed by a callback (Boehm's callback takes no argument, so the VM it
// serves is the one static pointer of this file, set once by gc_init).
#include <gc/gc.h>
#include <gc/gc_mark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc.h"
#include "../core/image.h"

static Vm *the_vm;   // see the file comment
static GC_push_other_roots_proc previous_push;

static void push_vm_roots(void) {
  Vm *vm = the_vm;
  if (previous_push) previous_push();
  if (vm->base) {
    // The top frame's size, from its function's call target (core/vm_state.h).
    const CallTarget *t = &vm->fn_targets[val_to_int(val_field(vm->base[0], 0))];
    GC_push_all(vm->stack_start, vm->base + t->fsize);
  }
  if (vm->global_count) GC_push_all(vm->globals, vm->globals + vm->global_count);
  for (uint32_t i = 0; i < vm->root_count; i++) GC_push_all(vm->roots[i], vm->roots[i] + 1);
  GC_push_all(&vm->exn, &vm->exn + 1);
}

static void quiet_warning(char *msg, GC_word arg) {
  (void)msg;
  (void)arg;   // heap-growth warnings: the VM reports `out of memory` itself
}

bool gc_init(Vm *vm, uint64_t minor_words) {
  (void)minor_words;
  GC_set_all_interior_pointers(1);
  GC_INIT();
  GC_set_warn_proc(quiet_warning);
  if (vm->options.max_heap_words) GC_set_max_heap_size((GC_word)(vm->options.max_heap_words * sizeof(Value)));
  the_vm = vm;
  previous_push = GC_get_push_other_roots();
  GC_set_push_other_roots(push_vm_roots);
  static Value dummy[2];
  vm->young_start = vm->young_end = vm->young_ptr = vm->young_limit = vm->young_limit_c = dummy + 1;
  return true;
}

void gc_free(Vm *vm) { (void)vm; }

// Boehm collects what the finished program left once nothing points to it.
bool gc_reset(Vm *vm, uint64_t minor_words) {
  (void)minor_words;
  memset(&vm->gc.stats, 0, sizeof vm->gc.stats);
  return true;
}

static Value boehm_alloc(Vm *vm, uint64_t wosize, unsigned tag) {
  size_t bytes = (wosize + 1) * sizeof(Value);
  Value *p = tag >= TAG_NO_SCAN ? GC_MALLOC_ATOMIC(bytes) : GC_MALLOC(bytes);
  if (!p) {   // at the heap limit: a full collection, then one more try
    GC_gcollect();
    p = tag >= TAG_NO_SCAN ? GC_MALLOC_ATOMIC(bytes) : GC_MALLOC(bytes);
  }
  if (!p) vm_raise_out_of_memory(vm);
  p[0] = hd_make(wosize, tag, COLOR_WHITE);
  vm->gc.stats.major_words += (double)(wosize + 1);
  return val_of_ptr(p + 1);
}

Value gc_alloc_slow(Vm *vm, uint64_t wosize, unsigned tag) {
  if (wosize == 0) return vm->empty_array;
  return boehm_alloc(vm, wosize, tag);
}
Value gc_alloc_major(Vm *vm, uint64_t wosize, unsigned tag) { return gc_alloc(vm, wosize, tag); }
Value gc_alloc_pretenured(Vm *vm, uint64_t wosize, unsigned tag, uint32_t sub) {
  (void)sub;
  return gc_alloc(vm, wosize, tag);
}
Value gc_alloc_no_collect(Vm *vm, uint64_t wosize, unsigned tag) { return gc_alloc(vm, wosize, tag); }

Value gc_alloc_static(Vm *vm, uint64_t wosize, unsigned tag) {
  Value *p = GC_MALLOC_UNCOLLECTABLE((wosize + 1) * sizeof(Value));
  if (!p) vm_out_of_memory(vm, "constants");
  p[0] = hd_make(wosize, tag, COLOR_STATIC);
  for (uint64_t i = 0; i < wosize; i++) p[1 + i] = VAL_NIL;
  return val_of_ptr(p + 1);
}

Value *gc_young_slow(Vm *vm, uint64_t whsize, const uint32_t *sub_whsizes, uint32_t n_sub) {
  (void)sub_whsizes; (void)n_sub;
  (void)vm;
  fprintf(stderr, "minnow: internal error: minor allocation of %llu words in the Boehm build\n",
          (unsigned long long)whsize);
  abort();
}

void gc_remember(Vm *vm, Value *field) { (void)vm; (void)field; }
void gc_minor(Vm *vm) { (void)vm; }
void gc_major(Vm *vm) {
  GC_gcollect();
  vm->gc.stats.major_collections++;
  vm->gc.stats.heap_words = GC_get_heap_size() / sizeof(Value);
  vm->gc.stats.live_words = (GC_get_heap_size() - GC_get_free_bytes()) / sizeof(Value);
}
void gc_full_major(Vm *vm) { gc_major(vm); }
bool gc_set_minor_size(Vm *vm, uint64_t minor_words) {
  vm->options.minor_words = minor_words;
  return true;
}

void gc_set_max_heap(Vm *vm, uint64_t words) {
  vm->options.max_heap_words = words;
  GC_set_max_heap_size((GC_word)(words * sizeof(Value)));
}
double gc_minor_words_now(const Vm *vm) { (void)vm; return 0; }
bool gc_verify(Vm *vm) { (void)vm; return true; }
void gc_scan_roots(Vm *vm, RootVisitor visit, void *data) { (void)vm; (void)visit; (void)data; }
// No retaining paths on Boehm GC: it has no profiler to ask for them.
void gc_scan_roots_named(Vm *vm, void (*visit)(Vm *, Value *, const GcRootInfo *, void *), void *data) {
  (void)vm;
  (void)visit;
  (void)data;
}
bool gc_path_target(GcPathRequest *req, Value block, uint64_t id) {
  (void)req;
  (void)block;
  (void)id;
  return false;
}
void gc_major_paths(Vm *vm, GcPathRequest *req) {
  (void)vm;
  req->failed = true;
  req->ran = false;
}
