// memprof_module.c - the Memprof module (docs/language.md): Minnow closures as
// a memprof tracker (the C half of stdlib/memprof.mn).
// Memprof.start(params) reads {sampling_rate, callstack_size, tracker}, the
// tracker being a record of optional closures (alloc_minor, alloc_major,
// promote, dealloc_minor, dealloc_major). Each alloc callback receives
// info = {n_samples, size, source, callstack}; Memprof.frames turns a
// callstack into records.
//
// Callstacks share their frames (a sample costs its new frames, as its
// capture does, however deep the stack): a callstack is a node of a tree of
// frames rooted at the outermost caller (TAG_CALLSTACK, core/value.h: its
// caller's node, a debug-entry id, how many frames to show). `path` keeps
// the nodes of the previous sample's callers: the sample's first
// `unchanged` callers (tracker.h) reuse them, and only the callers past
// them, then the site, get new nodes. callstack_size limits the frames
// Memprof.frames shows, not the nodes made.
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "primitives.h"
#include "../runtime/ops.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../../core/frames.h"
#include "../runtime/interp.h"
#include "../../memprof/memprof.h"
#include "../../memprof/tracker.h"

enum { CB_ALLOC_MINOR, CB_ALLOC_MAJOR, CB_PROMOTE, CB_DEALLOC_MINOR, CB_DEALLOC_MAJOR, CB_COUNT };
static const char *const callback_names[CB_COUNT] = {"alloc_minor", "alloc_major", "promote",
                                                     "dealloc_minor", "dealloc_major"};

typedef struct ClosureTracker {
  Value callbacks[CB_COUNT];   // closures or nil; GC roots (scan_roots)
  uint32_t callstack_size;     // 0: no limit
  // path[i] is the node of caller i of the previous sample delivered, for i
  // < path_len (an array, or nil before the first sample; a GC root).
  Value path;
  uint32_t path_len;
} ClosureTracker;

// Calls callback `which` with one argument; a raise forgets the block and
// propagates. Returns the callback's result (nil when there is none).
static Value call(Vm *vm, ClosureTracker *t, int which, Value arg) {
  Value result = VAL_NIL;
  if (t->callbacks[which] == VAL_NIL) return arg;
  if (!interp_call(vm, t->callbacks[which], 1, &arg, &result)) memprof_callback_raised(vm);
  return result;
}

// A node below `parent` for each entry of d's inlining chain, the code it
// was inlined into first; returns the last (parent if d is NULL). May GC:
// `parent` is read before each allocation from a root.
static Value chain_nodes(Vm *vm, Value parent, const DebugInfo *d, uint32_t shown) {
  const DebugInfo *chain[64];
  uint32_t n = 0;
  for (; d && n < 64; d = d->inlined_into) chain[n++] = d;
  vm_push_root(vm, &parent);
  while (n > 0) {
    Value node = gc_alloc(vm, 3, TAG_CALLSTACK);
    Value *f = val_fields(node);
    f[0] = parent;
    f[1] = val_of_int(chain[--n]->id);
    f[2] = val_of_int(n == 0 ? shown : 0);
    parent = node;
  }
  vm_pop_roots(vm, 1);
  return parent;
}

// Room for `depth` nodes in t->path, its first t->path_len kept. May GC.
static void reserve_path(Vm *vm, ClosureTracker *t, uint32_t depth) {
  uint64_t cap = t->path == VAL_NIL ? 0 : val_wosize(t->path);
  if (depth <= cap) return;
  uint64_t want = cap ? cap : 64;
  while (want < depth) want *= 2;
  Value bigger = gc_alloc(vm, want, TAG_ARRAY);
  for (uint64_t i = 0; i < want; i++) gc_init_field(vm, bigger, i, i < t->path_len ? val_field(t->path, i) : VAL_NIL);
  t->path = bigger;
}

// The callstack of sample s: new nodes for its callers past the ones it
// shares with the previous sample, then for its site.
static Value make_callstack(Vm *vm, ClosureTracker *t, const MemprofSample *s) {
  if (s->unchanged < t->path_len) t->path_len = s->unchanged;
  reserve_path(vm, t, s->caller_count);
  for (uint32_t i = t->path_len; i < s->caller_count; i++) {
    Value parent = i > 0 ? val_field(t->path, i - 1) : VAL_NIL;
    Value node = chain_nodes(vm, parent, memprof_frame_debug(vm, s->callers[i]), 0);
    gc_write(vm, t->path, i, node);
    t->path_len = i + 1;   // valid so far, should the next allocation raise
  }
  Value parent = s->caller_count > 0 ? val_field(t->path, s->caller_count - 1) : VAL_NIL;
  return chain_nodes(vm, parent, s->site, t->callstack_size);
}

