// test_compiler.c - cmocka tests for the code and frame descriptors that
// lang/front/compiler.c emits (looked up through core/frames.c): a descriptor for
// every safe point, call descriptors keyed by return addresses, live sets that
// only name written slots, combined allocations (ALLOCN) and their debug
// entries, and the --dump-bytecode listing (lang/runtime/disasm.c).
#include "test_support.h"

// A program touching every construct the compiler has a case for; it also
// pulls in most of the standard library (compiled along with it).
static const char *const KITCHEN_SINK =
    "import_free_marker()\n"
    "fn import_free_marker() { nil }\n"
    "fn fact(n) { if n <= 1 { 1 } else { n * fact(n - 1) } }\n"
    "fn classify(l) {\n"
    "  match l {\n"
    "    [] => \"empty\",\n"
    "    [x] if x > 0 => \"one positive\",\n"
    "    (a, b) :: _ => str(a) ++ str(b),\n"
    "    {f: 1, g: y} :: rest => str(y),\n"
    "    x :: _ if fact(3) == 6 => \"other\",\n"
    "  }\n"
    "}\n"
    "fn pairs(xs) {\n"
    "  let (a, b) = (1, 2)\n"
    "  let [p, 0] = xs\n"
    "  var acc = []\n"
    "  for x in xs { acc = (x, a + b) :: acc }\n"
    "  for i in 0..10 { if i == 5 { continue }; if i == 8 { break }; acc = (i, p) :: acc }\n"
    "  var k = 0\n"
    "  while k < 3 { k = k + 1; acc = [k] :: acc }\n"
    "  acc\n"
    "}\n"
    "fn closures(n) {\n"
    "  let add = fn(x) { x + n }\n"
    "  fn loop(i) { if i == 0 { 0 } else { loop(i - 1) + add(i) } }\n"
    "  let r = {a: add, b: [| 1, 2.5, \"s\" |], c: -1.5}\n"
    "  r.c = r.c * 2.0 / 3.0 - 1.0\n"
    "  r.b[0] = loop(n)\n"
    "  try { raise((1, \"x\")) } catch e { e }\n"
    "}\n"
    "fn strings(s) { s ++ \"!\" ++ String.sub(s, 0, 1) ++ Float.to_string(1.5, 2) }\n"
    "fn stdlib() {\n"
    "  let h = Hashtbl.create(8)\n"
    "  Hashtbl.replace(h, \"k\", List.map(fn(x) { x * 2 }, [1, 2, 3]))\n"
    "  let b = Buffer.create(4)\n"
    "  Buffer.add(b, \"x\")\n"
    "  (Array.init(3, fn(i) { i }), Int.abs(-3), Gc.stat(), Sys.time(), Memprof.stop)\n"
    "}\n"
    "println(classify([(1, 2)]))\n";

// --- descriptors of every safe point --------------------------------------------------

static void check_desc_shape(const Proto *p, const FrameDesc *d) {
  assert_true(d->proto == p);
  assert_true(d->live_count >= 1);
  assert_int_equal(d->live[0], 0);                // the closure: always live
  for (uint32_t i = 0; i < d->live_count; i++) {
    assert_true(d->live[i] < p->fsize);
    if (i > 0) assert_true(d->live[i] > d->live[i - 1]);   // ascending, no duplicates
  }
  // Parameters are locals of the whole function: live at every safe point.
  for (uint32_t s = 0; s <= p->nparams; s++) assert_true(ts_lists(d, s));
  assert_true(d->debug_count >= 1);
  for (uint32_t i = 0; i < d->debug_count; i++) {
    const DebugInfo *e = d->debug[i];
    assert_string_equal(e->function, p->name);
    assert_string_equal(e->file, p->file);
    if (strcmp(p->name, "<entry>") != 0) {
      assert_true(e->line >= 1);
      assert_true(e->end_col > e->start_col);
    }
  }
}

static void test_every_safe_point_has_a_descriptor(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state, KITCHEN_SINK);
  uint32_t safe_points = 0, calls = 0;
  for (uint32_t i = 0; i < vm->proto_count; i++) {
    const Proto *p = vm->protos[i];
    const uint32_t *pc = p->code;
    for (; pc < p->code + p->code_len; pc += bytecode_length(pc)) {
      assert_true(pc[0] < OPCODE_COUNT);
      const FrameDesc *at_pc = frames_find(vm->frames, pc);
      if (ts_is_call(pc[0])) {
        // Keyed by the return address, the call's last word, which holds
        // the caller's frame size.
        assert_null(at_pc);
        const FrameDesc *d = frames_find(vm->frames, call_ret(pc));
        assert_non_null(d);
        assert_true(d->is_call);
        assert_true(d->key == call_ret(pc));
        assert_true(call_ret(pc) == pc + bytecode_length(pc) - 1);
        assert_int_equal(call_ret(pc)[0], frames_step(p->fsize));
        assert_int_equal(d->debug_count, 1);
        check_desc_shape(p, d);
        calls++;
      } else if (bytecode_is_safe_point((Opcode)pc[0])) {
        if (!at_pc) fail_msg("%s: %s at %u has no descriptor", p->name, bytecode_names[pc[0]], (unsigned)(pc - p->code));
        assert_false(at_pc->is_call);
        assert_true(at_pc->key == pc);
        assert_int_equal(at_pc->debug_count, ts_is_allocn(pc[0]) ? pc[2] : 1);
        check_desc_shape(p, at_pc);
        safe_points++;
      } else if (at_pc) {
        fail_msg("%s: %s at %u is not a safe point but has a descriptor", p->name,
                 bytecode_names[pc[0]], (unsigned)(pc - p->code));
      }
    }
    assert_true(pc == p->code + p->code_len);   // instructions tile the code exactly
  }
  assert_true(calls > 50 && safe_points > 100);
}

