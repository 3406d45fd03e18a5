// callstack.h - memprof's side stack of callers (callstack.c, whose numbered
// comment is the design): the frames earlier captures walked and that are
// still alive, as return addresses, with the stubs that see them return.
// A capture costs the frames pushed since the last one, not the depth. This
// module knows the VM's stack and frames (core/), not memprof's events:
// engine.c keeps its queued events' callers safe before a capture or an
// unwind overwrites them.
#ifndef MINNOW_MEMPROF_CALLSTACK_H
#define MINNOW_MEMPROF_CALLSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "tracker.h"
#include "../core/frames.h"
#include "../core/vm_state.h"

// A side-stack entry whose frame's return address was redirected to its stub.
typedef struct StubbedFrame {
  uint32_t index;              // its entry: depth index
  uint32_t run;                // the side run holding the entry
  const uint32_t **slot;       // its frame's return stack entry, holding the stub
} StubbedFrame;

// Entries [previous run's end, end) all return to `frame` (part 1).
typedef struct SideRun {
  MemprofFrame frame;
  uint32_t end;
} SideRun;

typedef struct Callstacks {
  // The side stack, as runs (callstack.c part 1): side[0 .. stored) describe
  // the entries [0 .. captured_depth) of the last capture, ends ascending;
  // the live entries [0 .. depth) are side[0 .. side_count), the top run
  // ending at depth (its `end` may be past depth: returns lowered depth, and
  // the entries up to captured_depth are still the last capture's).
  SideRun *side;
  uint32_t side_count, stored;
  uint32_t depth, capacity;    // entries: each walked frame still known to be alive
  uint32_t low_water;          // min depth since the last capture
  uint32_t captured_depth;     // depth after the last capture: only returns
                               // and unwinding lowered depth since
  // The entries one by one, outermost first, made when a tracker asks
  // (callstacks_flat): rets[0 .. flat) agree with side[0 .. stored).
  MemprofFrame *rets;
  uint32_t flat;
  StubbedFrame *stubs;         // the stubbed entries, index ascending;
  uint32_t stub_count;         // stubs[stub_count - 1].index == depth - 1
  // The last capture's walked frames, entries [runs_from .. runs_from + their
  // count), as runs (callstack.c part 7); valid while `generation` (the
  // captures so far) is unchanged.
  MemprofRun *runs;            // room: capacity runs
  const MemprofRun *new_runs;
  uint32_t new_run_count, runs_from;
  uint32_t generation;
} Callstacks;

bool callstacks_init(Callstacks *cs, uint64_t stack_words);
void callstacks_free(Callstacks *cs);
// callstacks_capture (below, inline) walks the frames pushed since the last
// capture, stubs them, and returns the depth of the (complete) caller stack
// (the entries; callstacks_flat lists them). *unchanged: how many outermost
// entries are those of the previous capture. callstacks_walk is its walk of
// more than one frame.
bool callstacks_walk(Vm *vm, Callstacks *cs, uint32_t *depth, uint32_t *unchanged);
// The entries [0 .. n) one by one, outermost first: cs->rets, filled from the
// side runs as far as n. n may pass depth up to captured_depth (the entries
// returns dropped since the last capture).
const MemprofFrame *callstacks_flat(Callstacks *cs, uint32_t n);

// An exception unwinds the VM stack down to the frame whose return address
// is ret_sp[-1]: how many stubbed entries survive (part 4), and the side
// stack's depth once callstacks_pop(cs, that many) drops the others.
uint32_t callstacks_surviving(const Callstacks *cs, const uint32_t *const *ret_sp, uint32_t *depth);

// Part 2's invariant (callstack.c): the top entry is stubbed.
static inline void callstacks_check_top(const Callstacks *cs) {
  ASSERT(cs->depth == 0 ? cs->stub_count == 0 : cs->stub_count > 0 && cs->stubs[cs->stub_count - 1].index == cs->depth - 1,
         "the side stack's top entry is stubbed");
  (void)cs;
}

// Keeps the first `count` stubbed entries and the entries up to the last.
static inline void callstacks_pop(Callstacks *cs, uint32_t count) {
  cs->stub_count = count;
  cs->depth = count ? cs->stubs[count - 1].index + 1 : 0;
  cs->side_count = count ? cs->stubs[count - 1].run + 1 : 0;
  if (cs->depth < cs->low_water) cs->low_water = cs->depth;
  callstacks_check_top(cs);
}

_Noreturn void callstacks_out_of_order(void);

// A stubbed frame returned through its stub at stub_pc (interp.c's
// MEMPROF_RETURN): pops the side stack down to the next stubbed entry and
// returns the real return address. Aborts if the stub is not the top one.
// Inline: a sample in a function called afresh makes one such return.
static inline const uint32_t *callstacks_stub_return(Callstacks *cs, const uint32_t *stub_pc) {
  uint32_t top = cs->stub_count - 1;
  // The stub that returned is the one in the top stubbed frame's slot.
  if (__builtin_expect(cs->stub_count == 0 || *cs->stubs[top].slot != stub_pc - 1, 0)) callstacks_out_of_order();
  callstacks_pop(cs, top);
  return stub_pc + (int32_t)stub_pc[1];
}

