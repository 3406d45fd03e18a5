// test_roots.c - cmocka tests for gc/roots.c (gc_scan_roots) and the root
// side of core/frames.c and lang/front/compiler.c: globals, C roots and live stack
// slots are roots (and are updated when blocks move); dead registers are not.
#include "test_support.h"
#include "../../memprof/tracker.h"

// --- a visitor that records every slot it is given -----------------------------

typedef struct Visits {
  Value **slots;
  uint32_t count, cap;
} Visits;

static void record_visit(Vm *vm, Value *slot, void *data) {
  (void)vm;
  Visits *v = data;
  if (v->count == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 256;
    v->slots = realloc(v->slots, v->cap * sizeof *v->slots);
    assert_non_null(v->slots);
  }
  v->slots[v->count++] = slot;
}

static uint32_t times_visited(const Visits *v, const Value *slot) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < v->count; i++) n += v->slots[i] == slot;
  return n;
}

// --- globals and C roots -----------------------------------------------------------

static void test_scan_visits_each_global_once(void **state) {
  Vm *vm = ts_vm(state);
  ts_run(state, "let a = [1]\nvar b = \"x\"\nlet (c, d) = (1, [2])\nfn f() { a }\n");
  assert_true(vm->global_count > 4);     // the stdlib's members are globals too
  Value r1 = VAL_NIL, r2 = val_of_int(3);
  vm_push_root(vm, &r1);
  vm_push_root(vm, &r2);
  Visits v = {0};
  gc_scan_roots(vm, record_visit, &v);
  for (uint32_t i = 0; i < vm->global_count; i++) assert_int_equal(times_visited(&v, &vm->globals[i]), 1);
  assert_int_equal(times_visited(&v, &r1), 1);
  assert_int_equal(times_visited(&v, &r2), 1);
  assert_int_equal(times_visited(&v, &vm->exn), 1);
  // No stack is running: nothing else (no profile either).
  assert_int_equal(v.count, vm->global_count + 2 + 1);
  free(v.slots);
  vm_pop_roots(vm, 2);
}

static void test_globals_are_roots_and_updated(void **state) {
  Vm *vm = ts_vm(state);
  ts_run(state,
         "Gc.minor()\n"
         "let g = [1, 2, 3]\n"
         "let s = \"hello\" ++ \" world\"\n"
         "let t = (g, s)\n");
  Value *g = &vm->globals[ts_global(vm, "g")];
  Value *s = &vm->globals[ts_global(vm, "s")];
  Value *t = &vm->globals[ts_global(vm, "t")];
  // Allocated after the last collection: still young.
  assert_true(vm_is_young(vm, *g) && vm_is_young(vm, *s) && vm_is_young(vm, *t));
  gc_minor(vm);
  assert_false(vm_is_young(vm, *g) || vm_is_young(vm, *s) || vm_is_young(vm, *t));
  gc_full_major(vm);
  Value l = *g;
  for (int i = 1; i <= 3; i++, l = val_field(l, 1)) assert_int_equal(val_to_int(val_field(l, 0)), i);
  assert_true(l == VAL_EMPTY);
  assert_string_equal(str_bytes(*s), "hello world");
  assert_true(val_field(*t, 0) == *g);   // sharing kept
  assert_true(val_field(*t, 1) == *s);
  assert_true(gc_verify(vm));
}

static void test_popped_c_root_is_not_a_root(void **state) {
  Vm *vm = ts_vm(state);
  Value kept = ts_tuple(vm, val_of_int(1), val_of_int(1));
  vm_push_root(vm, &kept);
  Value dropped = ts_tuple(vm, val_of_int(2), val_of_int(2));
  Value dropped_addr = dropped;
  vm_push_root(vm, &dropped);
  assert_int_equal(vm->root_count, 2);
  vm_pop_roots(vm, 1);
  gc_minor(vm);
  assert_false(vm_is_young(vm, kept));
  assert_true(dropped == dropped_addr);        // slot not touched
  assert_true(val_hd(dropped_addr) != 0);      // block not promoted
  assert_true(vm->gc.stats.promoted_words == 3.0);
  vm_pop_roots(vm, 1);
  assert_int_equal(vm->root_count, 0);
}

