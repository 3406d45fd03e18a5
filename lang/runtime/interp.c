// interp.c - the dispatch loop, calls and returns, allocation instructions,
// memprof polls, exceptions, and entering Minnow code from C (interp_call).
//
// 1. The loop keeps pc, base and the return stack's top in locals and writes
//    them to vm->pc/vm->base/vm->ret_sp (SAVE) before anything that may
//    collect, raise or walk the stack: the walker starts from there.
// 2. Allocation fast path (ALLOC1; ALLOC2 the same with the size and fields
//    known by the opcode), the whole cost of an unsampled minor
//    allocation beyond filling the block:
//        p = vm->young_ptr - whsize        load, subtract
//        if (p < vm->young_limit) slow     load, compare, branch
//        vm->young_ptr = p                 store
//        p[0] = header                     store (part of filling)
//    Sampling needs no test here: memprof lowers young_limit to its trigger.
// 3. After an allocation took the slow path, queued memprof callbacks run
//    (the block is complete and held as a C root); then the destination
//    register is written. Other instructions that allocate get their
//    callbacks through a poll ("Polls" below). Callbacks never run inside the
//    allocation or a collection.
// 4. Exceptions: vm_raise longjmps to the innermost interpreter level, which
//    resumes at the top handler if that handler belongs to the level, and
//    otherwise returns `false` to the C code that entered the level.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/bytecode.h"
#include "../../core/frames.h"
#include "backtrace.h"
#include "../../core/image.h"
#include "interp.h"
#include "ops.h"
#include "shapes.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../../memprof/memprof.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

// Fuzz builds (MINNOW_FUZZ, tests/fuzz/) bound the steps a program takes:
// every jump back and every call burns one unit of vm->fuel (when it was
// set: 0 means no budget), and the run ends through vm_exit(VM_EXIT_FUEL)
// when it is spent, so that an input that never ends costs bounded time.
// Other builds compile none of it.
#ifndef MINNOW_FUZZ
#define MINNOW_FUZZ 0
#endif
static const bool FUZZ_FUEL = MINNOW_FUZZ;

static inline void burn_fuel(Vm *vm) {
  if (vm->fuel && unlikely(--vm->fuel == 0)) vm_exit(vm, VM_EXIT_FUEL);   // 0: no budget
}

// =====================================================================
// Out-of-line pieces of instructions
// =====================================================================


static inline const Proto *closure_proto(const Vm *vm, Value clos) {
  return vm->protos[val_to_int(val_field(clos, 0))];
}

// =====================================================================
// Polls
// =====================================================================
// memprof callbacks run at the next safe point after the instruction that
// queued them, once it is complete. Allocation instructions deliver them at
// the end of their slow path (the only path that can queue any), so their
// fast paths test nothing. Every other instruction that may allocate (a
// primitive call, ++, a closure, float arithmetic) would otherwise test a
// flag after every execution; instead, when memprof queues callbacks during
// one of them, vm_request_poll writes POLL over the opcode of the next
// instruction (these all fall through to it). POLL restores the opcode,
// delivers the callbacks as if at the end of the queuing instruction (its
// pc, its result register held as a root) and dispatches the restored
// instruction. An exception leaving the instruction cancels the poll; memprof
// then delivers at the next interpreter allocation (young_limit is raised
// to young_end for it; C allocations keep young_limit_c).

// POLL ran at `pc` in the frame at `base`.
static void run_poll(Vm *vm, Value *base) {
  const uint32_t *origin = vm->poll_origin;
  vm_cancel_poll(vm);
  vm->pc = origin;
  vm->base = base;
  vm_push_root(vm, &base[bytecode_poll_result(origin)]);
  memprof_run_callbacks(vm);
  vm_pop_roots(vm, 1);
}

// Runs queued memprof callbacks with `v` held as a root; returns v (moved).
static Value after_alloc(Vm *vm, Value v) {
  if (!MEMPROF_BUILT || likely(!vm->memprof_pending)) return v;
  vm_push_root(vm, &v);
  memprof_run_callbacks(vm);
  vm_pop_roots(vm, 1);
  return v;
}

static inline void fill_fields(Value *fields, const uint32_t *src, uint32_t n, const Value *base) {
  if (n == 2) {   // pairs and cons cells
    fields[0] = base[src[0]];
    fields[1] = base[src[1]];
    return;
  }
  for (uint32_t i = 0; i < n; i++) fields[i] = base[src[i]];
}

// Fills the block `v` that the ALLOC1 (or ALLOC1_OLD, ALLOCBIG) at pc
// allocated off its fast path, runs queued callbacks and writes its
// register. Returns the next pc.
static inline const uint32_t *alloc1_finish(Vm *vm, const uint32_t *pc, Value *base, Value v) {
  uint32_t n = pc[3];
  const uint32_t *src = pc + 4;
  Value *f = val_fields(v);
  if (hd_tag(pc[2]) == TAG_RECORD) *f++ = val_of_int(*src++);
  if (vm_is_young(vm, v)) {
    fill_fields(f, src, n, base);
  } else {
    for (uint32_t i = 0; i < n; i++) gc_init_field(vm, v, (uint64_t)(f - val_fields(v)) + i, base[src[i]]);
  }
  base[pc[1]] = after_alloc(vm, v);
  return src + n;
}

// ALLOC1 when the fast path failed: heap full, memprof trigger, large block,
// or the Boehm build.
static const uint32_t *alloc1_slow(Vm *vm, const uint32_t *pc, Value *base) {
  return alloc1_finish(vm, pc, base, gc_alloc(vm, hd_wosize(pc[2]), hd_tag(pc[2])));
}

// ALLOC1_OLD: an ALLOC1 whose site pretenuring switched to the major heap.
// Out of line, as allocn_old: inlined, they cost the dispatch loop's other
// instructions registers (7 % more instructions on binary_trees).
static __attribute__((noinline)) const uint32_t *alloc1_old(Vm *vm, const uint32_t *pc, Value *base) {
  return alloc1_finish(vm, pc, base, gc_alloc_pretenured(vm, hd_wosize(pc[2]), hd_tag(pc[2]), 0));
}

// An ALLOCN field operand: a register, or (bit 31 set) an earlier sub-block.
static inline Value allocn_operand(uint32_t x, const Value *subs, const Value *base) {
  return ((x & OPERAND_SUBBLOCK) ? subs : base)[x & ~OPERAND_SUBBLOCK];
}

