// retention.c - the end state of a trace (contract in retention.h).
//
// 1. Order. Sampling stops; the events already queued are delivered; a
//    major collection runs (gc_major: a minor collection, then mark and
//    sweep); its collect events are delivered, so the trace now says of
//    every sampled block whether it died. Then one breadth-first walk from
//    the roots (gc/retain.c) finds a shortest path to each sampled block
//    still alive, and each path is named and written beside the trace.
//    The trace itself closes afterwards, as before (memprof_finish).
// 2. Names: path_names.h.
// 3. Failure never changes the run: a file that cannot be written gets one
//    message on stderr; a trace written to something other than a regular
//    file (a pipe) gets the final collection but no file beside it.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "retention.h"
#include "path_names.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../../memprof/memprof.h"
#include "../../memprof/memtrace.h"
#include "../../trace/retain.h"

typedef struct Targets {
  Value *blocks;
  uint64_t *ids;
  uint32_t count, cap;
  bool failed;
} Targets;

static void add_target(void *data, Value block, uint64_t id) {
  Targets *t = data;
  if (t->failed) return;
  if (t->count == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    Value *b = realloc(t->blocks, cap * sizeof *b);
    if (b) t->blocks = b;
    uint64_t *i = b ? realloc(t->ids, cap * sizeof *i) : NULL;
    if (i) t->ids = i;
    if (!b || !i || cap < t->cap) {
      t->failed = true;
      return;
    }
    t->cap = cap;
  }
  t->blocks[t->count] = block;
  t->ids[t->count++] = id;
}

static uint64_t monotonic_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

// --- the end state (part 1) --------------------------------------------------

static bool regular_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

// Walks the heap and adds every target's path to w; the reason in *reason
// if no path could be computed.
static bool walk_paths(Vm *vm, const Targets *t, RetainWriter *w, RetainHeader *h, const char **reason) {
  uint64_t t0 = monotonic_us();
  GcRetain *r = gc_retain_walk(vm, t->blocks, t->count);
  if (!r) {
    *reason = "the heap walk for retaining paths ran out of memory";
    return false;
  }
  gc_retain_reached(r, &h->reachable_blocks, &h->reachable_words);
  GcRetainPath *p = malloc(sizeof *p);
  bool ok = p != NULL;
  for (uint32_t i = 0; ok && i < t->count; i++) {
    if (!gc_retain_path(r, i, p)) continue;   // not reached: a profiler-internal block
    RetainHop hops[PATH_NAMES_MAX_HOPS];
    RetainPath path = {.alloc_id = t->ids[i], .root = path_names_root(vm, &p->root), .hops = hops};
    path.hop_count = path_names_path(vm, p, hops);
    ok = retain_writer_add(w, &path);
  }
  free(p);
  gc_retain_free(r);
  h->walk_us = monotonic_us() - t0;
  if (!ok) *reason = "out of memory while naming retaining paths";
  return ok;
}

void retention_end_trace(Vm *vm) {
  MemtraceIdentity id;
  if (!MEMPROF_BUILT || !vm->memprof || !memtrace_identity(vm, &id)) return;
  memtrace_stop_sampling(vm);
  RetainHeader h = {.pid = id.pid, .start_time_us = id.start_time_us, .reason = ""};
  const char *reason = NULL;
  if (vm->options.memtrace_no_end_state) reason = "the end state was skipped (--memtrace-no-end-state)";
  else if (vm->gc.collecting) reason = "the run ended inside a collection";
  else if (!memprof_deliver_native(vm)) reason = "the run ended inside a Memprof callback";
  if (!reason) {
    uint64_t t0 = monotonic_us();
    gc_major(vm);
    h.gc_us = monotonic_us() - t0;
    if (!memprof_deliver_native(vm)) reason = "the final collection's events could not be delivered";
    else h.flags |= RETAIN_FINAL_GC;
  }
  if (!memtrace_identity(vm, &id)) return;   // a write error stopped the trace
  h.alloc_count = id.alloc_count;
  h.end_time_us = wall_us();
  size_t n = strlen(id.path);
  char *file = malloc(n + sizeof RETAIN_SUFFIX);
  if (!file) return;
  memcpy(file, id.path, n);
  memcpy(file + n, RETAIN_SUFFIX, sizeof RETAIN_SUFFIX);
  RetainWriter *w = regular_file(id.path) ? retain_writer_new() : NULL;
  if (!w) {
    free(file);
    return;
  }
  if (h.flags & RETAIN_FINAL_GC) {
    Targets t = {0};
    memtrace_each_live(vm, add_target, &t);
    h.live_samples = t.count;
    if (t.failed) reason = "out of memory while listing the live samples";
    else if (walk_paths(vm, &t, w, &h, &reason)) h.flags |= RETAIN_PATHS;
    else {   // a file without paths: drop the ones added
      retain_writer_free(w);
      w = retain_writer_new();
    }
    free(t.blocks);
    free(t.ids);
  }
  h.reason = reason ? reason : "";
  char err[512];
  if (!w) {
    free(file);
    return;
  }
  if (!retain_writer_finish(w, &h, file, err, sizeof err)) fprintf(stderr, "vm: --memtrace %s: %s\n", id.path, err);
  free(file);
}
