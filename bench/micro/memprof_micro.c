// memprof_micro.c - what one memprof sample costs, split into its parts.
// Built by `make bench-memprof` (bench/memprof.mk) against the release objects
// and run by bench/memprof_bench.sh; see bench/MEMPROF.md for the method.
//
//   build/bench/memprof_micro [--quick] [--reps N] [--csv FILE]
//
// Parts measured (each figure is a median over --reps interleaved repetitions):
//  1. draw     ns per sampler_geometric() call (batch refills included), in a
//              C loop: the cost of choosing the next sampled word.
//  2. walk     ns per new frame walked by callstacks_capture (every 16th stubbed),
//              timed inside the capture. The capture is driven from Minnow: a
//              non-tail recursion to depth D calls Gc.verify() at the bottom,
//              and this binary is linked with -Wl,--wrap=lib_gc_verify so
//              that the primitive runs callstacks_capture instead. Every
//              descent pushes D fresh frames, so each capture walks D + 1
//              new frames; the per-frame figure is the slope between two
//              depths, (t(D2) - t(D1)) / (frames(D2) - frames(D1)), so that
//              the fixed part of a capture cancels. Depths 100 .. 100,000
//              show whether the per-frame cost grows with the depth. The
//              first capture of each run is not timed (it faults in the
//              fresh stub stack: a once-per-profile cost).
//  3. capture0 ns of a capture that finds no new frame (the common case at
//              low rates): a loop calling the hooked primitive, run with the
//              hook capturing and with the hook doing nothing.
//  4. walk_e2e ns per new frame end to end, through the real sampling path:
//              the same recursion allocating one tuple at the bottom under a
//              profile at rate 1 (one sampled block per descent), minus the
//              same program without a profile, at depths D1 and D2:
//              ((on(D2) - off(D2)) - (on(D1) - off(D1))) / (descents * (D2 - D1)).
//              This adds to part 2 the returns of the stubbed frames (one in
//              16) through MEMPROF_RETURN.
//  5. slow path and tracking, from a flat loop allocating 2-field tuples,
//              run (a) without a profile, (b) under a profile at rate 1 with
//              vm->sampling_suspended set (every allocation takes the slow
//              path and draws its samples, nothing is tracked) and (c) under
//              the profile at rate 1 with a counting tracker:
//                slow_path = (b - a) / blocks - draws per block * draw
//                tracking  = (c - b) / blocks - capture0
//              tracking is creating the entry, queueing the alloc event,
//              delivering it to the tracker, and at the next minor GC the
//              dealloc event and its delivery (and the root scan of entries).
// Every time is CPU time (process CPU time for whole runs, thread CPU time
// around each capture), so that other jobs on the machine, which take the
// CPU away from this process, disturb the figures less than wall time would. Every run compiles its script and the standard library afresh;
// that cost is the same in the runs that are subtracted.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lang/vm.h"
#include "../../memprof/counter.h"
#include "../../memprof/memprof_internal.h"

// ---------------------------------------------------------------------------
// Clocks

static double now_ns(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// ---------------------------------------------------------------------------
// The hook: Gc.verify() runs callstacks_capture when hook_mode says so.

enum { HOOK_REAL, HOOK_NOP, HOOK_CAPTURE, HOOK_CAPTURE_TIMED };
static int hook_mode = HOOK_REAL;
static double hook_ns;
static uint64_t hook_calls, hook_frames;
static bool hook_first_done;

Value __real_lib_gc_verify(Vm *vm, Value *args);
Value __wrap_lib_gc_verify(Vm *vm, Value *args);

Value __wrap_lib_gc_verify(Vm *vm, Value *args) {
  if (hook_mode == HOOK_REAL) return __real_lib_gc_verify(vm, args);
  if (hook_mode == HOOK_NOP) return VAL_NIL;
  Callstacks *cs = &vm->memprof->stacks;
  uint32_t before = cs->depth, depth = 0, unchanged = 0;
  double t0 = hook_mode == HOOK_CAPTURE_TIMED ? now_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
  if (!callstacks_capture(vm, cs, &depth, &unchanged)) {
    fprintf(stderr, "memprof_micro: callstacks_capture failed\n");
    exit(1);
  }
  // The first capture of a run is left out of the timings: it faults in the
  // fresh pages of the stub stack and grows the scratch arrays, once per VM.
  if (hook_mode == HOOK_CAPTURE_TIMED && hook_first_done) {
    hook_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    hook_calls++;
    hook_frames += depth - before;
  }
  hook_first_done = true;
  return VAL_NIL;
}

// ---------------------------------------------------------------------------
// Running a Minnow script in a fresh VM

static char script_dir[] = "/tmp/memprof_micro.XXXXXX";
static int script_seq;

// Writes `text` to a new .mn file and returns its path (static storage).
static const char *write_script(const char *text) {
  static char paths[16][64];
  char *path = paths[script_seq % 16];
  snprintf(path, sizeof paths[0], "%s/s%d.mn", script_dir, script_seq++);
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    fprintf(stderr, "memprof_micro: cannot write %s\n", path);
    exit(1);
  }
  return path;
}

