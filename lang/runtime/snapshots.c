// snapshots.c - what keeps memory while the program runs (contract in
// snapshots.h; design: docs/design.md, "Snapshots").
//
// 1. A snapshot: a minor collection first; if it leaves no sampled block of
//    the trace alive, that is the whole answer (no major collection: the
//    trace already says every sampled block died). Otherwise a major
//    collection whose mark records paths (gc_major_paths): the trace's live
//    sampled blocks are its targets, each path is named (path_names.h) and
//    appended as the mark reaches its block, so that memory stays bounded by
//    the writer's buffer, not the live samples. Then the trace is flushed
//    (it holds every event before the snapshot) and the end record written:
//    from then on the snapshot is whole in the file.
// 2. Triggers: Memtrace.snapshot() (now, from a primitive: a safe point);
//    SIGUSR1, the period's timer and a major cycle past the peak threshold
//    ask (vm->pending_snapshot) and the next allocation slow path takes it,
//    unless the innermost frame is the standard library's: a request waits
//    (every allocation takes the slow path meanwhile) until the program is
//    back in its own code, at most DEFER_MAX allocations, so that no holder
//    is a library function's local caught halfway (Hashtbl.resize's old
//    bucket array, its cells not yet moved to the new one).
//    After any snapshot whose live words pass the peak threshold, the next
//    threshold is FACTOR times them.
// 3. The end state is the last snapshot (trigger "end"): sampling stops,
//    the events queued for native trackers are delivered, the snapshot is
//    taken, and its collection's events delivered before the trace closes
//    (memprof_finish). When it cannot be taken (inside a collection or a
//    callback, --memtrace-no-end-state) its end record says why.
// 4. Failure never changes the run: a write error stops the snapshots (the
//    trace writer reports its own); the program goes on.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "snapshots.h"
#include "path_names.h"
#include "snapshot_pprof.h"
#include "backtrace.h"
#include "../../core/frames.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../../memprof/memprof.h"
#include "../../memprof/memtrace.h"
#include "../../trace/snapshot_writer.h"

typedef struct Taking {
  SnapshotWriter *w;
  SnapshotPprof *pprof;   // --memtrace-pprof-dir: this snapshot's profile, or NULL
  RetainHop hops[PATH_NAMES_MAX_HOPS];
  uint64_t paths_ns;   // time naming and writing paths
} Taking;

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void add_target(void *data, Value block, uint64_t id) { gc_path_target(data, block, id); }

static void list_targets(Vm *vm, GcPathRequest *req) { memtrace_each_live(vm, add_target, req); }

static void count_live(void *data, Value block, uint64_t id) {
  (void)block;
  (void)id;
  (*(uint64_t *)data)++;
}

static uint64_t live_samples(Vm *vm) {
  uint64_t n = 0;
  memtrace_each_live(vm, count_live, &n);
  return n;
}

static void reached(Vm *vm, GcPathRequest *req, uint64_t id, const GcRetainPath *p) {
  Taking *tk = req->data;
  uint64_t t0 = monotonic_ns();
  RetainPath path = {.alloc_id = id, .root = path_names_root(vm, &p->root), .hops = tk->hops};
  path.hop_count = path_names_path(vm, p, tk->hops);
  snapshot_writer_path(tk->w, &path);
  snapshot_pprof_block(vm, tk->pprof, id, &path);
  tk->paths_ns += monotonic_ns() - t0;
}

// Part 1: the snapshot's collection and paths, then its end record with
// `reason` ("" when none) unless the collection says more.
static void take(Vm *vm, SnapshotWriter *w, RetainTrigger trigger, const char *reason) {
  uint64_t t0 = monotonic_ns();
  MemtraceIdentity id;
  if (!memtrace_identity(vm, &id)) return;
  uint64_t number = snapshot_writer_snapshots(w), time_us = wall_us();
  snapshot_writer_begin(w, trigger, time_us, id.alloc_count);
  RetainSnapshotEnd e = {.reason = reason};
  Taking tk = {.w = w, .pprof = reason[0] ? NULL : snapshot_pprof_begin(vm, number, trigger, time_us)};
  if (!reason[0]) {
    gc_minor(vm);
    if (trigger == RETAIN_TRIGGER_END) memprof_deliver_native(vm);
    if (live_samples(vm) == 0) {
      e.flags = RETAIN_COLLECTED | RETAIN_PATHS;   // the minor collection decided every fate
    } else {
      GcPathRequest req = {.list_targets = list_targets, .reached = reached, .data = &tk};
      gc_major_paths(vm, &req);
      if (trigger == RETAIN_TRIGGER_END) memprof_deliver_native(vm);
      e.live_samples = live_samples(vm);
      e.marked_blocks = req.marked_blocks;
      e.marked_words = vm->gc.stats.live_words;
      if (req.ran) e.flags |= RETAIN_COLLECTED;
      if (req.ran && !req.failed && req.reached_count == e.live_samples) e.flags |= RETAIN_PATHS;
      else if (!req.ran) e.reason = "the collection could not run";
      else e.reason = "memory was short: the mark recorded no paths";
    }
    uint64_t peak = vm->gc.snapshot_peak_words;
    if (peak && vm->gc.stats.live_words > peak) {
      double next = (double)vm->gc.stats.live_words * vm->options.memtrace_snapshot_peak;
      vm->gc.snapshot_peak_words = next < 1.8e19 ? (uint64_t)next : UINT64_MAX;
    }
  }
  memtrace_flush(vm);
  e.heap_words = vm->gc.stats.heap_words;
  e.paths_us = tk.paths_ns / 1000;
  e.pause_us = (monotonic_ns() - t0) / 1000;
  if (!snapshot_writer_end(w, &e)) fprintf(stderr, "vm: --memtrace: %s; no more snapshots\n", snapshot_writer_error(w));
  snapshot_pprof_end(vm, tk.pprof, e.flags & RETAIN_PATHS);
}

