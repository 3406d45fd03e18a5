// memprof_module.c - the Memprof module (docs/language.md): Minnow closures as
// a memprof tracker (the C half of stdlib/memprof.mn).
// Memprof.start(params) reads {sampling_rate, callstack_size, tracker}, the
// tracker being a record of optional closures (alloc_minor, alloc_major,
// promote, dealloc_minor, dealloc_major). Each alloc callback receives
// info = {n_samples, size, source, callstack}; Memprof.frames turns a
// callstack into records.
//
// 1. A sample's callstack costs nothing per frame. memprof keeps the callers
//    on its side stack as runs of one return address (memprof/callstack.h: a
//    recursion is one run, whatever its depth) and hands a sample the runs
//    its capture walked (tracker.h, MemprofSample.runs). The module keeps
//    one node per run (TAG_CALLERS, core/value.h: the node of the run below
//    it, the return address, the callers up to and including the run, the
//    run's frames as a list once read, its base, its cells, and the cells
//    of a run above it: part 2), shared by every sample whose callers
//    include it: `path` holds the nodes of the previous sample's callers,
//    whose first `valid` callers are still right, and a sample makes nodes
//    only for the runs past its `unchanged` callers (a node that straddles
//    that point is cut: one node; a node the path held at the same place,
//    alike and on the same node below, is taken again). The callstack the
//    callback gets (TAG_CALLSTACK) names the innermost run's node, the
//    site's debug entry, the frames Memprof.frames shows and the profile's
//    records.
// 2. Frames become Minnow values only when Memprof.frames reads them: one
//    record per debug entry (a call site), made the first time it is read and
//    kept in `records` (an array by debug-entry id, held by the profile and
//    by its callstacks: the records are shared). A whole callstack (no
//    callstack_size) is its site's record on the list of its callers'
//    frames, which each node takes once from its run's cells and keeps. A
//    run's nodes (one return address repeated: consecutive nodes of one
//    frame) share their base (the node below the run) and its cells: cell j
//    is the list of the run's first j + 1 frames on the base's list, made
//    once, outermost first; a node's list is the cell of its callers past
//    the base's. The base keeps the cells of the last run of another frame
//    read above it, so a recursion that returns and goes down again, on the
//    same base, finds its cells made (its base taken again: part 1): each
//    frame becomes a list cell once, however many samples and descents
//    share it and however often they are read. The cells are Minnow arrays
//    and cons cells on the heap, reached from the nodes (so from the path,
//    a GC root, and from any callstack a program keeps), written through the
//    barrier. A callstack cut by callstack_size gets fresh cells for the
//    frames it shows. Reading a sample's frames thus costs the frames no
//    earlier read made, and a callback that does not read them pays nothing
//    for them.
// 3. Per sample, besides its new runs: the callstack (4 fields) and the info
//    record (its shape found once, `info_shape`; its source a string made
//    once).
#include <stdlib.h>
#include <string.h>

#include "native.h"
#include "../runtime/shapes.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../../core/frames.h"
#include "../runtime/interp.h"
#include "../../memprof/memprof.h"
#include "../../memprof/tracker.h"

enum { CB_ALLOC_MINOR, CB_ALLOC_MAJOR, CB_PROMOTE, CB_DEALLOC_MINOR, CB_DEALLOC_MAJOR, CB_COUNT };
static const char *const callback_names[CB_COUNT] = {"alloc_minor", "alloc_major", "promote",
                                                     "dealloc_minor", "dealloc_major"};

// Fields of a callers node (TAG_CALLERS) and of a callstack (TAG_CALLSTACK).
enum { RUN_BELOW, RUN_FRAME, RUN_END, RUN_LIST, RUN_BASE, RUN_CELLS, RUN_ABOVE, RUN_FIELDS };
// Fields of a run's cells (an array, part 2): the return address, how many
// cells are made, and the array holding them (cell j: the list of the run's
// first j + 1 frames' records on its base's list).
enum { CELLS_FRAME, CELLS_BUILT, CELLS_STORE, CELLS_FIELDS };
enum { CS_CALLERS, CS_SITE, CS_SHOWN, CS_RECORDS, CS_FIELDS };
// The longest inlining chain a frame is shown with (DebugInfo.inlined_into).
enum { MAX_CHAIN = 64 };
static const char *const info_names[] = {"n_samples", "size", "source", "callstack"};
static const char *const frame_names[] = {"file", "line", "start_col", "end_col", "function"};

