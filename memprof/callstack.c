// callstack.c - callstacks whose cost does not grow with the depth of the stack.
//
// 1. The side stack rets[0 .. depth) holds, outermost first, the return
//    addresses of the bottom frames of the VM stack that earlier captures
//    walked and that are known to be alive: their part of the callstack,
//    shared by every later capture. A capture walks the VM stack from the
//    sampling frame outwards only until the first frame whose return address
//    (base[-1]) it redirected to its call site's stub (lang/frames.h part 5),
//    and pushes the frames it walked.
// 2. Not every walked frame gets a stub: the innermost one does, and then
//    every STUB_SPACING-th going outwards (stubs[], index ascending). A
//    stubbed frame returns through its stub: RET reads the result register
//    and frame step from the stub, then MEMPROF_RETURN pops the side stack
//    down to the next stubbed entry below (memprof_stub_return) and resumes
//    after the real call. The entries in between belong to frames that are
//    still alive but could now return unseen, so they are dropped; the next
//    capture walks them again (fewer than STUB_SPACING frames). Invariant:
//    the top entry is stubbed (stubs[stub_count - 1].index == depth - 1), so
//    any return below it is seen; no frame above it holds a stub.
//    A long unwind thus costs one stub return per STUB_SPACING frames, and a
//    walk writes the VM stack once per STUB_SPACING frames.
// 3. The walk reads no descriptor: the word at a return address holds the
//    caller's frame step and the one two words before it the stub. In a
//    recursion consecutive frames share the return address, so the loop
//    reuses the previous frame's step and stub. The return addresses
//    themselves are the frame codes handed to trackers; memprof_frame_debug
//    resolves one to its debug entry when (and if) a tracker asks. The GC and
//    backtraces map stubs back with frames_stub_ret.
// 4. Exceptions discard frames without returning: memprof_unwind pops the
//    entries down to the highest stubbed frame that survives the unwind.
// 5. low_water is the smallest depth since the last capture: the first
//    low_water entries are unchanged, which trace writers use to encode a
//    callstack as a difference from the previous one.
// 6. A queued alloc event names its callers as rets[0 .. its depth). Before
//    a capture overwrites entries that returns or unwinding freed, the events
//    still reaching into them get their own copy (preserve_queued). Their
//    largest depth is kept (Memprof.queued_depth), so that a capture above
//    it, the common case, checks nothing.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof_internal.h"
#include "../lang/bytecode.h"
#include "../lang/compiler.h"
#include "../lang/vm.h"

// Walked frames between two stubs (a power of two): the most frames a
// capture walks again after a stub return, and the number of returns per
// stub return during an unwind.
#define STUB_SPACING 16u

bool callstacks_init(Callstacks *cs, uint64_t stack_words) {
  // A frame is at least its return address and its closure: two words. The
  // entries are live frames, so depth never exceeds stack_words / 2; the
  // slack lets a capture check its room once per STUB_SPACING frames.
  cs->capacity = (uint32_t)(stack_words / 2 + STUB_SPACING);
  cs->rets = calloc(cs->capacity, sizeof *cs->rets);
  cs->stubs = calloc(cs->capacity, sizeof *cs->stubs);
  return cs->rets && cs->stubs;
}

void callstacks_free(Callstacks *cs) {
  free(cs->rets);
  free(cs->stubs);
}

bool memprof_has_stubs(const Memprof *mp) { return mp->stacks.rets != NULL; }

const DebugInfo *memprof_frame_debug(const Vm *vm, MemprofFrame frame) {
  const FrameDesc *d = frames_find(vm->frames, frame);
  return d && d->debug_count > 0 ? d->debug[0] : NULL;
}

// Keeps the first `count` stubbed entries and the entries up to the last.
static void pop_to_stub(Callstacks *cs, uint32_t count) {
  cs->stub_count = count;
  cs->depth = count ? cs->stubs[count - 1].index + 1 : 0;
  if (cs->depth < cs->low_water) cs->low_water = cs->depth;
}

const uint32_t *memprof_stub_return(Vm *vm, const uint32_t *stub_pc) {
  Callstacks *cs = &vm->memprof->stacks;
  const uint32_t *ret = stub_pc + (int32_t)stub_pc[1];
  uint32_t top = cs->stub_count - 1;
  if (cs->stub_count == 0 || cs->rets[cs->stubs[top].index] != ret) {
    fprintf(stderr, "minnow: internal error: memprof stub returned out of order\n");
    abort();
  }
  pop_to_stub(cs, top);
  return ret;
}

// Queued alloc events whose callers reach above `depth` get their own copy
// of them (part 6).
static void preserve_queued(Memprof *mp, uint32_t depth) {
  Callstacks *cs = &mp->stacks;
  for (uint32_t k = mp->event_head; k < mp->event_count; k++) {
    Event *ev = &mp->events[k];
    if (ev->kind != EV_ALLOC || ev->depth <= depth || ev->own) continue;
    MemprofFrame *own = malloc(ev->depth * sizeof *own);
    if (!own) {
      ev->depth = depth;   // out of memory: keep what is still valid
      continue;
    }
    memcpy(own, cs->rets, ev->depth * sizeof *own);
    ev->own = own;
  }
  mp->queued_depth = depth;
}

