// test_tool_collapse.c - cmocka tests of the trace tools' recursion folding
// (tools/memtrace_cli/analysis/collapse.c): runs of one frame and of cycles
// up to the maximum period (f g g h g g, mutual recursions of 7 and 40
// functions, nested cycles, a cycle broken halfway), work per push bounded
// (collapse_steps), nothing folded at period 0, hash-consing (equal
// stacks, one id; a prefix's id shared), and on random stacks (fixed seed)
// that expanding the runs gives the stack back and that a stack's form does
// not depend on the stacks pushed before it.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/collapse.h"

// Frames are their keys; reps are the keys too (so a unit's reps spell it).
static CollapseId push_all(Collapse *c, const uint64_t *keys, uint32_t n) {
  CollapseId at = 0;
  for (uint32_t i = 0; i < n; i++) at = collapse_push(c, at, keys[i], (uint32_t)keys[i]);
  return at;
}

// The frames `id` stands for, outermost first, into out (at most cap); returns how many.
static uint32_t expand(const Collapse *c, CollapseId id, uint64_t *out, uint32_t cap) {
  uint32_t runs = id ? collapse_run(c, id)->runs : 0, n = 0;
  CollapseId *path = malloc((runs + 1) * sizeof *path);
  for (uint32_t k = runs; k-- > 0; id = collapse_run(c, id)->parent) path[k] = id;
  for (uint32_t k = 0; k < runs; k++) {
    const uint32_t *reps;
    uint32_t len = collapse_unit(c, collapse_run(c, path[k])->unit, &reps);
    for (uint32_t r = 0; r < collapse_run(c, path[k])->count; r++)
      for (uint32_t f = 0; f < len; f++) {
        assert_true(n < cap);
        out[n++] = reps[f];
      }
  }
  free(path);
  return n;
}

static void test_one_frame(void **state) {
  (void)state;
  Collapse *c = collapse_new(COLLAPSE_MAX_PERIOD);
  uint64_t keys[100001];
  keys[0] = 7;
  for (uint32_t i = 1; i <= 100000; i++) keys[i] = 5;
  CollapseId id = push_all(c, keys, 100001);
  const CollapseRun *r = collapse_run(c, id);
  assert_int_equal(r->runs, 2);           // 7, then 5 x 100000
  assert_int_equal(r->count, 100000);
  assert_false(collapse_plain(c, id));
  assert_true(collapse_plain(c, r->parent));
  assert_true(collapse_size(c) <= 100002);  // a run per count met, no more
  collapse_free(c);
}

// collapse_seal frees the tables alone: every run and unit reads as before.
static void test_seal(void **state) {
  (void)state;
  Collapse *c = collapse_new(COLLAPSE_MAX_PERIOD);
  uint64_t keys[301];
  for (uint32_t i = 0; i < 300; i++) keys[i] = 1 + i % 3;  // (1 2 3) x 100
  keys[300] = 9;
  CollapseId id = push_all(c, keys, 301);
  uint32_t size = collapse_size(c);
  CollapseRun *before = malloc(size * sizeof *before);
  assert_non_null(before);
  for (CollapseId r = 1; r < size; r++) before[r] = *collapse_run(c, r);
  collapse_seal(c);
  assert_int_equal(collapse_size(c), size);
  for (CollapseId r = 1; r < size; r++) assert_memory_equal(collapse_run(c, r), &before[r], sizeof *before);
  const CollapseRun *cycle = collapse_run(c, collapse_run(c, id)->parent);
  const uint32_t *reps;
  assert_int_equal(collapse_unit(c, cycle->unit, &reps), 3);
  assert_int_equal(cycle->count, 100);
  assert_true(collapse_plain(c, id));
  free(before);
  collapse_free(c);
}