enum { PROF_OFF, PROF_ON, PROF_SUSPENDED, PROF_STACKS_ONLY };

typedef struct Run {
  double cpu_ns, wall_ns;
  MemprofCounts counts;
  uint64_t samples_taken, blocks_sampled;
} Run;

// Runs `path` with hook mode `hook` and profile mode `prof` (rate `rate`).
static Run run_script(const char *path, int prof, double rate, int hook) {
  VmOptions opt = {.stack_words = 4u << 20, .minor_words = 256u << 10};
  Vm *vm = vm_new(&opt);
  if (!vm || !vm->memprof) {
    fprintf(stderr, "memprof_micro: cannot create a VM with the profiler built in\n");
    exit(1);
  }
  static char *argv[2];
  argv[0] = (char *)path;
  vm->argc = 1;
  vm->argv = argv;
  Run r = {0};
  MemprofCounts *counts = calloc(1, sizeof *counts);
  if (prof != PROF_OFF) {
    // PROF_STACKS_ONLY: a profile that never samples, so that the stub stack exists.
    if (memprof_counter_attach(vm, prof == PROF_STACKS_ONLY ? 1e-300 : rate, counts) < 0) {
      fprintf(stderr, "memprof_micro: memprof_counter_attach failed\n");
      exit(1);
    }
    vm->sampling_suspended = prof == PROF_SUSPENDED;
  }
  hook_mode = hook;
  hook_ns = 0;
  hook_calls = hook_frames = 0;
  hook_first_done = false;
  double c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
  int status = vm_run_main(vm, path);
  r.wall_ns = now_ns(CLOCK_MONOTONIC) - w0;
  r.cpu_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
  hook_mode = HOOK_REAL;
  if (status != 0) {
    fprintf(stderr, "memprof_micro: %s exited with status %d\n", path, status);
    exit(1);
  }
  r.counts = *counts;
  r.samples_taken = vm->memprof->samples_taken;
  r.blocks_sampled = vm->memprof->blocks_sampled;
  vm_free(vm);
  free(counts);
  return r;
}

// ---------------------------------------------------------------------------
// Results

static FILE *csv;

static void result(const char *component, double ns, const char *unit, const char *detail) {
  printf("  %-16s %9.2f %-22s %s\n", component, ns, unit, detail);
  if (csv) fprintf(csv, "%s,micro,,%.3f,%s,\"%s\"\n", component, ns, unit, detail);
}

// ---------------------------------------------------------------------------
// 1. draw

static volatile uint64_t sink;

static double bench_draw(int reps, uint64_t n) {
  double v[64];
  Sampler s;
  sampler_seed(&s, 42);
  sampler_set_rate(&s, 1e-4);
  for (int k = 0; k < reps; k++) {
    uint64_t sum = 0;
    double t0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (uint64_t i = 0; i < n; i++) sum += sampler_geometric(&s);
    v[k] = (now_ns(CLOCK_PROCESS_CPUTIME_ID) - t0) / (double)n;
    sink += sum;
  }
  return median(v, reps);
}

// ---------------------------------------------------------------------------
// 2. walk (hooked captures at several depths)

static const char *recursion_script(uint64_t depth, uint64_t descents, bool alloc) {
  static char text[1024];
  snprintf(text, sizeof text,
           "fn down(d) {\n"
           "  if d == 0 { %s } else { 1 + down(d - 1) }\n"
           "}\n"
           "var r = 0\n"
           "var s = 0\n"
           "while r < %llu { s = s + down(%llu); r = r + 1 }\n",
           alloc ? "let t = (d, d); let (a, b) = t; a + b" : "Gc.verify(); 0",
           (unsigned long long)descents, (unsigned long long)depth);
  return write_script(text);
}

// ---------------------------------------------------------------------------

