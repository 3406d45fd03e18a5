// hostile_traces.c - crafted traces under 1 MB that make the trace tool's
// work large for their size (issue 23, class 3), written by trace/writer.c:
//
//   hostile_traces OUTDIR
//
//   deep-fan.ctf      events whose callstacks are ~300,000 frames of one
//                     recursive code under a root frame that changes every
//                     event: no two stacks share a prefix, so depth x events
//                     distinct callstack nodes (the example class)
//   deep-shared.ctf   the same depth under one root: every stack shares the
//                     previous one, a few new frames each
//   deep-chain.ctf    stacks down one chain of CHAIN distinct codes (no
//                     recursion to fold): event i's stack is the chain's
//                     first i % CHAIN + 1 frames, so CHAIN distinct stacks
//                     of CHAIN^2 / 2 frames in all, each a few bytes of trace
//   distinct.ctf      stacks of fresh codes (every frame a new location,
//                     long names): as many distinct frames as the bytes allow
//   wide.ctf          1-frame stacks, each its own site: many sites, rows
//   samples.ctf       allocations of the largest length and sample counts,
//                     promoted and collected: values the trace declares
//
// Each is cut to stay under 1,000,000 bytes. Deterministic.
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../trace/writer.h"

enum { LIMIT = 1000000, DEPTH = 300000, CHAIN = 12000 };

static char name_buf[2][600];

static uint32_t locate(void *data, uint64_t code, TraceLocation *out, uint32_t max) {
  (void)data;
  if (max == 0) return 0;
  bool longname = code >= 1000000;
  snprintf(name_buf[0], sizeof name_buf[0], "%sfunc%" PRIu64, longname ? "a_rather_long_module_name." : "", code);
  snprintf(name_buf[1], sizeof name_buf[1], "src/dir%" PRIu64 "/file.mn", code % 97);
  out[0] = (TraceLocation){.file = name_buf[1], .function = name_buf[0], .line = (uint32_t)(code % 5000) + 1,
                           .start_col = 1, .end_col = 9};
  return 1;
}

typedef struct Out {
  TraceWriter *w;
  const char *path;
  uint64_t now;
} Out;

static Out open_trace(const char *dir, const char *name) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    exit(1);
  }
  TraceInfo info = {.sample_rate = 1e-4, .word_size = 64, .executable = "hostile", .host = "bench",
                    .runtime_params = "minor_words=262144", .context = name, .pid = 77,
                    .start_time_us = 1700000000000000ull, .version = 2};
  char err[256];
  Out o = {trace_writer_new(fd, true, &info, locate, NULL, err, sizeof err), path, info.start_time_us};
  if (!o.w) {
    fprintf(stderr, "hostile_traces: %s: %s\n", path, err);
    exit(1);
  }
  return o;
}

static off_t size_of(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? st.st_size : 0;
}

static void close_trace(Out *o) {
  char err[256];
  if (!trace_writer_finish(o->w, err, sizeof err)) {
    fprintf(stderr, "hostile_traces: %s: %s\n", o->path, err);
    exit(1);
  }
  printf("%s: %lld bytes\n", o->path, (long long)size_of(o->path));
}

// Writes events from `next` until the file is near LIMIT bytes.
static void fill(Out *o, uint64_t *stack, uint32_t (*next)(uint64_t *stack, uint64_t i, uint32_t *common),
                 uint64_t wosize, uint32_t samples) {
  for (uint64_t i = 0;; i++) {
    uint32_t common = 0, depth = next(stack, i, &common);
    o->now += 10;
    trace_writer_alloc(o->w, o->now, wosize, samples, TRACE_SOURCE_MINOR, stack, depth, common);
    if (i % 8 == 7) {
      trace_writer_flush(o->w);
      if (size_of(o->path) > LIMIT - 40000) break;
    }
  }
}

static uint32_t deep_fan(uint64_t *stack, uint64_t i, uint32_t *common) {
  stack[0] = 10 + i;  // a new root: nothing shared
  *common = 0;
  return DEPTH;
}

static uint32_t deep_shared(uint64_t *stack, uint64_t i, uint32_t *common) {
  stack[DEPTH - 1] = 100 + i % 50;  // only the site changes
  *common = DEPTH - 1;
  return DEPTH;
}

static uint32_t deep_chain(uint64_t *stack, uint64_t i, uint32_t *common) {
  uint32_t k = (uint32_t)(i % CHAIN);
  stack[k] = 500000 + k;  // events go k = 0, 1, 2...: frames 0 .. k - 1 are set; names short (codes < 1000000)
  *common = k;  // the previous stack is the first k frames (or longer, for k = 0: none shared)
  return k + 1;
}

static uint64_t fresh = 1000000;

static uint32_t distinct(uint64_t *stack, uint64_t i, uint32_t *common) {
  (void)i;
  for (uint32_t d = 0; d < 64; d++) stack[d] = fresh++;
  *common = 0;
  return 64;
}

static uint32_t wide(uint64_t *stack, uint64_t i, uint32_t *common) {
  stack[0] = 2000000 + i;
  *common = 0;
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hostile_traces OUTDIR\n");
    return 2;
  }
  uint64_t *stack = malloc(sizeof *stack * DEPTH);
  if (!stack) return 1;
  static const struct {
    const char *name;
    uint32_t (*next)(uint64_t *stack, uint64_t i, uint32_t *common);
  } shapes[] = {{"deep-fan.ctf", deep_fan},  {"deep-shared.ctf", deep_shared}, {"deep-chain.ctf", deep_chain},
                {"distinct.ctf", distinct}, {"wide.ctf", wide}};
  Out o;
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    for (uint32_t d = 0; d < DEPTH; d++) stack[d] = 7;  // one recursive code
    o = open_trace(argv[1], shapes[k].name);
    fill(&o, stack, shapes[k].next, 2, 1);
    close_trace(&o);
  }

  o = open_trace(argv[1], "samples.ctf");
  stack[0] = 5;
  for (uint64_t i = 0; size_of(o.path) < LIMIT - 40000; i++) {
    o.now += 1000;
    uint64_t id = trace_writer_alloc(o.w, o.now, (1ull << 40) + i, UINT32_MAX, TRACE_SOURCE_MAJOR, stack, 1, 1);
    if (i % 3 == 0) trace_writer_collect(o.w, o.now + 1, id);
    if (i % 64 == 63) trace_writer_flush(o.w);
  }
  close_trace(&o);
  free(stack);
  return 0;
}