static void test_cycles(void **state) {
  (void)state;
  Collapse *c = collapse_new(COLLAPSE_MAX_PERIOD);
  // (1 2) x 50 then 1: a run of the cycle, then the partial repetition plain.
  uint64_t keys[40 * (COLLAPSE_MAX_PERIOD + 1)];
  uint32_t n = 0;
  for (int i = 0; i < 50; i++) keys[n++] = 1, keys[n++] = 2;
  keys[n++] = 1;
  CollapseId id = push_all(c, keys, n);
  assert_int_equal(collapse_run(c, id)->runs, 2);
  assert_true(collapse_plain(c, id));
  const CollapseRun *cycle = collapse_run(c, collapse_run(c, id)->parent);
  const uint32_t *reps;
  assert_int_equal(collapse_unit(c, cycle->unit, &reps), 2);
  assert_int_equal(reps[0], 1);
  assert_int_equal(reps[1], 2);
  assert_int_equal(cycle->count, 50);
  // Periods 3 to COLLAPSE_MAX_PERIOD fold; one more does not.
  static const uint32_t periods[] = {3, 4, 5, 6, 10, 33, COLLAPSE_MAX_PERIOD, COLLAPSE_MAX_PERIOD + 1};
  for (size_t pi = 0; pi < sizeof periods / sizeof *periods; pi++) {
    uint32_t period = periods[pi];
    n = 0;
    for (int i = 0; i < 40; i++)
      for (uint32_t k = 0; k < period; k++) keys[n++] = 10 + k;
    id = push_all(c, keys, n);
    if (period <= COLLAPSE_MAX_PERIOD) {
      assert_int_equal(collapse_run(c, id)->runs, 1);
      assert_int_equal(collapse_run(c, id)->count, 40);
      assert_int_equal(collapse_unit(c, collapse_run(c, id)->unit, &reps), period);
    } else {
      assert_int_equal(collapse_run(c, id)->runs, n);
    }
  }
  collapse_free(c);
}

// A cycle in which a frame repeats (f -> g -> g -> f ...: the g x2 inside
// it) folds as one: (f g g) x N, and (f g g g) x N, not f, g x2, f, g x2 ...
static void test_cycles_with_repeats(void **state) {
  (void)state;
  Collapse *c = collapse_new(COLLAPSE_MAX_PERIOD);
  static const uint64_t units[][4] = {{1, 2, 2}, {1, 2, 2, 2}, {1, 1, 2}, {3, 1, 3, 2}};
  static const uint32_t lens[] = {3, 4, 3, 4};
  uint64_t keys[1000], back[1000];
  const uint32_t *reps;
  for (int u = 0; u < 4; u++) {
    uint32_t n = 0;
    keys[n++] = 9;  // the root
    for (int i = 0; i < 100; i++)
      for (uint32_t k = 0; k < lens[u]; k++) keys[n++] = units[u][k];
    CollapseId id = push_all(c, keys, n);
    const CollapseRun *r = collapse_run(c, id);
    assert_int_equal(r->runs, 2);
    assert_int_equal(r->count, 100);
    assert_int_equal(collapse_unit(c, r->unit, &reps), lens[u]);
    for (uint32_t k = 0; k < lens[u]; k++) assert_int_equal(reps[k], units[u][k]);
    // the same cycle cut after its repeated frame: the whole cycles, then the part
    keys[n++] = units[u][0];
    keys[n++] = units[u][1];
    id = push_all(c, keys, n);
    assert_int_equal(expand(c, id, back, 1000), n);
    assert_memory_equal(back, keys, n * sizeof *keys);
    assert_true(collapse_run(c, id)->runs <= 4);
  }
  collapse_free(c);
}

// keys[0 .. n), whose runs in `shared` are `id`: expanding gives them
// back, and pushed alone in a fresh Collapse they make as many runs (a
// stack's form is its own, whatever was pushed before it).
static void assert_round_trip(const Collapse *shared, CollapseId id, const uint64_t *keys, uint32_t n,
                              uint64_t *back, uint32_t cap) {
  assert_int_equal(expand(shared, id, back, cap), n);
  assert_memory_equal(back, keys, n * sizeof *keys);
  Collapse *alone = collapse_new(COLLAPSE_MAX_PERIOD);
  CollapseId id2 = push_all(alone, keys, n);
  assert_int_equal(id ? collapse_run(shared, id)->runs : 0, id2 ? collapse_run(alone, id2)->runs : 0);
  collapse_free(alone);
}