// --- live slots hold values: a must-be-written dataflow over the bytecode ---------------
//
// A slot a descriptor lists is scanned by the GC, so on every path reaching
// the safe point it must have been written (compiler.c part 2). The analysis
// below knows, for each instruction, which registers it writes on each of its
// out-edges; slots 0..nparams are written on entry.

typedef struct Edges {
  bool fall;                  // falls through to the next instruction
  const uint32_t *jump;       // branch target, or NULL
  uint32_t fall_w[20], nfall; // registers written on the fall-through edge
  uint32_t jump_w[20], njump; // ... on the branch edge
} Edges;

static const uint32_t *rel(const uint32_t *pc, uint32_t off) { return pc + (int32_t)off; }

static void both(Edges *e, uint32_t r) {
  e->fall_w[e->nfall++] = r;
  e->jump_w[e->njump++] = r;
}

static Edges edges_of(const uint32_t *pc) {
  Edges e;
  memset(&e, 0, sizeof e);
  const char *n = bytecode_names[pc[0]];
  static const char *const dst1[] = {"MOVE", "LOADK", "LOADI", "GETGLOBAL", "GETUPVAL", "ADD", "SUB",
                                     "MUL", "DIV", "MOD", "CONCAT", "NEG", "NOT", "EQ", "NE", "LT",
                                     "LE", "GT", "GE", "ADDI", "SUBI", "IADD", "MULI", "DIVI", "MODI", "EQK", "NEK", "CLOSURE", "ALLOC1", "ALLOC2",
                                     "ALLOCBIG", "GETFIELD", "INDEX", "GETF",
                                     // fused forms: their slow path writes dst and falls to the RET or CALLG1 kept after them
                                     "ALLOC2_RET", "ADD_RET", "ADDI_RET", "SUBI_CALLG1", "ADDI_CALLG1"};
  for (size_t i = 0; i < sizeof dst1 / sizeof dst1[0]; i++)
    if (strcmp(n, dst1[i]) == 0) {
      e.fall = true;
      e.fall_w[e.nfall++] = pc[1];
      return e;
    }
  if (strcmp(n, "LOADK2") == 0) {
    e.fall = true;
    e.fall_w[e.nfall++] = pc[1];
    e.fall_w[e.nfall++] = pc[4];
    return e;
  }
  static const char *const plain[] = {"SETGLOBAL", "SETFIELD", "SETINDEX", "POPTRY"};
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    if (strcmp(n, plain[i]) == 0) {
      e.fall = true;
      return e;
    }
  static const char *const branch3[] = {"JNLT", "JNLE", "JNGT", "JNGE", "JNLTI", "JNLEI", "JNGTI", "JNGEI",
                                        "JNEQ", "JNNE", "JNEQK", "JNNEK", "TESTTUPLE", "TESTEQ", "FORPREP"};
  for (size_t i = 0; i < sizeof branch3 / sizeof branch3[0]; i++)
    if (strcmp(n, branch3[i]) == 0) {
      e.fall = true;
      e.jump = rel(pc, pc[3]);
      return e;
    }
  if (!strcmp(n, "JMPIF") || !strcmp(n, "JMPIFNOT") || !strcmp(n, "TESTCONS") || !strcmp(n, "TESTEMPTY") ||
      !strcmp(n, "TESTEMPTY_UNCONS")) {   // the UNCONS at its target writes the fields

    e.fall = true;
    e.jump = rel(pc, pc[2]);
  } else if (!strcmp(n, "JMP") || !strcmp(n, "LOOP")) {
    e.jump = rel(pc, pc[1]);
  } else if (ts_is_call(pc[0]) || !strcmp(n, "CALLPRIM")) {
    e.fall = true;
    e.fall_w[e.nfall++] = strcmp(n, "CALLPRIM") ? call_dst(pc) : pc[4];   // dst
  } else if (!strcmp(n, "FORLOOP")) {
    e.fall = true;
    e.jump = rel(pc, pc[3]);
    both(&e, pc[1]);
  } else if (!strcmp(n, "TESTFIELD")) {      // success writes the field's register
    e.fall = true;
    e.fall_w[e.nfall++] = pc[3];
    e.jump = rel(pc, pc[4]);
  } else if (!strcmp(n, "UNCONS") || !strcmp(n, "UNPAIR") ||
             !strcmp(n, "UNPAIR_JNEQK")) {   // success writes both fields (then the JNEQK kept after it)
    e.fall = true;
    e.fall_w[e.nfall++] = pc[2];
    e.fall_w[e.nfall++] = pc[3];
    e.jump = rel(pc, pc[4]);
  } else if (!strcmp(n, "ITERLOOP")) {       // jumping back writes the element
    e.fall = true;
    e.jump = rel(pc, pc[4]);
    e.jump_w[e.njump++] = pc[3];
  } else if (!strcmp(n, "TRY")) {            // the handler receives the raised value
    e.fall = true;
    e.jump = rel(pc, pc[1]);
    e.jump_w[e.njump++] = pc[2];
  } else if (!strcmp(n, "ALLOCN") || !strcmp(n, "ALLOCN2")) {
    e.fall = true;
    const uint32_t *sub = pc + 3;
    for (uint32_t i = 0; i < pc[2]; i++) {
      if (sub[0] != OPERAND_NONE) e.fall_w[e.nfall++] = sub[0];
      sub += 3 + ((sub[1] & 0xff) == TAG_RECORD) + sub[2];
    }
  } else if (strcmp(n, "RET") && strcmp(n, "RETK") && strcmp(n, "RETI") && strcmp(n, "MATCHFAIL") && strcmp(n, "HALT") &&
             strcmp(n, "EXIT_NESTED")) {
    fail_msg("the liveness check does not know opcode %s: teach edges_of()", n);
  }
  return e;
}

