// test_mark_paths.c - cmocka tests for gc/mark_paths.c, the major
// collection whose mark records retaining paths (gc.h, "Snapshots"): each
// target reached gets the path the mark took, hop by hop a real chain
// (checked here by following it), with runs of equal hops collapsed (a
// million-cell list is one run), the first and last 32 runs of a path of
// more than 64 kept around an elided middle; targets that die are reported
// dead to nobody and stay WHITE-free (the sweep frees them); the collection
// frees and keeps exactly what gc_major does; deep chains whose way on is
// not the last field; a target that is a root's block; a cycle.
#include "test_support.h"
#include "../../gc/gc_internal.h"

enum { MAX_TARGETS = 64 };

typedef struct Seen {
  uint64_t id;
  GcRetainPath path;
} Seen;

typedef struct Want {
  Value blocks[MAX_TARGETS];
  uint64_t n;
  Seen seen[MAX_TARGETS];
  uint64_t n_seen;
} Want;

static void list_targets(Vm *vm, GcPathRequest *req) {
  (void)vm;
  Want *w = req->data;
  for (uint64_t i = 0; i < w->n; i++) assert_true(gc_path_target(req, w->blocks[i], 100 + i));
}

static void reached(Vm *vm, GcPathRequest *req, uint64_t id, const GcRetainPath *p) {
  (void)vm;
  Want *w = req->data;
  assert_true(w->n_seen < MAX_TARGETS);
  w->seen[w->n_seen].id = id;
  w->seen[w->n_seen++].path = *p;
}

// The path given to target i, or NULL.
static const GcRetainPath *path_of(const Want *w, uint64_t i) {
  for (uint64_t k = 0; k < w->n_seen; k++)
    if (w->seen[k].id == 100 + i) return &w->seen[k].path;
  return NULL;
}

// Follows the path from its root and checks it ends at `target`; its runs
// must each differ from the next (they are maximal).
static void check_path(const GcRetainPath *p, Value target) {
  assert_non_null(p);
  Value b = *p->root.slot;
  assert_int_equal(b, p->root_block);
  uint64_t hops = 0;
  for (uint32_t r = 0; r < p->run_count; r++) {
    const GcPathRun *run = &p->runs[r];
    if (p->elided_hops && r == p->elided_at) return;   // the middle is not at hand
    assert_int_equal(run->parent, b);
    assert_true(run->count >= 1);
    for (uint64_t k = 0; k < run->count; k++) b = val_field(b, run->field);
    hops += run->count;
  }
  assert_int_equal(b, target);
  assert_int_equal(hops, p->hops);
}

static GcPathRequest request(Want *w) {
  return (GcPathRequest){.list_targets = list_targets, .reached = reached, .data = w};
}

// A list of n cells whose elements are tuples (i, i); the cell at depth k holds (k, k).
static Value tuple_list(Vm *vm, int64_t n) {
  Value l = VAL_EMPTY;
  vm_push_root(vm, &l);
  for (int64_t i = n - 1; i >= 0; i--) {
    Value t = ts_tuple(vm, val_of_int(i), val_of_int(i));
    l = ts_cons(vm, t, l);
  }
  vm_pop_roots(vm, 1);
  return l;
}

