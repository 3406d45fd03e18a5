// callstack.c - callstacks whose cost does not grow with the depth of the stack.
//
// 1. The side stack's entries [0 .. depth) are, outermost first, the return
//    addresses of the bottom frames of the VM stack that earlier captures
//    walked and that are known to be alive: their part of the callstack,
//    shared by every later capture. A capture walks the return stack
//    (core/frames.h part 1) from the sampling frame outwards only until the
//    first frame whose return address it redirected to its call site's stub
//    (core/frames.h part 5), and pushes the frames it walked. The entries
//    are kept as runs of equal return addresses (side[], each with its end),
//    so a capture writes a run, not each of its frames: a recursion rebuilt
//    between two samples costs the walk's reads and no write a frame. Returns only lower depth (and
//    side_count); a capture truncates the top run and pushes its own runs.
//    The entries one by one (rets) are made only for the trackers that read
//    them (callstacks_flat), from where they were last made.
// 2. Not every walked frame gets a stub: the innermost one does, and then
//    every STUB_SPACING-th going outwards, every RUN_STUB_SPACING-th inside
//    a run of frames returning to one address (stubs[], index ascending). A
//    stubbed frame returns through its stub: RET reads the result register
//    and frame step from the stub, then MEMPROF_RETURN pops the side stack
//    down to the next stubbed entry below (memprof_stub_return) and resumes
//    after the real call. The entries in between belong to frames that are
//    still alive but could now return unseen, so they are dropped; the next
//    capture walks them again (fewer than RUN_STUB_SPACING frames). Invariant:
//    the top entry is stubbed (stubs[stub_count - 1].index == depth - 1), so
//    any return below it is seen; no frame above it holds a stub.
//    A long unwind thus costs one stub return per STUB_SPACING frames (per
//    RUN_STUB_SPACING in a recursion), and a walk writes the return stack as
//    often.
// 3. The walk reads the return stack and no frame, no descriptor: the word
//    two before a return address holds the distance to its stub. In a
//    recursion consecutive frames share the return address: the walk takes
//    such a run at once (eight entries a step, compared in pairs: run_start;
//    eight frames a cache line) and records it as one run (part 7), pushed
//    as one side run. The return
//    addresses themselves are the frame codes handed to trackers;
//    memprof_frame_debug resolves one to its debug entry when (and if) a
//    tracker asks. The GC and backtraces map stubs back with frames_stub_ret.
// 4. Exceptions discard frames without returning: memprof_unwind pops the
//    entries down to the highest stubbed frame that survives the unwind.
// 5. low_water is the smallest depth since the last capture: the first
//    low_water entries are unchanged, which trace writers use to encode a
//    callstack as a difference from the previous one.
// 6. A queued alloc event names its callers as the entries [0 .. its depth).
//    Before a capture overwrites entries that returns or unwinding freed,
//    the events still reaching into them get their own copy (engine.c,
//    preserve_queued). Their largest depth is kept (Memprof.queued_depth),
//    so that a capture above it, the common case, checks nothing.
// 7. A capture also describes the frames it walked as runs of equal return
//    addresses (new_runs, outermost first; consecutive runs differ): a
//    recursion is one run whatever its depth. Trackers that code callstacks
//    by runs (the trace writer) then handle a run, not each of its frames
//    (MemprofSample.runs). The runs stay valid until the next capture
//    (`generation` counts them); returns and unwinding only lower depth.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callstack.h"
#include "../core/bytecode.h"
#include "../core/vm_state.h"

// Walked frames between two stubs (a power of two): the most frames a
// capture walks again after a stub return, and the number of returns per
// stub return during an unwind.
#define STUB_SPACING 16u
// The same inside a run (part 3): walking a run again costs a compare a
// frame, while a stub costs a stub return and two records.
#define RUN_STUB_SPACING 64u

bool callstacks_init(Callstacks *cs, uint64_t stack_words) {
  // A frame is at least its closure: one word. The entries are live frames,
  // so depth never exceeds stack_words, STUB_SPACING below the capacity (the
  // one-frame capture's ASSERT rests on it; the walk still checks its room
  // run by run, and fails rather than writes past the end).
  cs->capacity = (uint32_t)(stack_words + STUB_SPACING);
  cs->side = calloc(cs->capacity, sizeof *cs->side);
  cs->rets = calloc(cs->capacity, sizeof *cs->rets);
  cs->stubs = calloc(cs->capacity, sizeof *cs->stubs);
  cs->runs = calloc(cs->capacity, sizeof *cs->runs);
  if (cs->side && cs->rets && cs->stubs && cs->runs) return true;
  callstacks_free(cs);   // none kept: the next start tries again
  *cs = (Callstacks){0};
  return false;
}