// Meets `in` (with `w` added) into state[target]; true if it changed.
static bool flow(uint8_t *target, const uint8_t *in, const uint32_t *w, uint32_t nw, uint32_t fsize) {
  uint8_t out[1024];
  memcpy(out, in, fsize);
  for (uint32_t i = 0; i < nw; i++)
    if (w[i] < fsize) out[w[i]] = 1;
  bool changed = false;
  for (uint32_t s = 0; s < fsize; s++)
    if (target[s] && !out[s]) target[s] = 0, changed = true;
  return changed;
}

// Number of descriptors of p whose live set names a slot that some path
// reaches unwritten (each reported on stderr).
static int unwritten_live_slots(Vm *vm, const Proto *p) {
  uint32_t fsize = p->fsize;
  assert_true(fsize <= 1024);
  uint8_t(*in)[1024] = calloc(p->code_len + 1, sizeof *in);   // per code offset
  assert_non_null(in);
  for (uint32_t off = 0; off <= p->code_len; off++) memset(in[off], 1, fsize);   // top
  memset(in[0], 0, fsize);
  for (uint32_t s = 0; s <= p->nparams; s++) in[0][s] = 1;
  for (bool changed = true; changed;) {
    changed = false;
    for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc)) {
      Edges e = edges_of(pc);
      const uint8_t *cur = in[pc - p->code];
      if (e.fall) changed |= flow(in[pc + bytecode_length(pc) - p->code], cur, e.fall_w, e.nfall, fsize);
      if (e.jump) {
        assert_true(e.jump >= p->code && e.jump < p->code + p->code_len);
        changed |= flow(in[e.jump - p->code], cur, e.jump_w, e.njump, fsize);
      }
    }
  }
  int bad = 0;
  for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc)) {
    const FrameDesc *d = ts_desc_at(vm, pc);
    if (!d) continue;
    for (uint32_t i = 0; i < d->live_count; i++)
      if (!in[pc - p->code][d->live[i]]) {
        fprintf(stderr, "%s: %s at %u lists r%u, unwritten on some path (%s:%u:%u)\n", p->name,
                bytecode_names[pc[0]], (unsigned)(pc - p->code), d->live[i], d->debug[0]->file,
                d->debug[0]->line, d->debug[0]->start_col + 1);
        bad++;
      }
  }
  free(in);
  return bad;
}

static void test_live_slots_are_written_on_every_path(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state, KITCHEN_SINK);
  int bad = 0;
  for (uint32_t i = 0; i < vm->proto_count; i++) bad += unwritten_live_slots(vm, vm->protos[i]);
  assert_int_equal(bad, 0);
}

// A refutable `let` pattern: on the path from its first failing test to the
// `match failure`, the pattern's later registers were never written.
static void test_let_pattern_failure_lists_only_written_slots(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state,
             "fn f(xs) {\n"
             "  let [a, 0] = xs\n"
             "  a\n"
             "}\n");
  assert_int_equal(unwritten_live_slots(vm, ts_proto(state, "f")), 0);
}

// Match arms with guards (each arm starts with the result unwritten).
static void test_match_guard_lists_only_written_slots(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state,
             "fn g(x) { x > 0 }\n"
             "fn f(v) {\n"
             "  let r = match v {\n"
             "    0 => \"zero\",\n"
             "    n if g(n) => \"pos\",\n"
             "    _ => \"neg\",\n"
             "  }\n"
             "  r\n"
             "}\n");
  assert_int_equal(unwritten_live_slots(vm, ts_proto(state, "f")), 0);
}

// --- combined allocations -----------------------------------------------------------------

// One sub-block of an ALLOCN, decoded.
typedef struct Sub {
  uint32_t dst;
  Header hd;
  uint32_t nfields;
  const uint32_t *fields;    // after the shape word of records
} Sub;

static uint32_t decode_allocn(const uint32_t *pc, Sub *subs) {
  assert_true(ts_is_allocn(pc[0]));
  const uint32_t *s = pc + 3;
  uint32_t total = 0;
  for (uint32_t i = 0; i < pc[2]; i++) {
    uint32_t extra = (s[1] & 0xff) == TAG_RECORD;
    subs[i] = (Sub){s[0], s[1], s[2], s + 3 + extra};
    total += (uint32_t)hd_wosize(s[1]) + 1;
    s += 3 + extra + s[2];
  }
  assert_int_equal(total, pc[1]);     // the instruction's size is its sub-blocks'
  return pc[2];
}