int main(int argc, char **argv) {
  bool quick = false;
  int reps = 5;
  const char *csv_path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) quick = true;
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv_path = argv[++i];
    else {
      fprintf(stderr, "usage: memprof_micro [--quick] [--reps N] [--csv FILE]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (reps > 64) reps = 64;
  if (!mkdtemp(script_dir)) {
    perror("memprof_micro: mkdtemp");
    return 1;
  }
  if (csv_path && !(csv = fopen(csv_path, "w"))) {
    perror(csv_path);
    return 1;
  }
  const uint64_t scale = quick ? 10 : 1;
  printf("memprof_micro: %d repetitions per figure (median)%s\n", reps, quick ? ", quick sizes" : "");

  // 1. draw
  double draw = bench_draw(reps, 50000000 / scale);
  char detail[512];
  snprintf(detail, sizeof detail, "sampler_geometric() in a C loop, batch refill of %d included", GEOM_BATCH);
  result("draw", draw, "ns/draw", detail);

  // 2. walk: captures at each depth; descents chosen for ~2M frames a run.
  static const uint64_t depths[] = {100, 1000, 10000, 100000};
  enum { ND = sizeof depths / sizeof depths[0] };
  const char *walk_paths[ND];
  uint64_t descents[ND];
  double per_capture[ND][64], frames_per_capture[ND];
  for (int d = 0; d < ND; d++) {
    descents[d] = 2000000 / scale / depths[d];
    if (descents[d] < 3) descents[d] = 3;
    walk_paths[d] = recursion_script(depths[d], descents[d], false);
  }
  for (int k = 0; k < reps; k++) {
    for (int d = 0; d < ND; d++) {
      run_script(walk_paths[d], PROF_STACKS_ONLY, 0, HOOK_CAPTURE_TIMED);
      per_capture[d][k] = hook_ns / (double)hook_calls;
      frames_per_capture[d] = (double)hook_frames / (double)hook_calls;
    }
  }
  double cap_med[ND];
  for (int d = 0; d < ND; d++) cap_med[d] = median(per_capture[d], reps);
  printf("  captures by depth (ns per capture / new frames per capture = ns per frame):\n");
  for (int d = 0; d < ND; d++) {
    printf("    depth %-7llu %11.0f ns / %7.0f frames = %5.2f ns/frame", (unsigned long long)depths[d],
           cap_med[d], frames_per_capture[d], cap_med[d] / frames_per_capture[d]);
    if (d > 0)
      printf("   slope from depth %llu: %5.2f ns/frame", (unsigned long long)depths[d - 1],
             (cap_med[d] - cap_med[d - 1]) / (frames_per_capture[d] - frames_per_capture[d - 1]));
    printf("\n");
    if (csv) {
      fprintf(csv, "walk_at_depth,micro,,%.3f,ns/frame,\"capture at depth %llu: %.0f ns for %.0f new frames\"\n",
              cap_med[d] / frames_per_capture[d], (unsigned long long)depths[d], cap_med[d], frames_per_capture[d]);
    }
  }
  double walk = (cap_med[2] - cap_med[1]) / (frames_per_capture[2] - frames_per_capture[1]);
  snprintf(detail, sizeof detail,
           "callstacks_capture timed inside; slope between depths 1000 and 10000 (%.0f and %.0f ns per capture)",
           cap_med[1], cap_med[2]);
  result("walk", walk, "ns/new frame", detail);
  double walk_deep = (cap_med[3] - cap_med[2]) / (frames_per_capture[3] - frames_per_capture[2]);
  snprintf(detail, sizeof detail, "the same slope between depths 10000 and 100000 (VM stack and stubs beyond the caches)");
  result("walk_deep", walk_deep, "ns/new frame", detail);

  // 3. capture0: a capture with no new frame
  uint64_t n_calls = 5000000 / scale;
  char text[1024];
  snprintf(text, sizeof text,
           "fn loop(n) { var i = 0; while i < n { Gc.verify(); i = i + 1 }; i }\n"
           "let x = loop(%llu)\n", (unsigned long long)n_calls);
  const char *loop_path = write_script(text);
  double nop[64], cap[64];
  for (int k = 0; k < reps; k++) {
    nop[k] = run_script(loop_path, PROF_STACKS_ONLY, 0, HOOK_NOP).cpu_ns;
    cap[k] = run_script(loop_path, PROF_STACKS_ONLY, 0, HOOK_CAPTURE).cpu_ns;
  }
  double capture0 = (median(cap, reps) - median(nop, reps)) / (double)n_calls;
  snprintf(detail, sizeof detail, "(loop of %llu hooked calls capturing - the same loop, hook doing nothing) / calls",
           (unsigned long long)n_calls);
  result("capture0", capture0, "ns/capture", detail);

  // 4. walk_e2e: the real sampling path at rate 1, one block per descent
  const uint64_t e2e_depth[2] = {1000, 10000};
  const uint64_t e2e_descents = 2000 / scale;
  const char *e2e_path[2];
  double on[2][64], off[2][64];
  Run last_on[2];
  for (int d = 0; d < 2; d++) e2e_path[d] = recursion_script(e2e_depth[d], e2e_descents, true);
  for (int k = 0; k < reps; k++) {
    for (int d = 0; d < 2; d++) {
      off[d][k] = run_script(e2e_path[d], PROF_OFF, 0, HOOK_REAL).cpu_ns;
      last_on[d] = run_script(e2e_path[d], PROF_ON, 1.0, HOOK_REAL);
      on[d][k] = last_on[d].cpu_ns;
    }
  }
  double extra[2];
  for (int d = 0; d < 2; d++) extra[d] = median(on[d], reps) - median(off[d], reps);
  double e2e = (extra[1] - extra[0]) / ((double)e2e_descents * (double)(e2e_depth[1] - e2e_depth[0]));
  snprintf(detail, sizeof detail,
           "rate 1, one 2-field tuple per descent, %llu descents: profile adds %.1f ms at depth 1000, %.1f ms at 10000 "
           "(%.0f and %.0f frames per sample)",
           (unsigned long long)e2e_descents, extra[0] / 1e6, extra[1] / 1e6,
           last_on[0].counts.blocks ? (double)last_on[0].counts.frames / (double)last_on[0].counts.blocks : 0.0,
           last_on[1].counts.blocks ? (double)last_on[1].counts.frames / (double)last_on[1].counts.blocks : 0.0);
  result("walk_e2e", e2e, "ns/new frame", detail);

  // 5. slow path and tracking: a flat loop of 2-field tuples (3 words: 3 draws per block at rate 1)
  uint64_t n_blocks = 3000000 / scale;
  snprintf(text, sizeof text,
           "fn loop(n) {\n"
           "  var i = 0\n"
           "  var acc = 0\n"
           "  while i < n { let t = (i, acc); let (a, b) = t; acc = b + 1; i = i + 1 }\n"
           "  acc\n"
           "}\n"
           "let x = loop(%llu)\n", (unsigned long long)n_blocks);
  const char *flat_path = write_script(text);
  double t_off[64], t_susp[64], t_on[64];
  Run r_on = {0};
  for (int k = 0; k < reps; k++) {
    t_off[k] = run_script(flat_path, PROF_OFF, 0, HOOK_REAL).cpu_ns;
    t_susp[k] = run_script(flat_path, PROF_SUSPENDED, 1.0, HOOK_REAL).cpu_ns;
    r_on = run_script(flat_path, PROF_ON, 1.0, HOOK_REAL);
    t_on[k] = r_on.cpu_ns;
  }
  double m_off = median(t_off, reps), m_susp = median(t_susp, reps), m_on = median(t_on, reps);
  double blocks = (double)r_on.counts.blocks;
  double draws_per_block = (double)r_on.counts.samples / blocks;
  if (r_on.counts.blocks < n_blocks) {
    fprintf(stderr, "memprof_micro: expected %llu sampled blocks at rate 1, got %llu\n",
            (unsigned long long)n_blocks, (unsigned long long)r_on.counts.blocks);
    return 1;
  }
  double slow = (m_susp - m_off) / blocks - draws_per_block * draw;
  double tracking = (m_on - m_susp) / blocks - capture0;
  snprintf(detail, sizeof detail,
           "flat loop, %llu tuples at rate 1: ((suspended - off) / blocks) - %.0f draws per block; "
           "off %.1f ms, suspended %.1f ms", (unsigned long long)n_blocks, draws_per_block, m_off / 1e6, m_susp / 1e6);
  result("slow_path", slow, "ns/sampled block", detail);
  snprintf(detail, sizeof detail,
           "((on - suspended) / blocks) - capture0: entry, alloc event, delivery, minor-GC dealloc event and delivery; "
           "on %.1f ms, %llu deallocs delivered", m_on / 1e6, (unsigned long long)(r_on.counts.dealloc_minor + r_on.counts.dealloc_major));
  result("tracking", tracking, "ns/sampled block", detail);

  // The model: one sample of a block (one sampled word) with f new frames costs
  // slow_path + draw + capture0 + tracking + f * walk_e2e.
  double fixed = slow + draw + capture0 + tracking;
  snprintf(detail, sizeof detail, "slow_path + draw + capture0 + tracking: a sample that finds no new frame");
  result("sample_fixed", fixed, "ns/sample", detail);

  if (csv) fclose(csv);
  // Clean up the scripts.
  for (int i = 0; i < script_seq; i++) {
    char path[96];
    snprintf(path, sizeof path, "%s/s%d.mn", script_dir, i);
    unlink(path);
  }
  rmdir(script_dir);
  return 0;
}
