// trace_synth.c - writes a synthetic event stream with trace/writer.c and,
// beside it, the text memtrace 0.2.3's dump_trace must print for that trace
// (tests/suites/trace_writer.sh compares the two). Also the stream the
// encoder benchmark runs (--no-expect).
//
//   trace_synth [options] OUT.ctf [EXPECTED.dump]
//     --scenario S   random | deep | long | evict | names | big | mixed | zero | hostile
//     --seed N       PRNG seed (default 1)
//     --events N     allocation events (default 2000)
//     --version V    trace format version (default 2)
//     --copy C.ctf   also write C.ctf: the events as a reader sees them in
//                    OUT.ctf, encoded with locations at every cache miss:
//                    what memtrace's subsample tool (factor 1) writes for
//                    OUT.ctf, byte for byte
//
// The expected text is built from what the synth asked for: the events in
// order, times since the start, each allocation's callstack outermost first
// (cut where the writer says the 4,096-byte cap cut it:
// trace_writer_backtrace_depth) and each frame's locations as the synth's
// locate callback describes them, clamped as the format clamps.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "../../trace/writer.h"

// zero: frame code 0 among others (memtrace's writer would code it as a hit
// on an empty bucket and never write its location; ours misses it: --copy
// differs from memtrace's for this scenario only).
// hostile: functions, files and the trace info made of what outputs must
// escape (issue 23, class 5): invalid UTF-8, control characters, quotes, <,
// &, ;, commas, spaces, newlines, backslashes, format directives.
typedef enum { RANDOM, DEEP, LONG, EVICT, NAMES, BIG, MIXED, ZERO, HOSTILE } Scenario;
static const char *const SCENARIO_NAMES[] = {"random", "deep", "long", "evict", "names",
                                             "big", "mixed", "zero", "hostile"};
static const char *const HOSTILE_NAMES[] = {
    "a;b c", "q\"u'o`te", "<script>alert(1)</script>&amp;", "ctl\x01\x1f\x7f", "new\nline\r\ttab",
    "bad\xff\xfe utf8\xc3", "over\xc0\xaflong", "comma,sep,\"x\"", "fish \xf0\x9f\x90\x9f ok",
    "surrogate \xed\xa0\x80", "", " lead space ", "back\\slash\\", "semi;colon;", "percent %s %n",
    "]]><!-- -->", "nul-free \x1b[31mred"};

enum { LONG_FILE = 5000, LONG_FUNCTION = 3000, BIG_CHAIN = 300 };

typedef struct Synth {
  Scenario scenario;
  uint64_t rng;
  TraceWriter *w;
  TraceWriter *copy;            // NULL: no --copy
  FILE *expect;                 // NULL: no expected text
  uint64_t start, now;
  uint64_t *stack, *prev;       // outermost first
  uint32_t depth, prev_depth, cap;
  uint64_t *live;               // ids neither collected yet
  uint8_t *promoted;            // per id: promoted, or not minor
  size_t n_live, n_ids;
  uint64_t fresh_code;          // next never-used code
  char names[4][LONG_FILE + 64];
} Synth;

// ---------------------------------------------------------------- randomness

static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static uint64_t next_random(Synth *s) { return mix(s->rng++); }

static uint64_t below(Synth *s, uint64_t n) { return n ? next_random(s) % n : 0; }

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "trace_synth: out of memory\n");
    exit(2);
  }
  return p;
}

// ---------------------------------------------------------------- locations

// The locations of `code`, caller first: a deterministic function of the
// code and the scenario. Strings point into s->names (valid until the next call).
static uint32_t describe(Synth *s, uint64_t code, TraceLocation *out, uint32_t max) {
  uint64_t h = mix(code ^ 0x5EED);
  uint32_t kind = (uint32_t)(h % 100), n = 1;
  bool names = s->scenario == NAMES || s->scenario == MIXED;
  uint32_t files = names ? 61 : 7, functions = names ? 83 : 13;
  uint32_t line_max = names ? 1u << 21 : 3000, col_max = names ? 1500 : 120;
  if (kind < 8 || (code >= 0x200000 && code < 0x300000)) return 0;
  if (kind < 16) n = 2 + (uint32_t)(h >> 60) % 3;
  if (names && kind >= 16 && kind < 18) n = BIG_CHAIN;
  snprintf(s->names[0], 64, "src/file%" PRIu64 ".mn", (h >> 20) % files);
  snprintf(s->names[1], 64, "Mod.fun%" PRIu64, (h >> 32) % functions);
  const char *file = s->names[0], *function = s->names[1];
  if (s->scenario == HOSTILE) {
    size_t k = sizeof HOSTILE_NAMES / sizeof *HOSTILE_NAMES;
    file = HOSTILE_NAMES[(h >> 20) % k];
    function = HOSTILE_NAMES[(h >> 32) % k];
  }
  if (names && kind >= 18 && kind < 20) {  // too long: written as unknown
    memset(s->names[2], 'a' + (int)(h % 26), LONG_FILE);
    s->names[2][LONG_FILE] = 0;
    file = s->names[2];
  } else if (names && kind >= 20 && kind < 22) {  // long but within the bound
    memset(s->names[2], 'A' + (int)(h % 26), 1000);
    s->names[2][1000] = 0;
    memset(s->names[3], 'b', LONG_FUNCTION);
    snprintf(s->names[3] + LONG_FUNCTION, 32, "%" PRIu64, h % 7);
    file = s->names[2];
    function = s->names[3];
  }
  for (uint32_t i = 0; i < n && i < max; i++) {
    out[i].file = file;
    out[i].function = i == 0 ? function : "Inlined.callee";
    out[i].line = (uint32_t)((h >> 40) % line_max) + i;
    out[i].start_col = (uint32_t)((h >> 8) % col_max);
    out[i].end_col = out[i].start_col + (uint32_t)(h >> 50) % col_max;
  }
  return n < max ? n : max;
}

