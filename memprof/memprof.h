// memprof.h - the statistical memory profiler: the hooks the VM and GC call,
// and the tracker interface through which it reports (memprof/tracker.h).
// Design: the numbered comment at the top of memprof/engine.c;
// docs/design.md ("Memprof").
//
// Who calls what:
//   gc/heap.c     memprof_sample_young   (allocation reached young_trigger)
//                 memprof_sample_major   (major-heap allocations while sampling)
//   gc/minor.c    memprof_minor_gc_done, memprof_renew_trigger
//   gc/major.c    memprof_major_mark_done
//   gc/roots.c    memprof_scan_roots
//   lang/runtime/interp.c   memprof_run_callbacks at the end of allocation slow paths
//                 when vm->memprof_pending, and from POLL (vm_request_poll),
//                 memprof_stub_return, memprof_unwind
// and memprof calls back vm_request_poll / vm_cancel_poll (core/vm_state.h) and
// vm_update_limits when callbacks become pending or are delivered.
// None of these runs Minnow code except memprof_run_callbacks.
#ifndef MINNOW_MEMPROF_H
#define MINNOW_MEMPROF_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/vm_state.h"

typedef struct Memprof Memprof;

// Creates the profiler state (no profile running). Seed: MINNOW_SEED from the
// environment if set, else a fixed seed.
Memprof *memprof_new(Vm *vm);
// The VM exits: sampling stops, events queued for native trackers are
// delivered (outside a collection or a callback), and every profile not
// discarded is released (its tracker finishes its output). Runs no Minnow
// code. Idempotent.
void memprof_finish(Vm *vm);
void memprof_free(Vm *vm);

// --- sampling ---------------------------------------------------------------
// The allocation of `whsize` words just below `old_young_ptr` (sub-blocks of
// sizes sub_whsizes[0..n_sub-1], program order = decreasing addresses) holds
// at least one sampled word. Counts the samples of each sub-block, captures
// callstacks (vm->pc, vm->base must be current), creates tracking entries and
// queues alloc callbacks; moves vm->young_trigger below the allocation.
void memprof_sample_young(Vm *vm, Value *old_young_ptr, uint64_t whsize,
                          const uint32_t *sub_whsizes, uint32_t n_sub);
// A block of `wosize` fields was allocated in the major heap: draws its sample
// count (binomial) and tracks it if sampled, as sub-block `sub` of the
// safe point's site (0 but for a pretenured combined allocation).
void memprof_sample_major(Vm *vm, Value block, uint64_t wosize, uint32_t sub);
// Draws the next sampled word of the (fresh) minor heap; sets young_trigger.
void memprof_renew_trigger(Vm *vm);

// --- tracking ---------------------------------------------------------------
void memprof_minor_gc_done(Vm *vm);
void memprof_major_mark_done(Vm *vm);
void memprof_scan_roots(Vm *vm, RootVisitor visit, void *data);
// The end of a trace (docs/design.md, "The end state"): delivers the events
// queued for native trackers now, a final collection's among them. False,
// with the queue left as it is, inside a callback or a collection.
bool memprof_deliver_native(Vm *vm);
// Visits each block that profile `id` tracks, whose alloc event its tracker
// received and that is alive (not yet reported dead nor forgotten), with the
// tracker's `user` word for it.
void memprof_each_live(Vm *vm, int id, void (*fn)(void *data, Value block, uint64_t user), void *data);

// --- callbacks ----------------------------------------------------------------
// Runs queued callbacks (at a safe point: the allocating instruction is done).
// May raise: an exception from a callback propagates from here.
void memprof_run_callbacks(Vm *vm);

// --- the stack watermark (memprof/callstack.c) --------------------------------
// A frame walked by memprof returned (MEMPROF_RETURN ran): pops its stub and
// returns the address to resume at.
const uint32_t *memprof_stub_return(Vm *vm, const uint32_t *stub_pc);
// An exception unwound the stack down to the frame whose return address is
// ret_sp[-1] (the return stack's top at its handler).
void memprof_unwind(Vm *vm, const uint32_t *const *ret_sp);
// An exception reached a handler at the current interpreter level: if it left
// a callback delivery unfinished, memprof finishes it (lang/runtime/interp.c).
void memprof_exception_caught(Vm *vm);

#endif