// --- stack slots ----------------------------------------------------------------------

static const char *const CHURN =
    "fn churn(n) {\n"
    "  var acc = []\n"
    "  for i in 0..n { acc = (i, str(i)) :: acc }\n"
    "  List.length(acc)\n"
    "}\n";

static void test_locals_survive_collections(void **state) {
  char src[2048];
  snprintf(src, sizeof src, "%s%s", CHURN,
           "fn keep_locals(k) {\n"
           "  let xs = [k, k + 1, k + 2]\n"
           "  let s = \"s\" ++ str(k)\n"
           "  let rec = {name: s, items: xs, f: 1.5}\n"
           "  let clo = fn(y) { y + k }\n"
           "  Gc.minor()\n"
           "  let n1 = churn(5000)\n"
           "  Gc.full_major()\n"
           "  let n2 = churn(5000)\n"
           "  Gc.minor()\n"
           "  str(xs) ++ \" \" ++ s ++ \" \" ++ str(rec) ++ \" \" ++ str(clo(10)) ++ \" \" ++ str(n1 + n2)\n"
           "}\n"
           "println(keep_locals(7))\n"
           "println(Gc.verify())\n");
  const char *out = ts_run(state, src);
  assert_string_equal(out, "[7, 8, 9] s7 {name: \"s7\", items: [7, 8, 9], f: 1.5} 17 10000\ntrue\n");
  assert_true(ts_vm(state)->gc.stats.major_collections >= 2);
}

static void test_every_frame_of_a_deep_stack_is_scanned(void **state) {
  char src[2048];
  // Each of 3000 frames holds a tuple and a string across a full major and
  // thousands of minor collections triggered at the bottom.
  snprintf(src, sizeof src, "%s%s", CHURN,
           "fn deep(n) {\n"
           "  if n == 0 { Gc.full_major(); churn(3000); return 0 }\n"
           "  let cell = (n, str(n))\n"
           "  let r = deep(n - 1)\n"
           "  let (a, b) = cell\n"
           "  if b != str(a) || a != n { raise(\"corrupt at \" ++ str(n)) }\n"
           "  r + a\n"
           "}\n"
           "println(deep(3000))\n");
  const char *out = ts_run(state, src);
  assert_string_equal(out, "4501500\n");   // 3000 * 3001 / 2
}

static void test_frames_entered_from_c(void **state) {
  Vm *vm = ts_vm(state);
  char src[1024];
  snprintf(src, sizeof src, "%s%s", CHURN,
           "fn work(xs, k) {\n"
           "  let pair = (xs, k)\n"
           "  churn(4000)\n"
           "  Gc.full_major()\n"
           "  pair\n"
           "}\n");
  ts_run(state, src);
  // interp_call from C: the arguments live in the new frame (rooted there), the
  // caller's C roots stay roots during the call.
  Value xs = ts_int_list(vm, 50);
  vm_push_root(vm, &xs);
  Value args[2] = {xs, val_of_int(9)};
  Value result = VAL_NIL;
  assert_true(interp_call(vm, vm->globals[ts_global(vm, "work")], 2, args, &result));
  assert_false(vm_is_young(vm, xs));          // moved by the collections, root updated
  assert_true(val_field(result, 0) == xs);
  assert_int_equal(val_to_int(val_field(result, 1)), 9);
  ts_check_int_list(xs, 50);
  assert_true(gc_verify(vm));
  vm_pop_roots(vm, 1);
}

// --- the scan in the middle of a run: a C memprof tracker looks at the roots ---------

typedef struct Probe {
  Vm *vm;
  Visits visits;
  Value *base;            // the frame of probe() when its allocation was sampled
  const uint32_t *pc;
  bool seen;
} Probe;

static bool probe_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *sample) {
  (void)block;
  Probe *p = data;
  if (p->seen || strcmp(sample->site->function, "probe") != 0) return false;
  p->seen = true;
  p->base = vm->base;
  p->pc = vm->pc;
  gc_scan_roots(vm, record_visit, &p->visits);
  return false;
}

