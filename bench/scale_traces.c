// scale_traces.c - crafted traces of issue 32's shapes at a chosen size, for
// the linearity floor of make bench-scale (bench/scale.sh): every command's
// time per event within 2x from 1x to 8x the size. Written by
// trace/writer.c, deterministic:
//
//   scale_traces SHAPE SCALE OUT.ctf
//
//   cycle-repeat  a recursion through a cycle in which a frame repeats
//                 (f -> g -> g -> f ...), each sample one cycle deeper than
//                 the last: 20,000 x SCALE samples, 60,000 x SCALE frames
//                 deep at the end (the shape that made folding quadratic)
//   cycle-long    the same through a cycle of 9 distinct frames, longer than
//                 any fold: stacks that stay as deep as they are
//   cycle-drift   f -> g x k -> f -> g x (k + 1) ...: runs of g of growing
//                 length under one cycle, 2,000 x SCALE levels
//   tree          binary recursion: each sample a random path of 24 frames
//                 under 2 call sites (binary_trees' shape): distinct stacks
//                 and frames in proportion to the samples, 100,000 x SCALE
//   shared        a 100,000-frame recursion, each sample's site one of 64
//                 under it: few frames, many samples, 50,000 x SCALE
//
// Each allocation is collected by the next but one (a live set of two) and
// every 64th promoted first.
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../trace/writer.h"

static uint32_t locate(void *data, uint64_t code, TraceLocation *out, uint32_t max) {
  (void)data;
  static char function[32];
  if (max == 0) return 0;
  snprintf(function, sizeof function, "f%" PRIu64, code);
  out[0] = (TraceLocation){.function = function, .file = "scale.mn", .line = (uint32_t)code % 1000 + 1,
                           .start_col = 1, .end_col = 9};
  return 1;
}

typedef struct Out {
  TraceWriter *w;
  uint64_t now, ids[2];
  uint64_t n;
} Out;

// One sample of `stack[0 .. depth)`, the first `common` frames the previous one's.
static void sample(Out *o, const uint64_t *stack, uint32_t depth, uint32_t common) {
  o->now += 3;
  uint64_t id = trace_writer_alloc(o->w, o->now, 2, 1, TRACE_SOURCE_MINOR, stack, depth, common);
  if (o->n >= 2) trace_writer_collect(o->w, o->now + 1, o->ids[o->n % 2]);
  if (o->n % 64 == 0) trace_writer_promote(o->w, o->now + 1, id);
  o->ids[o->n++ % 2] = id;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

int main(int argc, char **argv) {
  if (argc != 4 || atoi(argv[2]) < 1) {
    fprintf(stderr, "usage: scale_traces cycle-repeat|cycle-long|cycle-drift|tree|shared SCALE OUT.ctf\n");
    return 2;
  }
  const char *shape = argv[1];
  uint64_t scale = (uint64_t)atoi(argv[2]);
  int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(argv[3]);
    return 1;
  }
  TraceInfo info = {.sample_rate = 1e-3, .word_size = 64, .executable = "scale_traces", .host = "bench",
                    .runtime_params = "minor_words=262144", .context = shape, .pid = 32,
                    .start_time_us = 1700000000000000ull, .version = 2};
  char err[256];
  Out o = {trace_writer_new(fd, true, &info, locate, NULL, err, sizeof err), info.start_time_us, {0, 0}, 0};
  if (!o.w) {
    fprintf(stderr, "scale_traces: %s\n", err);
    return 1;
  }
  uint64_t *stack = malloc(sizeof *stack * (200000 * scale + 1000));
  if (!stack) return 1;
  stack[0] = 1;  // the root
  if (strcmp(shape, "cycle-repeat") == 0 || strcmp(shape, "cycle-long") == 0) {
    static const uint64_t repeat[] = {11, 12, 12}, longer[] = {21, 22, 23, 24, 25, 26, 27, 28, 29};
    bool rep = shape[6] == 'r';
    const uint64_t *cycle = rep ? repeat : longer;
    uint32_t period = rep ? 3 : 9, depth = 1;
    for (uint64_t i = 0; i < 20000 * scale; i++) {
      for (uint32_t k = 0; k < period; k++) stack[depth++] = cycle[k];
      stack[depth] = 99;  // the site
      sample(&o, stack, depth + 1, depth - period);
    }
  } else if (strcmp(shape, "cycle-drift") == 0) {
    uint32_t depth = 1;
    for (uint64_t k = 1; k <= 2000 * scale; k++) {
      uint32_t before = depth;
      stack[depth++] = 31;
      for (uint64_t j = 0; j < k % 50 + 1; j++) stack[depth++] = 32;
      stack[depth] = 99;
      sample(&o, stack, depth + 1, before);
    }
  } else if (strcmp(shape, "tree") == 0) {
    enum { DEPTH = 24 };
    for (uint64_t i = 0; i < 100000 * scale; i++) {
      uint64_t path = next_random();
      for (uint32_t d = 1; d <= DEPTH; d++) stack[d] = 40 + (path >> d & 1);
      stack[DEPTH + 1] = 99;
      sample(&o, stack, DEPTH + 2, 1);
    }
  } else if (strcmp(shape, "shared") == 0) {
    enum { DEPTH = 100000 };
    for (uint32_t d = 1; d < DEPTH; d++) stack[d] = 50;
    for (uint64_t i = 0; i < 50000 * scale; i++) {
      stack[DEPTH] = 100 + i % 64;
      sample(&o, stack, DEPTH + 1, i ? DEPTH : 0);
    }
  } else {
    fprintf(stderr, "scale_traces: unknown shape %s\n", shape);
    return 2;
  }
  free(stack);
  if (!trace_writer_finish(o.w, err, sizeof err)) {
    fprintf(stderr, "scale_traces: %s: %s\n", argv[3], err);
    return 1;
  }
  return 0;
}