static void check_debug(const DebugInfo *e, uint32_t line, uint32_t start, uint32_t end) {
  assert_int_equal(e->line, line);
  assert_int_equal(e->start_col, start);
  assert_int_equal(e->end_col, end);
}

static void test_let_tuple_then_cons_is_one_allocation(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state,
             "fn f(a, b, acc) {\n"
             "  let t = (a, b)\n"
             "  t :: acc\n"
             "}\n");
  const Proto *f = ts_proto(state, "f");
  assert_int_equal(ts_count_ops(f, ts_is_alloc), 1);
  const uint32_t *pc = ts_find_allocn(f, 0);
  assert_non_null(pc);
  assert_int_equal(pc[0], BC_ALLOCN2);   // two pairs: the loop-free form
  Sub subs[16];
  assert_int_equal(decode_allocn(pc, subs), 2);
  assert_int_equal(pc[1], 3 + 3);
  // Sub-block 0: the tuple (a, b) from the parameters' registers.
  assert_int_equal(hd_tag(subs[0].hd), TAG_TUPLE);
  assert_int_equal(hd_wosize(subs[0].hd), 2);
  assert_int_equal(subs[0].fields[0], 1);
  assert_int_equal(subs[0].fields[1], 2);
  // Sub-block 1: the cons, whose head is sub-block 0 itself (t's register
  // is written only once the instruction completes) and whose tail is acc.
  assert_int_equal(hd_tag(subs[1].hd), TAG_CONS);
  assert_int_equal(subs[1].fields[0], OPERAND_SUBBLOCK | 0);
  assert_int_equal(subs[1].fields[1], 3);
  assert_true(subs[0].dst != subs[1].dst);
  const FrameDesc *d = frames_find(vm->frames, pc);
  assert_non_null(d);
  // Live: the closure and the parameters, not t nor the result (unwritten).
  assert_int_equal(d->live_count, 4);
  for (uint32_t s = 0; s < 4; s++) assert_int_equal(d->live[s], s);
  // One debug entry per sub-block, in program order; columns 0-based, end
  // exclusive: "  let t = (a, b)" has the tuple at [10, 16); "  t :: acc"
  // has the cons at [2, 10).
  assert_int_equal(d->debug_count, 2);
  check_debug(d->debug[0], 2, 10, 16);
  check_debug(d->debug[1], 3, 2, 10);
  assert_string_equal(d->debug[0]->function, "f");
}

static void test_combined_allocation_runs(void **state) {
  const char *out = ts_run(state,
                           "fn f(a, b, acc) {\n"
                           "  let t = (a, b)\n"
                           "  t :: acc\n"
                           "}\n"
                           "var acc = []\n"
                           "for i in 0..20000 { acc = f(i, -i, acc) }\n"
                           "var ok = true\n"
                           "var sum = 0\n"
                           "var n = 0\n"
                           "for p in acc { let (a, b) = p; if b != -a { ok = false }; sum = sum + a; n = n + 1 }\n"
                           "println(n)\n"
                           "println(sum)\n"
                           "println(ok)\n"
                           "println(List.hd(acc))\n"
                           "println([1, (2, [3, 4]), {x: [5]}])\n");
  // sum of 0..19999 = 19999 * 20000 / 2
  assert_string_equal(out, "20000\n199990000\ntrue\n(19999, -19999)\n[1, (2, [3, 4]), {x: [5]}]\n");
  assert_true(ts_vm(state)->gc.stats.minor_collections > 10);   // the slow path ran often
}

static void test_list_literal_is_one_allocation(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state, "fn l(a, b, c) { [a, b, c] }\n");
  const Proto *l = ts_proto(state, "l");
  assert_int_equal(ts_count_ops(l, ts_is_alloc), 1);
  const uint32_t *pc = ts_find_allocn(l, 0);
  assert_non_null(pc);
  Sub subs[16];
  assert_int_equal(decode_allocn(pc, subs), 3);
  // Built from the last cell: c :: [], then b :: <that>, then a :: <that>.
  assert_int_equal(subs[0].fields[0], 3);
  assert_int_equal(subs[1].fields[0], 2);
  assert_int_equal(subs[1].fields[1], OPERAND_SUBBLOCK | 0);
  assert_int_equal(subs[2].fields[0], 1);
  assert_int_equal(subs[2].fields[1], OPERAND_SUBBLOCK | 1);
  const FrameDesc *d = frames_find(vm->frames, pc);
  assert_int_equal(d->debug_count, 3);
  // Every cell of the literal is attributed to the literal "[a, b, c]".
  for (int i = 0; i < 3; i++) check_debug(d->debug[i], 1, 16, 25);
}

