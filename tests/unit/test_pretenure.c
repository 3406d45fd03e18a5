// test_pretenure.c - cmocka tests of pretenuring's switch (memprof/pretenure.c,
// the ALLOC*_OLD forms in lang/runtime/interp.c, gc_alloc_pretenured): an
// allocation site switches by its opcode alone (ALLOC1, and a combined
// allocation only once every sub-block's site is decided), the blocks it
// then makes are old, whole and counted in pretenured_words, also across
// major collections in the middle of a combined allocation; a POLL over the
// instruction keeps the switch; sites other than allocation instructions are
// refused; the online feedback switches a long-lived site and leaves a
// short-lived one, probes it without undoing it, undoes the switch when the
// site's blocks start dying young, and stopping it switches every site back.
// The rule's statistics are test_pretenure_rule.c's.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/bytecode.h"
#include "../../core/frames.h"
#include "../../core/image.h"
#include "../../gc/gc.h"
#include "../../lang/front/compiler.h"
#include "../../lang/runtime/interp.h"
#include "../../memprof/pretenure.h"
#include "test_support.h"

// The offline decision for the site of sub-block `sub` of the instruction at pc.
static bool decide(Vm *vm, const uint32_t *pc, uint32_t sub) {
  const FrameDesc *d = frames_find(vm->frames, pc);
  assert_non_null(d);
  assert_true(sub < d->debug_count);
  PretenureDecision dec = {.old = true, .site = d->debug[sub], .blocks = 100, .count = 100, .bound = 0.95,
                           .threshold = 0.85, .offline = true};
  return pretenure_decide_offline(vm, &dec);
}

static void run_checked(void **state, const char *want) {
  Vm *vm = ts_vm(state);
  assert_string_equal(ts_run_entry(state, vm->entry_proto), want);
  assert_true(gc_verify(vm));
}

static const char *const list_src =
    "fn mk(i) { (i, i + 1) }\n"
    "var acc = []\n"
    "for i in 0..40000 { acc = mk(i) :: acc }\n"
    "var s = 0\n"
    "for p in acc { let (a, b) = p; s = s + a + b }\n"
    "println(s)\n";

// ALLOC2_RET (a pair returned at once: ALLOC1's layout) switched before the
// run: every block it makes is old, whole, counted, and still returned.
static void test_alloc1_switched(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state, list_src);
  const uint32_t *pc = ts_find_op(ts_proto(state, "mk"), BC_ALLOC2_RET, 0);
  assert_non_null(pc);
  assert_true(decide(vm, pc, 0));
  assert_int_equal(pc[0], BC_ALLOC1_OLD);
  assert_int_equal(pretenure_sites_old(vm), 1);
  run_checked(state, "1600000000\n");
  assert_true(vm->gc.stats.pretenured_words == 40000 * 3);   // mk's 40,000 pairs of 2 fields
}

// A combined allocation (tuple and cons: ALLOCN2) switches only once both
// of its sub-blocks' sites are decided; then both are made old, in many
// major cycles (the sub-blocks already made must survive a major collection
// run by the next one's allocation), each field's young value remembered.
static void test_allocn_switched_whole(void **state) {
  Vm *vm = ts_vm(state);
  const char *src =
      "var acc = []\n"
      "for i in 0..300000 { acc = (i, [i]) :: acc }\n"
      "var s = 0\n"
      "for p in acc { let (a, b) = p; s = s + a + List.length(b) }\n"
      "println(s)\n";
  ts_compile(state, src);
  const uint32_t *pc = ts_find_allocn(ts_proto(state, "<top>"), 0);
  assert_non_null(pc);
  uint32_t young_op = pc[0];
  const FrameDesc *d = frames_find(vm->frames, pc);
  assert_true(d->debug_count >= 2);
  for (uint32_t s = 0; s + 1 < d->debug_count; s++) {
    assert_true(decide(vm, pc, s));
    assert_int_equal(pc[0], young_op);   // not yet: a sub-block's site is undecided
  }
  assert_true(decide(vm, pc, d->debug_count - 1));
  assert_int_equal(pc[0], bytecode_old_form(young_op));
  vm->options.gc_verify = true;
  run_checked(state, "45000150000\n");
  assert_true(vm->gc.stats.major_collections >= 2);
  assert_true(vm->gc.stats.pretenured_words > 0);
}

// A POLL written over the instruction (core/pending.c) keeps the switch: the
// opcode it saved is the one rewritten, and the POLL stays.
static void test_switch_under_poll(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state, list_src);
  uint32_t *pc = (uint32_t *)ts_find_op(ts_proto(state, "mk"), BC_ALLOC2_RET, 0);
  assert_non_null(pc);
  vm->poll_at = pc;
  vm->poll_saved_op = pc[0];
  pc[0] = BC_POLL;
  assert_int_equal(vm_opcode_at(vm, pc), BC_ALLOC2_RET);
  assert_true(decide(vm, pc, 0));
  assert_int_equal(pc[0], BC_POLL);
  assert_int_equal(vm->poll_saved_op, BC_ALLOC1_OLD);
  vm_cancel_poll(vm);
  assert_int_equal(pc[0], BC_ALLOC1_OLD);
}