// Layout of an ALLOCN: see bytecode.h. Fills the sub-blocks whose headers
// start at `top` going down (sub-block 0 highest), then, after callbacks,
// writes their registers. `separately`: each sub-block is its own allocation
// (Boehm build). `slow`: the allocation took the slow path, the only one that
// can queue memprof callbacks (a sample or a collection), so the only one that
// looks for them.
// Always inlined into the two callers below, so that each is compiled for its
// constant `separately` and `slow`: the fast path carries no test for either.
static inline __attribute__((always_inline)) const uint32_t *allocn(Vm *vm, const uint32_t *pc, Value *base,
                                                                   Value *top, bool separately, bool slow) {
  uint32_t nsub = pc[2];
  Value subs[ALLOCN_MAX_SUBBLOCKS];
  uint32_t dsts[ALLOCN_MAX_SUBBLOCKS];
  const uint32_t *sub = pc + 3;
  Value *cur = top;
  for (uint32_t i = 0; i < nsub; i++) {
    Header hd = sub[1];
    uint32_t n = sub[2];
    uint64_t wosize = hd_wosize(hd);
    const uint32_t *src = sub + 3;
    if (separately) {
      subs[i] = gc_alloc(vm, wosize, hd_tag(hd));
    } else {
      cur -= wosize + 1;
      cur[0] = hd;
      subs[i] = val_of_ptr(cur + 1);
    }
    Value *f = val_fields(subs[i]);
    if (hd_tag(hd) == TAG_RECORD) *f++ = val_of_int(*src++);
    for (uint32_t j = 0; j < n; j++) f[j] = allocn_operand(src[j], subs, base);
    dsts[i] = sub[0];
    sub = src + n;
  }
  if (MEMPROF_BUILT && slow && unlikely(vm->memprof_pending)) {
    for (uint32_t i = 0; i < nsub; i++) vm_push_root(vm, &subs[i]);
    memprof_run_callbacks(vm);
    vm_pop_roots(vm, nsub);
  }
  for (uint32_t i = 0; i < nsub; i++)
    if (dsts[i] != OPERAND_NONE) base[dsts[i]] = subs[i];
  return sub;
}

// A combined allocation whose block fitted below young_ptr (already moved).
// No callback can be queued on this path, so each sub-block's register is
// written as soon as the sub-block is filled: the compiler turned every read
// of an earlier sub-block's register into a sub-block operand, so this is the
// order of the allocations it combined.
static __attribute__((noinline)) const uint32_t *allocn_fast(const uint32_t *pc, Value *base, Value *top) {
  uint32_t nsub = pc[2];
  Value subs[ALLOCN_MAX_SUBBLOCKS];
  const uint32_t *sub = pc + 3;
  Value *cur = top;
  Value *out = subs;
  do {
    Header hd = sub[1];
    uint32_t n = sub[2];
    cur -= hd_wosize(hd) + 1;
    cur[0] = hd;
    Value *f = cur + 1;
    const uint32_t *src = sub + 3;
    if (unlikely(hd_tag(hd) == TAG_RECORD)) *f++ = val_of_int(*src++);
    if (likely(n == 2)) {   // pairs and cons cells, unrolled: 9 % fewer Ir on lists of pairs
      f[0] = allocn_operand(src[0], subs, base);
      f[1] = allocn_operand(src[1], subs, base);
    } else {
      for (uint32_t j = 0; j < n; j++) f[j] = allocn_operand(src[j], subs, base);
    }
    Value v = val_of_ptr(cur + 1);
    *out++ = v;
    if (sub[0] != OPERAND_NONE) base[sub[0]] = v;
    sub = src + n;
  } while (--nsub);
  return sub;
}

static const uint32_t *allocn_slow(Vm *vm, const uint32_t *pc, Value *base) {
  if (GC_IS_BOEHM) return allocn(vm, pc, base, NULL, true, true);
  uint32_t total = pc[1], nsub = pc[2];
  uint32_t whs[ALLOCN_MAX_SUBBLOCKS];
  const uint32_t *sub = pc + 3;
  for (uint32_t i = 0; i < nsub; i++) {
    whs[i] = (uint32_t)hd_wosize(sub[1]) + 1;
    sub += 3 + (hd_tag(sub[1]) == TAG_RECORD) + sub[2];
  }
  Value *p = gc_young_slow(vm, total, whs, nsub);
  vm->young_ptr = p;
  return allocn(vm, pc, base, p + total, false, true);
}

// ALLOCN_OLD and ALLOCN2_OLD: a combined allocation whose site pretenuring
// switched to the major heap. Each sub-block is a major block of its own
// (gc_alloc_pretenured, sampled as its sub-block), filled through the
// barrier as soon as it is allocated; the sub-blocks already made are C
// roots while the next one is allocated (a major collection may run, and
// nothing else reaches them yet), and operands are read from the frame after
// each allocation (a minor collection moves what they point to).
static __attribute__((noinline)) const uint32_t *allocn_old(Vm *vm, const uint32_t *pc, Value *base) {
  uint32_t nsub = pc[2];
  Value subs[ALLOCN_MAX_SUBBLOCKS];
  uint32_t dsts[ALLOCN_MAX_SUBBLOCKS];
  for (uint32_t i = 0; i < nsub; i++) {
    subs[i] = VAL_NIL;
    vm_push_root(vm, &subs[i]);
  }
  const uint32_t *sub = pc + 3;
  for (uint32_t i = 0; i < nsub; i++) {
    Header hd = sub[1];
    uint32_t n = sub[2];
    const uint32_t *src = sub + 3;
    Value v = gc_alloc_pretenured(vm, hd_wosize(hd), hd_tag(hd), i);
    uint64_t k = 0;
    if (hd_tag(hd) == TAG_RECORD) gc_init_field(vm, v, k++, val_of_int(*src++));
    for (uint32_t j = 0; j < n; j++) gc_init_field(vm, v, k + j, allocn_operand(src[j], subs, base));
    subs[i] = v;
    dsts[i] = sub[0];
    sub = src + n;
  }
  if (MEMPROF_BUILT && unlikely(vm->memprof_pending)) memprof_run_callbacks(vm);
  vm_pop_roots(vm, nsub);
  for (uint32_t i = 0; i < nsub; i++)
    if (dsts[i] != OPERAND_NONE) base[dsts[i]] = subs[i];
  return sub;
}

static const uint32_t *make_closure(Vm *vm, const uint32_t *pc, Value *base) {
  uint32_t ncap = pc[3];
  Value c = gc_alloc(vm, 1 + (uint64_t)ncap, TAG_CLOSURE);
  Value *f = val_fields(c);
  f[0] = val_of_int(pc[2]);
  for (uint32_t i = 0; i < ncap; i++) {
    uint32_t r = pc[4 + i];
    Value v = r == OPERAND_SELF ? c : base[r];
    if (vm_is_young(vm, c)) f[1 + i] = v;
    else gc_init_field(vm, c, 1 + i, v);
  }
  base[pc[1]] = c;
  return pc + 4 + ncap;
}