static uint32_t locate(void *data, uint64_t code, TraceLocation *out, uint32_t max) {
  return describe(data, code, out, max);
}

static uint32_t clamp(uint32_t v, uint32_t max) { return v > max ? max : v; }

// The frame as dump_trace prints it (after a space).
static void print_frame(Synth *s, uint64_t code) {
  static TraceLocation locs[BIG_CHAIN + 1];
  uint32_t n = describe(s, code, locs, BIG_CHAIN + 1);
  if (n == 0) {
    fprintf(s->expect, " $%" PRIu64, code);
    return;
  }
  size_t bound = 9;
  for (uint32_t i = 0; i < n; i++) bound += 6 + strlen(locs[i].file) + 1 + strlen(locs[i].function) + 1;
  if (n > 255 || bound > 4096) {
    fputs(" ??@<unknown>:1:1-1", s->expect);
    return;
  }
  for (uint32_t i = 0; i < n; i++)
    fprintf(s->expect, " %s@%s:%u:%u-%u", locs[i].function, locs[i].file, clamp(locs[i].line, 0xFFFFF),
            clamp(locs[i].start_col, 0xFF), clamp(locs[i].end_col, 0x3FF));
}

// ---------------------------------------------------------------- stacks

static void reserve(Synth *s, uint32_t depth) {
  if (depth <= s->cap) return;
  uint32_t cap = s->cap ? s->cap : 256;
  while (cap < depth) cap *= 2;
  s->stack = realloc(s->stack, cap * sizeof *s->stack);
  s->prev = realloc(s->prev, cap * sizeof *s->prev);
  if (!s->stack || !s->prev) {
    fprintf(stderr, "trace_synth: out of memory\n");
    exit(2);
  }
  s->cap = cap;
}

static void push(Synth *s, uint64_t code) {
  reserve(s, s->depth + 1);
  s->stack[s->depth++] = code;
}

static uint64_t pool_code(Synth *s, uint64_t pool) {
  uint64_t i = below(s, pool);
  // codes spread over [1, 2^62): big values exercise the hashes' 63-bit arithmetic
  return i % 3 == 0 ? (mix(i) >> 2) | 1 : 0x400000 + 16 * i;
}

static void step_random(Synth *s, uint64_t pool, uint32_t max_depth) {
  uint32_t pop = (uint32_t)below(s, 6);
  s->depth = pop > s->depth ? 0 : s->depth - pop;
  uint32_t pushes = (uint32_t)below(s, 7);
  for (uint32_t i = 0; i < pushes && s->depth < max_depth; i++) push(s, pool_code(s, pool));
}

// Recursion: an outermost frame, then stretches of 700 frames alternately
// one code (prediction runs past 255) and a cycle of codes whose successors
// change; a few frames replaced at random. Codes 0x200000.. have no location
// (short lines in the dump).
static uint64_t deep_code(Synth *s, uint32_t d) {
  if (d % 1000 == 999) return 0x300000 + 16 * below(s, 3);
  if (d / 700 % 2 == 0) return 0x200000;
  return 0x200000 + 16 * (d % 2 ? 1 : 2) * (d % 3 ? 1 : 5);
}

static void step_deep(Synth *s, uint64_t k) {
  int64_t target = k % 10 == 0 ? (int64_t)below(s, 100001) : (int64_t)s->depth + (int64_t)below(s, 2001) - 1000;
  target = target > 100000 ? 100000 : target < 3 ? 3 : target;
  uint32_t keep = s->depth > 4 ? s->depth - 4 : 0;
  if (keep >= target) keep = (uint32_t)target - 1;
  s->depth = keep;
  if (s->depth == 0) push(s, 7);
  while (s->depth < target) push(s, deep_code(s, s->depth));
  if (below(s, 4) == 0) s->stack[below(s, s->depth)] = 0x500000 + 16 * below(s, 50);
}

