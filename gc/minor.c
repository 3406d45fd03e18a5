// minor.c - the minor collection: copy the live young blocks into the major heap.
//
// 1. Roots: every root slot (gc_scan_roots) and every field of the remembered
//    set (old fields that may point into the minor heap, recorded by gc_write).
// 2. oldify: a young block is copied into the major heap (major_alloc_raw:
//    no collection, no sampling: promotion is not allocation), its header in
//    the minor heap is set to 0 and its field 0 to the new address (the
//    forwarding marker: no young block has 0 fields, so a header of 0 is never
//    a real one). A slot pointing at a forwarded block is simply redirected.
// 3. Promoted blocks that hold values are pushed on `promoted` and scanned in
//    turn, until the stack is empty (no recursion: lists are long).
// 4. memprof then looks at its young entries: forwarded blocks were promoted,
//    the others are dead (memprof_minor_gc_done).
// 5. The minor heap is empty again; the trigger and limit are recomputed, and
//    a major cycle runs when enough has been promoted or allocated there.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_internal.h"
#include "../memprof/memprof.h"

static void push_promoted(MajorHeap *h, Value v) {
  if (h->promoted_count == h->promoted_cap) {
    h->promoted_cap = h->promoted_cap ? h->promoted_cap * 2 : 4096;
    h->promoted = realloc(h->promoted, h->promoted_cap * sizeof(Value));
    if (!h->promoted) vm_out_of_memory(NULL, "minor collection");
  }
  h->promoted[h->promoted_count++] = v;
}

static void oldify(Vm *vm, Value *slot) {
  Value v = *slot;
  if (!vm_is_young(vm, v)) return;
  Header hd = val_hd(v);
  if (hd == 0) {
    *slot = val_field(v, 0);
    return;
  }
  uint64_t wosize = hd_wosize(hd);
  unsigned tag = hd_tag(hd);
  Value copy = major_alloc_raw(vm, wosize, tag);
  if (!copy) vm_out_of_memory(vm, "minor collection");
  Value *to = val_fields(copy), *from = val_fields(v);
  if (wosize <= 2) {   // pairs and cons cells, the bulk of promotions: no call
    to[0] = from[0];
    if (wosize == 2) to[1] = from[1];
  } else {
    memcpy(to, from, wosize * sizeof(Value));
  }
  *val_hd_ptr(v) = 0;
  val_fields(v)[0] = copy;
  *slot = copy;
  vm->gc.stats.promoted_words += (double)(wosize + 1);
  vm->gc.stats.major_words += (double)(wosize + 1);
  vm->gc.major_since_cycle += wosize + 1;
  if (tag < TAG_NO_SCAN) push_promoted(vm->gc.major, copy);
}

static void oldify_root(Vm *vm, Value *slot, void *data) {
  (void)data;
  oldify(vm, slot);
}

static void drain_promoted(Vm *vm) {
  MajorHeap *h = vm->gc.major;
  while (h->promoted_count > 0) {
    Value b = h->promoted[--h->promoted_count];
    uint64_t n = val_wosize(b);
    Value *f = val_fields(b);
    for (uint64_t i = 0; i < n; i++) oldify(vm, &f[i]);
  }
}

void gc_minor(Vm *vm) {
  GcState *gc = &vm->gc;
  if (gc->collecting) return;
  gc->collecting = true;
  gc->minor_requested = false;
  uint64_t since = gc->major_since_cycle;
  gc->scanning_for_minor = true;
  gc_scan_roots(vm, oldify_root, NULL);
  gc->scanning_for_minor = false;
  for (uint64_t i = 0; i < gc->remembered_count; i++) oldify(vm, gc->remembered[i]);
  drain_promoted(vm);
  // Promotions count towards the cycle but allocate nothing: memprof's next
  // sampled major word moves with them (vm_state.h).
  vm->memprof_major_point += gc->major_since_cycle - since;
  if (vm->memprof) memprof_minor_gc_done(vm);
  gc->stats.minor_words = gc_minor_words_now(vm);
  gc->stats.minor_collections++;
  vm->young_ptr = vm->young_end;
  gc->remembered_count = 0;
  gc->collecting = false;
  if (vm->memprof) memprof_renew_trigger(vm);
  vm_update_limits(vm);
  ASSERT(gc->remembered_count == 0 && vm->young_ptr == vm->young_end, "the minor heap is empty after a minor collection");
  if (gc->major_since_cycle > vm->gc.major_threshold) {
    gc->collecting = true;
    major_collect(vm);
    gc->collecting = false;
  }
  if (vm->options.gc_verify && !gc_verify(vm)) {
    fprintf(stderr, "minnow: heap verification failed after a minor collection\n");
    abort();
  }
}