static void test_nested_literals_combine(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state, "fn g() { ((1, 2), [3]) }\n");
  const Proto *g = ts_proto(state, "g");
  // Three blocks in at most two allocation instructions; the outer tuple is
  // combined with the cons of [3] and refers to it as a sub-block. (The
  // inner tuple is combined too only if no constant load separates it.)
  const DebugInfo *debug[16];
  uint32_t blocks = 0;
  const uint32_t *last = NULL;
  for (const uint32_t *pc = g->code; pc < g->code + g->code_len; pc += bytecode_length(pc)) {
    if (!ts_is_alloc(pc[0])) continue;
    const FrameDesc *d = frames_find(vm->frames, pc);
    assert_non_null(d);
    for (uint32_t i = 0; i < d->debug_count && blocks < 16; i++) debug[blocks++] = d->debug[i];
    if (ts_is_allocn(pc[0])) last = pc;
  }
  assert_int_equal(blocks, 3);
  assert_true(ts_count_ops(g, ts_is_alloc) <= 2);
  assert_non_null(last);
  Sub subs[16];
  uint32_t n = decode_allocn(last, subs);
  Sub outer = subs[n - 1], cons = subs[n - 2];
  assert_int_equal(hd_tag(outer.hd), TAG_TUPLE);
  assert_int_equal(hd_tag(cons.hd), TAG_CONS);
  assert_int_equal(outer.fields[1], OPERAND_SUBBLOCK | (n - 2));
  // In program order, "fn g() { ((1, 2), [3]) }": (1, 2) at [10, 16), [3] at
  // [18, 21), the outer tuple at [9, 22).
  check_debug(debug[0], 1, 10, 16);
  check_debug(debug[1], 1, 18, 21);
  check_debug(debug[2], 1, 9, 22);
}

static void test_no_merge_across_a_join(void **state) {
  ts_compile(state,
             "fn h(c, a, b) {\n"
             "  let t = if c { (a, b) } else { (b, a) }\n"
             "  (t, t)\n"
             "}\n");
  const Proto *h = ts_proto(state, "h");
  // The else branch's tuple is followed directly by (t, t), but the then
  // branch jumps to the join between them: three separate allocations.
  assert_null(ts_find_allocn(h, 0));
  assert_int_equal(ts_count_ops(h, ts_is_alloc), 3);
  const uint32_t *third = ts_find_alloc1(h, 2);
  const uint32_t *second = ts_find_alloc1(h, 1);
  assert_true(second + bytecode_length(second) == third);   // adjacent, yet not merged
}

// Which combined allocations take the loop-free form ALLOCN2: exactly two
// non-record blocks of two fields, the second possibly pointing to the first.
static void test_allocn2_only_for_two_pairs(void **state) {
  ts_compile(state,
             "fn nested(a, b, c) { (a, (b, c)) }\n"
             "fn cells(a, b) { [a, b] }\n"
             "fn three(a, b, c) { [a, b, c] }\n"
             "fn triple(a, b) { (a, (a, b), b) }\n"
             "fn rec(a, b) { {x: (a, b)} }\n");
  const char *two_pairs[] = {"nested", "cells"};
  for (int i = 0; i < 2; i++) {
    const Proto *p = ts_proto(state, two_pairs[i]);
    const uint32_t *pc = ts_find_allocn(p, 0);
    assert_non_null(pc);
    assert_int_equal(pc[0], BC_ALLOCN2);
    assert_int_equal(pc[1], 6);
    assert_null(ts_find_allocn(p, 1));
  }
  const char *others[] = {"three", "triple", "rec"};
  for (int i = 0; i < 3; i++) {
    const Proto *p = ts_proto(state, others[i]);
    const uint32_t *pc = ts_find_allocn(p, 0);
    assert_non_null(pc);
    assert_int_equal(pc[0], BC_ALLOCN);
  }
}

static void test_combining_limits(void **state) {
  Vm *vm = ts_vm(state);
  char src[4096];
  // 20 cells (more than 16 sub-blocks), and two 200-field tuples (more than
  // 256 words together).
  int n = snprintf(src, sizeof src, "fn big(a) { [");
  for (int i = 0; i < 20; i++) n += snprintf(src + n, sizeof src - (size_t)n, "%sa", i ? ", " : "");
  n += snprintf(src + n, sizeof src - (size_t)n, "] }\nfn wide(a) { (");
  for (int t = 0; t < 2; t++) {
    n += snprintf(src + n, sizeof src - (size_t)n, "%s(", t ? ", " : "");
    for (int i = 0; i < 200; i++) n += snprintf(src + n, sizeof src - (size_t)n, "%sa", i ? ", " : "");
    n += snprintf(src + n, sizeof src - (size_t)n, ")");
  }
  n += snprintf(src + n, sizeof src - (size_t)n, ") }\n");
  assert_true(n < (int)sizeof src);
  ts_compile(state, src);
  uint32_t cells = 0;
  const Proto *big = ts_proto(state, "big");
  for (const uint32_t *pc = big->code; pc < big->code + big->code_len; pc += bytecode_length(pc)) {
    if (ts_is_alloc1(pc[0])) cells++;
    if (ts_is_allocn(pc[0])) cells += pc[2];
  }
  assert_int_equal(cells, 20);
  // Every ALLOCN of the program and stdlib: at most 16 sub-blocks, at most
  // 256 words, sub-block operands naming earlier sub-blocks only.
  for (uint32_t i = 0; i < vm->proto_count; i++) {
    const Proto *p = vm->protos[i];
    for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc)) {
      if (!ts_is_allocn(pc[0])) continue;
      Sub subs[16];
      assert_true(pc[2] >= 1 && pc[2] <= 16);
      uint32_t k = decode_allocn(pc, subs);
      assert_true(pc[1] <= 256);
      for (uint32_t s = 0; s < k; s++)
        for (uint32_t f = 0; f < subs[s].nfields; f++)
          if (subs[s].fields[f] & OPERAND_SUBBLOCK) assert_true((subs[s].fields[f] & ~OPERAND_SUBBLOCK) < s);
    }
  }
  // wide: 201 + 201 words do not fit one allocation; the second big tuple
  // and the 3-word outer one (204 words) do.
  const Proto *wide = ts_proto(state, "wide");
  assert_int_equal(ts_count_ops(wide, ts_is_alloc), 2);
  const uint32_t *first = ts_find_alloc1(wide, 0), *second = ts_find_allocn(wide, 0);
  assert_non_null(first);
  assert_non_null(second);
  assert_int_equal(hd_wosize(first[2]), 200);
  Sub subs[16];
  assert_int_equal(decode_allocn(second, subs), 2);
  assert_int_equal(second[1], 201 + 3);
}

