// callstack.c - callstacks whose cost does not grow with the depth of the stack.
//
// 1. A capture walks the VM stack from the sampling frame outwards, but stops
//    at the first frame whose return address it has already redirected:
//    every frame it walks gets its return address (base[-1]) redirected to
//    its call site's stub (lang/frames.h part 5), and the original return
//    address and the frame are pushed on a side stack, outermost first,
//    mirroring the bottom of the VM stack: rets[0 .. depth) are the return
//    addresses of exactly the walked frames still alive (their part of the
//    callstack, shared by every later capture) and frames[0 .. depth) where
//    those frames are.
// 2. The walk reads no descriptor: the word at a return address holds the
//    caller's frame step and the one two words before it the stub, so a
//    frame costs two dependent loads and three stores. The return addresses
//    themselves are the frame codes handed to trackers; memprof_frame_debug
//    resolves one to its debug entry when (and if) a tracker asks.
// 3. A redirected frame returns through its stub: RET reads the result
//    register and frame step from the stub, then MEMPROF_RETURN pops the
//    side stack and resumes after the real call. The GC and backtraces map
//    stubs back with frames_stub_ret.
// 4. Exceptions discard frames without returning: memprof_unwind pops the
//    entries of frames above the handler's frame.
// 5. low_water is the smallest depth since the last capture: the first
//    low_water entries are unchanged, which trace writers use to encode a
//    callstack as a difference from the previous one.
// 6. A queued alloc event names its callers as rets[0 .. its depth). Before
//    a capture overwrites entries that returns or unwinding freed, the events
//    still reaching into them get their own copy (preserve_queued). Their
//    largest depth is kept (Memprof.queued_depth), so that a capture above
//    it, the common case, checks nothing.
// Invariant: frames[i] < frames[i+1]; frames[depth-1] is the innermost
// redirected frame and every frame above it has a plain return address.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof_internal.h"
#include "../lang/bytecode.h"
#include "../lang/compiler.h"
#include "../lang/vm.h"

bool callstacks_init(Callstacks *cs, uint64_t stack_words) {
  // A frame is at least its return address and its closure: two words.
  cs->capacity = (uint32_t)(stack_words / 2 + 1);
  cs->rets = calloc(cs->capacity, sizeof *cs->rets);
  cs->frames = calloc(cs->capacity, sizeof *cs->frames);
  return cs->rets && cs->frames;
}

void callstacks_free(Callstacks *cs) {
  free(cs->rets);
  free(cs->frames);
  free(cs->found_rets);
  free(cs->found_frames);
}

// Doubles the capture's scratch arrays, keeping their last `used` entries
// at the end.
static bool grow_found(Callstacks *cs, uint32_t used) {
  uint32_t old = cs->found_cap, cap = old ? old * 2 : 1024;
  MemprofFrame *r = malloc(cap * sizeof *r);
  uint32_t *f = malloc(cap * sizeof *f);
  if (!r || !f) {
    free(r);
    free(f);
    return false;
  }
  if (used) {
    memcpy(r + cap - used, cs->found_rets + old - used, used * sizeof *r);
    memcpy(f + cap - used, cs->found_frames + old - used, used * sizeof *f);
  }
  free(cs->found_rets);
  free(cs->found_frames);
  cs->found_rets = r;
  cs->found_frames = f;
  cs->found_cap = cap;
  return true;
}

bool memprof_has_stubs(const Memprof *mp) { return mp->stacks.rets != NULL; }

const DebugInfo *memprof_frame_debug(const Vm *vm, MemprofFrame frame) {
  const FrameDesc *d = frames_find(vm->frames, frame);
  return d && d->debug_count > 0 ? d->debug[0] : NULL;
}

static void pop_to(Callstacks *cs, uint32_t depth) {
  cs->depth = depth;
  if (depth < cs->low_water) cs->low_water = depth;
}

const uint32_t *memprof_stub_return(Vm *vm, const uint32_t *stub_pc) {
  Callstacks *cs = &vm->memprof->stacks;
  const uint32_t *ret = stub_pc + (int32_t)stub_pc[1];
  uint32_t top = cs->depth - 1;
  if (cs->depth == 0 || cs->rets[top] != ret) {
    fprintf(stderr, "minnow: internal error: memprof stub returned out of order\n");
    abort();
  }
  cs->depth = top;
  if (top < cs->low_water) cs->low_water = top;
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
  uint32_t d = cs->depth, slot = (uint32_t)(base - vm->stack_start);
  while (d > 0 && cs->frames[d - 1] > slot) d--;
  if (d < mp->queued_depth) preserve_queued(mp, d);
  pop_to(cs, d);
}

// A capture that fails gives the n frames it redirected their return
// addresses back.
static void restore_slots(Value *stack, const MemprofFrame *rets, const uint32_t *frames, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) stack[frames[i] - 1] = (Value)(uintptr_t)rets[i];
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
  // One pass, innermost frame first: redirect, and record into the end of
  // the scratch arrays downwards (how many frames are new is known only at
  // the end); then two block copies put the records in place.
  uint32_t n = 0, cap = cs->found_cap;
  MemprofFrame *new_rets = cs->found_rets;
  uint32_t *new_frames = cs->found_frames;
  Value *stack = vm->stack_start;
  for (Value *base = vm->base;;) {
    const uint32_t *ret = (const uint32_t *)(uintptr_t)base[-1];
    if (ret == trampoline || frames_is_stub(ret) || (uintptr_t)ret - entry_lo < entry_len) break;
    if (n == cap) {
      if (!grow_found(cs, n)) {
        restore_slots(stack, new_rets + cap - n, new_frames + cap - n, n);
        return false;
      }
      cap = cs->found_cap;
      new_rets = cs->found_rets;
      new_frames = cs->found_frames;
    }
    n++;
    new_rets[cap - n] = ret;
    new_frames[cap - n] = (uint32_t)(base - stack);
    base[-1] = (Value)(uintptr_t)frames_stub_of(ret);
    base = (Value *)((char *)base - ret[0]);
  }
  if (n > cs->capacity - cs->depth) {   // cannot happen: a frame is >= 2 words
    restore_slots(stack, new_rets + cap - n, new_frames + cap - n, n);
    return false;
  }
  if (n > 0) {
    memcpy(cs->rets + cs->depth, new_rets + cap - n, n * sizeof *new_rets);
    memcpy(cs->frames + cs->depth, new_frames + cap - n, n * sizeof *new_frames);
  }
  cs->depth += n;
  *unchanged = cs->low_water;
  *depth = cs->depth;
  cs->low_water = cs->depth;
  return true;
}