typedef struct ClosureTracker {
  Value callbacks[CB_COUNT];   // closures or nil; GC roots (scan_roots)
  uint32_t callstack_size;     // 0: no limit
  // path[i] is the node of the previous sample's i-th run of callers (an
  // array, or nil before the first sample; a GC root); path_end[i] the
  // callers up to and including it; the first `valid` callers are right.
  Value path;
  uint32_t *path_end;
  uint32_t path_len, path_cap, valid;
  Value records;               // by debug-entry id: a frame's record or nil (part 2)
  Value normal;                // the string "normal" (info.source)
  uint32_t info_shape;
} ClosureTracker;

// Calls callback `which` with one argument; a raise forgets the block and
// propagates. Returns the callback's result (nil when there is none).
static Value call(Vm *vm, ClosureTracker *t, int which, Value arg) {
  Value result = VAL_NIL;
  if (t->callbacks[which] == VAL_NIL) return arg;
  if (!interp_call(vm, t->callbacks[which], 1, &arg, &result)) memprof_callback_raised(vm);
  return result;
}

// A return address as a node field: an int (code is 4-byte aligned, far below 2^62).
static Value frame_value(MemprofFrame f) { return val_of_int((int64_t)(uintptr_t)f); }
static MemprofFrame frame_of(Value v) { return (MemprofFrame)(uintptr_t)val_to_int(v); }
static uint32_t run_end(Value node) { return node == VAL_NIL ? 0 : (uint32_t)val_to_int(val_field(node, RUN_END)); }

// A node for `frame` as the callers up to `end`, on `below`; its base is the
// node below its whole run (the nearest one below with another frame). May GC.
static Value new_run(Vm *vm, Value below, MemprofFrame frame, uint32_t end) {
  vm_push_root(vm, &below);
  Value node = gc_alloc(vm, RUN_FIELDS, TAG_CALLERS);
  vm_pop_roots(vm, 1);
  Value *f = val_fields(node);
  f[RUN_BELOW] = below;
  f[RUN_FRAME] = frame_value(frame);
  f[RUN_END] = val_of_int(end);
  f[RUN_LIST] = VAL_NIL;
  f[RUN_BASE] = below != VAL_NIL && val_field(below, RUN_FRAME) == f[RUN_FRAME] ? val_field(below, RUN_BASE) : below;
  f[RUN_CELLS] = VAL_NIL;
  f[RUN_ABOVE] = VAL_NIL;
  return node;
}

// Room for `n` nodes in t->path, its first t->path_len kept. May GC.
static void reserve_path(Vm *vm, ClosureTracker *t, uint32_t n) {
  if (n > t->path_cap) {
    uint32_t cap = t->path_cap ? t->path_cap : 64;
    while (cap < n) cap *= 2;
    uint32_t *ends = realloc(t->path_end, cap * sizeof *ends);
    if (!ends) vm_raise_out_of_memory(vm);
    t->path_end = ends;
    t->path_cap = cap;
  }
  uint64_t have = t->path == VAL_NIL ? 0 : val_wosize(t->path);
  if (n <= have) return;
  uint64_t want = t->path_cap;
  Value bigger = gc_alloc(vm, want, TAG_ARRAY);
  for (uint64_t i = 0; i < want; i++) gc_init_field(vm, bigger, i, i < t->path_len ? val_field(t->path, i) : VAL_NIL);
  t->path = bigger;
}

// Appends a run of `count` callers returning to `frame` to the path: the
// node the path held at that place before if it is alike and on the same
// node below (with the list and cells it keeps: part 2), else a new one.
// May GC; the path stays whole if it raises.
static void push_run(Vm *vm, ClosureTracker *t, MemprofFrame frame, uint32_t count) {
  reserve_path(vm, t, t->path_len + 1);
  Value below = t->path_len ? val_field(t->path, t->path_len - 1) : VAL_NIL;
  uint32_t end = t->valid + count;
  Value node = val_field(t->path, t->path_len);
  if (node == VAL_NIL || val_field(node, RUN_BELOW) != below || val_field(node, RUN_FRAME) != frame_value(frame) ||
      val_field(node, RUN_END) != val_of_int(end))
    node = new_run(vm, below, frame, end);
  gc_write(vm, t->path, t->path_len, node);
  t->path_end[t->path_len++] = end;
  t->valid = end;
}