static const char *cannot_take(const Vm *vm) {
  if (vm->gc.collecting) return "a snapshot cannot be taken inside a collection";
  return NULL;
}

int64_t snapshots_take_now(Vm *vm, const char **why) {
  SnapshotWriter *w = MEMPROF_BUILT && vm->memprof ? memtrace_snapshots(vm) : NULL;
  *why = NULL;
  if (!w) *why = vm->memtrace ? "the trace has no snapshot file (it is not a regular file)" : "no trace is being written";
  else *why = cannot_take(vm);
  if (*why) return -1;
  uint64_t number = snapshot_writer_snapshots(w);
  take(vm, w, RETAIN_TRIGGER_CALL, "");
  return (int64_t)number;
}

enum { DEFER_MAX = 1 << 20 };

// Whether the allocation at vm->pc stands in a function of the standard
// library (part 2).
static bool in_stdlib(const Vm *vm) {
  const FrameDesc *d = vm->pc ? frames_find(vm->frames, vm->pc) : NULL;
  return d && d->debug_count && backtrace_stdlib_file(d->debug[0]->file);
}

void snapshots_take_pending(Vm *vm) {
  VmSnapshotAsk ask = (VmSnapshotAsk)vm->pending_snapshot;
  if (vm->snapshot_deferred < DEFER_MAX && in_stdlib(vm)) {
    vm->snapshot_deferred++;
    return;   // still pending: the next allocation asks again
  }
  vm->snapshot_deferred = 0;
  SnapshotWriter *w = MEMPROF_BUILT && vm->memprof ? memtrace_snapshots(vm) : NULL;
  if (w && !cannot_take(vm)) {
    RetainTrigger trigger = ask == VM_SNAPSHOT_SIGNAL ? RETAIN_TRIGGER_SIGNAL
                            : ask == VM_SNAPSHOT_PERIOD ? RETAIN_TRIGGER_PERIOD
                                                        : RETAIN_TRIGGER_PEAK;
    take(vm, w, trigger, "");
  }
  vm->pending_snapshot = 0;
  vm_update_limits(vm);
}

void snapshots_arm(Vm *vm) {
  if (!MEMPROF_BUILT || !vm->memprof || !memtrace_snapshots(vm)) return;
  vm->take_snapshot = snapshots_take_pending;
  vm_catch_snapshot_signals(vm, vm->options.memtrace_snapshot_every);
  double factor = vm->options.memtrace_snapshot_peak;
  if (factor > 0) {
    double first = factor * (double)(vm->young_end - vm->young_start);
    vm->gc.snapshot_peak_words = first < 1.8e19 ? (uint64_t)first : UINT64_MAX;
  }
}

void snapshots_disarm(Vm *vm) {
  if (!vm->take_snapshot) return;
  vm_release_snapshot_signals(vm);
  vm->take_snapshot = NULL;
  vm->gc.snapshot_peak_words = 0;
  vm->pending_snapshot = 0;
  vm_update_limits(vm);
}

void snapshots_end_trace(Vm *vm) {
  MemtraceIdentity id;
  if (!MEMPROF_BUILT || !vm->memprof || !memtrace_identity(vm, &id)) return;
  SnapshotWriter *w = memtrace_snapshots(vm);
  if (w && snapshot_writer_has_end_state(w)) return;
  memtrace_stop_sampling(vm);
  if (vm->take_snapshot) snapshots_disarm(vm);
  const char *reason = "";
  if (vm->options.memtrace_no_end_state) reason = "the end state was skipped (--memtrace-no-end-state)";
  else if (vm->gc.collecting) reason = "the run ended inside a collection";
  else if (!memprof_deliver_native(vm)) reason = "the run ended inside a Memprof callback";
  if (w) take(vm, w, RETAIN_TRIGGER_END, reason);
}
