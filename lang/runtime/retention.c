// retention.c - the end state of a trace (contract in retention.h).
//
// 1. Order. Sampling stops; the events already queued are delivered; a
//    major collection runs (gc_major: a minor collection, then mark and
//    sweep); its collect events are delivered, so the trace now says of
//    every sampled block whether it died. Then one breadth-first walk from
//    the roots (gc/retain.c) finds a shortest path to each sampled block
//    still alive, and each path is named and written beside the trace.
//    The trace itself closes afterwards, as before (memprof_finish).
// 2. Names. A root is a global by name or a frame slot by function, file
//    and line; a hop is named from its parent block: a record field by the
//    record's shape, a tuple or array element by index, a list cell's tail
//    ("list cell") or head ("list element"), a closure's capture by index,
//    a Buffer's storage. A Hashtbl's inside (its record's `data` field, the
//    bucket array, the bucket's cells, the pair) reads as one hop, "Hashtbl
//    value" or "Hashtbl key": what its user wrote.
// 3. Failure never changes the run: a file that cannot be written gets one
//    message on stderr; a trace written to something other than a regular
//    file (a pipe) gets the final collection but no file beside it.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "retention.h"
#include "shapes.h"
#include "../../core/frames.h"
#include "../../core/image.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../../memprof/memprof.h"
#include "../../memprof/memtrace.h"
#include "../../trace/retain.h"

typedef struct Targets {
  Value *blocks;
  uint64_t *ids;
  uint32_t count, cap;
  bool failed;
} Targets;

static void add_target(void *data, Value block, uint64_t id) {
  Targets *t = data;
  if (t->failed) return;
  if (t->count == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    Value *b = realloc(t->blocks, cap * sizeof *b);
    if (b) t->blocks = b;
    uint64_t *i = b ? realloc(t->ids, cap * sizeof *i) : NULL;
    if (i) t->ids = i;
    if (!b || !i || cap < t->cap) {
      t->failed = true;
      return;
    }
    t->cap = cap;
  }
  t->blocks[t->count] = block;
  t->ids[t->count++] = id;
}

static uint64_t monotonic_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

// --- names (part 2) ----------------------------------------------------------

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

// A record of the two fields `size` and `data`: the stdlib's Hashtbl.
static bool is_hashtbl_data(const Vm *vm, const GcPathRun *run) {
  if (val_tag(run->parent) != TAG_RECORD || run->count != 1 || val_wosize(run->parent) != 3) return false;
  const char *a = field_name(vm, run->parent, 1), *b = field_name(vm, run->parent, 2);
  const char *f = field_name(vm, run->parent, run->field);
  return strcmp(f, "data") == 0 && ((strcmp(a, "size") == 0) ^ (strcmp(b, "size") == 0));
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

static RetainRoot name_root(const Vm *vm, const GcRootInfo *r) {
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

// Names the path's runs into hops[] (at most GC_RETAIN_MAX_RUNS + 2: the
// elided marker, a Hashtbl value's rest); returns how many.
static uint32_t name_path(const Vm *vm, const GcRetainPath *p, RetainHop *hops) {
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

// --- the end state (part 1) --------------------------------------------------

static bool regular_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

// Walks the heap and adds every target's path to w; the reason in *reason
// if no path could be computed.
static bool walk_paths(Vm *vm, const Targets *t, RetainWriter *w, RetainHeader *h, const char **reason) {
  uint64_t t0 = monotonic_us();
  GcRetain *r = gc_retain_walk(vm, t->blocks, t->count);
  if (!r) {
    *reason = "the heap walk for retaining paths ran out of memory";
    return false;
  }
  gc_retain_reached(r, &h->reachable_blocks, &h->reachable_words);
  GcRetainPath *p = malloc(sizeof *p);
  bool ok = p != NULL;
  for (uint32_t i = 0; ok && i < t->count; i++) {
    if (!gc_retain_path(r, i, p)) continue;   // not reached: a profiler-internal block
    RetainHop hops[GC_RETAIN_MAX_RUNS + 2];
    RetainPath path = {.alloc_id = t->ids[i], .root = name_root(vm, &p->root), .hops = hops};
    path.hop_count = name_path(vm, p, hops);
    ok = retain_writer_add(w, &path);
  }
  free(p);
  gc_retain_free(r);
  h->walk_us = monotonic_us() - t0;
  if (!ok) *reason = "out of memory while naming retaining paths";
  return ok;
}

void retention_end_trace(Vm *vm) {
  MemtraceIdentity id;
  if (!MEMPROF_BUILT || !vm->memprof || !memtrace_identity(vm, &id)) return;
  memtrace_stop_sampling(vm);
  RetainHeader h = {.pid = id.pid, .start_time_us = id.start_time_us, .reason = ""};
  const char *reason = NULL;
  if (vm->options.memtrace_no_end_state) reason = "the end state was skipped (--memtrace-no-end-state)";
  else if (vm->gc.collecting) reason = "the run ended inside a collection";
  else if (!memprof_deliver_native(vm)) reason = "the run ended inside a Memprof callback";
  if (!reason) {
    uint64_t t0 = monotonic_us();
    gc_major(vm);
    h.gc_us = monotonic_us() - t0;
    if (!memprof_deliver_native(vm)) reason = "the final collection's events could not be delivered";
    else h.flags |= RETAIN_FINAL_GC;
  }
  if (!memtrace_identity(vm, &id)) return;   // a write error stopped the trace
  h.alloc_count = id.alloc_count;
  h.end_time_us = wall_us();
  size_t n = strlen(id.path);
  char *file = malloc(n + sizeof RETAIN_SUFFIX);
  if (!file) return;
  memcpy(file, id.path, n);
  memcpy(file + n, RETAIN_SUFFIX, sizeof RETAIN_SUFFIX);
  RetainWriter *w = regular_file(id.path) ? retain_writer_new() : NULL;
  if (!w) {
    free(file);
    return;
  }
  if (h.flags & RETAIN_FINAL_GC) {
    Targets t = {0};
    memtrace_each_live(vm, add_target, &t);
    h.live_samples = t.count;
    if (t.failed) reason = "out of memory while listing the live samples";
    else if (walk_paths(vm, &t, w, &h, &reason)) h.flags |= RETAIN_PATHS;
    else {   // a file without paths: drop the ones added
      retain_writer_free(w);
      w = retain_writer_new();
    }
    free(t.blocks);
    free(t.ids);
  }
  h.reason = reason ? reason : "";
  char err[512];
  if (!w) {
    free(file);
    return;
  }
  if (!retain_writer_finish(w, &h, file, err, sizeof err)) fprintf(stderr, "vm: --memtrace %s: %s\n", id.path, err);
  free(file);
}