// keys[0] = the root (99), then `reps` times the cycle `unit` (len frames):
// returns how many keys.
static uint32_t cycle_stack(uint64_t *keys, const uint64_t *unit, uint32_t len, uint32_t reps) {
  uint32_t n = 0;
  keys[n++] = 99;
  for (uint32_t i = 0; i < reps; i++)
    for (uint32_t k = 0; k < len; k++) keys[n++] = unit[k];
  return n;
}

// The stack `id` is the root then the cycle unit[0 .. len) times count.
static void assert_root_then_cycle(const Collapse *c, CollapseId id, const uint64_t *unit, uint32_t len,
                                   uint32_t count) {
  const CollapseRun *r = collapse_run(c, id);
  const uint32_t *reps;
  assert_int_equal(r->runs, 2);
  assert_int_equal(r->count, count);
  assert_int_equal(collapse_unit(c, r->unit, &reps), len);
  for (uint32_t k = 0; k < len; k++) assert_int_equal(reps[k], unit[k]);
  assert_true(collapse_plain(c, r->parent));
}

// Long cycles (issue 32): f g g h g g (period 6, g repeated inside it), a
// mutual recursion of 7 and of 40 functions, each x1000 under a root: one run.
static void test_long_cycles(void **state) {
  (void)state;
  Collapse *c = collapse_new(COLLAPSE_MAX_PERIOD);
  enum { REPS = 1000 };
  uint64_t *keys = malloc((40 * REPS + 1) * sizeof *keys), unit[40];
  static const uint64_t fgghgg[] = {1, 2, 2, 3, 2, 2};
  uint32_t n = cycle_stack(keys, fgghgg, 6, REPS);
  assert_root_then_cycle(c, push_all(c, keys, n), fgghgg, 6, REPS);
  for (uint32_t len = 7; len <= 40; len += 33) {
    for (uint32_t k = 0; k < len; k++) unit[k] = 100 + k;
    n = cycle_stack(keys, unit, len, REPS);
    assert_root_then_cycle(c, push_all(c, keys, n), unit, len, REPS);
  }
  free(keys);
  collapse_free(c);
}

// Nested cycles: a (b c)x3 d is the unit of period 8 of an outer recursion;
// (a (b c)x3 d) x500 is one run; after it, a b c b c (the inner cycle begun
// again, cut) is a, (b c)x2, and the stack expands back.
static void test_nested_cycles(void **state) {
  (void)state;
  Collapse *c = collapse_new(COLLAPSE_MAX_PERIOD);
  static const uint64_t outer[] = {1, 2, 3, 2, 3, 2, 3, 4};
  uint64_t keys[8 * 500 + 10], back[8 * 500 + 10];
  uint32_t n = cycle_stack(keys, outer, 8, 500);
  CollapseId id = push_all(c, keys, n);
  assert_root_then_cycle(c, id, outer, 8, 500);
  keys[n++] = 1, keys[n++] = 2, keys[n++] = 3, keys[n++] = 2, keys[n++] = 3;
  id = push_all(c, keys, n);
  assert_int_equal(collapse_run(c, id)->runs, 4);
  const uint32_t *reps;
  assert_int_equal(collapse_unit(c, collapse_run(c, id)->unit, &reps), 2);
  assert_int_equal(collapse_run(c, id)->count, 2);
  assert_int_equal(expand(c, id, back, sizeof back / sizeof *back), n);
  assert_memory_equal(back, keys, n * sizeof *keys);
  collapse_free(c);
}