static Value box_float(Vm *vm, double d) {
  Value v = gc_alloc(vm, 1, TAG_FLOAT);
  memcpy(val_fields(v), &d, sizeof d);
  return v;
}

static const char *const op_symbol[] = {
    [BC_ADD] = "+", [BC_SUB] = "-", [BC_MUL] = "*", [BC_DIV] = "/", [BC_MOD] = "%",
};

static Value int_arith(Vm *vm, Opcode op, int64_t x, int64_t y) {
  switch (op) {
    case BC_MUL: return val_of_int((int64_t)((uint64_t)x * (uint64_t)y));
    case BC_DIV:
      if (y == 0) gc_raise_error(vm, "division by zero");
      return val_of_int(y == -1 ? (int64_t)(0 - (uint64_t)x) : x / y);
    case BC_MOD:
      if (y == 0) gc_raise_error(vm, "division by zero");
      return val_of_int(y == -1 ? 0 : x % y);
    default: return VAL_NIL;
  }
}

static Value arith_slow(Vm *vm, Opcode op, Value a, Value b) {
  if (val_is_int(a) && val_is_int(b)) return int_arith(vm, op, val_to_int(a), val_to_int(b));
  if (val_has_tag(a, TAG_FLOAT) && val_has_tag(b, TAG_FLOAT)) {
    double x = float_of_val(a), y = float_of_val(b), r;
    switch (op) {
      case BC_ADD: r = x + y; break;
      case BC_SUB: r = x - y; break;
      case BC_MUL: r = x * y; break;
      case BC_DIV: r = x / y; break;
      default: r = fmod(x, y); break;
    }
    return box_float(vm, r);
  }
  gc_raise_error(vm, "type error: cannot apply %s to %s and %s", op_symbol[op], ops_type_name(a),
                 ops_type_name(b));
}

static Value negate_slow(Vm *vm, Value a) {
  if (val_has_tag(a, TAG_FLOAT)) return box_float(vm, -float_of_val(a));
  gc_raise_error(vm, "type error: cannot apply - to %s", ops_type_name(a));
}

static bool truth(Vm *vm, Value v) {
  if (v == VAL_TRUE) return true;
  if (v == VAL_FALSE) return false;
  gc_raise_error(vm, "type error: condition must be a bool, got %s", ops_type_name(v));
}

static int64_t index_of(Vm *vm, Value a, Value i) {
  if (!val_has_tag(a, TAG_ARRAY)) {
    if (a == vm->empty_array) gc_raise_error(vm, "index out of bounds: %lld (length 0)", (long long)val_to_int(i));
    gc_raise_error(vm, "type error: cannot index %s", ops_type_name(a));
  }
  if (!val_is_int(i)) gc_raise_error(vm, "type error: index must be an int, got %s", ops_type_name(i));
  int64_t k = val_to_int(i);
  uint64_t len = val_wosize(a);
  if (k < 0 || (uint64_t)k >= len) gc_raise_error(vm, "index out of bounds: %lld (length %llu)", (long long)k, (unsigned long long)len);
  return k;
}

// Field lookup with the instruction's inline cache (pc[cache], pc[cache+1]).
static uint64_t field_index(Vm *vm, uint32_t *cache, Value r, uint32_t symbol) {
  if (!val_has_tag(r, TAG_RECORD))
    gc_raise_error(vm, "type error: cannot get field %s of %s", shapes_symbol_name(vm->shapes, symbol), ops_type_name(r));
  uint32_t shape = (uint32_t)val_to_int(val_field(r, 0));
  if (cache[0] == shape) return cache[1];
  int i = shapes_find(vm->shapes, shape, symbol);
  if (i < 0) gc_raise_error(vm, "unknown field: %s", shapes_symbol_name(vm->shapes, symbol));
  cache[0] = shape;
  cache[1] = (uint32_t)i + 1;
  return cache[1];
}

static bool test_field(Vm *vm, Value r, uint32_t symbol, Value *out) {
  if (!val_has_tag(r, TAG_RECORD)) return false;
  int i = shapes_find(vm->shapes, (uint32_t)val_to_int(val_field(r, 0)), symbol);
  if (i < 0) return false;
  *out = val_field(r, (uint64_t)i + 1);
  return true;
}

// ITERLOOP: the next element of the list or array in *coll, or false.
static bool iter_next(Vm *vm, Value *coll, Value *idx, Value *x) {
  Value c = *coll;
  if (val_has_tag(c, TAG_CONS)) {
    *x = val_field(c, 0);
    *coll = val_field(c, 1);
    return true;
  }
  if (c == VAL_EMPTY) return false;
  if (val_has_tag(c, TAG_ARRAY) || c == vm->empty_array) {
    int64_t i = val_to_int(*idx);
    if ((uint64_t)i >= val_wosize(c)) return false;
    *x = val_field(c, (uint64_t)i);
    *idx = val_of_int(i + 1);
    return true;
  }
  gc_raise_error(vm, "type error: cannot iterate over %s", ops_type_name(c));
}

static void push_handler(Vm *vm, const uint32_t *handler_pc, Value *base, const uint32_t **ret_sp, uint32_t reg) {
  if (vm->handler_count == vm->handler_cap) {
    vm->handler_cap = vm->handler_cap ? vm->handler_cap * 2 : 64;
    vm->handlers = realloc(vm->handlers, vm->handler_cap * sizeof(Handler));
    if (!vm->handlers) vm_raise_out_of_memory(vm);
  }
  vm->handlers[vm->handler_count++] = (Handler){base, ret_sp, handler_pc, reg, vm->level};
}

// =====================================================================
// Calls
// =====================================================================
// The calls read the callee's code, arity and frame size from a CallTarget
// (core/image.h), so that the path to the callee's first instruction is
// short: CALL loads the closure's proto id and fn_targets[id]; CALLG loads
// global_targets[g] and never the closure's proto.
// Most calls take a form by argc (bytecode.h), whose fast path is the whole
// cost of a call beyond copying the arguments:
//   CALLG<n>: the link checked the target (a fn of n parameters whose frame
//             fits VM_CALL_HEADROOM): load the target, compare the new base
//             with stack_limit, push the return address, store the closure
//             (the target's: static) and the arguments, jump.
//   CALL<n>:  the same after two tests of the closure: its tag, and its
//             target's fast_nparams == n (arity and frame size in one).
// CALL and CALLG are the general forms, and where the forms go when their
// test fails: they find out what is wrong (an arity or type error) or check
// the stack against the callee's own frame size. A generic CALLG's target is
// unresolved (nparams UINT32_MAX) until its first run finds the global
// holding its closure.

