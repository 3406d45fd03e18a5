// memtrace.c - the trace writer behind ./vm --memtrace FILE and the Memtrace
// module: a native memprof tracker (tracker.h) that hands every event to the
// encoder of trace/writer.c, which writes Jane Street memtrace's format
// (docs/trace-format.md).
//
// 1. Frame codes. A caller is its return address (code words are 4-byte
//    aligned: even), an allocation site its debug entry's id as 2 * id + 1.
//    Both stand for one call site for the whole run (memprof_frame_debug),
//    so the writer resolves each once (locate) and writes its location once.
// 2. Callstacks by difference, in runs. `runs` holds the previous sample's
//    callstack, outermost first, its site last, as maximal runs of equal
//    codes (trace/writer.h TraceRun: a recursion is one run). A sample's
//    callers [0, unchanged) are those of the previous sample this tracker
//    received (tracker.h). From there on the new frames are taken as runs
//    (memprof's capture hands them so: MemprofSample.runs; the few callers
//    it does not cover are read one by one), compared run by run with the
//    previous callstack for the longest common prefix, and written over
//    it; the writer is told that prefix (trace_writer_alloc_runs) and codes
//    runs too. A sample costs its new runs, not its frames nor its depth.
// 3. Ids. The writer numbers allocations 0, 1, 2...; a tracked block keeps
//    its id in MemprofBlock.user for its promote and collect events.
// 4. Failure. A write error (disk full, a pipe closed) stops sampling and
//    tracing with one message on stderr; the program runs on. The trace up
//    to its last whole packet stays readable.
// 5. Snapshots. A trace written to a regular file has FILE.retain beside
//    it, created afresh when the trace starts (trace/snapshot_writer.h):
//    lang/runtime/snapshots.c takes snapshots into it while the program
//    runs and, before the trace closes, its end state, through
//    memtrace_identity, memtrace_each_live, memtrace_flush (the trace holds
//    every event before the snapshot is whole) and memtrace_stop_sampling.
//    The profile's release (memprof_finish: every way out of the VM;
//    Memtrace.stop) then flushes and closes the trace and the file. Blocks
//    still alive then get no collect event: a reader counts them as live at
//    the end, and reachable.
// 6. Inputs. Neither the trace nor its companion FILE.retain (removed at
//    the start as stale, written at the end) may name a source file of the
//    program (the script, a module it imported: every Proto's file), the
//    same device and inode, through links: refused before anything is
//    opened or removed.
// 7. Times. Events come in batches (Memprof.batches: the alloc events of
//    one allocation, the collect events of one collection, or what one
//    memprof_run_callbacks delivers) with no Minnow code between them,
//    within microseconds: the clock is read once per batch, and the batch's
//    events carry that time, never earlier than the previous event's (the
//    writer keeps times monotonic). The tracker is immediate (tracker.h):
//    memprof hands it an event as it happens unless other events wait
//    before it, when it comes at the next safe point with them.
// 8. Callstacks of live blocks, for --memtrace-pprof-dir only: the trie
//    node of each run of `runs` is kept beside it (run_nodes), updated from
//    the first run a sample changed, so a sample costs its new runs here
//    too; each live sampled block's id maps to its callstack's node, its
//    samples and its size (an open-addressing table, 24 bytes an entry at
//    load at most one half, entries removed at the block's
//    collect event: memory follows the live samples and the distinct
//    callstacks). Memory short, or memtrace_stop_stacks: one message, no
//    more profiles (lang/runtime/snapshot_pprof.c reads all this).
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "memprof_internal.h"
#include "memtrace.h"
#include "stack_trie.h"
#include "../core/frames.h"
#include "../core/image.h"
#include "../core/vm_state.h"
#include "../trace/snapshot_writer.h"
#include "../trace/writer.h"
#include "../base/grow.h"
#include "../base/hash.h"

// A live sampled block's callstack (part 8): slot empty when id == EMPTY_ID.
typedef struct LiveStack {
  uint64_t id;
  uint32_t node, samples;
  uint64_t wosize;
} LiveStack;
enum { EMPTY_ID = UINT64_MAX };