// Thousands of never-seen codes (the 4,096-byte cap), then a stack sharing
// most of them and differing far inside.
static void step_long(Synth *s, uint64_t k) {
  if (k % 3 == 0) {
    s->depth = 0;
    uint32_t n = 500 + (uint32_t)below(s, 3000);
    for (uint32_t i = 0; i < n; i++) push(s, s->fresh_code++ * 8 + 0x1000000);
  } else {
    uint32_t keep = (uint32_t)below(s, s->depth + 1);
    s->depth = keep;
    uint32_t n = (uint32_t)below(s, 600);
    for (uint32_t i = 0; i < n; i++) push(s, below(s, 2) ? s->fresh_code++ * 8 + 0x1000000 : pool_code(s, 50));
  }
}

static void next_stack(Synth *s, Scenario sc, uint64_t k) {
  switch (sc) {
  case RANDOM: step_random(s, 400, 200); break;
  case DEEP: step_deep(s, k); break;
  case LONG: step_long(s, k); break;
  case EVICT:
    if (s->depth > 3) s->depth = (uint32_t)below(s, 4);
    for (uint32_t i = 0, n = 3 + (uint32_t)below(s, 20); i < n; i++) push(s, pool_code(s, 60000));
    break;
  case NAMES: case HOSTILE: step_random(s, 5000, 40); break;
  case BIG: step_random(s, 100, 30); break;
  case MIXED: next_stack(s, (Scenario)(k / 50 % 6), k); break;
  case ZERO:
    step_random(s, 30, 12);
    for (uint32_t i = 0; i < s->depth; i++)
      if (below(s, 5) == 0) s->stack[i] = 0;
    break;
  }
}

// ---------------------------------------------------------------- events

static void advance_time(Synth *s) {
  uint64_t r = below(s, 1000);
  if (r == 0) s->now += 30000001;                   // just past a packet's span
  else if (r == 1) s->now += (1u << 25) + 12345;    // past the 25-bit wrap
  else if (r == 2) s->now += 200000000;             // minutes
  else if (r < 100) s->now += 0;
  else s->now += below(s, 3000);
}

static void alloc_event(Synth *s, Scenario sc, uint64_t k) {
  memcpy(s->prev, s->stack, s->depth * sizeof *s->stack);
  s->prev_depth = s->depth;
  next_stack(s, sc == MIXED ? (Scenario)(k / 50 % 6) : sc, k);
  uint32_t both = s->depth < s->prev_depth ? s->depth : s->prev_depth, common = 0;
  while (common < both && s->stack[common] == s->prev[common]) common++;
  uint32_t known = below(s, 2) ? common : (uint32_t)below(s, common + 1);
  uint32_t reader_had = trace_writer_backtrace_depth(s->w);
  bool big = sc == BIG || (sc == MIXED && below(s, 4) == 0);
  uint64_t wosize = big ? (below(s, 3) == 0 ? below(s, 1ull << 40) : below(s, 70000)) : below(s, 20);
  uint32_t samples = big ? 1 + (uint32_t)below(s, 3000000) : (below(s, 8) ? 1 : 1 + (uint32_t)below(s, 5));
  TraceSource source = big ? (TraceSource)below(s, 3) : (below(s, 10) ? TRACE_SOURCE_MINOR : TRACE_SOURCE_MAJOR);
  advance_time(s);
  uint64_t id = trace_writer_alloc(s->w, s->now, wosize, samples, source, s->stack, s->depth, known);
  if (id != s->n_ids) {
    fprintf(stderr, "trace_synth: id %" PRIu64 ", expected %zu\n", id, s->n_ids);
    exit(1);
  }
  if (s->copy) trace_writer_alloc(s->copy, s->now, wosize, samples, source, s->stack,
                                  trace_writer_backtrace_depth(s->w), 0);
  s->live[s->n_live++] = id;
  s->promoted[s->n_ids++] = source != TRACE_SOURCE_MINOR;  // only minor blocks get promoted
  if (!s->expect) return;
  static const char *const kinds[] = {"alloc", "alloc_major", "alloc_ext"};
  uint32_t shown = trace_writer_backtrace_depth(s->w);
  fprintf(s->expect, "%010" PRIu64 " %010" PRIu64 " %s %u len=%" PRIu64 " % 4lld:", s->now - s->start, id,
          kinds[source], samples, wosize, (long long)(common < reader_had ? common : reader_had));
  for (uint32_t i = 0; i < shown; i++) print_frame(s, s->stack[i]);
  fputc('\n', s->expect);
}