// The frame of a CALL/CALLG at pc (layout: frames.h part 1): the return
// address is the CALL's last word, which holds the caller's frame step in
// bytes (frames.h part 2), pushed on the return stack (*ret_sp); the
// arguments are copied from their registers.
static inline Value *push_frame(Vm *vm, const uint32_t *pc, Value *base, const uint32_t ***ret_sp, Value f,
                                uint32_t fsize) {
  uint32_t argc = pc[2];
  const uint32_t *ret = pc + 5 + argc;
  Value *nb = (Value *)((char *)base + ret[0]);
  if (unlikely(nb + fsize + 1 >= vm->stack_end)) {
    vm->pc = pc;
    vm->base = base;
    vm->ret_sp = *ret_sp;
    interp_raise_stack_overflow(vm);
  }
  *(*ret_sp)++ = ret;
  nb[0] = f;
  const uint32_t *args = pc + 3;
  if (likely(argc <= 2)) {
    if (argc > 0) nb[1] = base[args[0]];
    if (argc > 1) nb[2] = base[args[1]];
  } else {
    for (uint32_t i = 0; i < argc; i++) nb[1 + i] = base[args[i]];
  }
  return nb;
}

static _Noreturn void call_error(Vm *vm, Value f, uint32_t argc) {
  if (!val_has_tag(f, TAG_CLOSURE)) gc_raise_error(vm, "type error: cannot call %s", ops_type_name(f));
  const Proto *p = closure_proto(vm, f);
  gc_raise_error(vm, "arity error: %s expects %u argument%s, got %u", p->name, p->nparams,
                 p->nparams == 1 ? "" : "s", argc);
}

// CALLG at pc found global_targets[g] unresolved or of another arity: the
// global holds nil before its `fn` has run. Returns the filled target.
static const CallTarget *resolve_callg(Vm *vm, const uint32_t *pc) {
  Value f = vm->globals[pc[1]];
  uint32_t argc = pc[2];
  if (!val_has_tag(f, TAG_CLOSURE)) call_error(vm, f, argc);
  const CallTarget *t = &vm->fn_targets[val_to_int(val_field(f, 0))];
  if (argc != t->nparams) call_error(vm, f, argc);
  vm->global_targets[pc[1]] = *t;
  return t;
}

// =====================================================================
// The dispatch loop
// =====================================================================

// Runs from pc in the frame at base until EXIT_NESTED; returns the value
// handed to the trampoline.
// Compiled without cross-jumping: GCC would otherwise merge the identical
// tails of handlers (the call forms' pushes and dispatches) into one, adding a
// jump to each and sharing one indirect branch among them.
__attribute__((optimize("no-crossjumping"))) static Value interpret(Vm *vm, const uint32_t *pc, Value *base) {
  static const void *const labels[OPCODE_COUNT] = {
#define X(name, len, safe, kinds) [BC_##name] = &&op_##name,
      BYTECODE_OPS(X)
#undef X
  };
  const Primitive *prims = vm->primitives;
  const uint32_t **ret_sp = vm->ret_sp;
#define DISPATCH() goto *labels[*pc]
#define R(i) base[pc[i]]
// The immediate Value in word i (EQK, NEK, JNEQK, JNNEK: compiler.c,
// literal_constant), sign-extended.
#define KIMM(i) ((Value)(int64_t)(int32_t)pc[i])
#define SAVE() (vm->pc = pc, vm->base = base, vm->ret_sp = ret_sp)
// == without a call when an immediate decides it; the walk may raise `out
// of memory`, so the position is saved first.
#define EQUAL(a, b) ((a) == (b) || (val_is_ptr(a) && val_is_ptr(b) && (SAVE(), ops_equal(vm, a, b))))
// pc += off; in fuzz builds a jump back (the only way to loop, with calls)
// burns one step of fuel (burn_fuel).
// ALLOC2's and ALLOC2_RET's block: p, the pair's 3 words below young_ptr,
// filled from the registers; off the fast path, the whole instruction runs
// as ALLOC1 (alloc1_slow) and dispatches the next.
#define ALLOC2_FAST(p)                                                         \
  Value *p = vm->young_ptr - 3;                                                \
  if (unlikely(GC_IS_BOEHM || p < vm->young_limit)) {                          \
    SAVE();                                                                    \
    pc = alloc1_slow(vm, pc, base);                                            \
    DISPATCH();                                                                \
  }                                                                            \
  vm->young_ptr = p;                                                           \
  p[0] = pc[2];                                                                \
  p[1] = base[pc[4]];                                                          \
  p[2] = base[pc[5]]
#define JUMP(off)                                      \
  do {                                                 \
    int32_t jump_by_ = (off);                          \
    if (FUZZ_FUEL && jump_by_ <= 0) burn_fuel(vm);     \
    pc += jump_by_;                                    \
  } while (0)
  DISPATCH();

op_MOVE: R(1) = R(2); pc += 3; DISPATCH();
op_LOADK: R(1) = vm->constants[pc[2]]; pc += 3; DISPATCH();
op_LOADI: R(1) = val_of_int((int32_t)pc[2]); pc += 3; DISPATCH();
op_LOADK2: R(1) = vm->constants[pc[2]]; R(4) = vm->constants[pc[5]]; pc += 6; DISPATCH();
op_GETGLOBAL: R(1) = vm->globals[pc[2]]; pc += 3; DISPATCH();
op_SETGLOBAL: vm->globals[pc[1]] = R(2); pc += 3; DISPATCH();
op_GETUPVAL: R(1) = val_field(base[0], pc[2]); pc += 3; DISPATCH();

op_ADD: {
  Value a = R(2), b = R(3);
  if (likely(a & b & 1)) R(1) = a + b - 1;
  else { SAVE(); R(1) = arith_slow(vm, BC_ADD, a, b); }
  pc += 4; DISPATCH();
}
op_SUB: {
  Value a = R(2), b = R(3);
  if (likely(a & b & 1)) R(1) = a - b + 1;
  else { SAVE(); R(1) = arith_slow(vm, BC_SUB, a, b); }
  pc += 4; DISPATCH();
}
op_MUL: {
  Value a = R(2), b = R(3);
  // (2x+1 - 1) / 2 * (2y+1 - 1) + 1 = 2xy + 1, wrapping like int_arith.
  if (likely(a & b & 1)) R(1) = (Value)((uint64_t)((int64_t)a >> 1) * (uint64_t)(b - 1) + 1);
  else { SAVE(); R(1) = arith_slow(vm, BC_MUL, a, b); }
  pc += 4; DISPATCH();
}
op_DIV: {
  Value a = R(2), b = R(3);
  if (likely(a & b & 1) && (int64_t)b > 1) R(1) = val_of_int(val_to_int(a) / val_to_int(b));
  else { SAVE(); R(1) = arith_slow(vm, BC_DIV, a, b); }
  pc += 4; DISPATCH();
}
op_MOD: {
  Value a = R(2), b = R(3);
  if (likely(a & b & 1) && (int64_t)b > 1) R(1) = val_of_int(val_to_int(a) % val_to_int(b));
  else { SAVE(); R(1) = arith_slow(vm, BC_MOD, a, b); }
  pc += 4; DISPATCH();
}
op_CONCAT: {
  SAVE();
  R(1) = ops_concat(vm, &R(2), &R(3));
  pc += 4; DISPATCH();
}
op_NEG: {
  Value a = R(2);
  if (likely(val_is_int(a))) R(1) = val_of_int(-val_to_int(a));
  else { SAVE(); R(1) = negate_slow(vm, a); }
  pc += 3; DISPATCH();
}
op_NOT: {
  Value a = R(2);
  if (unlikely(!val_is_bool(a))) { SAVE(); gc_raise_error(vm, "type error: cannot apply ! to %s", ops_type_name(a)); }
  R(1) = a == VAL_TRUE ? VAL_FALSE : VAL_TRUE;
  pc += 3; DISPATCH();
}
op_EQ: { Value a = R(2), b = R(3); R(1) = val_of_bool(EQUAL(a, b)); pc += 4; DISPATCH(); }
op_NE: { Value a = R(2), b = R(3); R(1) = val_of_bool(!EQUAL(a, b)); pc += 4; DISPATCH(); }
#define COMPARE_OP(name, cmp)                                                  \
  op_##name: {                                                                 \
    Value a = R(2), b = R(3);                                                  \
    if (likely(a & b & 1)) R(1) = val_of_bool((int64_t)a cmp (int64_t)b);      \
    else { SAVE(); R(1) = val_of_bool(ops_compare(vm, a, b) cmp 0); }          \
    pc += 4; DISPATCH();                                                       \
  }