typedef struct Tracer {
  TraceWriter *writer;
  char *path;                  // for messages
  TraceRun *runs;              // previous sample's callstack (part 2)
  uint32_t run_count, run_cap;
  MemprofRun *tail;            // scratch: new callers as runs, when memprof has none
  uint32_t tail_cap;
  int profile;                 // memprof profile id
  bool failed;                 // a write error stopped it (reported once)
  uint64_t pid, start_time_us; // as the trace info says
  double rate;                 // the sampling rate
  uint64_t clock_batch, clock_us;  // the delivery batch the clock was read in, and its time
  SnapshotWriter *snapshots;   // FILE.retain (part 5), NULL when none
  // Part 8, kept only for --memtrace-pprof-dir (stacks != NULL):
  StackTrie *stacks;           // every callstack sampled, as a trie of runs
  uint32_t *run_nodes;         // the trie node ending each of `runs`
  uint32_t run_nodes_cap;
  LiveStack *live;             // allocation id -> its callstack's node, for live blocks
  uint64_t live_count, live_mask;
  bool stacks_failed;          // memory ran short: no more stacks kept
} Tracer;

static uint64_t now_us(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

// The time of an event: the clock is read once per delivery batch (part 7).
static inline uint64_t event_time(const Vm *vm, Tracer *t) {
  uint64_t batch = vm->memprof->batches;
  if (batch != t->clock_batch) {
    t->clock_batch = batch;
    t->clock_us = now_us();
  }
  return t->clock_us;
}

static uint64_t site_code(const DebugInfo *site) { return 2 * (uint64_t)site->id + 1; }

// TraceLocate: the location chain of a code, the code it was inlined into
// first ("caller first", as memtrace writes inlined frames).
static uint32_t locate(void *data, uint64_t code, TraceLocation *out, uint32_t max) {
  const Vm *vm = data;
  const DebugInfo *d = memtrace_code_debug(vm, code);
  uint32_t n = 0;
  for (const DebugInfo *e = d; e; e = e->inlined_into) n++;
  if (n > max) n = max;
  uint32_t i = n;
  for (const DebugInfo *e = d; e && i > 0; e = e->inlined_into) {
    out[--i] = (TraceLocation){e->function, e->file, e->line, e->start_col, e->end_col};
  }
  return n;
}

// A write error: one message, then no more samples (the events of blocks
// already tracked are dropped by the writer, which no longer writes).
static __attribute__((noinline)) void writer_failed(Vm *vm, Tracer *t, const char *err) {
  t->failed = true;
  fprintf(stderr, "vm: --memtrace %s: %s; tracing stopped, the program goes on\n", t->path, err);
  memprof_stop_profile(vm, t->profile);
}

static inline void check_writer(Vm *vm, Tracer *t) {
  const char *err = trace_writer_error(t->writer);
  if (__builtin_expect(err != NULL, 0) && !t->failed) writer_failed(vm, t, err);
}

static bool grow(void **array, uint32_t *cap, uint32_t need, size_t size) {
  void *r = grow_array(*array, cap, need, size, 64);
  if (!r) return false;
  *array = r;
  return true;
}

// Makes t->runs the sample's callstack: frames [0, u) kept, then the
// maximal runs `pieces` (consecutive ones differ) and the site. Returns how
// many of its first frames equal the previous callstack's (the longest such
// prefix), found run by run as the runs are written: while the prefix
// holds, the old run compared (o) is never below the one written (w).
// A callstack's last run is its site alone: a site's code is odd, a
// caller's even (part 1), so the site never joins the run before it. When
// the sample's callers are the previous sample's (no new piece, and the
// previous callstack was those u callers and its site), only that run's
// code changes.
static uint32_t update_runs(Tracer *t, uint32_t u, const MemprofRun *pieces, uint32_t np, uint64_t site,
                            uint32_t *changed_from) {
  TraceRun *runs = t->runs;
  uint32_t old_n = t->run_count, w = 0, o = 0, oend = old_n ? runs[0].end : 0, common = UINT32_MAX;
  if (np == 0 && old_n > 0 && runs[old_n - 1].end == u + 1) {
    common = runs[old_n - 1].code == site ? u + 1 : u;
    runs[old_n - 1].code = site;
    *changed_from = old_n - 1;
    return common;
  }
  *changed_from = 0;
  if (u > 0) {
    // r: the run holding frame u - 1; the runs before it stay as they are.
    uint32_t r = 0, hi = old_n - 1;
    while (r < hi) {
      uint32_t mid = (r + hi) / 2;
      if (runs[mid].end >= u) hi = mid;
      else r = mid + 1;
    }
    uint32_t rend = runs[r].end;
    runs[r].end = u;
    w = r + 1;
    *changed_from = r;
    o = rend > u ? r : r + 1;   // the old run holding frame u
    oend = rend > u ? rend : o < old_n ? runs[o].end : 0;
  }
  uint32_t pos = u;
  for (uint32_t i = 0; i <= np; i++) {
    uint64_t c = i < np ? (uint64_t)(uintptr_t)pieces[i].frame : site;
    uint32_t m = i < np ? pieces[i].count : 1;
    if (common == UINT32_MAX) {
      if (o >= old_n || runs[o].code != c) {
        common = pos;
      } else if (oend - pos != m) {
        common = pos + (m < oend - pos ? m : oend - pos);
      } else {
        o++;
        oend = o < old_n ? runs[o].end : 0;
      }
    }
    if (w > 0 && runs[w - 1].code == c) runs[w - 1].end += m;   // the first piece, into run r
    else runs[w++] = (TraceRun){c, pos + m};
    pos += m;
  }
  t->run_count = w;
  return common == UINT32_MAX ? pos : common;
}

// --- part 8: the callstacks of live blocks ------------------------------------

static uint64_t id_hash(uint64_t id) { return hash_mix(id); }

static void stacks_off(Tracer *t, const char *why) {
  if (!t->stacks_failed) fprintf(stderr, "vm: --memtrace-pprof-dir: %s; no more profiles\n", why);
  t->stacks_failed = true;
  stack_trie_free(t->stacks);
  t->stacks = NULL;
}

static bool live_grow(Tracer *t) {
  uint64_t cap = t->live ? 2 * (t->live_mask + 1) : 4096;
  LiveStack *slots = malloc(cap * sizeof *slots);
  if (!slots) return false;
  for (uint64_t i = 0; i < cap; i++) slots[i].id = EMPTY_ID;
  for (uint64_t i = 0; t->live && i <= t->live_mask; i++) {
    if (t->live[i].id == EMPTY_ID) continue;
    uint64_t h = id_hash(t->live[i].id) & (cap - 1);
    while (slots[h].id != EMPTY_ID) h = (h + 1) & (cap - 1);
    slots[h] = t->live[i];
  }
  free(t->live);
  t->live = slots;
  t->live_mask = cap - 1;
  return true;
}

// The trie nodes of runs [from, run_count), then id's entry.
static void keep_stack(Tracer *t, uint32_t from, uint64_t id, uint32_t samples, uint64_t wosize) {
  if (!grow((void **)&t->run_nodes, &t->run_nodes_cap, t->run_count, sizeof *t->run_nodes) ||
      ((t->live_count + 1) * 2 > (t->live ? t->live_mask + 1 : 0) && !live_grow(t))) {
    stacks_off(t, "out of memory keeping callstacks");
    return;
  }
  for (uint32_t i = from; i < t->run_count; i++) {
    uint32_t parent = i ? t->run_nodes[i - 1] : 0, prev_end = i ? t->runs[i - 1].end : 0;
    uint32_t node = stack_trie_child(t->stacks, parent, t->runs[i].code, t->runs[i].end - prev_end);
    if (node == UINT32_MAX) {
      stacks_off(t, "out of memory keeping callstacks");
      return;
    }
    t->run_nodes[i] = node;
  }
  uint64_t h = id_hash(id) & t->live_mask;
  while (t->live[h].id != EMPTY_ID) h = (h + 1) & t->live_mask;
  t->live[h] = (LiveStack){id, t->run_count ? t->run_nodes[t->run_count - 1] : 0, samples, wosize};
  t->live_count++;
}

// Removes id's entry (backward-shift deletion: no tombstones).
static void forget_stack(Tracer *t, uint64_t id) {
  uint64_t h = id_hash(id) & t->live_mask;
  while (t->live[h].id != id) {
    if (t->live[h].id == EMPTY_ID) return;
    h = (h + 1) & t->live_mask;
  }
  for (uint64_t hole = h, j = h;;) {
    j = (j + 1) & t->live_mask;
    if (t->live[j].id == EMPTY_ID) {
      t->live[hole].id = EMPTY_ID;
      break;
    }
    uint64_t home = id_hash(t->live[j].id) & t->live_mask;
    // j's entry may move to the hole iff its home is not in (hole, j].
    if (((j - home) & t->live_mask) >= ((j - hole) & t->live_mask)) {
      t->live[hole] = t->live[j];
      hole = j;
    }
  }
  t->live_count--;
}

static bool on_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  Tracer *t = data;
  if (t->failed) return false;
  uint32_t u = t->run_count ? s->unchanged : 0;
  const MemprofRun *pieces = s->runs;
  uint32_t np = s->run_count;
  if (!s->runs || s->runs_from != u) {
    // The callers past u as runs, those memprof's capture did not hand over
    // read one by one.
    uint32_t from = s->runs ? s->runs_from : s->caller_count;
    if (!grow((void **)&t->tail, &t->tail_cap, from - u + np, sizeof *t->tail))
      vm_out_of_memory(vm, "memtrace callstack");
    MemprofRun *tail = t->tail;
    const MemprofFrame *callers = memprof_callers(vm, s);
    uint32_t n = 0;
    for (uint32_t i = u; i < from; i++) {
      if (n > 0 && tail[n - 1].frame == callers[i]) tail[n - 1].count++;
      else tail[n++] = (MemprofRun){callers[i], 1};
    }
    for (uint32_t i = 0; i < np; i++) {
      if (n > 0 && tail[n - 1].frame == pieces[i].frame) tail[n - 1].count += pieces[i].count;
      else tail[n++] = pieces[i];
    }
    pieces = tail;
    np = n;
  }
  if (!grow((void **)&t->runs, &t->run_cap, t->run_count + np + 2, sizeof *t->runs))
    vm_out_of_memory(vm, "memtrace callstack");
  uint32_t changed_from;
  uint32_t common = update_runs(t, u, pieces, np, site_code(s->site), &changed_from);
  TraceSource source = s->external ? TRACE_SOURCE_EXTERNAL : s->major ? TRACE_SOURCE_MAJOR : TRACE_SOURCE_MINOR;
  if (!trace_writer_alloc_runs(t->writer, event_time(vm, t), s->wosize, s->n_samples, source, t->runs, t->run_count,
                               common, &block->user))
    check_writer(vm, t);
  if (t->stacks && !t->failed) keep_stack(t, changed_from, block->user, s->n_samples, s->wosize);
  return !t->failed;
}