static void lifetime_event(Synth *s) {
  size_t i = below(s, s->n_live);
  uint64_t id = s->live[i];
  advance_time(s);
  if (!s->promoted[id] && below(s, 2)) {
    s->promoted[id] = 1;
    trace_writer_promote(s->w, s->now, id);
    if (s->copy) trace_writer_promote(s->copy, s->now, id);
    if (s->expect) fprintf(s->expect, "%010" PRIu64 " %010" PRIu64 " promote\n", s->now - s->start, id);
    return;
  }
  s->live[i] = s->live[--s->n_live];
  trace_writer_collect(s->w, s->now, id);
  if (s->copy) trace_writer_collect(s->copy, s->now, id);
  if (s->expect) fprintf(s->expect, "%010" PRIu64 " %010" PRIu64 " collect\n", s->now - s->start, id);
}

static int usage(void) {
  fprintf(stderr, "usage: trace_synth [--scenario random|deep|long|evict|names|big|mixed|zero] [--seed N]\n"
                  "                   [--events N] [--version V] [--copy C.ctf] OUT.ctf [EXPECTED.dump]\n");
  return 2;
}

int main(int argc, char **argv) {
  Synth s = {.rng = 1};
  uint64_t events = 2000;
  unsigned version = TRACE_VERSION_DEFAULT;
  const char *out = NULL, *expect = NULL, *copy = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 < argc && strcmp(a, "--scenario") == 0) {
      const char *name = argv[++i];
      size_t n = sizeof SCENARIO_NAMES / sizeof *SCENARIO_NAMES, j = 0;
      while (j < n && strcmp(SCENARIO_NAMES[j], name) != 0) j++;
      if (j == n) return usage();
      s.scenario = (Scenario)j;
    } else if (i + 1 < argc && strcmp(a, "--seed") == 0) s.rng = strtoull(argv[++i], NULL, 10) * 1000003;
    else if (i + 1 < argc && strcmp(a, "--events") == 0) events = strtoull(argv[++i], NULL, 10);
    else if (i + 1 < argc && strcmp(a, "--version") == 0) version = (unsigned)atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(a, "--copy") == 0) copy = argv[++i];
    else if (a[0] == '-') return usage();
    else if (!out) out = a;
    else if (!expect) expect = a;
    else return usage();
  }
  if (!out) return usage();
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || (expect && !(s.expect = fopen(expect, "w")))) {
    perror(fd < 0 ? out : expect);
    return 2;
  }
  s.start = s.now = 1700000000000000ull + below(&s, 1u << 25);
  TraceInfo info = {.sample_rate = 1e-5, .word_size = 64, .executable = "trace_synth", .host = "synth",
                    .runtime_params = SCENARIO_NAMES[s.scenario], .context = "", .pid = 4242,
                    .start_time_us = s.start, .version = (uint16_t)version};
  if (s.scenario == HOSTILE)
    info.executable = HOSTILE_NAMES[2], info.host = HOSTILE_NAMES[5], info.context = HOSTILE_NAMES[4],
    info.runtime_params = HOSTILE_NAMES[7];
  char err[256];
  s.w = trace_writer_new(fd, true, &info, locate, &s, err, sizeof err);
  if (!s.w) {
    fprintf(stderr, "trace_synth: %s\n", err);
    return 1;
  }
  if (copy) {
    int copy_fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (copy_fd < 0) {
      perror(copy);
      return 2;
    }
    s.copy = trace_writer_new(copy_fd, true, &info, locate, &s, err, sizeof err);
    if (!s.copy) {
      fprintf(stderr, "trace_synth: %s\n", err);
      return 1;
    }
    trace_writer_relog_locations(s.copy);
  }
  reserve(&s, 1);
  s.live = xmalloc(events * sizeof *s.live);
  s.promoted = xmalloc(events);
  for (uint64_t k = 0; k < events; k++) {
    alloc_event(&s, s.scenario, k);
    while (s.n_live > 0 && below(&s, 3) == 0) lifetime_event(&s);
    if (below(&s, 500) == 0) trace_writer_flush(s.w);
  }
  if (s.copy && !trace_writer_finish(s.copy, err, sizeof err)) {
    fprintf(stderr, "trace_synth: %s (--copy)\n", err);
    return 1;
  }
  if (!trace_writer_finish(s.w, err, sizeof err)) {
    fprintf(stderr, "trace_synth: %s\n", err);
    return 1;
  }
  if (s.expect && fclose(s.expect) != 0) {
    perror(expect);
    return 2;
  }
  free(s.stack);
  free(s.prev);
  free(s.live);
  free(s.promoted);
  return 0;
}