// A capture rewrites the side runs from depth on (part 1): the top run ends
// at depth, and the entries listed one by one stop there. The capture then
// pushes its runs and sets `stored` to side_count.
static inline void callstacks_cut(Callstacks *cs) {
  if (cs->side_count > 0) cs->side[cs->side_count - 1].end = cs->depth;
  if (cs->flat > cs->depth) cs->flat = cs->depth;
}

// How every capture that succeeds ends: its walked frames, entries
// [runs_from .. depth), are `runs` (run_count of them), its first
// `unchanged` entries are the previous capture's, and it becomes the
// previous capture.
static inline void callstacks_captured(Callstacks *cs, const MemprofRun *runs, uint32_t run_count, uint32_t runs_from,
                                       uint32_t unchanged, uint32_t *depth_out, uint32_t *unchanged_out) {
  cs->new_runs = runs;
  cs->new_run_count = run_count;
  cs->runs_from = runs_from;
  *unchanged_out = unchanged;
  *depth_out = cs->depth;
  cs->low_water = cs->captured_depth = cs->depth;
  callstacks_check_top(cs);
}

// The capture a sample makes. Inline: a sample whose callstack lost frames
// or gained one (the common cases) makes no call here. The caller first
// gives queued events reaching above cs->depth their own copy of their
// callers (part 6: the capture overwrites the side runs from depth on).
static inline __attribute__((always_inline)) bool callstacks_capture(Vm *vm, Callstacks *cs, uint32_t *depth,
                                                                     uint32_t *unchanged) {
  // The runs of the previous capture are overwritten from here on, even if
  // this one fails: no queued event reads them any more (part 7).
  cs->generation++;
  // Frames called by the entry function (which runs every module's top
  // level) end the callstack, as do a C boundary and the first stub.
  FrameBounds bounds = frames_bounds(vm->trampoline_ret, vm->entry_code, vm->entry_code_end);
  const uint32_t **sp = vm->ret_sp;
  const uint32_t *ret = sp[-1];
  if (!frames_from_c(&bounds, ret) && !frames_is_stub(ret) && !frames_from_entry(&bounds, ret)) {
    // Not the first frame of its level (whose return address is the
    // trampoline): its caller's return address is below.
    const uint32_t *caller_ret = sp[-2];
    if (!(frames_from_entry(&bounds, caller_ret) || frames_is_stub(caller_ret) || frames_from_c(&bounds, caller_ret)))
      return callstacks_walk(vm, cs, depth, unchanged);
    // Room for one more: the entries are live frames other than this one,
    // at most stack_words - 1 (callstacks_init).
    ASSERT(cs->depth < cs->capacity, "the side stack has room for a frame");
    // One new frame (a function called since the last capture, whose caller
    // was walked before, as a loop calling the allocating function makes):
    // what callstacks_walk does with it, without the walk's setup. It is walk
    // position 0, so it is stubbed, and it is a run of its own (its caller
    // returns to a stub or ends the stack, never to `ret`). When the last
    // capture had the same call there (the loop called the same function
    // again), the callstack is unchanged up to it: trackers get no new run.
    // The last capture's entry at depth: in the top run if that ran past
    // depth, else the first of the stored runs after it (part 1).
    uint32_t top = cs->side_count;   // the run holding entry depth, + 1
    if (top == 0 || cs->side[top - 1].end <= cs->depth) top++;
    bool same = cs->depth < cs->captured_depth && cs->side[top - 1].frame == ret;
    if (same) {
      cs->side_count = top;
    } else {
      callstacks_cut(cs);
      cs->side[cs->side_count++] = (SideRun){ret, cs->depth + 1};
      cs->stored = cs->side_count;
    }
    cs->stubs[cs->stub_count++] = (StubbedFrame){cs->depth, cs->side_count - 1, sp - 1};
    sp[-1] = frames_stub_of(ret);
    cs->depth++;
    if (same) {
      callstacks_captured(cs, cs->runs + cs->capacity, 0, cs->depth, cs->depth, depth, unchanged);
    } else {
      MemprofRun *run = cs->runs + cs->capacity - 1;
      *run = (MemprofRun){ret, 1};
      callstacks_captured(cs, run, 1, cs->depth - 1, cs->low_water, depth, unchanged);
    }
    return true;
  }
  // No frame pushed since the last capture (a loop sampling at one depth):
  // what callstacks_walk does with nothing walked, without its setup.
  callstacks_captured(cs, cs->runs + cs->capacity, 0, cs->depth, cs->low_water, depth, unchanged);
  return true;
}

#endif