COMPARE_OP(LT, <)
COMPARE_OP(LE, <=)
COMPARE_OP(GT, >)
COMPARE_OP(GE, >=)
#undef COMPARE_OP

op_JMP: JUMP((int32_t)pc[1]); DISPATCH();
op_LOOP:
  if (unlikely(vm->pending_signal) && ++vm->signal_backedges >= VM_SIGNAL_BACKEDGES) { SAVE(); vm_handle_signal(vm); }
  JUMP((int32_t)pc[1]);
  DISPATCH();
op_JMPIF: {
  Value c = R(1);
  bool t = c == VAL_TRUE || (c != VAL_FALSE && (SAVE(), truth(vm, c)));
  JUMP(t ? (int32_t)pc[2] : 3);
  DISPATCH();
}
op_JMPIFNOT: {
  Value c = R(1);
  bool t = c == VAL_TRUE || (c != VAL_FALSE && (SAVE(), truth(vm, c)));
  JUMP(t ? 3 : (int32_t)pc[2]);
  DISPATCH();
}
#define COMPARE_JUMP(name, cmp)                                                \
  op_##name: {                                                                 \
    Value a = R(1), b = R(2);                                                  \
    bool holds;                                                                \
    if (likely(a & b & 1)) holds = (int64_t)a cmp (int64_t)b;                  \
    else { SAVE(); holds = ops_compare(vm, a, b) cmp 0; }                      \
    JUMP(holds ? 4 : (int32_t)pc[3]);                                          \
    DISPATCH();                                                                \
  }
COMPARE_JUMP(JNLT, <)
COMPARE_JUMP(JNLE, <=)
COMPARE_JUMP(JNGT, >)
COMPARE_JUMP(JNGE, >=)
#undef COMPARE_JUMP
// The same against an immediate int (pc[2]).
#define COMPARE_JUMP_IMM(name, cmp)                                            \
  op_##name: {                                                                 \
    Value a = R(1), b = val_of_int((int32_t)pc[2]);                            \
    bool holds;                                                                \
    if (likely(val_is_int(a))) holds = (int64_t)a cmp (int64_t)b;              \
    else { SAVE(); holds = ops_compare(vm, a, b) cmp 0; }                      \
    JUMP(holds ? 4 : (int32_t)pc[3]);                                          \
    DISPATCH();                                                                \
  }
COMPARE_JUMP_IMM(JNLTI, <)
COMPARE_JUMP_IMM(JNLEI, <=)
COMPARE_JUMP_IMM(JNGTI, >)
COMPARE_JUMP_IMM(JNGEI, >=)
#undef COMPARE_JUMP_IMM
op_JNEQ: { Value a = R(1), b = R(2); JUMP(EQUAL(a, b) ? 4 : (int32_t)pc[3]); DISPATCH(); }
// The operand is an immediate (nil, a bool, [] or an int): equal only to itself.
op_JNEQK: JUMP(R(1) == KIMM(2) ? 4 : (int32_t)pc[3]); DISPATCH();
op_JNNEK: JUMP(R(1) == KIMM(2) ? (int32_t)pc[3] : 4); DISPATCH();
op_JNNE: { Value a = R(1), b = R(2); JUMP(EQUAL(a, b) ? (int32_t)pc[3] : 4); DISPATCH(); }
op_ADDI: {
  Value a = R(2);
  if (likely(val_is_int(a))) R(1) = a + ((Value)(int64_t)(int32_t)pc[3] << 1);
  else { SAVE(); R(1) = arith_slow(vm, BC_ADD, a, val_of_int((int32_t)pc[3])); }
  pc += 4; DISPATCH();
}
op_IADD: {
  Value a = R(2);
  if (likely(val_is_int(a))) R(1) = a + ((Value)(int64_t)(int32_t)pc[3] << 1);
  else { SAVE(); R(1) = arith_slow(vm, BC_ADD, val_of_int((int32_t)pc[3]), a); }
  pc += 4; DISPATCH();
}
op_MULI: {
  Value a = R(2);
  int64_t imm = (int32_t)pc[3];
  if (likely(val_is_int(a))) R(1) = val_of_int((int64_t)((uint64_t)val_to_int(a) * (uint64_t)imm));
  else { SAVE(); R(1) = arith_slow(vm, BC_MUL, a, val_of_int(imm)); }
  pc += 4; DISPATCH();
}
op_DIVI: {
  Value a = R(2);
  int64_t imm = (int32_t)pc[3];
  if (likely(val_is_int(a))) R(1) = val_of_int(val_to_int(a) / imm);
  else { SAVE(); R(1) = arith_slow(vm, BC_DIV, a, val_of_int(imm)); }
  pc += 4; DISPATCH();
}
op_MODI: {
  Value a = R(2);
  int64_t imm = (int32_t)pc[3];
  if (likely(val_is_int(a))) R(1) = val_of_int(val_to_int(a) % imm);
  else { SAVE(); R(1) = arith_slow(vm, BC_MOD, a, val_of_int(imm)); }
  pc += 4; DISPATCH();
}
// The fused forms fall back to their first instruction's handler when
// their fast path does not apply, so that nothing is done twice.
op_SUBI_CALLG1: {
  Value a = R(2);
  if (unlikely(!val_is_int(a))) goto op_SUBI;
  R(1) = a - ((Value)(int64_t)(int32_t)pc[3] << 1);
  pc += 4;
  goto op_CALLG1;
}
op_ADDI_CALLG1: {
  Value a = R(2);
  if (unlikely(!val_is_int(a))) goto op_ADDI;
  R(1) = a + ((Value)(int64_t)(int32_t)pc[3] << 1);
  pc += 4;
  goto op_CALLG1;
}
op_EQK: R(1) = val_of_bool(R(2) == KIMM(3)); pc += 4; DISPATCH();
op_NEK: R(1) = val_of_bool(R(2) != KIMM(3)); pc += 4; DISPATCH();
op_SUBI: {
  Value a = R(2);
  if (likely(val_is_int(a))) R(1) = a - ((Value)(int64_t)(int32_t)pc[3] << 1);
  else { SAVE(); R(1) = arith_slow(vm, BC_SUB, a, val_of_int((int32_t)pc[3])); }
  pc += 4; DISPATCH();
}