static bool on_promote(Vm *vm, void *data, MemprofBlock *block) {
  Tracer *t = data;
  if (t->failed) return false;
  if (!trace_writer_promote(t->writer, event_time(vm, t), block->user)) check_writer(vm, t);
  return !t->failed;
}

static void on_dealloc(Vm *vm, void *data, MemprofBlock *block, bool major) {
  (void)major;
  Tracer *t = data;
  if (t->failed) return;
  if (!trace_writer_collect(t->writer, event_time(vm, t), block->user)) check_writer(vm, t);
  if (t->stacks) forget_stack(t, block->user);
}

static void on_release(Vm *vm, void *data) {
  Tracer *t = data;
  char err[256];
  TraceWriterStats stats;
  trace_writer_stats(t->writer, &stats);
  if (stats.cut_deep)  // deeper than any reader keeps (trace/format.h part 3)
    fprintf(stderr, "vm: --memtrace %s: %" PRIu64 " sampled callstacks were deeper than %d frames: the trace holds "
            "their outermost %d\n", t->path, stats.cut_deep, TRACE_MAX_FRAMES, TRACE_MAX_FRAMES);
  if (!trace_writer_finish(t->writer, err, sizeof err) && !t->failed)
    fprintf(stderr, "vm: --memtrace %s: %s\n", t->path, err);
  if (vm->memtrace == t) vm->memtrace = NULL;
  snapshot_writer_close(t->snapshots);
  stack_trie_free(t->stacks);
  free(t->run_nodes);
  free(t->live);
  free(t->path);
  free(t->runs);
  free(t->tail);
  free(t);
}