void memprof_unwind(Vm *vm, const Value *base) {
  Memprof *mp = vm->memprof;
  Callstacks *cs = &mp->stacks;
  uint32_t k = cs->stub_count, slot = (uint32_t)(base - vm->stack_start);
  while (k > 0 && cs->stubs[k - 1].frame > slot) k--;
  uint32_t d = k ? cs->stubs[k - 1].index + 1 : 0;
  if (d < mp->queued_depth) preserve_queued(mp, d);
  pop_to_stub(cs, k);
}

// A capture that fails gives the frames it stubbed their return addresses
// back: stubs[0 .. n_stubs) hold their walk positions into rets.
static void restore_slots(Value *stack, const MemprofFrame *rets, const StubbedFrame *stubs, uint32_t n_stubs) {
  for (uint32_t i = 0; i < n_stubs; i++) stack[stubs[i].frame - 1] = (Value)(uintptr_t)rets[stubs[i].index];
}

bool callstacks_capture(Vm *vm, Callstacks *cs, uint32_t *depth, uint32_t *unchanged) {
  Memprof *mp = vm->memprof;
  if (cs->depth < mp->queued_depth) preserve_queued(mp, cs->depth);
  // Frames called by the entry function (which runs every module's top
  // level) end the callstack, as do a C boundary and the first stub.
  const uint32_t *trampoline = vm->trampoline_ret;
  const Proto *entry = vm->entry_proto;
  uintptr_t entry_lo = entry ? (uintptr_t)entry->code : 0;
  uintptr_t entry_len = entry ? (uintptr_t)entry->code_len * sizeof(uint32_t) : 0;
  // One pass, innermost frame first, writing the new entries in walk order
  // right above the old ones (walk position k at out[k]) and stubbing every
  // STUB_SPACING-th frame from the innermost; how many frames are new is
  // known only at the end, when both runs are reversed in place into
  // outermost-first order. No scratch, no copy.
  MemprofFrame *out = cs->rets + cs->depth;
  StubbedFrame *out_stubs = cs->stubs + cs->stub_count;
  uint32_t room = cs->capacity - cs->depth;
  uint32_t n_stubs = 0;
  Value *stack = vm->stack_start;
  // A recursion repeats one return address: its stop test, step and stub are
  // those of the frame before, and the next frame's address does not wait
  // for the load of this return address (the predicted branch decides). The
  // frames come in groups of STUB_SPACING, the first of each stubbed; the
  // rest of a group is unrolled, leaving per frame a load, a compare, a
  // store and a subtraction.
  const uint32_t *last = NULL;
  uintptr_t step = 0;
  Value stub = 0;
  MemprofFrame *next = out;
  Value *base = vm->base;
#define NEXT_FRAME()                                                                              \
  const uint32_t *ret = (const uint32_t *)(uintptr_t)base[-1];                                   \
  if (__builtin_expect(ret != last, 0)) {                                                         \
    if (ret == trampoline || frames_is_stub(ret) || (uintptr_t)ret - entry_lo < entry_len) goto done; \
    last = ret;                                                                                   \
    step = ret[0];                                                                                \
    stub = (Value)(uintptr_t)frames_stub_of(ret);                                                 \
  }
  for (;;) {
    NEXT_FRAME();
    // Room for the group, checked once; cannot fail while the entries are
    // live frames (callstacks_init).
    uint32_t k = (uint32_t)(next - out);
    if (room - k < STUB_SPACING) {
      restore_slots(stack, out, out_stubs, n_stubs);
      return false;
    }
    out_stubs[n_stubs++] = (StubbedFrame){k, (uint32_t)(base - stack)};
    base[-1] = stub;
    *next++ = ret;
    base = (Value *)((char *)base - step);
#pragma GCC unroll 16
    for (uint32_t i = 1; i < STUB_SPACING; i++) {
      NEXT_FRAME();
      *next++ = ret;
      base = (Value *)((char *)base - step);
    }
  }
#undef NEXT_FRAME
done:;
  uint32_t n = (uint32_t)(next - out);
  for (MemprofFrame *lo = out, *hi = next - 1; lo < hi; lo++, hi--) {
    MemprofFrame t = *lo;
    *lo = *hi;
    *hi = t;
  }
  // Walk position k becomes the entry depth + n - 1 - k; the stubs were
  // found innermost first, and are kept index ascending.
  uint32_t top = cs->depth + n - 1;
  for (uint32_t i = 0, j = n_stubs - 1; i < (n_stubs + 1) / 2; i++, j--) {
    StubbedFrame a = out_stubs[i], b = out_stubs[j];
    out_stubs[i] = (StubbedFrame){top - b.index, b.frame};
    out_stubs[j] = (StubbedFrame){top - a.index, a.frame};
  }
  cs->stub_count += n_stubs;
  cs->depth += n;
  *unchanged = cs->low_water;
  *depth = cs->depth;
  cs->low_water = cs->depth;
  return true;
}