op_CALLG: {
  if (FUZZ_FUEL) burn_fuel(vm);
  const CallTarget *t = &vm->global_targets[pc[1]];
  if (unlikely(pc[2] != t->nparams)) { SAVE(); t = resolve_callg(vm, pc); }
  base = push_frame(vm, pc, base, &ret_sp, vm->globals[pc[1]], t->fsize);
  pc = t->code;
  DISPATCH();
}
op_CALL: {
  if (FUZZ_FUEL) burn_fuel(vm);
  Value f = R(1);
  uint32_t argc = pc[2];
  if (unlikely(!val_has_tag(f, TAG_CLOSURE))) { SAVE(); call_error(vm, f, argc); }
  const CallTarget *t = &vm->fn_targets[val_to_int(val_field(f, 0))];
  if (unlikely(argc != t->nparams)) { SAVE(); call_error(vm, f, argc); }
  base = push_frame(vm, pc, base, &ret_sp, f, t->fsize);
  pc = t->code;
  DISPATCH();
}
// The forms by argc (bytecode.h). CALL<n> takes its fast path when f is a
// closure of n parameters whose frame fits the headroom (fast_nparams == n:
// one compare for arity and frame size), and otherwise goes to CALL, which
// finds out what is wrong or checks the stack against the callee's frame.
// CALLG<n>'s target was checked by the link. Both check the stack against
// stack_limit alone, copy the arguments unrolled and find the return
// address at a fixed offset.
#define CALL_FORM_PUSH(n, f, t)                                                \
  if (FUZZ_FUEL) burn_fuel(vm);                                                \
  Value *nb = (Value *)((char *)base + pc[5 + (n)]);                           \
  if (unlikely(nb >= vm->stack_limit)) { SAVE(); interp_raise_stack_overflow(vm); } \
  *ret_sp++ = pc + 5 + (n);                                                    \
  nb[0] = (f);                                                                 \
  if ((n) > 0) nb[1] = base[pc[3]];                                            \
  if ((n) > 1) nb[2] = base[pc[4]];                                            \
  if ((n) > 2) nb[3] = base[pc[5]];                                            \
  base = nb;                                                                   \
  pc = (t)->code;                                                              \
  DISPATCH();
#define CALL_FORM(n)                                                           \
  op_CALL##n: {                                                                \
    Value f = R(1);                                                            \
    if (unlikely(!val_has_tag(f, TAG_CLOSURE))) goto op_CALL;                  \
    const CallTarget *t = &vm->fn_targets[val_to_int(val_field(f, 0))];        \
    if (unlikely(t->fast_nparams != (n))) goto op_CALL;                        \
    CALL_FORM_PUSH(n, f, t)                                                    \
  }
#define CALLG_FORM(n)                                                          \
  op_CALLG##n: {                                                               \
    const CallTarget *t = &vm->global_targets[pc[1]];                          \
    CALL_FORM_PUSH(n, t->closure, t)                                           \
  }
CALL_FORM(0)
CALL_FORM(1)
CALL_FORM(2)
CALL_FORM(3)
CALLG_FORM(0)
CALLG_FORM(1)
CALLG_FORM(2)
CALLG_FORM(3)
#undef CALL_FORM
#undef CALLG_FORM
#undef CALL_FORM_PUSH
op_CALLPRIM: {
  SAVE();
  Value r = prims[pc[1]].fn(vm, base + pc[2]);
  R(4) = r;
  pc += 5;
  DISPATCH();
}
// RET and its forms for a constant: the return address off the return
// stack, the caller's base one subtraction away (frames.h part 2), the value
// into the call's destination register.
#define RETURN(v)                                                              \
  {                                                                            \
    Value v_ = (v);                                                            \
    const uint32_t *ret = *--ret_sp;                                           \
    base = (Value *)((char *)base - ret[0]);                                   \
    base[ret[-1]] = v_;                                                        \
    pc = ret + 1;                                                              \
    DISPATCH();                                                                \
  }
op_RET: RETURN(R(1))
op_RETK: RETURN(vm->constants[pc[1]])
op_RETI: RETURN(val_of_int((int32_t)pc[1]))
op_ALLOC2_RET: {   // ALLOC2's fast path, then RETURN the block (the RET at pc + 6 stays for the slow path)
  ALLOC2_FAST(p);
  RETURN(val_of_ptr(p + 1))
}
op_ADD_RET: {   // ADD, then RETURN the sum (the RET at pc + 4 stays for the slow path)
  Value a = R(2), b = R(3);
  if (unlikely(!(a & b & 1))) goto op_ADD;
  RETURN(a + b - 1)
}
op_ADDI_RET: {   // ADDI, then RETURN the sum (the RET at pc + 4 stays for the slow path)
  Value a = R(2);
  if (unlikely(!val_is_int(a))) goto op_ADDI;
  RETURN(a + ((Value)(int64_t)(int32_t)pc[3] << 1))
}
#undef RETURN
op_CLOSURE: SAVE(); pc = make_closure(vm, pc, base); DISPATCH();