// ---------------------------------------------------------------------------
// Trace info

// Appends printf-formatted text to buf (of `cap` bytes), cut at the end.
static void append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...) {
  size_t len = strlen(buf);
  if (len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
}

// What the trace says of the run: the VM's executable, the script and its
// arguments (context), the VM's parameters.
static void describe_run(const Vm *vm, double rate, char *exe, size_t exe_cap, char *context, size_t ctx_cap,
                         char *params, size_t params_cap) {
  ssize_t n = readlink("/proc/self/exe", exe, exe_cap - 1);
  if (n <= 0) snprintf(exe, exe_cap, "vm");
  else exe[n] = 0;
  context[0] = 0;
  for (int i = 0; i < vm->argc; i++) append(context, ctx_cap, "%s%s", i ? " " : "", vm->argv[i]);
  if (vm->argc == 0 && vm->main_path) append(context, ctx_cap, "%s", vm->main_path);
  params[0] = 0;
  append(params, params_cap, "vm=minnow rate=%g minor_words=%llu stack_words=%llu max_heap_words=%llu", rate,
         (unsigned long long)vm->options.minor_words, (unsigned long long)vm->options.stack_words,
         (unsigned long long)vm->options.max_heap_words);
  if (vm->options.gc_stress) append(params, params_cap, " gc_stress=1");
  if (vm->options.seed_text) append(params, params_cap, " seed=%s", vm->options.seed_text);
}

// ---------------------------------------------------------------------------
// Starting and stopping

// The program's source file that `path` names (part 6), or NULL.
static const char *source_named(const Vm *vm, const char *path) {
  struct stat out, src;
  if (stat(path, &out) != 0) return NULL;
  const char *last = NULL;
  for (uint32_t i = 0; i < vm->proto_count; i++) {
    const char *file = vm->protos[i]->file;
    if (!file || file == last) continue;
    last = file;
    if (stat(file, &src) == 0 && src.st_dev == out.st_dev && src.st_ino == out.st_ino) return file;
  }
  return NULL;
}

// Part 6: false with the reason in err when the trace or FILE.retain is a source.
static bool outputs_apart(const Vm *vm, const char *path, char *err, size_t err_len) {
  char *retain = retain_file_name(path);
  if (!retain) {
    snprintf(err, err_len, "out of memory");
    return false;
  }
  const char *src = source_named(vm, path), *name = path;
  if (!src && (src = source_named(vm, retain))) name = retain;
  if (src) snprintf(err, err_len, "%s is the program's source %s (the same file): refused", name, src);
  free(retain);
  return !src;
}

static bool regular_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

// Part 5: FILE.retain, afresh (a file left by an earlier run of the same
// name is stale), beside a trace that is a regular file. Failing to create
// it costs the snapshots only: one message, and the trace goes on.
static void open_snapshots(Tracer *t, const char *path) {
  if (!regular_file(path)) return;
  char *name = retain_file_name(path);
  char err[512] = "out of memory";
  if (name) {
    unlink(name);
    t->snapshots = snapshot_writer_open(name, t->pid, t->start_time_us, err, sizeof err);
  }
  if (!t->snapshots) fprintf(stderr, "vm: --memtrace %s: %s; no snapshots nor end state\n", path, err);
  free(name);
}

bool memtrace_start(Vm *vm, const char *path, double rate, int version, char *err, size_t err_len) {
  if (!vm->memprof) {
    snprintf(err, err_len, "this build has no profiler (vm-boehm or vm-noprof)");
    return false;
  }
  ASSERT(rate > 0 && rate <= 1, "the caller validated the rate");
  if (!outputs_apart(vm, path, err, err_len)) return false;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
    return false;
  }
  Tracer *t = calloc(1, sizeof *t);
  char exe[1024], context[2048], params[512], host[256] = "";
  gethostname(host, sizeof host - 1);
  describe_run(vm, rate, exe, sizeof exe, context, sizeof context, params, sizeof params);
  TraceInfo info = {.sample_rate = rate, .word_size = 64, .executable = exe, .host = host,
                    .runtime_params = params, .context = context, .pid = (uint64_t)getpid(),
                    .start_time_us = now_us(), .version = (uint16_t)version};
  char werr[256] = "";
  if (t) t->path = strdup(path);
  if (t && t->path) t->writer = trace_writer_new(fd, true, &info, locate, vm, werr, sizeof werr);
  if (!t || !t->path || !t->writer) {
    snprintf(err, err_len, "%s: %s", path, werr[0] ? werr : "out of memory");
    close(fd);
    if (t) free(t->path);
    free(t);
    return false;
  }
  MemprofTracker tracker = {on_alloc, on_promote, on_dealloc, on_release, NULL, t, .native = true, .immediate = true, .reads_runs = true};
  t->profile = memprof_start_profile(vm, rate, 0, &tracker);
  if (t->profile < 0) {
    snprintf(err, err_len, "cannot start the profiler: %d profiles are sampling already", MEMPROF_MAX_RUNNING);
    trace_writer_close(t->writer);
    free(t->path);
    free(t);
    return false;
  }
  t->pid = info.pid;
  t->clock_batch = UINT64_MAX;
  t->start_time_us = info.start_time_us;
  t->rate = rate;
  vm->memtrace = t;
  open_snapshots(t, path);
  if (vm->options.memtrace_pprof_dir && !t->snapshots)
    stacks_off(t, "the trace takes no snapshot (it is not a regular file)");
  else if (vm->options.memtrace_pprof_dir) {
    t->stacks = stack_trie_new();
    if (!t->stacks || !live_grow(t)) stacks_off(t, "out of memory keeping callstacks");
  }
  return true;
}