// The node of the innermost run of sample s's callers (nil: none). The path
// keeps its first `unchanged` callers (a node straddling that point is cut);
// the callers past them become nodes: those the capture walked from its runs,
// the others (a capture of another profile walked them) listed one by one.
static Value sample_callers(Vm *vm, ClosureTracker *t, const MemprofSample *s) {
  uint32_t u = s->unchanged < t->valid ? s->unchanged : t->valid;
  uint32_t n = t->path_len;
  while (n > 0 && (n > 1 ? t->path_end[n - 2] : 0) >= u) n--;
  t->path_len = n;
  t->valid = n ? t->path_end[n - 1] : 0;
  if (t->valid > u) {   // node n - 1 runs past u: its first callers, as a node of their own
    Value old = val_field(t->path, n - 1);
    Value node = new_run(vm, val_field(old, RUN_BELOW), frame_of(val_field(old, RUN_FRAME)), u);
    old = val_field(t->path, n - 1);
    gc_write(vm, node, RUN_CELLS, val_field(old, RUN_CELLS));
    gc_write(vm, t->path, n - 1, node);
    t->path_end[n - 1] = u;
    t->valid = u;
  }
  uint32_t listed_to = s->runs ? s->runs_from : s->caller_count;
  if (u < listed_to) {
    const MemprofFrame *callers = memprof_callers(vm, s);
    for (uint32_t i = u; i < listed_to;) {
      uint32_t j = i + 1;
      while (j < listed_to && callers[j] == callers[i]) j++;
      push_run(vm, t, callers[i], j - i);
      i = j;
    }
  }
  if (s->runs)
    for (uint32_t r = 0; r < s->run_count; r++) push_run(vm, t, s->runs[r].frame, s->runs[r].count);
  ASSERT(t->valid == s->caller_count, "the path holds the sample's callers");
  return t->path_len ? val_field(t->path, t->path_len - 1) : VAL_NIL;
}

static bool on_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  ClosureTracker *t = data;
  int which = s->major ? CB_ALLOC_MAJOR : CB_ALLOC_MINOR;
  if (t->callbacks[which] == VAL_NIL) {
    // Received all the same: the next sample's `unchanged` counts from this
    // one, whose callers past the common part the path does not hold.
    if (s->unchanged < t->valid) t->valid = s->unchanged;
    return false;
  }
  Value callers = sample_callers(vm, t, s);
  vm_push_root(vm, &callers);
  Value cs = gc_alloc(vm, CS_FIELDS, TAG_CALLSTACK);
  vm_pop_roots(vm, 1);
  Value *f = val_fields(cs);
  f[CS_CALLERS] = callers;
  f[CS_SITE] = val_of_int(s->site->id);
  f[CS_SHOWN] = val_of_int(t->callstack_size);
  f[CS_RECORDS] = t->records;
  vm_push_root(vm, &cs);
  Value source = t->normal;
  if (s->external) source = ops_string(vm, "external", strlen("external"));
  vm_push_root(vm, &source);
  Value info = gc_alloc(vm, 5, TAG_RECORD);
  vm_pop_roots(vm, 2);
  f = val_fields(info);
  f[0] = val_of_int(t->info_shape);
  f[1] = val_of_int(s->n_samples);
  f[2] = val_of_int((int64_t)s->wosize);
  f[3] = source;
  f[4] = cs;
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
  ClosureTracker *t = data;
  free(t->path_end);
  free(t);
}

static void on_scan(Vm *vm, void *data, void (*visit)(Vm *, Value *, void *), void *visit_data) {
  ClosureTracker *t = data;
  for (int i = 0; i < CB_COUNT; i++) visit(vm, &t->callbacks[i], visit_data);
  visit(vm, &t->path, visit_data);
  visit(vm, &t->records, visit_data);
  visit(vm, &t->normal, visit_data);
}

static double rate_of(Vm *vm, Value params) {
  Value r;
  if (!ops_record_get(vm, params, "sampling_rate", &r))
    gc_raise_error(vm, "Memprof.start: missing field sampling_rate");
  double rate = val_is_int(r) ? (double)val_to_int(r) : args_number(vm, r, "Memprof.start");
  if (!(rate > 0 && rate <= 1)) gc_raise_error(vm, "Memprof.start: sampling_rate must be in (0, 1], got %g", rate);
  return rate;
}