static void test_scan_during_a_run(void **state) {
  Vm *vm = ts_vm(state);
  Proto *entry = ts_compile(state,
                            "fn probe(a, b) {\n"
                            "  let keep = (a, b)\n"
                            "  keep\n"
                            "}\n"
                            "fn outer(x) {\n"
                            "  let y = [x]\n"
                            "  let r = probe([x], x + 1)\n"
                            "  r\n"
                            "}\n"
                            "let z = outer(5)\n");
  Probe p = {.vm = vm};
  MemprofTracker tracker = {.alloc = probe_alloc, .data = &p};
  int id = memprof_start_profile(vm, 1.0, 0, &tracker);
  assert_true(id >= 0);
  fflush(stdout);
  bool ok = false;
  interp_run_entry(vm, entry, &ok);
  assert_true(ok);
  memprof_stop_profile(vm, id);
  assert_true(p.seen);
  // The top frame is probe's, stopped at the tuple's allocation.
  const Proto *probe = ts_proto(state, "probe"), *outer = ts_proto(state, "outer");
  assert_true(ts_is_alloc1(p.pc[0]) || ts_is_allocn(p.pc[0]));
  assert_true(p.pc >= probe->code && p.pc < probe->code + probe->code_len);
  for (uint32_t s = 0; s <= probe->nparams; s++) assert_int_equal(times_visited(&p.visits, &p.base[s]), 1);
  uint32_t keep_reg = ts_is_alloc1(p.pc[0]) ? p.pc[1] : p.pc[3];
  assert_int_equal(times_visited(&p.visits, &p.base[keep_reg]), 0);   // not yet written
  // The caller's frame sits right below (core/frames.h part 1): its closure,
  // x and y are roots, the argument registers of the call (copied into
  // probe's frame) are not.
  Value *ob = p.base - outer->fsize;
  const uint32_t *call = NULL;
  for (const uint32_t *pc = outer->code; pc < outer->code + outer->code_len; pc += bytecode_length(pc))
    if (ts_is_call(pc[0])) call = pc;
  assert_non_null(call);
  const uint32_t *alloc = ts_find_alloc1(outer, 0);
  assert_non_null(alloc);
  uint32_t y_reg = alloc[1];
  assert_int_equal(times_visited(&p.visits, &ob[0]), 1);
  assert_int_equal(times_visited(&p.visits, &ob[1]), 1);
  assert_int_equal(times_visited(&p.visits, &ob[y_reg]), 1);
  assert_int_equal(call[2], 2);                                           // argc
  assert_int_equal(times_visited(&p.visits, &ob[call[3]]), 0);          // [x]: a temporary
  assert_int_equal(times_visited(&p.visits, &ob[call[4]]), 0);          // x + 1: a temporary
  assert_int_equal(times_visited(&p.visits, &ob[call_dst(call)]), 0);   // r: not yet written
  // Every visited stack slot once; every global once.
  for (uint32_t i = 0; i < p.visits.count; i++) {
    Value *s = p.visits.slots[i];
    if (s >= vm->stack_start && s < vm->stack_end) assert_int_equal(times_visited(&p.visits, s), 1);
  }
  for (uint32_t i = 0; i < vm->global_count; i++) assert_int_equal(times_visited(&p.visits, &vm->globals[i]), 1);
  free(p.visits.slots);
}

// --- dead registers -----------------------------------------------------------------