void callstacks_free(Callstacks *cs) {
  free(cs->side);
  free(cs->rets);
  free(cs->stubs);
  free(cs->runs);
}


const DebugInfo *memprof_frame_debug(const Vm *vm, MemprofFrame frame) {
  const FrameDesc *d = frames_find(vm->frames, frame);
  return d && d->debug_count > 0 ? d->debug[0] : NULL;
}

void callstacks_out_of_order(void) {
  fprintf(stderr, "minnow: internal error: memprof stub returned out of order\n");
  abort();
}

uint32_t callstacks_surviving(const Callstacks *cs, const uint32_t *const *ret_sp, uint32_t *depth) {
  uint32_t k = cs->stub_count;
  while (k > 0 && cs->stubs[k - 1].slot >= ret_sp) k--;
  *depth = k ? cs->stubs[k - 1].index + 1 : 0;
  return k;
}

// A capture that fails gives the frames it stubbed their return addresses
// back: stubs[0 .. n_stubs) name the frames.
static void restore_slots(const StubbedFrame *stubs, uint32_t n_stubs) {
  for (uint32_t i = 0; i < n_stubs; i++) *stubs[i].slot = frames_stub_ret(*stubs[i].slot);
}

// Two entries at once, with GCC's vector extension (SSE2 on x86-64): the
// fill and the move below run at a store (and a load) per two entries. Not
// memset/memcpy: for long runs those use rep stos/movs, fast but counted by
// callgrind, the meter of the profiler's cost, as one instruction a byte.
typedef uint64_t FramePair __attribute__((vector_size(16)));
_Static_assert(sizeof(MemprofFrame) == sizeof(uint64_t), "a frame is one word");

// p[0 .. n) = v.
static void fill_frames(MemprofFrame *p, MemprofFrame v, uint32_t n) {
  FramePair two = {(uint64_t)(uintptr_t)v, (uint64_t)(uintptr_t)v};
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    memcpy(p + i, &two, sizeof two);
    memcpy(p + i + 2, &two, sizeof two);
    memcpy(p + i + 4, &two, sizeof two);
    memcpy(p + i + 6, &two, sizeof two);
    memcpy(p + i + 8, &two, sizeof two);
    memcpy(p + i + 10, &two, sizeof two);
    memcpy(p + i + 12, &two, sizeof two);
    memcpy(p + i + 14, &two, sizeof two);
  }
  for (; i + 2 <= n; i += 2) memcpy(p + i, &two, sizeof two);
  for (; i < n; i++) p[i] = v;
}

const MemprofFrame *callstacks_flat(Callstacks *cs, uint32_t n) {
  if (cs->flat >= n) return cs->rets;
  ASSERT(cs->stored > 0 && n <= cs->side[cs->stored - 1].end, "the entries listed are the last capture's");
  // The stored run holding entry `flat`: the first whose end passes it.
  uint32_t lo = 0, hi = cs->stored;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (cs->side[mid].end > cs->flat) hi = mid;
    else lo = mid + 1;
  }
  for (uint32_t at = cs->flat, r = lo; at < n; r++) {
    uint32_t to = cs->side[r].end < n ? cs->side[r].end : n;
    fill_frames(cs->rets + at, cs->side[r].frame, to - at);
    at = to;
  }
  cs->flat = n;
  return cs->rets;
}

// The first entry of the run of entries equal to `ret` that ends with
// end[-1] (== ret), not below `bottom`: eight entries a step, compared as
// pairs (the XOR of a pair with ret is zero iff both are ret).
static const uint32_t **run_start(const uint32_t **bottom, const uint32_t **end, const uint32_t *ret) {
  FramePair r = {(uint64_t)(uintptr_t)ret, (uint64_t)(uintptr_t)ret};
  while (end - bottom >= 8) {
    FramePair a, b, c, d;
    memcpy(&a, end - 8, sizeof a);
    memcpy(&b, end - 6, sizeof b);
    memcpy(&c, end - 4, sizeof c);
    memcpy(&d, end - 2, sizeof d);
    FramePair x = (a ^ r) | (b ^ r) | (c ^ r) | (d ^ r);
    if ((x[0] | x[1]) != 0) break;
    end -= 8;
  }
  while (end > bottom && end[-1] == ret) end--;
  return end;
}