static uint32_t callstack_size_of(Vm *vm, Value params) {
  Value v;
  if (!ops_record_get(vm, params, "callstack_size", &v) || v == VAL_NIL) return 0;
  int64_t n = args_int(vm, v, "Memprof.start");
  if (n < 0) gc_raise_error(vm, "Memprof.start: callstack_size must be >= 0, got %lld", (long long)n);
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

// The record shape of `names` (n of them).
static uint32_t shape_of(Vm *vm, const char *const *names, uint32_t n) {
  uint32_t syms[8];
  for (uint32_t i = 0; i < n; i++) syms[i] = shapes_symbol(vm->shapes, names[i]);
  return shapes_intern(vm->shapes, syms, n);
}

Value lib_memprof_start(Vm *vm, Value *args) {
  static const char *const fields[] = {"sampling_rate", "callstack_size", "tracker"};
  if (!vm->memprof) gc_raise_error(vm, "Memprof.start: this build has no profiler (vm-boehm or vm-noprof)");
  ops_check_options(vm, args[0], fields, 3, "Memprof.start");
  double rate = rate_of(vm, args[0]);
  ClosureTracker tmp = {.path = VAL_NIL, .records = VAL_NIL, .normal = VAL_NIL};
  tmp.callstack_size = callstack_size_of(vm, args[0]);
  read_callbacks(vm, args[0], &tmp);
  if (vm->memprof_module >= 0) gc_raise_error(vm, "Memprof.start: a profile is already running");
  // Before the profile: none of these is sampled.
  Value handle = gc_alloc(vm, 1, TAG_PROFILE);
  vm_push_root(vm, &handle);
  Value normal = ops_string(vm, "normal", strlen("normal"));
  vm_push_root(vm, &normal);
  uint32_t entries = frames_debug_count(vm->frames);
  Value records = gc_alloc(vm, entries ? entries : 1, TAG_ARRAY);
  for (uint32_t i = 0; i < (entries ? entries : 1); i++) gc_init_field(vm, records, i, VAL_NIL);
  vm_pop_roots(vm, 2);
  ClosureTracker *t = malloc(sizeof *t);
  if (!t) vm_raise_out_of_memory(vm);
  *t = tmp;
  t->records = records;
  t->normal = normal;
  t->info_shape = shape_of(vm, info_names, 4);
  read_callbacks(vm, args[0], t);   // again: the allocations may have moved them
  MemprofTracker tr = {on_alloc, on_promote, on_dealloc, on_release, on_scan, t, .native = false, .reads_runs = true};
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

// The record of debug entry d, made the first time (part 2) and kept in
// `records` when d's id is in it (code compiled after the profile started
// is not). May GC: *records is a root of the caller's.
static Value frame_record(Vm *vm, Value *records, const DebugInfo *d) {
  bool kept = d->id < val_wosize(*records);
  if (kept && val_field(*records, d->id) != VAL_NIL) return val_field(*records, d->id);
  Value vals[5] = {VAL_NIL, val_of_int(d->line), val_of_int(d->start_col), val_of_int(d->end_col), VAL_NIL};
  vals[0] = ops_string(vm, d->file, strlen(d->file));
  vm_push_root(vm, &vals[0]);
  vals[4] = ops_string(vm, d->function, strlen(d->function));
  vm_pop_roots(vm, 1);
  Value rec = ops_record(vm, frame_names, vals, 5);
  if (kept) gc_write(vm, *records, d->id, rec);
  return rec;
}

// `list` with d's records (its inlining chain, innermost first) in front.
// May GC: *list and *records are roots of the caller's.
static void push_frames(Vm *vm, Value *list, Value *records, const DebugInfo *d) {
  const DebugInfo *chain[MAX_CHAIN];
  uint32_t n = 0;
  for (; d && n < MAX_CHAIN; d = d->inlined_into) chain[n++] = d;
  while (n > 0) {
    Value rec = frame_record(vm, records, chain[--n]);
    vm_push_root(vm, &rec);
    Value cell = gc_alloc(vm, 2, TAG_CONS);
    vm_pop_roots(vm, 1);
    val_fields(cell)[0] = rec;
    val_fields(cell)[1] = *list;
    *list = cell;
  }
}

static Value callers_list(Vm *vm, Value node, Value *records);

// The cells of node's run (part 2): its own, else those of the node below
// it in the same run, else those its base keeps for a run of its frame, else
// new ones (which its base then keeps). May GC.
static Value run_cells(Vm *vm, Value node) {
  Value cells = val_field(node, RUN_CELLS);
  if (cells != VAL_NIL) return cells;
  Value frame = val_field(node, RUN_FRAME), below = val_field(node, RUN_BELOW), base = val_field(node, RUN_BASE);
  if (below != VAL_NIL && val_field(below, RUN_FRAME) == frame) cells = val_field(below, RUN_CELLS);
  if (cells == VAL_NIL && base != VAL_NIL && val_field(base, RUN_ABOVE) != VAL_NIL &&
      val_field(val_field(base, RUN_ABOVE), CELLS_FRAME) == frame)
    cells = val_field(base, RUN_ABOVE);
  if (cells == VAL_NIL) {
    vm_push_root(vm, &node);
    Value store = gc_alloc(vm, 8, TAG_ARRAY);
    for (int i = 0; i < 8; i++) val_fields(store)[i] = VAL_NIL;
    vm_push_root(vm, &store);
    cells = gc_alloc(vm, CELLS_FIELDS, TAG_ARRAY);
    vm_pop_roots(vm, 2);
    val_fields(cells)[CELLS_FRAME] = val_field(node, RUN_FRAME);
    val_fields(cells)[CELLS_BUILT] = val_of_int(0);
    val_fields(cells)[CELLS_STORE] = store;
    base = val_field(node, RUN_BASE);
    if (base != VAL_NIL) gc_write(vm, base, RUN_ABOVE, cells);
  }
  gc_write(vm, node, RUN_CELLS, cells);
  return cells;
}

// The list of node's frames and of the callers below it: its run's cell
// for as many frames as the run has up to node, the cells it lacks made
// first, outermost first, each on the one before (the first on the base's
// list; a frame whose debug entry has an inlining chain is its chain's
// records, outermost first, as cut_list shows them). May GC: *records is a
// root of the caller's.
static Value run_list(Vm *vm, Value node, Value *records) {
  const DebugInfo *chain[MAX_CHAIN];
  uint32_t per = 0;
  for (const DebugInfo *d = memprof_frame_debug(vm, frame_of(val_field(node, RUN_FRAME))); d && per < MAX_CHAIN;
       d = d->inlined_into)
    chain[per++] = d;
  if (per == 0) return callers_list(vm, val_field(node, RUN_BASE), records);   // no frame to show
  uint64_t need = (uint64_t)(run_end(node) - run_end(val_field(node, RUN_BASE))) * per;
  vm_push_root(vm, &node);
  Value cells = run_cells(vm, node);
  uint64_t built = (uint64_t)val_to_int(val_field(cells, CELLS_BUILT));
  if (need <= built) {
    vm_pop_roots(vm, 1);
    return val_field(val_field(cells, CELLS_STORE), need - 1);
  }
  vm_push_root(vm, &cells);
  Value list = VAL_EMPTY;
  if (built > 0) {
    list = val_field(val_field(cells, CELLS_STORE), built - 1);
  } else if (val_field(node, RUN_BASE) != VAL_NIL) {
    list = callers_list(vm, val_field(node, RUN_BASE), records);
  }
  vm_push_root(vm, &list);
  uint64_t cap = val_wosize(val_field(cells, CELLS_STORE));
  if (need > cap) {   // a larger store, the cells made so far copied
    uint64_t want = cap * 2 > need ? cap * 2 : need;
    Value store = gc_alloc(vm, want, TAG_ARRAY);
    Value old = val_field(cells, CELLS_STORE);
    for (uint64_t i = 0; i < want; i++) gc_init_field(vm, store, i, i < built ? val_field(old, i) : VAL_NIL);
    gc_write(vm, cells, CELLS_STORE, store);
  }
  Value rec = VAL_NIL;
  vm_push_root(vm, &rec);
  for (uint64_t j = built; j < need; j++) {
    rec = frame_record(vm, records, chain[per - 1 - j % per]);
    Value cell = gc_alloc(vm, 2, TAG_CONS);
    val_fields(cell)[0] = rec;
    val_fields(cell)[1] = list;
    list = cell;
    gc_write(vm, val_field(cells, CELLS_STORE), j, cell);
    val_fields(cells)[CELLS_BUILT] = val_of_int((int64_t)j + 1);
  }
  vm_pop_roots(vm, 4);
  return list;
}

// The frames of `node` and of the callers below it, innermost first: the
// list each node makes once and keeps (part 2). The nodes without one are
// made theirs outermost first.
static Value callers_list(Vm *vm, Value node, Value *records) {
  if (node == VAL_NIL) return VAL_EMPTY;
  if (val_field(node, RUN_LIST) != VAL_NIL) return val_field(node, RUN_LIST);
  uint64_t k = 0;
  for (Value n = node; n != VAL_NIL && val_field(n, RUN_LIST) == VAL_NIL; n = val_field(n, RUN_BELOW)) k++;
  vm_push_root(vm, &node);
  Value chain = gc_alloc(vm, k, TAG_ARRAY);   // innermost first; a root while lists are made
  Value n = node;
  for (uint64_t i = 0; i < k; i++, n = val_field(n, RUN_BELOW)) gc_init_field(vm, chain, i, n);
  vm_pop_roots(vm, 1);
  vm_push_root(vm, &chain);
  Value list = VAL_EMPTY;
  for (uint64_t i = k; i-- > 0;) {
    list = run_list(vm, val_field(chain, i), records);
    gc_write(vm, val_field(chain, i), RUN_LIST, list);
  }
  vm_pop_roots(vm, 1);
  return list;
}

// A fresh list of the first `shown` frames of callstack cs, innermost first:
// the frames are gathered innermost first (debug entries: they do not move),
// then consed outermost first.
static Value cut_list(Vm *vm, Value cs, Value *records, uint64_t shown) {
  const DebugInfo **ds = malloc(shown * sizeof *ds);
  if (!ds) vm_raise_out_of_memory(vm);
  uint64_t n = 0;
  const DebugInfo *site = frames_debug_by_id(vm->frames, (uint32_t)val_to_int(val_field(cs, CS_SITE)));
  uint32_t c = 0;
  for (const DebugInfo *d = site; d && n < shown && c < MAX_CHAIN; d = d->inlined_into, c++) ds[n++] = d;
  for (Value run = val_field(cs, CS_CALLERS); run != VAL_NIL && n < shown; run = val_field(run, RUN_BELOW)) {
    const DebugInfo *d0 = memprof_frame_debug(vm, frame_of(val_field(run, RUN_FRAME)));
    for (uint64_t k = run_end(run) - run_end(val_field(run, RUN_BELOW)); k > 0 && n < shown; k--) {
      c = 0;
      for (const DebugInfo *d = d0; d && n < shown && c < MAX_CHAIN; d = d->inlined_into, c++) ds[n++] = d;
    }
  }
  Value list = VAL_EMPTY;
  vm_push_root(vm, &list);
  while (n > 0) {
    Value rec = frame_record(vm, records, ds[--n]);
    vm_push_root(vm, &rec);
    Value cell = gc_alloc(vm, 2, TAG_CONS);
    vm_pop_roots(vm, 1);
    val_fields(cell)[0] = rec;
    val_fields(cell)[1] = list;
    list = cell;
  }
  vm_pop_roots(vm, 1);
  free(ds);
  return list;
}

// Memprof.frames(cs): the callstack as a list of records, innermost first:
// the site, then the callers outwards, as many as callstack_size shows
// (part 2).
Value lib_memprof_frames(Vm *vm, Value *args) {
  Value cs = args[0];
  if (!val_has_tag(cs, TAG_CALLSTACK))
    gc_raise_error(vm, "type error: Memprof.frames expects a callstack, got %s", ops_type_name(cs));
  Value records = val_field(cs, CS_RECORDS);
  int64_t shown = val_to_int(val_field(cs, CS_SHOWN));
  vm_push_root(vm, &cs);
  vm_push_root(vm, &records);
  Value list;
  if (shown > 0) {
    list = cut_list(vm, cs, &records, (uint64_t)shown);
  } else {
    list = callers_list(vm, val_field(cs, CS_CALLERS), &records);
    vm_push_root(vm, &list);
    push_frames(vm, &list, &records, frames_debug_by_id(vm->frames, (uint32_t)val_to_int(val_field(cs, CS_SITE))));
    vm_pop_roots(vm, 1);
  }
  vm_pop_roots(vm, 2);
  return list;
}