static bool on_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  ClosureTracker *t = data;
  int which = s->major ? CB_ALLOC_MAJOR : CB_ALLOC_MINOR;
  if (t->callbacks[which] == VAL_NIL) {
    // Received all the same: the next sample's `unchanged` counts from this
    // one, whose callers past the common part `path` does not hold.
    if (s->unchanged < t->path_len) t->path_len = s->unchanged;
    return false;
  }
  static const char *const names[] = {"n_samples", "size", "source", "callstack"};
  Value vals[4] = {val_of_int(s->n_samples), val_of_int((int64_t)s->wosize), VAL_NIL, VAL_NIL};
  const char *source = s->external ? "external" : "normal";
  vals[2] = ops_string(vm, source, strlen(source));
  vm_push_root(vm, &vals[2]);
  vals[3] = make_callstack(vm, t, s);
  vm_pop_roots(vm, 1);
  Value info = ops_record(vm, names, vals, 4);
  Value state = call(vm, t, which, info);
  block->state = state;
  return state != VAL_NIL;
}

static bool on_promote(Vm *vm, void *data, MemprofBlock *block) {
  ClosureTracker *t = data;
  if (t->callbacks[CB_PROMOTE] == VAL_NIL) return true;
  Value state = call(vm, t, CB_PROMOTE, block->state);
  block->state = state;
  return state != VAL_NIL;
}

static void on_dealloc(Vm *vm, void *data, MemprofBlock *block, bool major) {
  ClosureTracker *t = data;
  call(vm, t, major ? CB_DEALLOC_MAJOR : CB_DEALLOC_MINOR, block->state);
}

static void on_release(Vm *vm, void *data) {
  (void)vm;
  free(data);
}

static void on_scan(Vm *vm, void *data, void (*visit)(Vm *, Value *, void *), void *visit_data) {
  ClosureTracker *t = data;
  for (int i = 0; i < CB_COUNT; i++) visit(vm, &t->callbacks[i], visit_data);
  visit(vm, &t->path, visit_data);
}

static double rate_of(Vm *vm, Value params) {
  Value r;
  if (!ops_record_get(vm, params, "sampling_rate", &r))
    gc_raise_error(vm, "Memprof.start: missing field sampling_rate");
  double rate = val_is_int(r) ? (double)val_to_int(r) : args_number(vm, r, "Memprof.start");
  if (!(rate > 0 && rate <= 1)) gc_raise_error(vm, "Memprof.start: sampling_rate must be in (0, 1]");
  return rate;
}

static uint32_t callstack_size_of(Vm *vm, Value params) {
  Value v;
  if (!ops_record_get(vm, params, "callstack_size", &v) || v == VAL_NIL) return 0;
  int64_t n = args_int(vm, v, "Memprof.start");
  if (n < 0) gc_raise_error(vm, "Memprof.start: callstack_size must be >= 0");
  return n > UINT32_MAX ? 0 : (uint32_t)n;
}

static void read_callbacks(Vm *vm, Value params, ClosureTracker *t) {
  Value tracker = VAL_NIL;
  ops_record_get(vm, params, "tracker", &tracker);
  if (tracker != VAL_NIL) ops_check_options(vm, tracker, callback_names, CB_COUNT, "Memprof.start: tracker");
  for (int i = 0; i < CB_COUNT; i++) {
    Value f = VAL_NIL;
    if (tracker != VAL_NIL) ops_record_get(vm, tracker, callback_names[i], &f);
    if (f != VAL_NIL && !val_has_tag(f, TAG_CLOSURE))
      gc_raise_error(vm, "Memprof.start: tracker.%s must be a function", callback_names[i]);
    t->callbacks[i] = f;
  }
}