// The walk of callstacks_capture (callstack.h), when more than one frame is
// new.
bool callstacks_walk(Vm *vm, Callstacks *cs, uint32_t *depth, uint32_t *unchanged) {
  const FrameBounds bounds = frames_bounds(vm->trampoline_ret, vm->entry_code, vm->entry_code_end);
  // One pass, innermost frame first, recording runs of frames that return to
  // the same address (part 7) at the top of runs' room, going down, and
  // stubbing every STUB_SPACING-th frame from the innermost (part 2); once
  // the walk ends the runs are outermost first and become side runs, and the
  // stubs are reversed in place.
  MemprofRun *const rend = cs->runs + cs->capacity;
  MemprofRun *rnext = rend;
  StubbedFrame *out_stubs = cs->stubs + cs->stub_count;
  uint32_t room = cs->capacity - cs->depth;
  uint32_t n_stubs = 0, k = 0;   // k: frames walked
  const uint32_t **const bottom = vm->ret_stack;
  const uint32_t **sp = vm->ret_sp;   // one past the next frame's return address
  for (;;) {
    const uint32_t *ret = sp[-1];
    if (frames_from_c(&bounds, ret) || frames_is_stub(ret) || frames_from_entry(&bounds, ret)) break;
    // Room: cannot run out while the entries are live frames (callstacks_init).
    if (room == k) {
      restore_slots(out_stubs, n_stubs);
      return false;
    }
    // The run of frames returning to `ret` (part 3): [end, first] on the
    // return stack. The bottom entry is a trampoline, never `ret`, but the
    // walk does not count on it.
    const uint32_t **first = sp - 1, **end = first;
    if (end > bottom && end[-1] == ret) end = run_start(bottom, end - 1, ret);
    uint32_t count = (uint32_t)(first - end) + 1;
    if (room - k < count) {
      restore_slots(out_stubs, n_stubs);
      return false;
    }
    *--rnext = (MemprofRun){ret, count};
    uint32_t run = (uint32_t)(rend - rnext) - 1;
    const uint32_t *stub = frames_stub_of(ret);
    if (count == 1) {   // a frame of its own
      if ((k & (STUB_SPACING - 1)) == 0) {
        out_stubs[n_stubs++] = (StubbedFrame){k, run, first};
        *first = stub;
      }
    } else {
      for (uint32_t s = (k + RUN_STUB_SPACING - 1) & ~(RUN_STUB_SPACING - 1); s < k + count; s += RUN_STUB_SPACING) {
        out_stubs[n_stubs++] = (StubbedFrame){s, run, first - (s - k)};
        *(first - (s - k)) = stub;
      }
    }
    k += count;
    sp = end;
  }
  // The walked runs (walk run w, innermost first, is rend[-1 - w]) become
  // the side runs side_count + n_runs - 1 - w, after the top run truncated
  // to depth.
  uint32_t n = k, n_runs = (uint32_t)(rend - rnext), first_run = cs->side_count;
  callstacks_cut(cs);
  uint32_t end = cs->depth;
  for (const MemprofRun *r = rnext; r < rend; r++) {
    end += r->count;
    cs->side[cs->side_count++] = (SideRun){r->frame, end};
  }
  cs->stored = cs->side_count;
  // Walk position k becomes the entry depth + n - 1 - k; the stubs were
  // found innermost first, and are kept index ascending.
  uint32_t top = cs->depth + n - 1, top_run = first_run + n_runs - 1;
  for (uint32_t i = 0, j = n_stubs - 1; i < (n_stubs + 1) / 2; i++, j--) {
    StubbedFrame a = out_stubs[i], b = out_stubs[j];
    out_stubs[i] = (StubbedFrame){top - b.index, top_run - b.run, b.slot};
    out_stubs[j] = (StubbedFrame){top - a.index, top_run - a.run, a.slot};
  }
  uint32_t from = cs->depth;
  cs->stub_count += n_stubs;
  cs->depth += n;
  callstacks_captured(cs, rnext, (uint32_t)(rend - rnext), from, cs->low_water, depth, unchanged);
  return true;
}