static void test_debug_entry_spanning_two_lines(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state,
             "fn m(a, b) {\n"
             "  (a,\n"
             "   b)\n"
             "}\n");
  const uint32_t *pc = ts_find_alloc1(ts_proto(state, "m"), 0);
  assert_non_null(pc);
  const FrameDesc *d = frames_find(vm->frames, pc);
  assert_int_equal(d->debug_count, 1);
  // Starts on line 2 at column 2; ends after ")" on line 3, counted from the
  // start of line 2: "  (a,\n" is 6 bytes, "   b)" ends at 5, so 11.
  check_debug(d->debug[0], 2, 2, 11);
}

// --- the listing ----------------------------------------------------------------------

// --dump-bytecode's text for the whole program, malloc'ed. The stream's
// buffer and size live on the heap: gcc's -Wdangling-pointer takes the
// address of a local handed to open_memstream for a pointer into the frame.
static char *dump_program(Vm *vm) {
  struct Memstream { char *buf; size_t size; } *m = calloc(1, sizeof *m);
  assert_non_null(m);
  FILE *out = open_memstream(&m->buf, &m->size);
  assert_non_null(out);
  disasm_program(vm, out);
  fclose(out);
  char *buf = m->buf;
  free(m);
  return buf;
}

static void test_dump_shows_combined_and_call_descriptors(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state,
             "fn f(a, b, acc) {\n"
             "  let t = (a, b)\n"
             "  t :: acc\n"
             "}\n"
             "fn g(x) { f(x, x, []) }\n");
  char *buf = dump_program(vm);
  char header[128];
  snprintf(header, sizeof header, "function f (%s) params 3 frame ", ((TestCtx *)*state)->path);
  assert_non_null(strstr(buf, header));
  assert_non_null(strstr(buf, "combined: 2 sub-blocks, 6 words"));
  // The ALLOCN line is followed by its descriptor with both debug entries.
  const char *alloc = strstr(buf, "ALLOCN");
  assert_non_null(alloc);
  const char *next = strchr(alloc, '\n') + 1;
  assert_true(strncmp(next, "        ; frame ", 16) == 0);
  assert_non_null(strstr(next, ":2:10-16, "));
  // Every call line is followed by its (return-address keyed) descriptor.
  int call_lines = 0;
  for (const char *line = buf; *line; line = strchr(line, '\n') + 1) {
    const char *end = strchr(line, '\n');
    assert_non_null(end);
    if (end - line < 16) continue;
    // CALL, CALLG and their forms by argc (CALL1, CALLG2, ...), not CALLPRIM
    if (strncmp(line + 9, "CALL", 4) == 0 && strncmp(line + 9, "CALLPRIM", 8) != 0) {
      call_lines++;
      assert_true(strncmp(end + 1, "        ; frame ", 16) == 0);
    }
  }
  assert_true(call_lines >= 3);   // g's call of f and <entry>'s two module inits
  free(buf);
}

// The dump of the function `name` (up to the next function), malloc'ed.
static char *dump_function(Vm *vm, const char *name) {
  char *buf = dump_program(vm);
  char header[128];
  snprintf(header, sizeof header, "function %s (", name);
  char *start = strstr(buf, header);
  assert_non_null(start);
  char *end = strstr(start + 1, "\nfunction ");
  if (end) end[1] = '\0';
  char *copy = strdup(start);
  free(buf);
  return copy;
}

// Loops and patterns compile to the instructions the interpreter's fast
// paths expect: a for-each tests at the bottom, and no nil is loaded for
// a loop body's value; cons and pair patterns binding both parts use
// UNCONS / UNPAIR (a wildcard part too), two wildcards keep the plain test.
static void test_loops_and_pair_patterns(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state,
             "fn sum(l) { var s = 0\n for x in l { if x > 0 { s = s + x } }\n s }\n"
             "fn len(l) { match l { [] => 0, _ :: t => 1 + len(t) } }\n"
             "fn any(l) { match l { [] => 0, _ :: _ => 1 } }\n"
             "fn firsts(l) { match l { [] => [], (a, b) :: t => a :: firsts(t) } }\n");
  char *sum = dump_function(vm, "sum");
  assert_non_null(strstr(sum, "ITERLOOP"));
  assert_null(strstr(sum, "LOADK"));   // no nil for the body or the missing else
  // The loop is entered by a jump to its test, which jumps back to the body.
  const char *jmp = strstr(sum, "JMP ");
  const char *test = strstr(sum, "ITERLOOP");
  assert_non_null(jmp);
  assert_true(jmp < test);
  free(sum);
  char *len = dump_function(vm, "len");
  assert_non_null(strstr(len, "UNCONS"));
  assert_null(strstr(len, "TESTCONS"));
  assert_null(strstr(len, "GETF"));
  free(len);
  char *any = dump_function(vm, "any");
  assert_null(strstr(any, "UNCONS"));
  assert_non_null(strstr(any, "TESTCONS"));
  free(any);
  char *firsts = dump_function(vm, "firsts");
  assert_non_null(strstr(firsts, "UNCONS"));
  assert_non_null(strstr(firsts, "UNPAIR"));
  assert_null(strstr(firsts, "TESTCONS"));
  assert_null(strstr(firsts, "TESTTUPLE"));
  free(firsts);
}