Value lib_memprof_start(Vm *vm, Value *args) {
  static const char *const fields[] = {"sampling_rate", "callstack_size", "tracker"};
  if (!vm->memprof) gc_raise_error(vm, "Memprof.start: this build has no profiler (vm-boehm or vm-noprof)");
  ops_check_options(vm, args[0], fields, 3, "Memprof.start");
  double rate = rate_of(vm, args[0]);
  ClosureTracker tmp = {.path = VAL_NIL, .path_len = 0};
  tmp.callstack_size = callstack_size_of(vm, args[0]);
  read_callbacks(vm, args[0], &tmp);
  if (vm->memprof_module >= 0) gc_raise_error(vm, "Memprof.start: a profile is already running");
  Value handle = gc_alloc(vm, 1, TAG_PROFILE);   // before the profile: no sample of it
  ClosureTracker *t = malloc(sizeof *t);
  if (!t) vm_raise_out_of_memory(vm);
  *t = tmp;
  read_callbacks(vm, args[0], t);   // again: the allocation may have moved them
  MemprofTracker tr = {on_alloc, on_promote, on_dealloc, on_release, on_scan, t, .native = false};
  int id = memprof_start_profile(vm, rate, t->callstack_size, &tr);
  if (id < 0) {
    free(t);
    gc_raise_error(vm, "Memprof.start: cannot start a profile");
  }
  vm->memprof_module = id;
  val_fields(handle)[0] = (Value)id;
  return handle;
}

Value lib_memprof_stop(Vm *vm, Value *args) {
  (void)args;
  if (!vm->memprof || !memprof_stop_profile(vm, vm->memprof_module)) gc_raise_error(vm, "Memprof.stop: no profile is running");
  vm->memprof_module = -1;
  return VAL_NIL;
}

Value lib_memprof_discard(Vm *vm, Value *args) {
  Value h = args[0];
  if (!val_has_tag(h, TAG_PROFILE))
    gc_raise_error(vm, "type error: Memprof.discard expects a profile, got %s", ops_type_name(h));
  if (!memprof_discard_profile(vm, (int)val_field(h, 0)))
    gc_raise_error(vm, "Memprof.discard: the profile is still running");
  return VAL_NIL;
}

// Memprof.frames(cs): the callstack as a list of records, innermost first:
// the node's frame and its callers', as many as the node says to show. The
// debug-entry ids are read first (ints: a collection cannot move them),
// then the records are made, outermost first, onto the list's front.
Value lib_memprof_frames(Vm *vm, Value *args) {
  Value cs = args[0];
  if (!val_has_tag(cs, TAG_CALLSTACK))
    gc_raise_error(vm, "type error: Memprof.frames expects a callstack, got %s", ops_type_name(cs));
  static const char *const names[] = {"file", "line", "start_col", "end_col", "function"};
  int64_t shown = val_to_int(val_field(cs, 2));
  uint64_t n = 0;
  for (Value c = cs; c != VAL_NIL && (shown == 0 || (int64_t)n < shown); c = val_field(c, 0)) n++;
  uint32_t *ids = malloc(n * sizeof *ids);
  if (!ids) gc_raise_error(vm, "out of memory");
  uint64_t k = 0;
  for (Value c = cs; k < n; c = val_field(c, 0)) ids[k++] = (uint32_t)val_to_int(val_field(c, 1));
  Value list = VAL_EMPTY;
  Value vals[5];
  vm_push_root(vm, &list);
  for (; k > 0; k--) {
    const DebugInfo *d = frames_debug_by_id(vm->frames, ids[k - 1]);
    if (!d) continue;
    for (int i = 0; i < 5; i++) vals[i] = VAL_NIL;
    vals[0] = ops_string(vm, d->file, strlen(d->file));
    vm_push_root(vm, &vals[0]);
    vals[4] = ops_string(vm, d->function, strlen(d->function));
    vm_pop_roots(vm, 1);
    vals[1] = val_of_int(d->line);
    vals[2] = val_of_int(d->start_col);
    vals[3] = val_of_int(d->end_col);
    Value rec = ops_record(vm, names, vals, 5);
    vm_push_root(vm, &rec);
    Value cell = gc_alloc(vm, 2, TAG_CONS);
    vm_pop_roots(vm, 1);
    val_fields(cell)[0] = rec;
    val_fields(cell)[1] = list;
    list = cell;
  }
  vm_pop_roots(vm, 1);
  free(ids);
  return list;
}