// A cycle broken halfway: (f g g h g g) x50, then f g g h and a frame that
// ends the recursion (i): the 50 whole cycles stay one run, the half cycle
// and i follow as f, g x2, h, i.
static void test_cycle_broken(void **state) {
  (void)state;
  Collapse *c = collapse_new(COLLAPSE_MAX_PERIOD);
  static const uint64_t fgghgg[] = {1, 2, 2, 3, 2, 2};
  uint64_t keys[6 * 50 + 10], back[6 * 50 + 10];
  uint32_t n = cycle_stack(keys, fgghgg, 6, 50);
  keys[n++] = 1, keys[n++] = 2, keys[n++] = 2, keys[n++] = 3, keys[n++] = 9;
  CollapseId id = push_all(c, keys, n);
  assert_int_equal(expand(c, id, back, sizeof back / sizeof *back), n);
  assert_memory_equal(back, keys, n * sizeof *keys);
  assert_int_equal(collapse_run(c, id)->runs, 6);
  CollapseId cycle = id;
  for (int k = 0; k < 4; k++) cycle = collapse_run(c, cycle)->parent;
  assert_int_equal(collapse_run(c, cycle)->count, 50);
  const uint32_t *reps;
  assert_int_equal(collapse_unit(c, collapse_run(c, cycle)->unit, &reps), 6);
  collapse_free(c);
}

// Work per push is bounded whatever the depth (contract 2): the steps
// (frames read from tails, keys compared) of one push never pass
// 4 * COLLAPSE_MAX_PERIOD (a tail of 2 * max_period frames, then the keys a
// fold compares: p, and p times the divisors of p for primitivity, on the
// one fold that applies), on a 120,000-frame period-6 recursion, a
// 120,000-frame stack of distinct frames and a 40-function recursion. In
// all, the steps grow linearly: at most 2 * max_period per push for the
// distinct frames (each push reads the whole tail), and for a folded
// recursion of period L at most L + 2 per push on average (the tail is the
// cycle begun, fewer than L frames, read once per push; a fold compares L
// keys once every L pushes).
static void test_work_bounded(void **state) {
  (void)state;
  enum { N = 120000 };
  uint64_t *keys = malloc(N * sizeof *keys);
  for (int shape = 0; shape < 3; shape++) {
    for (uint32_t i = 0; i < N; i++)
      keys[i] = shape == 0 ? (uint64_t[]){1, 2, 2, 3, 2, 2}[i % 6] : shape == 1 ? 1000 + i : i % 40;
    Collapse *c = collapse_new(COLLAPSE_MAX_PERIOD);
    CollapseId at = 0;
    uint64_t most = 0;
    for (uint32_t i = 0; i < N; i++) {
      uint64_t before = collapse_steps(c);
      at = collapse_push(c, at, keys[i], (uint32_t)keys[i]);
      uint64_t step = collapse_steps(c) - before;
      if (step > most) most = step;
    }
    assert_true(most <= 4 * COLLAPSE_MAX_PERIOD);
    uint64_t period = shape == 0 ? 6 : 40;
    if (shape == 1) assert_true(collapse_steps(c) <= (uint64_t)N * 2 * COLLAPSE_MAX_PERIOD);
    else assert_true(collapse_steps(c) <= N * (period + 2));  // the tail: the cycle begun, < period
    if (shape != 1) assert_int_equal(collapse_run(c, at)->runs, 1);  // (cycle) x N / period
    collapse_free(c);
  }
  free(keys);
}

// Random stacks that repeat a frame up to 70 back (cycles up to and past
// COLLAPSE_MAX_PERIOD, broken at random): expanding gives the stack back,
// and a stack's form is the same pushed alone as after the others.
static void test_random_long_cycles(void **state) {
  (void)state;
  uint64_t seed = 777;
  Collapse *shared = collapse_new(COLLAPSE_MAX_PERIOD);
  enum { MAX = 2000 };
  uint64_t keys[MAX], back[MAX];
  for (int t = 0; t < 200; t++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t n = (uint32_t)(seed >> 33) % MAX, period = 1 + (uint32_t)(seed >> 20) % 70;
    for (uint32_t i = 0; i < n; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      uint32_t r = (uint32_t)(seed >> 33) % 100;
      if (r < 3) period = 1 + (uint32_t)(seed >> 20) % 70;  // a new cycle length now and then
      keys[i] = i >= period && r >= 5 ? keys[i - period] : (seed >> 40) % 50;
    }
    assert_round_trip(shared, push_all(shared, keys, n), keys, n, back, MAX);
  }
  collapse_free(shared);
}

