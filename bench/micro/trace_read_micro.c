// trace_read_micro.c - the trace reader's speed (trace/reader.c): decodes
// every event of a trace and throws it away, with nothing printed, so that
// the time is the decoder's. Used by bench/trace_bench.sh (make bench-trace).
//
//   build/bench/trace_read_micro [--reps N] [--check] FILE...
//
// Per file: N passes (default 5), each opening the trace and reading every
// event to the end; each pass is timed with CLOCK_MONOTONIC and the report
// gives the median and fastest pass. After the first pass the file is in
// the page cache, so what is timed is decoding, not the disk. Each event's
// innermost frame is read (a consumer looks at it), so the backtrace is
// really built. One CSV line per file on stdout:
//   file,bytes,events,allocs,frames,new_frames,median_s,min_s,events_per_s,mb_per_s
// events_per_s and mb_per_s are of the median pass; frames is the sum of the
// allocations' backtrace lengths, new_frames those past the common prefix.
//
// --check: one more pass that looks up each allocation's innermost frame:
// `sites` counts those whose code is odd (./vm --memtrace writes allocation
// sites as 2 * id + 1, callers as return addresses, which are even: see
// memprof/memtrace.c) and has a location in a Minnow source file (a name
// ending in ".mn"). Adds the columns check_allocs,check_sites.
//
// Exit status 1 if a trace cannot be read to its end.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../trace/reader.h"

typedef struct Pass {
  uint64_t events, allocs, frames, new_frames, bytes;
  uint64_t innermost_sum;  // keeps the innermost frame's load alive
  double seconds;
  bool ok;
} Pass;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool report_error(const char *path, const TraceReaderError *e) {
  fprintf(stderr, "trace_read_micro: %s: %s\n", path, e->message);
  return false;
}

// One timed pass over the trace at `path`.
static Pass read_pass(const char *path) {
  Pass p = {0};
  double t0 = now_s();
  TraceReaderError err;
  TraceReader *r = trace_reader_open(path, &err);
  if (!r) {
    report_error(path, &err);
    return p;
  }
  TraceEvent ev;
  TraceReaderStatus s;
  while ((s = trace_reader_next(r, &ev)) == TRACE_READER_EVENT) {
    p.events++;
    if (ev.kind != TRACE_EVENT_ALLOC) continue;
    p.allocs++;
    p.frames += ev.backtrace_len;
    p.new_frames += ev.backtrace_len - ev.common;
    if (ev.backtrace_len) p.innermost_sum += ev.backtrace[ev.backtrace_len - 1];
  }
  p.seconds = now_s() - t0;
  TraceReaderStats stats;
  trace_reader_stats(r, &stats);
  p.bytes = stats.bytes;
  p.ok = s == TRACE_READER_END || report_error(path, trace_reader_error(r));
  trace_reader_close(r);
  return p;
}

static bool is_minnow_file(const char *file) {
  size_t n = strlen(file);
  return n > 3 && strcmp(file + n - 3, ".mn") == 0;
}

// The check pass: allocations, and those whose innermost frame is a Minnow
// allocation site.
static bool check_sites(const char *path, uint64_t *allocs, uint64_t *sites) {
  TraceReaderError err;
  TraceReader *r = trace_reader_open(path, &err);
  if (!r) return report_error(path, &err);
  TraceEvent ev;
  TraceReaderStatus s;
  *allocs = *sites = 0;
  while ((s = trace_reader_next(r, &ev)) == TRACE_READER_EVENT) {
    if (ev.kind != TRACE_EVENT_ALLOC) continue;
    (*allocs)++;
    if (!ev.backtrace_len) continue;
    uint64_t code = ev.backtrace[ev.backtrace_len - 1];
    const TraceReaderLocation *locs;
    int n = trace_reader_locations(r, code, &locs);
    if ((code & 1) && n > 0 && is_minnow_file(locs[n - 1].file)) (*sites)++;
  }
  bool ok = s == TRACE_READER_END || report_error(path, trace_reader_error(r));
  trace_reader_close(r);
  return ok;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static bool measure(const char *path, int reps, bool check) {
  double times[64];
  Pass last = {0};
  for (int i = 0; i < reps; i++) {
    last = read_pass(path);
    if (!last.ok) return false;
    times[i] = last.seconds;
  }
  qsort(times, (size_t)reps, sizeof *times, compare_double);
  double median = reps % 2 ? times[reps / 2] : (times[reps / 2 - 1] + times[reps / 2]) / 2;
  printf("%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.0f,%.1f", path, last.bytes,
         last.events, last.allocs, last.frames, last.new_frames, median, times[0], (double)last.events / median,
         (double)last.bytes / median / 1e6);
  if (check) {
    uint64_t allocs, sites;
    if (!check_sites(path, &allocs, &sites)) return false;
    printf(",%" PRIu64 ",%" PRIu64, allocs, sites);
  }
  printf("\n");
  return true;
}

int main(int argc, char **argv) {
  int reps = 5, i = 1;
  bool check = false;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--check") == 0) check = true;
    else break;
  }
  if (i >= argc || reps < 1 || reps > 64) {
    fprintf(stderr, "usage: trace_read_micro [--reps N (1-64)] [--check] FILE...\n");
    return 2;
  }
  printf("file,bytes,events,allocs,frames,new_frames,median_s,min_s,events_per_s,mb_per_s%s\n",
         check ? ",check_allocs,check_sites" : "");
  bool ok = true;
  for (; i < argc; i++) ok = measure(argv[i], reps, check) && ok;
  return ok ? 0 : 1;
}
