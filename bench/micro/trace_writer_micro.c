// trace_writer_micro.c - the trace encoder's cost per allocation event
// (trace/writer.c), on synthetic streams written to /dev/null. Run under
// callgrind by bench/trace_writer_bench.sh (make bench-trace-writer), which
// counts the instructions inside trace_writer_alloc only (the stream's own
// generation is not counted) and divides by the events.
//
//   build/bench/trace_writer_micro STREAM [EVENTS]
//     shallow      stacks of 10..30 frames from 300 codes; each event pops
//                  0..3 frames and pushes 1..3 (a program's steady state)
//     deep         about 1,000 frames (a recursion over 3 codes with a few
//                  others); each event changes the innermost 1..5 frames
//     deep-nohint  deep, but known_common = 0: the writer compares the
//                  common part itself (what a caller without memprof's
//                  `unchanged` pays)
//     deep-fresh   deep, and every 20th event changes a frame 500 deep
// Every stream: 1 to 16 words, minor, one sample (the short form), as most
// sampled blocks; the writer sees ~1/3 as many collections as allocations.
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../trace/writer.h"

typedef enum { SHALLOW, DEEP, DEEP_NOHINT, DEEP_FRESH } Stream;

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void) {  // xorshift64
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static uint32_t below(uint32_t n) { return (uint32_t)(next_random() % n); }

static uint32_t locate(void *data, uint64_t code, TraceLocation *out, uint32_t max) {
  (void)data, (void)max;
  static char function[32];
  snprintf(function, sizeof function, "f%llx", (unsigned long long)code);
  out[0] = (TraceLocation){function, "bench.mn", (uint32_t)(code % 997), 3, 9};
  return 1;
}

static uint64_t code_of(uint32_t i) { return 0x55550000ull + 16 * i; }

// The next stack: returns the depth, sets *known to the unchanged prefix.
static uint32_t next_stack(Stream s, uint64_t *stack, uint32_t depth, uint64_t k, uint32_t *known) {
  if (s == SHALLOW) {
    uint32_t pop = below(4);
    depth = depth > 10 + pop ? depth - pop : 10;
    *known = depth;
    for (uint32_t push = 1 + below(3); push > 0 && depth < 30; push--) stack[depth++] = code_of(below(300));
    return depth;
  }
  uint32_t target = 995 + below(10), change = 1 + below(5);
  depth = depth > change ? depth - change : 0;
  if (s == DEEP_FRESH && k % 20 == 0 && depth > 500) depth = 500;
  *known = s == DEEP_NOHINT ? 0 : depth;
  while (depth < target) stack[depth] = depth % 100 == 99 ? code_of(400 + below(50)) : code_of(1000 + depth % 3), depth++;
  return depth;
}

int main(int argc, char **argv) {
  static const char *const names[] = {"shallow", "deep", "deep-nohint", "deep-fresh"};
  Stream s = SHALLOW;
  if (argc < 2) goto usage;
  while (s <= DEEP_FRESH && strcmp(argv[1], names[s]) != 0) s++;
  if (s > DEEP_FRESH) goto usage;
  uint64_t events = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
  int fd = open("/dev/null", O_WRONLY);
  TraceInfo info = {.sample_rate = 1e-5, .word_size = 64, .executable = "micro", .host = "bench",
                    .runtime_params = "", .context = "", .pid = 1, .start_time_us = 1, .version = 2};
  char err[128];
  TraceWriter *w = trace_writer_new(fd, true, &info, locate, NULL, err, sizeof err);
  if (!w) {
    fprintf(stderr, "trace_writer_micro: %s\n", err);
    return 1;
  }
  static uint64_t stack[2000];
  uint32_t depth = 0, known = 0;
  for (uint64_t k = 0; k < events; k++) {
    depth = next_stack(s, stack, depth, k, &known);
    uint64_t id = trace_writer_alloc(w, 1 + k * 7, 1 + below(16), 1, TRACE_SOURCE_MINOR, stack, depth, known);
    if (id >= 10 && below(3) == 0) trace_writer_collect(w, 1 + k * 7, id - 10);
  }
  TraceWriterStats st;
  trace_writer_flush(w);
  trace_writer_stats(w, &st);
  if (!trace_writer_close(w)) return 1;
  printf("%s events=%llu bytes_per_alloc=%.2f\n", names[s], (unsigned long long)events,
         (double)st.bytes / (double)events);
  return 0;
usage:
  fprintf(stderr, "usage: trace_writer_micro shallow|deep|deep-nohint|deep-fresh [EVENTS]\n");
  return 2;
}
