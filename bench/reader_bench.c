// reader_bench.c - how fast trace/reader.c reads a trace: opens FILE,
// reads every event, `--repeat N` times, and prints one line per run:
//   events bytes frames wall_seconds cpu_seconds
// frames sums the backtrace lengths delivered; the times cover open, the
// loop and close (wall clock, and this process's CPU time). The loop reads
// the new frames of each backtrace (from `common` on), as a consumer that
// keeps state per prefix does; `--walk` reads every frame of every one.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../trace/reader.h"

static double now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  int repeat = 1;
  bool walk = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (strcmp(argv[i], "--walk") == 0) walk = true;
    else path = argv[i];
  }
  if (!path) {
    fputs("usage: reader_bench [--repeat N] [--walk] FILE\n", stderr);
    return 2;
  }
  for (int run = 0; run < repeat; run++) {
    double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    TraceReaderError err;
    TraceReader *r = trace_reader_open(path, &err);
    if (!r) {
      fprintf(stderr, "%s: %s\n", path, err.message);
      return 1;
    }
    TraceEvent ev;
    uint64_t events = 0, frames = 0, sink = 0;
    while (trace_reader_next(r, &ev) == TRACE_READER_EVENT) {
      events++;
      frames += ev.backtrace_len;
      for (uint32_t i = walk ? 0 : ev.common; i < ev.backtrace_len; i++) sink += ev.backtrace[i];
    }
    if (trace_reader_error(r)->kind != TRACE_ERROR_NONE) {
      fprintf(stderr, "%s: %s\n", path, trace_reader_error(r)->message);
      return 1;
    }
    TraceReaderStats st;
    trace_reader_stats(r, &st);
    trace_reader_close(r);
    double wall = now(CLOCK_MONOTONIC) - t0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    printf("%llu %llu %llu %.6f %.6f%s\n", (unsigned long long)events, (unsigned long long)st.bytes,
           (unsigned long long)frames, wall, cpu, sink == 1 ? " " : "");
  }
  return 0;
}