bool memtrace_stop(Vm *vm) {
  Tracer *t = vm->memtrace;
  if (!t) return false;
  memprof_stop_profile(vm, t->profile);
  memprof_discard_profile(vm, t->profile);   // releases: flushes and closes
  return true;
}

// ---------------------------------------------------------------------------
// The end state

bool memtrace_identity(const Vm *vm, MemtraceIdentity *out) {
  const Tracer *t = vm->memtrace;
  if (!t || t->failed) return false;
  TraceWriterStats stats;
  trace_writer_stats(t->writer, &stats);
  *out = (MemtraceIdentity){t->path, t->pid, t->start_time_us, stats.allocs, t->rate};
  return true;
}

SnapshotWriter *memtrace_snapshots(const Vm *vm) {
  const Tracer *t = vm->memtrace;
  return t && !t->failed ? t->snapshots : NULL;
}

bool memtrace_flush(Vm *vm) {
  Tracer *t = vm->memtrace;
  if (!t || t->failed) return false;
  trace_writer_flush(t->writer);
  check_writer(vm, t);
  return !t->failed;
}

bool memtrace_stack_of(const Vm *vm, uint64_t id, uint32_t *node, uint32_t *samples, uint64_t *wosize) {
  const Tracer *t = vm->memtrace;
  if (!t || !t->stacks) return false;
  uint64_t h = id_hash(id) & t->live_mask;
  for (; t->live[h].id != EMPTY_ID; h = (h + 1) & t->live_mask)
    if (t->live[h].id == id) {
      *node = t->live[h].node;
      *samples = t->live[h].samples;
      *wosize = t->live[h].wosize;
      return true;
    }
  return false;
}

void memtrace_stop_stacks(Vm *vm, const char *why) {
  if (vm->memtrace && vm->memtrace->stacks) stacks_off(vm->memtrace, why);
}

const struct StackTrie *memtrace_stacks(const Vm *vm) {
  const Tracer *t = vm->memtrace;
  return t ? t->stacks : NULL;
}

const DebugInfo *memtrace_code_debug(const Vm *vm, uint64_t code) {
  return code & 1 ? frames_debug_by_id(vm->frames, (uint32_t)(code >> 1))
                  : memprof_frame_debug(vm, (MemprofFrame)(uintptr_t)code);
}

void memtrace_stop_sampling(Vm *vm) {
  if (vm->memtrace) memprof_stop_profile(vm, vm->memtrace->profile);
}

void memtrace_each_live(Vm *vm, void (*fn)(void *data, Value block, uint64_t id), void *data) {
  if (vm->memtrace) memprof_each_live(vm, vm->memtrace->profile, fn, data);
}
