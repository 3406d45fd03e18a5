// memprof_internal.h - state shared by the files of memprof/ only.
#ifndef MINNOW_MEMPROF_INTERNAL_H
#define MINNOW_MEMPROF_INTERNAL_H

#include "memprof.h"
#include "sampler.h"
#include "tracker.h"

// ---------------------------------------------------------------------------
// Callstacks (callstack.c): the stub side-stack. See the design comment there.
// A side-stack entry whose frame's return address was redirected to its stub.
typedef struct StubbedFrame {
  uint32_t index;              // its entry in rets[]
  uint32_t frame;              // its base - stack_start
} StubbedFrame;

typedef struct Callstacks {
  MemprofFrame *rets;          // outermost first: the real return address of
  uint32_t depth, capacity;    // each walked frame still known to be alive
  uint32_t low_water;          // min depth since the last capture
  uint32_t captured_depth;     // depth after the last capture: only returns
                               // and unwinding lowered depth since, so
                               // rets[depth .. captured_depth) still hold
                               // that capture's frames
  StubbedFrame *stubs;         // the stubbed entries, index ascending;
  uint32_t stub_count;         // stubs[stub_count - 1].index == depth - 1
  // The last capture's walked frames, rets[runs_from .. runs_from + their
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
// in cs->rets. *unchanged: how many outermost entries are those of the
// previous capture. callstacks_walk is its walk of more than one frame.
bool callstacks_walk(Vm *vm, Callstacks *cs, uint32_t *depth, uint32_t *unchanged);

// Part 2's invariant (callstack.c): the top entry is stubbed.
static inline void callstacks_check_top(const Callstacks *cs) {
  ASSERT(cs->depth == 0 ? cs->stub_count == 0 : cs->stub_count > 0 && cs->stubs[cs->stub_count - 1].index == cs->depth - 1,
         "the side stack's top entry is stubbed");
  (void)cs;
}

// ---------------------------------------------------------------------------
// Profiles, entries, events (engine.c)
typedef struct Profile {
  int id;
  bool running, discarded;
  double rate;
  uint32_t callstack_size;
  MemprofTracker tracker;
  // The callstack frames shared by the captures this profile's tracker did
  // not see since the last one it saw (UINT32_MAX: none). capture_carry
  // folds the captures made for other profiles only (track), unchanged_carry
  // this profile's events skipped at delivery (deliver_alloc); both lower
  // the next sample's `unchanged` (tracker.h).
  uint32_t capture_carry, unchanged_carry;
} Profile;

typedef struct Entry {
  Value block;                 // weak: 0 once the block is dead
  MemprofBlock user;           // tracker's state (state is a root)
  uint64_t wosize;
  uint32_t n_samples;
  int profile;                 // index in profiles
  uint32_t pending;            // queued events naming this entry
  bool young;                  // in the young list (until the next minor GC)
  bool old_listed;             // in the old list (until a major GC finds it
                               // dead or no longer live)
  bool major_born, in_use;
  bool live;                   // block watched: false once dead or forgotten
  bool forgotten;              // no further callback (returned false, raised,
                               // stopped before its alloc event, discarded)
  uint8_t delivered;           // the last event delivered: 0 none, 1 + EventKind
                               // (ASSERT: alloc, at most one promote, one dealloc)
} Entry;
// Invariant: an entry slot is reused only when forgotten, with no pending
// event, and out of the young and old lists (maybe_release).

typedef enum EventKind { EV_ALLOC, EV_PROMOTE, EV_DEALLOC_MINOR, EV_DEALLOC_MAJOR } EventKind;

typedef struct Event {
  EventKind kind;
  uint32_t entry;
  // EV_ALLOC only: the callstack at the sample (valid until the interpreter
  // runs Minnow code other than callbacks: events are delivered before).
  const DebugInfo *site;
  uint32_t depth, unchanged;
  // A copy of the callers, made when an exception unwound frames the event
  // still needs (the stub stack no longer holds them); NULL otherwise.
  MemprofFrame *own;
  uint64_t allocation;         // which allocation (sub-blocks share it)
  uint32_t generation;         // EV_ALLOC: Callstacks.generation of its capture
} Event;

// Profiles sampling at once (engine.c part 5).
enum { MEMPROF_MAX_RUNNING = 4 };

struct Memprof {
  Sampler sampler;             // at the highest rate of the running profiles
  Callstacks stacks;
  Profile *profiles;
  uint32_t profile_count, profile_cap;
  int running[MEMPROF_MAX_RUNNING];  // the profiles sampling, in start order
  uint32_t running_count;
  Entry *entries;
  uint32_t entry_count, entry_cap;
  uint32_t *free_entries;
  uint32_t free_count, free_cap;
  uint32_t *young;             // indices of entries whose block is young
  uint32_t young_count, young_cap;
  // Indices of entries whose block is old: major-born ones at their sample,
  // young ones at their promotion, in that order. A major GC walks it, so the
  // order of its dealloc events does not depend on which slots were free.
  uint32_t *old;
  uint32_t old_count, old_cap;
  uint32_t *fresh_states;      // entries whose tracker state was set to a young
  uint32_t fresh_count, fresh_cap;  // value since the last minor GC
  Event *events;               // FIFO: events[event_head .. event_count)
  uint32_t event_head, event_count, event_cap;
  bool in_callback;
  uint32_t delivering;         // entry whose event is being delivered
  MemprofFrame *delivering_own;  // that event's own callers copy, if any
  uint32_t queued_depth;       // >= the depth of every queued alloc event
                               // without its own callers (callstack.c part 6)
  Event delivering_event;      // the event being delivered
  uint32_t callback_level;     // interpreter level that runs the callbacks
  uint64_t allocations;        // sampled allocations so far (Event.allocation)
  // Deliveries so far: events delivered with no Minnow code run between them
  // share one, and a trace reads the clock once for them (memtrace.c).
  uint64_t batches;
  bool states_set;             // a tracker set some entry's state to a block
                               // (else a major GC has no state to scan)
  bool direct;                 // an event is being delivered as it happens (part 4)
  bool retune_due;             // a profile stopped during a direct delivery:
                               // retune at the next safe point
                               // (memprof_run_callbacks)
  // The descriptor of the last allocation site sampled (engine.c site_of),
  // NULL before the first: a descriptor stays where it is and keeps its key
  // until frames_free (core/frames.h), so the pair stays true.
  const uint32_t *site_pc;
  const FrameDesc *site_desc;
  // Statistics (the bench and tests read them)
  uint64_t samples_taken, blocks_sampled;
};

// Queued alloc events whose callers reach above `depth` get their own copy
// of them (callstack.c part 6).
void callstacks_preserve_queued(Memprof *mp, uint32_t depth);

// The capture a sample makes (callstack.c). Inline: a sample whose
// callstack lost frames or gained one (the common cases) makes no call here.
static inline __attribute__((always_inline)) bool callstacks_capture(Vm *vm, Callstacks *cs, uint32_t *depth,
                                                                     uint32_t *unchanged) {
  Memprof *mp = vm->memprof;
  if (cs->depth < mp->queued_depth) callstacks_preserve_queued(mp, cs->depth);
  // The runs of the previous capture are overwritten from here on, even if
  // this one fails: no queued event reads them any more (part 7).
  cs->generation++;
  // Frames called by the entry function (which runs every module's top
  // level) end the callstack, as do a C boundary and the first stub.
  FrameBounds bounds = frames_bounds(vm->trampoline_ret, vm->entry_code, vm->entry_code_end);
  const uint32_t *ret = frames_ret(vm->base);
  if (!frames_from_c(&bounds, ret) && !frames_is_stub(ret) && !frames_from_entry(&bounds, ret)) {
    const uint32_t *caller_ret = frames_ret(frames_caller(vm->base, ret));
    if (!(frames_from_c(&bounds, caller_ret) || frames_is_stub(caller_ret) || frames_from_entry(&bounds, caller_ret))
        || cs->depth == cs->capacity)
      return callstacks_walk(vm, cs, depth, unchanged);
    // One new frame (a function called since the last capture, whose caller
    // was walked before, as a loop calling the allocating function makes):
    // what callstacks_walk does with it, without the walk's setup. It is walk
    // position 0, so it is stubbed, and it is a run of its own (its caller
    // returns to a stub or ends the stack, never to `ret`). When the last
    // capture had the same call there (the loop called the same function
    // again), the callstack is unchanged up to it: trackers get no new run.
    bool same = cs->depth < cs->captured_depth && cs->rets[cs->depth] == ret;
    cs->stubs[cs->stub_count++] = (StubbedFrame){cs->depth, (uint32_t)(vm->base - vm->stack_start)};
    vm->base[-1] = (Value)(uintptr_t)frames_stub_of(ret);
    cs->rets[cs->depth] = ret;
    if (same) {
      cs->new_runs = cs->runs + cs->capacity;
      cs->new_run_count = 0;
      cs->runs_from = ++cs->depth;
      *unchanged = cs->depth;
    } else {
      MemprofRun *run = cs->runs + cs->capacity - 1;
      *run = (MemprofRun){ret, 1};
      cs->new_runs = run;
      cs->new_run_count = 1;
      cs->runs_from = cs->depth++;
      *unchanged = cs->low_water;
    }
    *depth = cs->depth;
    cs->low_water = cs->captured_depth = cs->depth;
    callstacks_check_top(cs);
    return true;
  }
  // No frame pushed since the last capture (a loop sampling at one depth):
  // what callstacks_walk does with nothing walked, without its setup.
  cs->new_runs = cs->runs + cs->capacity;
  cs->new_run_count = 0;
  cs->runs_from = cs->depth;
  *unchanged = cs->low_water;
  *depth = cs->depth;
  cs->low_water = cs->captured_depth = cs->depth;
  callstacks_check_top(cs);
  return true;
}

#endif