// Pairs and cons cells take the two-field form ALLOC2, records and other
// sizes stay ALLOC1; a comparison with a small int literal jumps on an
// immediate; a return of a local, a literal int or a constant is one
// instruction (fold_returns).
static void test_short_forms(void **state) {
  ts_compile(state,
             "fn pair(a, b) { let t = (a, b); t }\n"
             "fn rec(a, b) { let r = {x: a, y: b}; r }\n"
             "fn tri(a, b) { let t = (a, b, a); t }\n"
             "fn small(n) { if n < 2 { n } else if n >= 100 { 1 } else { nil } }\n");
  const Proto *pair = ts_proto(state, "pair"), *rec = ts_proto(state, "rec"), *tri = ts_proto(state, "tri");
  assert_int_equal(ts_find_alloc1(pair, 0)[0], BC_ALLOC2_RET);   // and returned at once
  assert_int_equal(ts_find_alloc1(rec, 0)[0], BC_ALLOC1);
  assert_int_equal(ts_find_alloc1(tri, 0)[0], BC_ALLOC1);
  const Proto *small = ts_proto(state, "small");
  assert_non_null(ts_find_op(small, BC_JNLTI, 0));
  assert_non_null(ts_find_op(small, BC_JNGEI, 0));
  assert_null(ts_find_op(small, BC_JNLT, 0));
  const uint32_t *ret = ts_find_op(small, BC_RET, 0);
  assert_non_null(ret);
  assert_int_equal(ret[1], 1);   // n's own register
  const uint32_t *reti = ts_find_op(small, BC_RETI, 0);
  assert_non_null(reti);
  assert_int_equal((int32_t)reti[1], 1);
  assert_non_null(ts_find_op(small, BC_RETK, 0));   // nil
  // pair: the value of t is returned from t's register.
  assert_int_equal(ts_find_op(pair, BC_RET, 0)[1], ts_find_alloc1(pair, 0)[1]);
}

// --- calls: the forms by argc and what the link checks ------------------------------

// The first call instruction of the function `name`.
static const uint32_t *first_call(void **state, const char *name) {
  const Proto *p = ts_proto(state, name);
  for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc))
    if (ts_is_call(pc[0])) return pc;
  fail_msg("%s has no call", name);
  return NULL;
}

// A closure call of up to three arguments compiles to its form (CALL0 ..
// CALL3), a top-level fn's call to CALLG; the link turns a CALLG into
// CALLG<argc> when its global holds a fn of that arity whose frame fits the
// headroom, and leaves a wrong arity, four arguments or a big frame to
// CALLG, which checks when it runs. The names follow bytecode_is_call.
static void test_link_gives_calls_their_forms(void **state) {
  for (uint32_t op = 0; op < OPCODE_COUNT; op++) assert_int_equal(ts_is_call(op), bytecode_is_call(op));
  char big[16384];
  int n = snprintf(big, sizeof big, "fn big(x) {\n");
  for (int i = 0; i < VM_CALL_HEADROOM; i++) n += snprintf(big + n, sizeof big - (size_t)n, "  let v%d = x + %d\n", i, i);
  snprintf(big + n, sizeof big - (size_t)n,
           "  v0 + v%d\n}\n"
           "fn one(x) { x }\n"
           "fn four(a, b, c, d) { a }\n"
           "fn calls_one() { one(1) }\n"
           "fn calls_four() { four(1, 2, 3, 4) }\n"
           "fn calls_big() { big(1) }\n"
           "fn calls_wrong() { one(1, 2) }\n"
           "let f = one\n"
           "fn calls_closure() { f(2) }\n"
           "fn calls_closure4() { f(1, 2, 3, 4) }\n",
           VM_CALL_HEADROOM - 1);
  Vm *vm = ts_vm(state);
  ts_compile(state, big);
  assert_true(ts_proto(state, "big")->fsize + 1 > VM_CALL_HEADROOM);
  assert_int_equal(first_call(state, "calls_one")[0], BC_CALLG);   // not linked yet
  image_link_calls(vm);
  assert_int_equal(first_call(state, "calls_one")[0], BC_CALLG1);
  assert_int_equal(first_call(state, "calls_four")[0], BC_CALLG);
  assert_int_equal(first_call(state, "calls_big")[0], BC_CALLG);
  assert_int_equal(first_call(state, "calls_wrong")[0], BC_CALLG);
  assert_int_equal(first_call(state, "calls_closure")[0], BC_CALL1);
  assert_int_equal(first_call(state, "calls_closure4")[0], BC_CALL);
  const CallTarget *t = &vm->fn_targets[ts_proto(state, "big")->id];
  assert_int_equal(t->nparams, 1);
  assert_int_equal(t->fast_nparams, UINT32_MAX);   // its frame does not fit the headroom
  t = &vm->fn_targets[ts_proto(state, "one")->id];
  assert_int_equal(t->fast_nparams, 1);
}

