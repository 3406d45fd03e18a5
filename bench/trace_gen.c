// trace_gen.c - writes a synthetic memtrace trace (tests/trace/mini_encoder.h)
// of a random program, for bench-reader and for the cross-check against
// memtrace's own dump_trace in tests/suites/trace_reader.sh.
//
//   trace_gen [--version V] [--events N] [--shape S] [--seed N] [--domains D] OUT
//
// Shapes: shallow (stacks of 1-40 frames from 300 codes, like the
// fixtures), deep (stacks of 3,000-4,000 frames from 6,000 codes, changing
// a few frames at the leaf), recursive (9,000-10,000 frames cycling through
// 7 codes: long predicted runs), cut (a stack of 3,000 fresh frames, which
// the writer cuts at 4,086 bytes, then changing at the leaf: the common
// prefixes exceed what a reader has of the cut backtrace). About 60% of events are allocations, the
// rest promotions and collections of live ones. --domains D (version 3):
// D domains, each its own writer and program, taking turns every 50 events
// (their packets interleave in the file).
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/trace/mini_encoder.h"

typedef struct Shape {
  const char *name;
  uint32_t pool, min_depth, max_depth, grow;
  bool recursive;  // codes cycle with the depth
} Shape;

static const Shape shapes[] = {
    {"shallow", 300, 1, 40, 3, false},
    {"deep", 6000, 3000, 4000, 3, false},
    {"recursive", 7, 9000, 10000, 40, true},
    {"cut", 1u << 30, 3000, 3010, 3000, false},
};

typedef struct Program {
  uint64_t rng, time;
  uint64_t *stack;
  uint32_t depth;
  uint64_t live[4096];
  uint32_t n_live;
} Program;

static uint64_t rnd(Program *p) {
  p->rng ^= p->rng << 13;
  p->rng ^= p->rng >> 7;
  p->rng ^= p->rng << 17;
  return p->rng;
}

// The stack moves (grows toward min_depth first), then one event.
static void step(Program *p, MiniEncoder *s, const Shape *sh) {
  uint32_t pop = (uint32_t)(rnd(p) % 4), push = (uint32_t)(rnd(p) % 4);
  if (p->depth < sh->min_depth) pop = 0, push = sh->grow;
  else p->depth = p->depth > pop + sh->min_depth ? p->depth - pop : sh->min_depth;
  for (uint32_t i = 0; i < push && p->depth < sh->max_depth; i++, p->depth++)
    p->stack[p->depth] = sh->recursive ? 1 + p->depth % sh->pool : 1 + rnd(p) % sh->pool;
  uint64_t r = rnd(p) % 100;
  p->time += r == 0 ? 40000000 : rnd(p) % 50;
  if (r < 60 || p->n_live == 0) {
    uint64_t len = r < 50 ? 1 + rnd(p) % 16 : r < 55 ? 70000 : 300;
    uint64_t id = menc_alloc(s, p->time, len, r % 7 == 0 ? 2 : 1, r % 11 == 0, p->stack, p->depth);
    if (p->n_live < 4096) p->live[p->n_live++] = id;
    return;
  }
  uint32_t k = (uint32_t)(rnd(p) % p->n_live);
  if (r < 75) {
    menc_promote(s, p->time, p->live[k]);
  } else {
    menc_collect(s, p->time, p->live[k]);
    p->live[k] = p->live[--p->n_live];
  }
}

static int usage(void) {
  fputs("usage: trace_gen [--version 1|2|3] [--events N] [--shape shallow|deep|recursive|cut] [--seed N]\n"
        "                   [--domains 1-8 (version 3)] OUT\n",
        stderr);
  return 2;
}

int main(int argc, char **argv) {
  MiniEncoderOptions o = {.version = 2, .pid = 4242, .start_us = 1700000000000000ull, .rate = 1e-4};
  uint64_t events = 100000, seed = 1;
  unsigned domains = 1;
  const Shape *shape = &shapes[0];
  const char *out = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--version") == 0 && v) o.version = (uint16_t)atoi(v), i++;
    else if (strcmp(a, "--events") == 0 && v) events = strtoull(v, NULL, 10), i++;
    else if (strcmp(a, "--seed") == 0 && v) seed = strtoull(v, NULL, 10), i++;
    else if (strcmp(a, "--domains") == 0 && v) domains = (unsigned)atoi(v), i++;
    else if (strcmp(a, "--shape") == 0 && v) {
      shape = NULL;
      for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        if (strcmp(v, shapes[k].name) == 0) shape = &shapes[k];
      if (!shape) return usage();
      i++;
    } else if (a[0] != '-' && !out) out = a;
    else return usage();
  }
  if (!out || o.version < 1 || o.version > 3 || domains < 1 || domains > 8 || (domains > 1 && o.version < 3))
    return usage();
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(out);
    return 1;
  }
  Program p[8];
  MiniEncoder *s[8];
  for (unsigned d = 0; d < domains; d++) {
    p[d] = (Program){.rng = 0x9E3779B97F4A7C15ull ^ seed ^ d, .time = o.start_us};
    p[d].stack = calloc(shape->max_depth + 1, sizeof *p[d].stack);
    MiniEncoderOptions od = o;
    od.domain = (uint16_t)d;
    od.no_info = d > 0;
    od.first_id = d * 1000000000ull;
    s[d] = menc_open(fd, &od);
  }
  for (uint64_t i = 0; i < events; i++) {
    unsigned d = (unsigned)(i / 50 % domains);
    if (domains > 1 && i % 50 == 0 && i > 0) {  // the domain before hands over: its packet is written
      unsigned prev = (d + domains - 1) % domains;
      menc_flush_at(s[prev], p[prev].time);
      p[d].time = p[d].time > p[prev].time ? p[d].time : p[prev].time;
    }
    step(&p[d], s[d], shape);
  }
  bool written = true;
  for (unsigned d = 0; d < domains; d++) {
    written &= menc_close(s[d]);
    free(p[d].stack);
  }
  if (close(fd) != 0 || !written) {
    perror(out);
    return 1;
  }
  return 0;
}
