// path_names.c - names for a retaining path (contract in path_names.h).
//
// 1. A root is a global by name or a frame slot by function, file and line
//    (and its local when the compiler kept the name); C roots, the
//    exception and memprof's states by kind.
// 2. A hop is named from its parent block: a record field by the record's
//    shape, a tuple or array element by index, a list cell's tail ("list
//    cell") or head ("list element"), a closure's capture by index (and name),
//    a Buffer's storage.
// 3. A Hashtbl (a record of the shape only the stdlib's Hashtbl.create
//    makes, vm->hashtbl_shape: never recognised by its field names, which a
//    user's record may share): its inside (its `data` field, the bucket
//    array, the bucket's cells, the pair) reads as one hop, "Hashtbl value" or
//    "Hashtbl key": what its user wrote; a path ending inside it reads
//    "Hashtbl entry" or "Hashtbl storage".

#include "path_names.h"
#include "shapes.h"
#include "../../core/frames.h"
#include "../../core/image.h"
#include "../../core/vm_state.h"

static const char *field_name(const Vm *vm, Value record, uint32_t field) {
  uint32_t shape = (uint32_t)val_to_int(val_field(record, 0));
  if (field == 0 || field > shapes_field_count(vm->shapes, shape)) return "";
  return shapes_symbol_name(vm->shapes, shapes_field_symbol(vm->shapes, shape, field - 1));
}

static RetainHop name_hop(const Vm *vm, const GcPathRun *run) {
  RetainHop h = {.kind = RETAIN_HOP_OTHER, .count = run->count, .index = run->field, .name = ""};
  switch (val_tag(run->parent)) {
  case TAG_CONS: h.kind = run->field == 1 ? RETAIN_HOP_LIST_CELL : RETAIN_HOP_LIST_ELEMENT; break;
  case TAG_TUPLE: h.kind = RETAIN_HOP_TUPLE; break;
  case TAG_ARRAY: h.kind = RETAIN_HOP_ARRAY; break;
  case TAG_RECORD:
    h.kind = RETAIN_HOP_FIELD;
    h.name = field_name(vm, run->parent, run->field);
    break;
  case TAG_CLOSURE: {
    h.kind = RETAIN_HOP_CAPTURE;
    h.index = run->field - 1;
    uint64_t id = (uint64_t)val_to_int(val_field(run->parent, 0));
    const char *name = id < vm->proto_count ? image_capture_name(vm->protos[id], run->field) : NULL;
    if (name) h.name = name;
    break;
  }
  case TAG_BUFFER: h.kind = RETAIN_HOP_BUFFER; break;
  default: break;
  }
  return h;
}

// The `data` field of a record of the stdlib's Hashtbl: its shape is the
// private one only hashtbl_make gives (vm->hashtbl_shape), never a user
// record's with the same field names.
static bool is_hashtbl_data(const Vm *vm, const GcPathRun *run) {
  if (val_tag(run->parent) != TAG_RECORD || run->count != 1 || val_wosize(run->parent) != 3) return false;
  return (uint64_t)val_to_int(val_field(run->parent, 0)) == vm->hashtbl_shape && run->field == 2;
}

// Matches a Hashtbl's inside at runs[i]: its `data` field, the bucket
// array, the bucket's cells (if any), the element, then the pair's key or
// value ("Hashtbl value", "Hashtbl key"). A path ending at a bucket cell or
// a pair reads "Hashtbl entry", at the bucket array "Hashtbl storage". Returns the runs it covers (0: no match)
// and the hop in *out; `n` runs follow i on the path (through `last`).
static uint32_t match_hashtbl(const Vm *vm, const GcPathRun *runs, uint32_t n, uint32_t i, bool last,
                              RetainHop *out, uint64_t *rest) {
  *rest = 0;
  *out = (RetainHop){.kind = RETAIN_HOP_HASHTBL_ENTRY, .count = 1, .name = ""};
  if (i + 1 == n && last && is_hashtbl_data(vm, &runs[i])) {   // the path ends at the bucket array
    out->kind = RETAIN_HOP_HASHTBL_STORAGE;
    return 1;
  }
  if (i + 2 > n || !is_hashtbl_data(vm, &runs[i])) return 0;
  uint32_t k = i + 1;
  if (val_tag(runs[k].parent) != TAG_ARRAY || runs[k].count != 1) return 0;
  k++;
  if (k < n && val_tag(runs[k].parent) == TAG_CONS && runs[k].field == 1) k++;
  if (k == n) return last ? k - i : 0;   // the path ends at a bucket's cell
  if (val_tag(runs[k].parent) != TAG_CONS || runs[k].field != 0 || runs[k].count != 1) return 0;
  k++;
  if (k == n) return last ? k - i : 0;   // at the pair
  if (val_tag(runs[k].parent) != TAG_TUPLE || val_wosize(runs[k].parent) != 2) return 0;
  out->kind = runs[k].field == 1 ? RETAIN_HOP_HASHTBL_VALUE : RETAIN_HOP_HASHTBL_KEY;
  // A value that is itself a pair reached through the same index made one
  // run with the entry's: the rest of that run follows as its own hop.
  *rest = runs[k].count - 1;
  return k + 1 - i;
}

RetainRoot path_names_root(const Vm *vm, const GcRootInfo *r) {
  RetainRoot root = {.name = "", .file = "", .local = "", .index = r->index};
  switch (r->kind) {
  case GC_ROOT_GLOBAL:
    root.kind = RETAIN_ROOT_GLOBAL;
    root.name = r->index < vm->global_count && vm->global_names[r->index] ? vm->global_names[r->index] : "";
    break;
  case GC_ROOT_STACK: {
    root.kind = RETAIN_ROOT_STACK;
    const FrameDesc *d = r->desc;
    if (d && d->debug_count > 0 && d->debug[0]) {
      root.name = d->debug[0]->function;
      root.file = d->debug[0]->file;
      root.line = d->debug[0]->line;
    }
    const char *local = d ? image_local_name(d->proto, d->key, r->index) : NULL;
    if (local) root.local = local;
    break;
  }
  case GC_ROOT_C: root.kind = RETAIN_ROOT_C; break;
  case GC_ROOT_EXCEPTION: root.kind = RETAIN_ROOT_EXCEPTION; break;
  case GC_ROOT_PROFILER: root.kind = RETAIN_ROOT_PROFILER; break;
  }
  return root;
}

uint32_t path_names_path(const Vm *vm, const GcRetainPath *p, RetainHop *hops) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->run_count;) {
    if (p->elided_hops && i == p->elided_at)
      hops[n++] = (RetainHop){.kind = RETAIN_HOP_ELIDED, .count = p->elided_hops, .name = ""};
    uint32_t span = p->elided_hops && i < p->elided_at ? p->elided_at : p->run_count;
    RetainHop h;
    uint64_t rest;
    uint32_t used = match_hashtbl(vm, p->runs, span, i, span == p->run_count, &h, &rest);
    if (used) {
      hops[n++] = h;
      i += used;
      if (rest) {
        hops[n] = name_hop(vm, &p->runs[i - 1]);
        hops[n++].count = rest;
      }
    } else {
      hops[n++] = name_hop(vm, &p->runs[i]);
      i++;
    }
  }
  if (p->elided_hops && p->elided_at == p->run_count)
    hops[n++] = (RetainHop){.kind = RETAIN_HOP_ELIDED, .count = p->elided_hops, .name = ""};
  return n;
}