// Temporaries are not roots once dead: at a call, neither the argument
// temporaries (the callee has its own copies), nor the destination (not yet
// written), nor registers of expressions finished earlier are listed.
static void test_dead_temporaries_not_in_call_descriptors(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state,
             "fn g(x) { x }\n"
             "fn f(a) {\n"
             "  let n = List.length([a, a])\n"
             "  let m = g(n)\n"
             "  m\n"
             "}\n");
  const Proto *f = ts_proto(state, "f");
  const uint32_t *calls[2] = {NULL, NULL};
  int ncalls = 0;
  for (const uint32_t *pc = f->code; pc < f->code + f->code_len; pc += bytecode_length(pc))
    if (ts_is_call(pc[0]) && ncalls < 2) calls[ncalls++] = pc;
  assert_int_equal(ncalls, 2);
  // The temporaries of the list literal [a, a]: the [] tail and the inner cons.
  const uint32_t *tail_load = NULL;
  for (const uint32_t *pc = f->code; pc < calls[0]; pc += bytecode_length(pc))
    if (pc[0] == BC_LOADK && vm->constants[pc[2]] == VAL_EMPTY) tail_load = pc;
  assert_non_null(tail_load);
  uint32_t tail_reg = tail_load[1];
  const uint32_t *list_alloc = tail_load + bytecode_length(tail_load);
  assert_true(ts_is_allocn(list_alloc[0]));         // both conses in one allocation
  uint32_t inner_cons_reg = list_alloc[3];          // sub-block 0 (the last cell)
  for (int c = 0; c < 2; c++) {
    const uint32_t *call = calls[c];
    const FrameDesc *d = frames_find(vm->frames, call_ret(call));
    assert_non_null(d);
    assert_true(ts_lists(d, 0));                     // the closure
    assert_true(ts_lists(d, 1));                     // a: a parameter, live throughout
    // The first call's argument is a temporary; the second passes the
    // local n from its own register (no copy), which stays n's.
    assert_int_equal(call[2], 1);
    if (c == 0) assert_false(ts_lists(d, call[3]));
    else assert_int_equal(call[3], call_dst(calls[0]));
    assert_false(ts_lists(d, call_dst(call)));
    assert_false(ts_lists(d, tail_reg));
    assert_false(ts_lists(d, inner_cons_reg));
  }
  // n (the first call's result, a local) is live at the second call.
  const FrameDesc *d2 = frames_find(vm->frames, call_ret(calls[1]));
  assert_true(ts_lists(d2, call_dst(calls[0])));
}

// A match arm's guard runs before the arm writes the match's destination:
// on the path from a failed earlier arm that register holds whatever the
// stack slot held before (here a never-written, zeroed slot, which looks like
// a null pointer). A collection inside the guard must not scan it.
static const char *const GUARD_PROGRAM =
    "fn g(x) { Gc.full_major(); x > 0 }\n"
    "fn f(v) {\n"
    "  let r = match v {\n"
    "    0 => \"zero\",\n"
    "    n if g(n) => \"pos\",\n"
    "    _ => \"neg\",\n"
    "  }\n"
    "  r\n"
    "}\n"
    "fn deep(n) { if n == 0 { f(-1) } else { deep(n - 1) } }\n"
    "println(deep(1000))\n";

static void test_match_guard_collection(void **state) {
  TsChild c = ts_run_forked(state, GUARD_PROGRAM);
  if (c.status != 0) fprintf(stderr, "child exit %d, stderr:\n%s", c.status, c.err);
  assert_int_equal(c.status, 0);
  assert_string_equal(c.out, "neg\n");
}

static void test_match_guard_call_descriptor(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state, GUARD_PROGRAM);
  const Proto *f = ts_proto(state, "f");
  // The guard's call is the only call in f; the match's result register is
  // the one the arms' bodies load their strings into.
  const uint32_t *call = NULL;
  for (const uint32_t *pc = f->code; pc < f->code + f->code_len; pc += bytecode_length(pc))
    if (ts_is_call(pc[0])) call = pc;
  assert_non_null(call);
  const uint32_t *first_body = ts_find_op(f, BC_LOADK, 0);
  assert_non_null(first_body);
  uint32_t match_dst = first_body[1];
  const FrameDesc *d = frames_find(vm->frames, call_ret(call));
  assert_non_null(d);
  assert_false(ts_lists(d, match_dst));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_scan_visits_each_global_once, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_globals_are_roots_and_updated, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_popped_c_root_is_not_a_root, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_locals_survive_collections, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_every_frame_of_a_deep_stack_is_scanned, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_frames_entered_from_c, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_scan_during_a_run, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_dead_temporaries_not_in_call_descriptors, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_match_guard_collection, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_match_guard_call_descriptor, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
