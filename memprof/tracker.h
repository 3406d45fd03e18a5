// tracker.h - the one interface through which memprof reports what it samples.
// The Memprof module (lang/lib/memprof_module.c) adapts Minnow closures to it; the
// counting tracker (memprof/counter.c) and the trace writer are C trackers.
//
// Every callback runs at a safe point of the interpreter (never inside an
// allocation or a collection), with sampling suspended, one at a time, in the
// order the events happened; an immediate tracker's (below) may run inside
// the allocation or collection, still one at a time and in that order. For each block: alloc, then at most one promote,
// then exactly one dealloc, unless a callback returns false (the block is
// then forgotten: no further callback) or the profile is discarded.
#ifndef MINNOW_TRACKER_H
#define MINNOW_TRACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/frames.h"
#include "../core/value.h"

typedef struct Vm Vm;

// What the tracker may keep per tracked block. `state` is a GC root (the
// Memprof module keeps the callback's result there); `user` is free for C.
typedef struct MemprofBlock {
  Value state;
  uint64_t user;
} MemprofBlock;

// A caller in a callstack: the return address of its call, a code that
// stands for the call site for the whole run (equal codes, equal sites).
// memprof_frame_debug gives its debug entry; capturing a callstack resolves
// none, so a tracker pays for the frames it looks at, and a trace writer can
// write each code's location once.
typedef const uint32_t *MemprofFrame;
const DebugInfo *memprof_frame_debug(const Vm *vm, MemprofFrame frame);

// `count` (>= 1) consecutive callers equal to `frame`: a recursion's run.
typedef struct MemprofRun {
  MemprofFrame frame;
  uint32_t count;
} MemprofRun;

// One sampled block. Its callstack is `site` (the allocating expression,
// innermost) below `callers` (outermost first: callers[caller_count-1] is the
// call site in the function that allocated), complete at every rate.
// `unchanged`: callers[0 .. unchanged) are the first callers of the previous
// sample this tracker's alloc callback received from the same profile (0 for
// the first one): a consumer that encodes callstacks by difference (a trace
// writer) or keeps a tree of them (the Memprof module) need not look at them.
// Samples the tracker never received (cancelled by a stop, forgotten with a
// raising sibling sub-block) do not count. It is a lower bound: more callers
// may be equal. `callers` points into memprof's side stack (or an event's own
// copy): valid until the alloc callback returns, collections and Minnow code
// run by the callback included; copy what you keep. `site` and the debug
// entries of callers live as long as the VM.
// Inlined debug entries are not expanded here (see DebugInfo.inlined_into).
// `runs`, when not NULL, describes callers[runs_from .. caller_count) as
// `run_count` runs, outermost first, consecutive runs of different frames
// (runs_from >= unchanged): the frames walked by this sample's capture, so a
// tracker that codes runs need not read them one by one. NULL when not at
// hand (the event waited behind another capture): read `callers`. Valid as
// long as `callers` would be. `callers` is NULL for a tracker that reads
// runs (MemprofTracker.reads_runs), unless the event had to keep its own
// copy: memprof keeps its side stack as runs, and lists the callers one by
// one only when asked (memprof_callers).
typedef struct MemprofSample {
  uint64_t wosize;             // fields, header excluded
  uint32_t n_samples;          // >= 1: sampled words, header included
  bool major;                  // born in the major heap
  bool external;               // memory outside the GC heap (source "external")
  const DebugInfo *site;
  const MemprofFrame *callers;
  uint32_t caller_count;
  uint32_t unchanged;
  const MemprofRun *runs;
  uint32_t run_count, runs_from;
} MemprofSample;

typedef struct MemprofTracker {
  // May run Minnow code; may raise (vm_raise): the exception propagates from
  // the allocation point and the block is forgotten. Return false to forget
  // the block. Any of the four may be NULL (alloc NULL: nothing is tracked).
  bool (*alloc)(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *sample);
  bool (*promote)(Vm *vm, void *data, MemprofBlock *block);
  void (*dealloc)(Vm *vm, void *data, MemprofBlock *block, bool major);
  // The profile was discarded, or the VM exits (memprof_finish): finish what
  // the tracker writes or reports, and release `data`.
  void (*release)(Vm *vm, void *data);
  // GC roots of the tracker itself (the Memprof module's closures).
  void (*scan_roots)(Vm *vm, void *data, void (*visit)(Vm *, Value *, void *), void *visit_data);
  void *data;
  // The callbacks are C that runs no Minnow code and never raises: when the
  // VM exits, events still queued for this tracker are delivered before its
  // release (memprof_finish); a Minnow tracker's are dropped.
  bool native;
  // Native, and more: the callbacks neither allocate in the GC heap nor
  // collect, and touch nothing of the VM but memprof_frame_debug and
  // memprof_stop_profile. memprof may then deliver an event as it happens,
  // inside the allocation or collection that made it, when no event waits
  // before it (engine.c part 4): the same events in the same order, without
  // the queue and the poll. The safe-point rule above does not hold for them.
  bool immediate;
  // The alloc callback is given callers == NULL (above) and asks
  // memprof_callers for them when it needs them one by one.
  bool reads_runs;
  // The alloc callback reads the site alone: memprof captures no callstack
  // for this profile's samples (caller_count 0, callers and runs NULL), so a
  // sample costs it no walk of the stack (pretenuring's feedback).
  bool site_only;
} MemprofTracker;

// The callers of `sample`, one by one (MemprofSample.callers, listed if it
// is NULL). Only during the alloc callback that was given the sample.
const MemprofFrame *memprof_callers(Vm *vm, const MemprofSample *sample);

// A tracker callback that ran Minnow code which raised (interp_call returned
// false, the exception in vm->exn) calls this: the block is forgotten and the
// exception propagates from the allocation point. Never returns.
_Noreturn void memprof_callback_raised(Vm *vm);

// Starts a profile sampling each allocated word with probability `rate`
// (0 < rate <= 1), keeping at most `callstack_size` frames per sample for
// trackers that copy callstacks (0: no limit). Several profiles may sample
// at once, each at its own rate (memprof/engine.c part 5). Returns its id,
// or -1 if MEMPROF_MAX_RUNNING profiles are running already.
int memprof_start_profile(Vm *vm, double rate, uint32_t callstack_size, const MemprofTracker *tracker);
// Stops profile `id` sampling (its tracked blocks keep reporting). False if
// it was not running.
bool memprof_stop_profile(Vm *vm, int id);
// Forgets every block of the stopped profile `id`: no further callback.
// False if `id` is running or unknown.
bool memprof_discard_profile(Vm *vm, int id);
// Profile `id`'s callstack_size (0 if unknown).
uint32_t memprof_callstack_size(const Vm *vm, int id);
// Reseeds the sampler (tests use fixed seeds).
void memprof_set_seed(Vm *vm, uint64_t seed);

#endif