static void test_long_list_is_one_run(void **state) {
  Vm *vm = ts_vm(state);
  enum { N = 1000000 };
  Value l = tuple_list(vm, N);
  vm_push_root(vm, &l);
  gc_minor(vm);
  Want w = {.n = 3};
  Value c = l;
  for (int64_t k = 0; k < N; k++) {
    if (k == 0) w.blocks[0] = val_field(c, 0);
    if (k == 500000) w.blocks[1] = val_field(c, 0);
    if (k == N - 1) w.blocks[2] = c;   // the last cell itself
    c = val_field(c, 1);
  }
  GcPathRequest req = request(&w);
  gc_major_paths(vm, &req);
  assert_true(req.ran);
  assert_false(req.failed);
  assert_int_equal(req.target_count, 3);
  assert_int_equal(req.reached_count, 3);
  assert_int_equal(req.marked_blocks, 2 * (uint64_t)N);
  const GcRetainPath *p0 = path_of(&w, 0), *p1 = path_of(&w, 1), *p2 = path_of(&w, 2);
  check_path(p0, w.blocks[0]);
  check_path(p1, w.blocks[1]);
  check_path(p2, w.blocks[2]);
  assert_int_equal(p0->root.kind, GC_ROOT_C);
  // head; tail x500000 then head; tail x999999
  assert_int_equal(p0->run_count, 1);
  assert_int_equal(p0->runs[0].field, 0);
  assert_int_equal(p1->run_count, 2);
  assert_int_equal(p1->runs[0].field, 1);
  assert_int_equal(p1->runs[0].count, 500000);
  assert_int_equal(p2->run_count, 1);
  assert_int_equal(p2->runs[0].count, N - 1);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// Records {next, value} whose way on (`next`, field 1) is not the last field:
// each hop is a frame, and the runs still merge.
static void test_chain_through_first_field(void **state) {
  Vm *vm = ts_vm(state);
  enum { N = 200000 };
  Value head = VAL_NIL;
  vm_push_root(vm, &head);
  Value last = 0;
  for (int64_t i = 0; i < N; i++) {
    Value r = gc_alloc(vm, 3, TAG_RECORD);
    ts_init(vm, r, 0, val_of_int(1));   // a shape id
    ts_init(vm, r, 1, head);
    ts_init(vm, r, 2, VAL_NIL);
    head = r;
    vm_push_root(vm, &head);
    Value s = ts_string(vm, "v");
    vm_pop_roots(vm, 1);
    gc_write(vm, head, 2, s);
    if (i == 0) last = 1;   // the first record is the deepest: found below
  }
  (void)last;
  gc_minor(vm);
  Want w = {.n = 2};
  Value r = head;
  for (int64_t k = 0; k < N - 1; k++) r = val_field(r, 1);
  w.blocks[0] = r;                  // the deepest record
  w.blocks[1] = val_field(r, 2);    // its string
  GcPathRequest req = request(&w);
  gc_major_paths(vm, &req);
  assert_int_equal(req.reached_count, 2);
  const GcRetainPath *p0 = path_of(&w, 0), *p1 = path_of(&w, 1);
  check_path(p0, w.blocks[0]);
  check_path(p1, w.blocks[1]);
  assert_int_equal(p0->run_count, 1);
  assert_int_equal(p0->runs[0].count, N - 1);
  assert_int_equal(p1->run_count, 2);
  assert_int_equal(p1->runs[1].field, 2);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// 100 alternating hops (a tuple's field 1, then a cons's field 0): 100
// runs, so the path keeps its first 32 and last 32 around 36 elided.
static void test_elided_middle(void **state) {
  Vm *vm = ts_vm(state);
  enum { HOPS = 100 };
  Value leaf = ts_string(vm, "leaf");
  vm_push_root(vm, &leaf);
  Value v = leaf;
  vm_push_root(vm, &v);
  for (int k = 0; k < HOPS; k++) v = k % 2 == 0 ? ts_cons(vm, v, VAL_EMPTY) : ts_tuple(vm, val_of_int(k), v);
  gc_minor(vm);
  Want w = {.n = 1, .blocks = {leaf}};
  vm_pop_roots(vm, 2);
  vm_push_root(vm, &v);   // the leaf only through the chain
  GcPathRequest req = request(&w);
  gc_major_paths(vm, &req);
  const GcRetainPath *p = path_of(&w, 0);
  assert_non_null(p);
  assert_int_equal(p->hops, HOPS);
  assert_int_equal(p->run_count, GC_RETAIN_MAX_RUNS);
  assert_int_equal(p->elided_at, GC_RETAIN_MAX_RUNS / 2);
  assert_int_equal(p->elided_runs, HOPS - GC_RETAIN_MAX_RUNS);
  assert_int_equal(p->elided_hops, HOPS - GC_RETAIN_MAX_RUNS);
  check_path(p, leaf);   // the first 32 runs from the root
  // The last run ends at the leaf: follow the last 32 from where they start.
  Value b = p->runs[p->elided_at].parent;
  for (uint32_t r = p->elided_at; r < p->run_count; r++) {
    assert_int_equal(p->runs[r].parent, b);
    for (uint64_t k = 0; k < p->runs[r].count; k++) b = val_field(b, p->runs[r].field);
  }
  assert_int_equal(b, leaf);
  vm_pop_roots(vm, 1);
}

// The collection frees what gc_major frees; a dead target gets no path and
// is freed; a root's own block gets a path of no hop; a cycle is followed once.
static void test_dead_targets_and_roots(void **state) {
  Vm *vm = ts_vm(state);
  Value kept = ts_tuple(vm, VAL_NIL, VAL_NIL);
  vm_push_root(vm, &kept);
  Value inner = ts_tuple(vm, kept, val_of_int(1));   // a cycle: kept.0 = inner, inner.0 = kept
  gc_write(vm, kept, 0, inner);
  Value dead = ts_tuple(vm, val_of_int(7), val_of_int(8));
  Value dead_holder = ts_cons(vm, dead, VAL_EMPTY);
  vm_push_root(vm, &dead_holder);
  gc_minor(vm);
  dead = val_field(dead_holder, 0);
  vm_pop_roots(vm, 1);   // dead_holder and dead are garbage now
  Want w = {.n = 3, .blocks = {kept, val_field(kept, 0), dead}};
  GcPathRequest req = request(&w);
  gc_major_paths(vm, &req);
  assert_int_equal(req.target_count, 3);
  assert_int_equal(req.reached_count, 2);
  check_path(path_of(&w, 0), kept);
  assert_int_equal(path_of(&w, 0)->hops, 0);
  check_path(path_of(&w, 1), w.blocks[1]);
  assert_null(path_of(&w, 2));
  assert_int_equal(hd_color(val_hd(dead)), COLOR_FREE);   // swept
  assert_int_equal(hd_color(val_hd(kept)), COLOR_WHITE);
  // What it keeps is what a plain major cycle keeps.
  uint64_t live = vm->gc.stats.live_words;
  gc_major(vm);
  assert_int_equal(vm->gc.stats.live_words, live);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// An array wider than the mark stack, of lists: the plain mark overflows
// there; the path mark does not (it has a frame per path, not per block).
static void test_wide_array_of_lists(void **state) {
  Vm *vm = ts_vm(state);
  enum { N = 100000, LEN = 5 };
  Value arr = gc_alloc_major(vm, N, TAG_ARRAY);
  for (uint64_t i = 0; i < N; i++) gc_init_field(vm, arr, i, VAL_NIL);
  vm_push_root(vm, &arr);
  for (int64_t i = 0; i < N; i++) gc_write(vm, arr, (uint64_t)i, ts_int_list(vm, LEN));
  gc_minor(vm);
  Want w = {.n = 2};
  w.blocks[0] = val_field(val_field(arr, 77777), 1);   // cell 1 of list 77777
  w.blocks[1] = val_field(arr, N - 1);
  GcPathRequest req = request(&w);
  gc_major_paths(vm, &req);
  assert_int_equal(req.reached_count, 2);
  const GcRetainPath *p = path_of(&w, 0);
  check_path(p, w.blocks[0]);
  assert_int_equal(p->run_count, 2);
  assert_int_equal(p->runs[0].field, 77777);
  assert_int_equal(p->runs[1].field, 1);
  check_path(path_of(&w, 1), w.blocks[1]);
  assert_int_equal(vm->gc.stats.live_words, (N + 1) + (uint64_t)N * LEN * 3);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// A list of lists whose inner lists' second cells are the targets: an inner
// list's first cell is reached through field 0 (the key of its own first
// hop, to its element), and its last field, the next cell, is a target:
// unmarked though not WHITE, so the run must not replace the cell by its
// element there (the rest of the list would go unmarked and be swept).
static void test_target_after_same_key(void **state) {
  Vm *vm = ts_vm(state);
  enum { M = 4, LEN = 5 };
  Value outer = VAL_EMPTY;
  vm_push_root(vm, &outer);
  for (int i = 0; i < M; i++) {
    Value inner = tuple_list(vm, LEN);
    outer = ts_cons(vm, inner, outer);
  }
  gc_minor(vm);
  Want w = {.n = M};
  Value c = outer;
  for (int i = 0; i < M; i++, c = val_field(c, 1)) w.blocks[i] = val_field(val_field(c, 0), 1);
  GcPathRequest req = request(&w);
  gc_major_paths(vm, &req);
  assert_true(gc_verify(vm));
  assert_int_equal(req.reached_count, M);
  for (int i = 0; i < M; i++) check_path(path_of(&w, (uint64_t)i), w.blocks[i]);
  assert_int_equal(vm->gc.stats.live_words, (uint64_t)M * 3 + (uint64_t)M * LEN * 6);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_long_list_is_one_run, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_chain_through_first_field, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_elided_middle, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_dead_targets_and_roots, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_wide_array_of_lists, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_target_after_same_key, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