static void test_whole(void **state) {
  (void)state;
  Collapse *c = collapse_new(0);
  uint64_t keys[300];
  for (uint32_t i = 0; i < 300; i++) keys[i] = i < 200 ? 3 : i % 2;
  CollapseId id = push_all(c, keys, 300);
  assert_int_equal(collapse_run(c, id)->runs, 300);
  for (; id != 0; id = collapse_run(c, id)->parent) assert_true(collapse_plain(c, id));
  collapse_free(c);
}

static void test_hash_consing(void **state) {
  (void)state;
  Collapse *c = collapse_new(COLLAPSE_MAX_PERIOD);
  uint64_t a[] = {1, 2, 3, 3, 3, 4}, b[] = {1, 2, 3, 3, 3, 5};
  CollapseId x = push_all(c, a, 6), y = push_all(c, a, 6), z = push_all(c, b, 6);
  assert_int_equal(x, y);
  assert_int_not_equal(x, z);
  assert_int_equal(collapse_run(c, x)->parent, collapse_run(c, z)->parent);  // 1 2 3x3 shared
  assert_true(collapse_run(c, x)->parent < x);
  collapse_free(c);
}

// Random stacks over 3 frames (recursion-like, with repeats and cycles),
// pushed in a shared Collapse and each alone in a fresh one: expanding gives
// the stack back, and the run count agrees (the form is the stack's alone).
// Every run the shared Collapse holds is what some push returned (the
// consumers map each run to a stack: calltree.c, pprof_export.c).
static void test_random_round_trip(void **state) {
  (void)state;
  uint64_t seed = 12345;
  Collapse *shared = collapse_new(COLLAPSE_MAX_PERIOD);
  enum { MAX = 400 };
  uint64_t keys[MAX], back[MAX * 2];
  uint8_t *seen = NULL;
  size_t seen_cap = 0;
  for (int t = 0; t < 300; t++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t n = (uint32_t)(seed >> 33) % MAX;
    for (uint32_t i = 0; i < n; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      uint32_t r = (uint32_t)(seed >> 33) % 10;
      // mostly repeat the frame 1, 2 or 3 back (runs and cycles, some with a
      // frame repeated inside), else a new one
      keys[i] = i >= 3 && r < 6 ? keys[i - 1 - r % 3] : r % 3;
    }
    CollapseId id = 0;
    for (uint32_t i = 0; i < n; i++) {
      id = collapse_push(shared, id, keys[i], (uint32_t)keys[i]);
      if (id >= seen_cap) {
        seen = realloc(seen, 2 * id + 1024);
        memset(seen + seen_cap, 0, 2 * id + 1024 - seen_cap);
        seen_cap = 2 * id + 1024;
      }
      seen[id] = 1;
    }
    assert_round_trip(shared, id, keys, n, back, MAX * 2);
  }
  for (CollapseId r = 1; r < collapse_size(shared); r++)
    if (r >= seen_cap || !seen[r]) fail_msg("run %u is no push's result", r);
  free(seen);
  collapse_free(shared);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_frame),     cmocka_unit_test(test_cycles),
      cmocka_unit_test(test_cycles_with_repeats),
      cmocka_unit_test(test_long_cycles),   cmocka_unit_test(test_nested_cycles),
      cmocka_unit_test(test_cycle_broken),  cmocka_unit_test(test_work_bounded),
      cmocka_unit_test(test_random_long_cycles),
      cmocka_unit_test(test_whole),         cmocka_unit_test(test_hash_consing),
      cmocka_unit_test(test_random_round_trip), cmocka_unit_test(test_seal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