op_ALLOC1: {
  Header hd = pc[2];
  uint64_t whsize = hd_wosize(hd) + 1;
  Value *p = vm->young_ptr - whsize;
  if (unlikely(GC_IS_BOEHM || p < vm->young_limit)) {
    SAVE();
    pc = alloc1_slow(vm, pc, base);
    DISPATCH();
  }
  vm->young_ptr = p;
  p[0] = hd;
  uint32_t n = pc[3];
  const uint32_t *src = pc + 4;
  Value *f = p + 1;
  if (unlikely(hd_tag(hd) == TAG_RECORD)) *f++ = val_of_int(*src++);
  fill_fields(f, src, n, base);
  R(1) = val_of_ptr(p + 1);
  pc = src + n;
  DISPATCH();
}
op_ALLOC2: {   // retag_alloc2 (compiler.c): a pair or a cons cell, 3 words
  ALLOC2_FAST(p);
  R(1) = val_of_ptr(p + 1);
  pc += 6;
  DISPATCH();
}
op_ALLOCBIG: SAVE(); pc = alloc1_slow(vm, pc, base); DISPATCH();
op_ALLOC1_OLD: SAVE(); pc = alloc1_old(vm, pc, base); DISPATCH();
op_ALLOCN_OLD:
op_ALLOCN2_OLD: SAVE(); pc = allocn_old(vm, pc, base); DISPATCH();
op_ALLOCN: {
  Value *p = vm->young_ptr - pc[1];
  if (unlikely(GC_IS_BOEHM || p < vm->young_limit)) {
    SAVE();
    pc = allocn_slow(vm, pc, base);
    DISPATCH();
  }
  Value *top = vm->young_ptr;
  vm->young_ptr = p;
  pc = allocn_fast(pc, base, top);
  DISPATCH();
}

op_ALLOCN2: {   // retag_allocn2 (compiler.c): two 2-field blocks, 6 words
  Value *p = vm->young_ptr - 6;
  if (unlikely(GC_IS_BOEHM || p < vm->young_limit)) {
    SAVE();
    pc = allocn_slow(vm, pc, base);
    DISPATCH();
  }
  vm->young_ptr = p;
  Value v0 = val_of_ptr(p + 4), v1 = val_of_ptr(p + 1);
  uint32_t a = pc[11], b = pc[12];
  p[3] = pc[4];
  p[4] = base[pc[6]];
  p[5] = base[pc[7]];
  p[0] = pc[9];
  p[1] = a & OPERAND_SUBBLOCK ? v0 : base[a];
  p[2] = b & OPERAND_SUBBLOCK ? v0 : base[b];
  if (pc[3] != OPERAND_NONE) base[pc[3]] = v0;
  if (pc[8] != OPERAND_NONE) base[pc[8]] = v1;
  pc += 13;
  DISPATCH();
}

op_GETFIELD: {
  Value r = R(2);
  uint32_t *cache = (uint32_t *)pc + 4;
  uint64_t i;
  if (likely(val_has_tag(r, TAG_RECORD) && (uint32_t)val_to_int(val_field(r, 0)) == cache[0])) i = cache[1];
  else { SAVE(); i = field_index(vm, cache, r, pc[3]); }
  R(1) = val_field(r, i);
  pc += 6; DISPATCH();
}
op_SETFIELD: {
  Value r = R(1);
  uint32_t *cache = (uint32_t *)pc + 4;
  uint64_t i;
  if (likely(val_has_tag(r, TAG_RECORD) && (uint32_t)val_to_int(val_field(r, 0)) == cache[0])) i = cache[1];
  else { SAVE(); i = field_index(vm, cache, r, pc[2]); }
  gc_write(vm, r, i, R(3));
  pc += 6; DISPATCH();
}
op_INDEX: {
  Value a = R(2), i = R(3);
  if (likely(val_has_tag(a, TAG_ARRAY) && val_is_int(i) && (uint64_t)val_to_int(i) < val_wosize(a)))
    R(1) = val_field(a, (uint64_t)val_to_int(i));
  else { SAVE(); R(1) = val_field(a, (uint64_t)index_of(vm, a, i)); }
  pc += 4; DISPATCH();
}
op_SETINDEX: {
  Value a = R(1), i = R(2);
  uint64_t k;
  if (likely(val_has_tag(a, TAG_ARRAY) && val_is_int(i) && (uint64_t)val_to_int(i) < val_wosize(a)))
    k = (uint64_t)val_to_int(i);
  else { SAVE(); k = (uint64_t)index_of(vm, a, i); }
  gc_write(vm, a, k, R(3));
  pc += 4; DISPATCH();
}
op_GETF: R(1) = val_field(R(2), pc[3]); pc += 4; DISPATCH();
op_TESTCONS: JUMP(val_has_tag(R(1), TAG_CONS) ? 3 : (int32_t)pc[2]); DISPATCH();
op_TESTEMPTY: JUMP(R(1) == VAL_EMPTY ? 3 : (int32_t)pc[2]); DISPATCH();
op_TESTEMPTY_UNCONS: {   // [] falls through; otherwise on to the UNCONS, done here for a cons
  Value v = R(1);
  if (v == VAL_EMPTY) { pc += 3; DISPATCH(); }
  JUMP((int32_t)pc[2]);
  if (likely(val_has_tag(v, TAG_CONS))) {
    Value a = val_field(v, 0), b = val_field(v, 1);
    R(2) = a;
    R(3) = b;
    pc += 5;
  }
  DISPATCH();
}
op_TESTTUPLE: {
  Value v = R(1);
  JUMP(val_has_tag(v, TAG_TUPLE) && val_wosize(v) == pc[2] ? 4 : (int32_t)pc[3]);
  DISPATCH();
}
// UNCONS and UNPAIR: if `test` holds of r, load its two fields, else jump.
#define UNPACK2(test)                                                          \
  {                                                                            \
    Value v = R(1);                                                            \
    if (likely(test)) {                                                        \
      Value a = val_field(v, 0), b = val_field(v, 1);                          \
      R(2) = a;                                                                \
      R(3) = b;                                                                \
      pc += 5;                                                                 \
    } else {                                                                   \
      JUMP((int32_t)pc[4]);                                                    \
    }                                                                          \
    DISPATCH();                                                                \
  }