// The fused forms (compiler.c part 5, image_link_calls): each where its two
// instructions meet, the second kept in place after it, and nowhere else.
static void test_fused_forms(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state,
             "fn one(x) { x }\n"
             "fn sum(a, b) { a + b }\n"
             "fn step(x) { x + 3 }\n"
             "fn sum_kept(a, b) { let s = a + b; one(s); s }\n"
             "fn down(n) { one(n - 1) }\n"
             "fn up(n) { one(n + 1) }\n"
             "fn down_two(n) { sum(n - 1, n) }\n"
             "fn len(l) { match l { [] => 0, _ :: rest => 1 + len(rest) } }\n"
             "fn rest_first(l) { match l { x :: rest => x, [] => 0 } }\n"
             "fn leaf() { (nil, nil) }\n"
             "fn joined(c) { var a = nil; if c { a = 1 }; let b = [] ; (a, b) }\n"
             "fn is_nil(x) { x == nil }\n"
             "fn count(t) { let (l, r) = t; if l == nil { 1 } else { count(l) + count(r) } }\n"
             "fn count_r(t) { let (l, r) = t; if r == nil { 1 } else { count_r(r) } }\n"
             "fn is_big(x) { x == 1073741824 }\n");
  image_link_calls(vm);
  const uint32_t *pc = ts_find_op(ts_proto(state, "sum"), BC_ADD_RET, 0);
  assert_non_null(pc);
  assert_int_equal(pc[4], BC_RET);   // kept for the slow path
  assert_int_equal(pc[5], pc[1]);
  assert_null(ts_find_op(ts_proto(state, "sum_kept"), BC_ADD_RET, 0));   // no RET after it
  assert_non_null(ts_find_op(ts_proto(state, "step"), BC_ADDI_RET, 0));
  pc = ts_find_op(ts_proto(state, "down"), BC_SUBI_CALLG1, 0);
  assert_non_null(pc);
  assert_int_equal(pc[4], BC_CALLG1);
  assert_non_null(ts_find_op(ts_proto(state, "up"), BC_ADDI_CALLG1, 0));
  assert_null(ts_find_op(ts_proto(state, "down_two"), BC_SUBI_CALLG1, 0));   // a CALLG2 follows
  assert_non_null(ts_find_op(ts_proto(state, "down_two"), BC_SUBI, 0));
  pc = ts_find_op(ts_proto(state, "len"), BC_TESTEMPTY_UNCONS, 0);
  assert_non_null(pc);
  const uint32_t *target = pc + (int32_t)pc[2];
  assert_int_equal(target[0], BC_UNCONS);
  assert_int_equal(target[1], pc[1]);
  assert_null(ts_find_op(ts_proto(state, "rest_first"), BC_TESTEMPTY_UNCONS, 0));   // x :: rest first
  pc = ts_find_op(ts_proto(state, "leaf"), BC_LOADK2, 0);
  assert_non_null(pc);
  assert_int_equal(pc[3], BC_LOADK);   // the second LOADK, kept
  assert_int_equal(bytecode_length(pc), 6);
  assert_int_equal(pc[6], BC_ALLOC2_RET);
  // A LOADK that a jump lands on is not paired with the one before it.
  const Proto *joined = ts_proto(state, "joined");
  for (const uint32_t *q = joined->code; q < joined->code + joined->code_len; q += bytecode_length(q))
    if (q[0] == BC_LOADK2) {
      uint32_t second = (uint32_t)(q + 3 - joined->code);
      for (const uint32_t *j = joined->code; j < joined->code + joined->code_len; j += bytecode_length(j)) {
        uint32_t w = bytecode_jump_word((Opcode)j[0]);
        if (w) assert_int_not_equal((uint32_t)((int64_t)(j - joined->code) + (int32_t)j[w]), second);
      }
    }
  pc = ts_find_op(ts_proto(state, "count"), BC_UNPAIR_JNEQK, 0);
  assert_non_null(pc);
  assert_int_equal(pc[5], BC_JNEQK);
  assert_int_equal(pc[6], pc[2]);
  assert_null(ts_find_op(ts_proto(state, "count_r"), BC_UNPAIR_JNEQK, 0));   // the second field tested
  pc = ts_find_op(ts_proto(state, "is_nil"), BC_EQK, 0);
  assert_non_null(pc);
  assert_true((Value)(int64_t)(int32_t)pc[3] == VAL_NIL);   // the immediate itself
  assert_null(ts_find_op(ts_proto(state, "is_big"), BC_EQK, 0));   // 2^30 does not fit the word
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_loops_and_pair_patterns, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_every_safe_point_has_a_descriptor, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_live_slots_are_written_on_every_path, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_let_pattern_failure_lists_only_written_slots, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_match_guard_lists_only_written_slots, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_let_tuple_then_cons_is_one_allocation, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_combined_allocation_runs, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_list_literal_is_one_allocation, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_nested_literals_combine, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_no_merge_across_a_join, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_allocn2_only_for_two_pairs, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_combining_limits, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_debug_entry_spanning_two_lines, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_dump_shows_combined_and_call_descriptors, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_link_gives_calls_their_forms, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_short_forms, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_fused_forms, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