// The site of anything but ALLOC1, ALLOCN, ALLOCN2 is not switched.
static void test_other_sites_refused(void **state) {
  Vm *vm = ts_vm(state);
  ts_compile(state, "fn f(s) { s ++ \"x\" }\nprintln(String.length(f(\"ab\")))\nprintln(Array.make(300, 0))\n");
  const Proto *p = ts_proto(state, "f");
  const uint32_t *concat = ts_find_op(p, BC_CONCAT, 0);
  assert_non_null(concat);
  assert_false(decide(vm, concat, 0));
  assert_int_equal(concat[0], BC_CONCAT);
  assert_int_equal(pretenure_sites_old(vm), 0);
}

// The online feedback at rate 1 (every block sampled): the sites whose
// blocks are kept switch (keep's pair and the list's cons cell), the one
// whose blocks die does not; the probes (one every 64 sampled births old)
// undo neither, and leave them old (young only while a probe runs, which
// may be the case at the end); stopping switches them back. The test VM's
// minor heap is 4,096 words.
static void test_feedback_switches(void **state) {
  Vm *vm = ts_vm(state);
  const char *src =
      "fn keep(i) { (i, i) }\n"
      "fn drop(i) { (i, i, i) }\n"
      "var acc = []\n"
      "var s = 0\n"
      "for i in 0..50000 { acc = keep(i) :: acc; let (a, _, _) = drop(i); s = s + a }\n"
      "println(s)\n";
  ts_compile(state, src);
  char err[128];
  assert_true(pretenure_start(vm, 1.0, false, err, sizeof err));
  run_checked(state, "1249975000\n");
  const uint32_t *kept = ts_find_op(ts_proto(state, "keep"), BC_ALLOC1_OLD, 0);
  if (!kept) kept = ts_find_op(ts_proto(state, "keep"), BC_ALLOC2_RET, 0);   // in a probe: the opcode it replaced
  const uint32_t *dropped = ts_find_op(ts_proto(state, "drop"), BC_ALLOC1, 0);
  const uint32_t *cons = ts_find_op(ts_proto(state, "<top>"), BC_ALLOC1_OLD, 0);
  if (!cons) cons = ts_find_op(ts_proto(state, "<top>"), BC_ALLOC1, 0);
  assert_non_null(kept);
  assert_non_null(dropped);
  assert_non_null(cons);
  assert_int_equal(pretenure_sites_old(vm), 2);
  assert_int_equal(pretenure_decisions(vm), 2);   // two switches, no undo
  assert_true(pretenure_probes(vm) >= 100);
  assert_true(vm->gc.stats.pretenured_words > 0);
  assert_true(pretenure_stop(vm));
  assert_int_equal(kept[0], BC_ALLOC2_RET);   // fused again, not ALLOC1_OLD's plain young form
  assert_int_equal(cons[0], BC_ALLOC2);   // the cons of two registers, as compiled
  assert_int_equal(pretenure_sites_old(vm), 0);
  assert_false(pretenure_running(vm));
}

// A site pretenured while its blocks are kept goes back to the minor heap
// once they die young (a probe sees it): two decisions, young at the end.
static void test_feedback_undoes(void **state) {
  Vm *vm = ts_vm(state);
  const char *src =
      "fn entry(i) { (i, i) }\n"
      "let n = 100000\n"
      "let table = Array.make(n, nil)\n"
      "for i in 0..n { table[i] = entry(i) }\n"
      "var s = 0\n"
      "for r in 0..30 { for i in 0..n { let (a, _) = entry(i); let (_, b) = table[i]; s = s + a - b } }\n"
      "println(s)\n";
  ts_compile(state, src);
  char err[128];
  assert_true(pretenure_start(vm, 1e-2, false, err, sizeof err));
  run_checked(state, "0\n");
  assert_int_equal(pretenure_decisions(vm), 2);
  assert_int_equal(pretenure_sites_old(vm), 0);
  // Undone to the opcode it replaced: the fused pair-and-return.
  assert_non_null(ts_find_op(ts_proto(state, "entry"), BC_ALLOC2_RET, 0));
  assert_null(ts_find_op(ts_proto(state, "entry"), BC_ALLOC1, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_alloc1_switched, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_allocn_switched_whole, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_switch_under_poll, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_other_sites_refused, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_feedback_switches, ts_setup, ts_teardown),
      cmocka_unit_test_setup_teardown(test_feedback_undoes, ts_setup, ts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