op_UNCONS: UNPACK2(val_has_tag(v, TAG_CONS))
op_UNPAIR: UNPACK2(val_has_tag(v, TAG_TUPLE) && val_wosize(v) == 2)
#undef UNPACK2
op_UNPAIR_JNEQK: {   // UNPAIR, then the JNEQK at pc + 5 on its first field
  Value v = R(1);
  if (unlikely(!(val_has_tag(v, TAG_TUPLE) && val_wosize(v) == 2))) goto op_UNPAIR;
  Value a = val_field(v, 0), b = val_field(v, 1);
  R(2) = a;
  R(3) = b;
  pc += 5;
  JUMP(a == KIMM(2) ? 4 : (int32_t)pc[3]);
  DISPATCH();
}
op_TESTEQ: {
  Value v = R(1), k = vm->constants[pc[2]];
  JUMP(EQUAL(v, k) ? 4 : (int32_t)pc[3]);
  DISPATCH();
}
op_TESTFIELD: {
  Value out;
  if (test_field(vm, R(1), pc[2], &out)) { R(3) = out; pc += 5; }
  else JUMP((int32_t)pc[4]);
  DISPATCH();
}
op_ITERLOOP: {
  if (unlikely(vm->pending_signal) && ++vm->signal_backedges >= VM_SIGNAL_BACKEDGES) { SAVE(); vm_handle_signal(vm); }
  Value c = R(1);
  if (likely(val_has_tag(c, TAG_CONS))) {
    R(3) = val_field(c, 0);
    R(1) = val_field(c, 1);
    JUMP((int32_t)pc[4]);
    DISPATCH();
  }
  SAVE();
  JUMP(iter_next(vm, &R(1), &R(2), &R(3)) ? (int32_t)pc[4] : 5);
  DISPATCH();
}
op_FORPREP: {
  Value i = R(1), hi = R(2);
  if (unlikely(!(i & hi & 1))) {
    SAVE();
    gc_raise_error(vm, "type error: range bounds must be ints, got %s and %s", ops_type_name(i), ops_type_name(hi));
  }
  JUMP((int64_t)i < (int64_t)hi ? 4 : (int32_t)pc[3]);
  DISPATCH();
}
op_FORLOOP: {
  if (unlikely(vm->pending_signal) && ++vm->signal_backedges >= VM_SIGNAL_BACKEDGES) { SAVE(); vm_handle_signal(vm); }
  Value i = R(1) + 2;
  R(1) = i;
  JUMP((int64_t)i < (int64_t)R(2) ? (int32_t)pc[3] : 4);
  DISPATCH();
}
op_TRY: SAVE(); push_handler(vm, pc + pc[1], base, ret_sp, pc[2]); pc += 3; DISPATCH();
op_POPTRY: vm->handler_count--; pc += 1; DISPATCH();
op_MATCHFAIL: SAVE(); gc_raise_error(vm, "match failure");
op_EXIT_NESTED: vm->ret_sp = ret_sp; return base[0];
op_MEMPROF_RETURN: pc = memprof_stub_return(vm, pc) + 1; DISPATCH();
op_POLL: SAVE(); run_poll(vm, base); DISPATCH();
op_HALT: vm->ret_sp = ret_sp; return VAL_NIL;
#undef DISPATCH
#undef R
#undef SAVE
#undef EQUAL
#undef JUMP
}

// =====================================================================
// Levels, exceptions, interp_call
// =====================================================================

// Runs `interpret` in a new level; resumes at handlers of this level when
// something is raised. Returns false when an exception leaves the level.
static bool run_level(Vm *vm, const uint32_t *pc, Value *base, Value *result) {
  jmp_buf escape;
  Boundary *b = &vm->levels[vm->level];
  b->escape = &escape;
  const uint32_t *volatile start_pc = pc;
  Value *volatile start_base = base;
  if (setjmp(escape)) {
    if (vm->handler_count <= b->handler_floor) return false;
    Handler h = vm->handlers[--vm->handler_count];
    vm->root_count = b->root_floor;
    vm_cancel_poll(vm);
    vm->ret_sp = h.ret_sp;
    if (MEMPROF_BUILT && vm->memprof) {
      memprof_exception_caught(vm);
      memprof_unwind(vm, h.ret_sp);
    }
    h.base[h.reg] = vm->exn;
    vm->exn = VAL_NIL;
    start_pc = h.pc;
    start_base = h.base;
  }
  *result = interpret(vm, start_pc, start_base);
  return true;
}

bool interp_call(Vm *vm, Value fn, int argc, const Value *args, Value *result) {
  if (FUZZ_FUEL) burn_fuel(vm);
  if (vm->linked_protos != vm->proto_count) image_link_calls(vm);
  if (!val_has_tag(fn, TAG_CLOSURE)) call_error(vm, fn, (uint32_t)argc);
  const Proto *p = closure_proto(vm, fn);
  if ((uint32_t)argc != p->nparams) call_error(vm, fn, (uint32_t)argc);
  if (vm->level + 1 >= VM_MAX_LEVELS) gc_raise_error(vm, "stack overflow");
  Value *nb = vm->base ? vm->base + closure_proto(vm, vm->base[0])->fsize : vm->stack_start;
  if (nb + p->fsize + 1 >= vm->stack_end) interp_raise_stack_overflow(vm);
  const uint32_t *saved_pc = vm->pc;
  Value *saved_base = vm->base;
  const uint32_t **saved_ret_sp = vm->ret_sp;
  uint32_t saved_roots = vm->root_count;
  *vm->ret_sp++ = vm->trampoline_ret;
  nb[0] = fn;
  for (int i = 0; i < argc; i++) nb[1 + i] = args[i];
  vm->level++;
  vm->levels[vm->level] = (Boundary){saved_pc, saved_base, NULL, vm->handler_count, saved_roots};
  bool ok = run_level(vm, p->code, nb, result);
  vm->level--;
  vm->pc = saved_pc;
  vm->base = saved_base;
  vm->ret_sp = saved_ret_sp;
  vm->root_count = saved_roots;
  return ok;
}

void interp_print_uncaught(Vm *vm, Value v) {
  fflush(stdout);
  FrameCursor c;
  frames_top(vm, &c);
  const char *file;
  uint32_t line, col;
  backtrace_blame(&c, &file, &line, &col);
  fprintf(stderr, "%s:%u:%u: error: ", file, line, col + 1);
  ops_print(vm, stderr, v, false);
  fputc('\n', stderr);
  backtrace_print(vm, &c, stderr);
}




_Noreturn void interp_raise_stack_overflow(Vm *vm) {
  gc_raise_error(vm, "stack overflow");
}

Value interp_run_entry(Vm *vm, const Proto *entry, bool *ok) {
  Value clos = gc_alloc_static(vm, 1, TAG_CLOSURE);
  val_fields(clos)[0] = val_of_int(entry->id);
  Value result = VAL_NIL;
  vm->base = NULL;
  vm->pc = NULL;
  *ok = interp_call(vm, clos, 0, NULL, &result);
  return result;
}
