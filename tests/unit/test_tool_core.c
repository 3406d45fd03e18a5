// test_tool_core.c - cmocka tests of the trace tools' analysis core
// (tools/memtrace_cli): the statistics (stats.c: special functions against
// published values, Garwood and Clopper-Pearson intervals and the latter's
// coverage by simulation, tallies over several
// rates, the diff test), the live table (live.c: against a shadow array
// through ring growth and the hash part), and the profile (profile.c) on
// traces written here with trace/writer.c and read back with the reader:
// the trie from common prefixes, stacks, sites and keys, counters, the --at
// snapshot, lifetimes, leak windows and the proof horizon.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/splitmix.h"
#include "analysis/live.h"
#include "analysis/profile.h"
#include "analysis/stats.h"
#include "../../trace/reader.h"
#include "../../trace/writer.h"

static void assert_close(double got, double want, double rel) {
  if (fabs(got - want) > rel * fabs(want) + 1e-12) fail_msg("got %.10g, want %.10g (within %g)", got, want, rel);
}

// ================================================================ stats

static void test_gamma_and_beta(void **state) {
  (void)state;
  assert_close(stats_gamma_p(1, 2), 1 - exp(-2), 1e-12);
  assert_close(stats_gamma_p(3, 3), 1 - exp(-3) * (1 + 3 + 4.5), 1e-12);  // Poisson(3) tail identity
  assert_close(stats_gamma_p(50, 60), 0.9156008, 1e-5);
  assert_close(stats_beta_inc(3, 3, 0.5), 0.5, 1e-12);
  assert_close(stats_beta_inc(2, 5, 0.3), 0.579825, 1e-5);
  assert_close(stats_binomial_cdf(5, 10, 0.5), 0.623046875, 1e-12);
  assert_close(stats_binomial_cdf(0, 20, 0.5), pow(0.5, 20), 1e-9);
  assert_close(stats_binomial_cdf(20, 20, 0.3), 1, 0);
  assert_close(stats_normal_upper(1.959963984540054), 0.025, 1e-9);
}

// Garwood's interval: published values (e.g. Ulm 1990, Table 1).
static void test_poisson_interval(void **state) {
  (void)state;
  static const double table[][3] = {
      {0, 0, 3.688879}, {1, 0.025318, 5.571643}, {2, 0.242209, 7.224688},
      {10, 4.795389, 18.390356},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    Interval iv = stats_poisson_interval(table[i][0]);
    assert_close(iv.lo, table[i][1], 1e-5);
    assert_close(iv.hi, table[i][2], 1e-5);
  }
  // The defining property, and past a = 1000 (Wilson-Hilferty instead of
  // bisection) within 1e-5 of it.
  for (double n = 20; n < 20000; n *= 3.7) {
    Interval iv = stats_poisson_interval(n);
    assert_close(stats_gamma_p(n, iv.lo), 0.025, 1e-3);
    assert_close(stats_gamma_p(n + 1, iv.hi), 0.975, 1e-4);
  }
}

static void test_proportion_interval(void **state) {
  (void)state;
  // Clopper-Pearson's published values (e.g. 5 of 10: [0.187086, 0.812914]),
  // and the closed forms at 0 and n.
  Interval iv = stats_proportion_interval(5, 10);
  assert_close(iv.lo, 0.187086, 1e-5);
  assert_close(iv.hi, 0.812914, 1e-5);
  iv = stats_proportion_interval(0, 20);
  assert_close(iv.lo, 0, 0);
  assert_close(iv.hi, 1 - pow(0.025, 1.0 / 20), 1e-12);
  iv = stats_proportion_interval(20, 20);
  assert_close(iv.lo, pow(0.025, 1.0 / 20), 1e-12);
  assert_close(iv.hi, 1, 0);
  iv = stats_proportion_interval(0, 0);
  assert_close(iv.lo, 0, 0);
  assert_close(iv.hi, 1, 0);
  // The bounds are where the binomial tails are 2.5 %, also for tiny shares.
  iv = stats_proportion_interval(1, 100000);
  assert_close(1 - stats_binomial_cdf(0, 100000, iv.lo), 0.025, 1e-6);
  assert_close(stats_binomial_cdf(1, 100000, iv.hi), 0.025, 1e-6);
  assert_true(iv.lo > 0 && iv.lo < 1e-5);
}

// ---------------------------------------------------------------- coverage

// splitmix64: the simulation's fixed-seed generator.
static uint64_t mix_next(uint64_t *s) { return splitmix64_next(s); }

static uint64_t binomial_draw(uint64_t *s, uint64_t n, double p) {
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; i++) k += (double)(mix_next(s) >> 11) * 0x1p-53 < p;
  return k;
}

// Wilson's score interval (the tools' interval before Clopper-Pearson): the
// simulation must see its under-coverage, or it could not fail.
static Interval wilson(uint64_t k, uint64_t n) {
  double z = 1.959963984540054, z2 = z * z, nn = (double)n, p = (double)k / nn;
  double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  double half = z / (1 + z2 / nn) * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  return (Interval){fmax(0, centre - half), fmin(1, centre + half)};
}

// Times out of `trials` binomial draws (n, p) whose interval holds p.
static uint32_t covered(Interval (*interval)(uint64_t, uint64_t), uint64_t n, double p, uint32_t trials,
                        uint64_t seed) {
  uint32_t hits = 0;
  for (uint32_t t = 0; t < trials; t++) {
    Interval iv = interval(binomial_draw(&seed, n, p), n);
    hits += iv.lo <= p && p <= iv.hi;
  }
  return hits;
}

// Coverage at the shares where Wilson's fails: 0.1 to 2 expected successes
// (the site: 0.17 in 460 blocks, a share of 0.037 %, just above
// Wilson's lower bound at one success, so that it covers only when no
// block is promoted: 84 %), and shares near 1. Clopper-Pearson's true coverage is >= 95 % at every p, so its count of
// covering intervals in T trials is at least Binomial(T, 0.95): the test
// asks for more than T 0.95 - 3 sigma, sigma = sqrt(T 0.95 0.05) (3 sigma,
// one-sided: a correct interval fails with probability < 0.14 % per case;
// seeds fixed, so the run is deterministic). Wilson's at the site
// covers e^-0.17 = 84 %: its count falls far below the same bound.
static void test_proportion_coverage(void **state) {
  (void)state;
  const uint32_t trials = 4000;
  const double bound = trials * 0.95 - 3 * sqrt(trials * 0.95 * 0.05);
  const uint64_t ns[] = {20, 460};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    double n = (double)ns[i];
    const double ps[] = {0.1 / n, 0.17 / n, 0.5 / n, 1 / n, 2 / n, 1 - 2 / n, 1 - 1 / n, 1 - 0.17 / n, 1 - 0.1 / n};
    for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
      uint32_t hits = covered(stats_proportion_interval, ns[i], ps[j], trials, 1000 * i + j + 1);
      if (hits < bound) fail_msg("n %.0f, p %g: %u of %u intervals cover (bound %.0f)", n, ps[j], hits, trials, bound);
    }
  }
  uint32_t hits = covered(wilson, 460, 0.17 / 460, trials, 7);
  assert_true(hits < bound);
  assert_true(hits < trials * 0.88);
}

static void test_tallies(void **state) {
  (void)state;
  // One scale: Garwood times the scale; empty: [0, 3.69 scale].
  Tally t = tally_empty(8000);
  Interval iv = tally_interval(&t);
  assert_close(iv.hi, 3.688879 * 8000, 1e-5);
  tally_add(&t, 10, 8000);
  iv = tally_interval(&t);
  assert_close(t.bytes, 80000, 0);
  assert_close(iv.lo, 4.795389 * 8000, 1e-5);
  assert_false(t.mixed);
  // Unbias, then sum: 10 samples at 8000 and 10 at 800 are 88000 bytes.
  Tally u = tally_empty(800);
  tally_add(&u, 10, 800);
  tally_merge(&t, &u);
  assert_true(t.mixed);
  assert_close(t.bytes, 88000, 0);
  assert_close(t.var, 10 * 8000.0 * 8000 + 10 * 800.0 * 800, 1e-12);
  iv = tally_interval(&t);
  assert_true(iv.lo < 88000 && 88000 < iv.hi);
  // Effective count bytes^2/var, scale var/bytes: here n = 11.98, s = 7345.
  double n = 88000.0 * 88000 / t.var, s = t.var / 88000;
  Interval g = stats_poisson_interval(n);
  assert_close(iv.lo, g.lo * s, 1e-12);
  assert_close(iv.hi, g.hi * s, 1e-12);
}

static void test_diff_pvalue(void **state) {
  (void)state;
  Tally a = tally_empty(100), b = tally_empty(100);
  tally_add(&a, 50, 100);
  tally_add(&b, 50, 100);
  assert_close(stats_diff_pvalue(&a, &b), 1, 1e-9);
  Tally z = tally_empty(100), c = tally_empty(100);
  tally_add(&c, 20, 100);
  assert_close(stats_diff_pvalue(&z, &c), 2 * pow(0.5, 20), 1e-6);
  // Different scales, same bytes expected: 10 samples at 1000 vs 100 at 100.
  Tally d = tally_empty(1000), e = tally_empty(100);
  tally_add(&d, 10, 1000);
  tally_add(&e, 100, 100);
  assert_true(stats_diff_pvalue(&d, &e) > 0.5);
  Tally f = tally_empty(100);
  tally_add(&f, 300, 100);
  assert_true(stats_diff_pvalue(&d, &f) < 1e-3);  // 10 000 bytes against 30 000: p = 8.4e-5
}

static void test_block_weight(void **state) {
  (void)state;
  assert_close(stats_block_weight(0, 0.5), 2, 1e-12);   // 1 word: sampled with probability 1/2
  assert_close(stats_block_weight(2, 0.5), 8.0 / 7, 1e-12);
  assert_close(stats_block_weight(1000, 1), 1, 0);
  assert_close(stats_block_weight(3, 1e-6), 1 / (1 - pow(1 - 1e-6, 4)), 1e-9);
}

// ================================================================ live table

static uint64_t next_random(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

static void count_entry(void *ctx, const LiveEntry *e) {
  (void)e;
  ++*(uint64_t *)ctx;
}

// The value every field of id k's entry holds (samples past 2^32 for some:
// the side table).
static LiveEntry live_entry_of(uint64_t k) {
  return (LiveEntry){.id = k, .samples = k % 1000 == 7 ? (1ull << 40) + k : k % 7 + 1, .stack = (uint32_t)(k % 13),
                     .minor = k % 3 != 0, .birth_us = 10 * k, .birth_clock = 20 * k, .old_us = LIVE_NEVER,
                     .window = (uint16_t)(k % 5)};
}

static void check_entry(const LiveTable *t, const LiveEntry *f, uint64_t k) {
  LiveEntry e = live_entry_of(k);
  assert_int_equal(f->id, k);
  assert_int_equal(f->samples, e.samples);
  assert_int_equal(f->stack, e.stack);
  assert_int_equal(f->minor, e.minor);
  if (t->extra & LIVE_LIFETIMES) {
    assert_int_equal(f->birth_us, e.birth_us);
    assert_int_equal(f->birth_clock, e.birth_clock);
  } else {
    assert_int_equal(f->birth_us + f->birth_clock, 0);
  }
  if (t->extra & LIVE_WINDOWS) assert_int_equal(f->window, e.window);
  if (f->promoted) assert_int_equal(f->old_us, t->extra & LIVE_WINDOWS ? 30 * k : LIVE_NEVER);
}

// 300,000 ids, most dying within a few hundred, some within 100,000, a few
// never: the ring grows and lets ids go to the old part, whose tombstones
// are compacted; every field read back is what went in (with each set of
// optional fields); a shadow array says what must be there.
static void test_live_table(void **state) {
  (void)state;
  enum { N = 300000 };
  for (unsigned extra = 0; extra < 4; extra++) {
    LiveTable t;
    assert_true(live_init(&t, extra));
    assert_int_equal(t.entry_bytes, 16 + 16 * __builtin_popcount(extra));
    uint8_t *alive = calloc(N, 1);
    uint64_t *death = malloc(N * sizeof *death), rng = 88172645463325252ull, count = 0;
    for (uint64_t id = 0; id < N; id++) {
      uint64_t r = next_random(&rng) % 100;
      death[id] = r < 80 ? id + 1 + next_random(&rng) % 500 : r < 98 ? id + 1 + next_random(&rng) % 100000 : UINT64_MAX;
    }
    LiveEntry f;
    LiveRef ref;
    for (uint64_t id = 0; id < N; id++) {
      LiveEntry e = live_entry_of(id);
      assert_int_equal(live_insert(&t, &e), LIVE_OK);
      alive[id] = 1, count++;
      if (id % 11 == 0) {  // promote some, young and old
        uint64_t k = id >= 1000 && alive[id - 1000] ? id - 1000 : id;
        assert_true(live_get(&t, k, &f, &ref));
        if (!f.promoted) live_promote(&t, ref, 30 * k);
      }
      // Collect everything due by now, checking what get returns.
      for (uint64_t k = id >= 600 ? id - 600 : 0; k <= id; k++)
        if (alive[k] && death[k] <= id && death[k] - k <= 500) {
          assert_true(live_get(&t, k, &f, &ref));
          check_entry(&t, &f, k);
          live_remove(&t, ref);
          alive[k] = 0, count--;
        }
      if (id % 1000 == 999)
        for (uint64_t k = 0; k <= id; k++)
          if (alive[k] && death[k] <= id) {
            assert_true(live_get(&t, k, &f, &ref));
            check_entry(&t, &f, k);
            live_remove(&t, ref);
            alive[k] = 0, count--;
          }
    }
    assert_int_equal(t.count, count);
    assert_true(t.ring_size > LIVE_RING_MIN);  // it grew
    assert_true(t.old_n < count * 4 / 3 + 1024);  // tombstones compacted
    for (uint64_t k = 0; k < N; k++) {  // every id, in order, then some backwards (the finger both ways)
      bool got = live_get(&t, k, &f, &ref);
      assert_int_equal(got, alive[k]);
      if (got) check_entry(&t, &f, k);
    }
    for (uint64_t k = N; k-- > 0;)
      if (k % 89 == 0) assert_int_equal(live_get(&t, k, &f, &ref), alive[k]);
    uint64_t each = 0;
    live_each(&t, count_entry, &each);
    assert_int_equal(each, count);
    LiveEntry again = {.id = 5};
    assert_int_equal(live_insert(&t, &again), LIVE_OUT_OF_ORDER);
    free(alive);
    free(death);
    live_free(&t);
  }
}

// ================================================================ profiles

// Frame codes: 10 + i is function f<i> at line i of m.mn; 99 has no location.
static uint32_t locate(void *data, uint64_t code, TraceLocation *out, uint32_t max) {
  (void)data;
  static char names[100][8];
  if (code == 99 || max == 0) return 0;
  snprintf(names[code % 100], sizeof names[0], "f%u", (unsigned)(code - 10));
  out[0] = (TraceLocation){names[code % 100], "m.mn", (uint32_t)(code - 10), 1, 9};
  return 1;
}

typedef struct Built {
  char path[64];
  TraceWriter *w;
  uint64_t t;
} Built;

static void build_start(Built *b, double rate, const char *params) {
  snprintf(b->path, sizeof b->path, "/tmp/test_tool_core_XXXXXX");
  int fd = mkstemp(b->path);
  assert_true(fd >= 0);
  TraceInfo info = {rate, 64, "test", "host", params, "", 42, 1000000, 2};
  char err[200];
  b->w = trace_writer_new(fd, true, &info, locate, NULL, err, sizeof err);
  assert_non_null(b->w);
  b->t = 1000000;
}

static uint64_t alloc(Built *b, uint64_t dt, uint64_t words, uint32_t samples, TraceSource src, const uint64_t *stack,
                      uint32_t depth) {
  b->t += dt;
  return trace_writer_alloc(b->w, b->t, words, samples, src, stack, depth, 0);
}

static Profile *build_finish(Built *b, TraceReader **r, ProfileOptions *opts) {
  char err[200];
  assert_true(trace_writer_finish(b->w, err, sizeof err));
  TraceReaderError rerr;
  *r = trace_reader_open(b->path, &rerr);
  assert_non_null(*r);
  if (opts->windows) {  // the first pass analysis.c makes
    TraceReader *r0 = trace_reader_open(b->path, &rerr);
    TraceEvent ev;
    while (trace_reader_next(r0, &ev) == TRACE_READER_EVENT) opts->clock_total += ev.n_samples;
    trace_reader_close(r0);
  }
  Profile *p = profile_new(*r, opts);
  assert_non_null(p);
  assert_int_equal(profile_read(p, NULL), TRACE_READER_END);
  profile_finish(p);
  assert_true(profile_ok(p));
  unlink(b->path);
  return p;
}

static ProfileStackId find_stack(const Profile *p, uint64_t leaf_code, uint32_t depth) {
  for (ProfileStackId s = 0; s < profile_n_stacks(p); s++) {
    ProfileNodeId n = profile_stack_leaf(p, s);
    uint32_t d = 0;
    for (ProfileNodeId k = n; k != 0; k = profile_node_parent(p, k)) d++;
    if (profile_node_code(p, n) == leaf_code && d == depth) return s;
  }
  fail_msg("no stack ending at %llu, depth %u", (unsigned long long)leaf_code, depth);
  return PROFILE_NONE;
}

// The trie: a node per (parent, code), stacks where allocations end, sites
// by innermost location, keys equal for equal locations.
// Five allocations on four stacks (one major), a promotion, two collections.
static Profile *build_mix(TraceReader **r, ProfileOptions *opts) {
  Built b;
  build_start(&b, 0.5, "minor_words=4096");
  const uint64_t s1[] = {10, 11, 12}, s2[] = {10, 11, 13}, s3[] = {10, 11, 12, 12}, s4[] = {99, 12};
  uint64_t a = alloc(&b, 5, 3, 2, TRACE_SOURCE_MINOR, s1, 3);
  uint64_t c = alloc(&b, 5, 1, 1, TRACE_SOURCE_MINOR, s2, 3);
  alloc(&b, 5, 3, 3, TRACE_SOURCE_MINOR, s1, 3);
  alloc(&b, 5, 300, 7, TRACE_SOURCE_MAJOR, s3, 4);
  alloc(&b, 5, 2, 1, TRACE_SOURCE_MINOR, s4, 2);
  trace_writer_promote(b.w, b.t += 5, a);
  trace_writer_collect(b.w, b.t += 5, c);
  trace_writer_collect(b.w, b.t += 5, a);
  return build_finish(&b, r, opts);
}

static void test_trie_and_counts(void **state) {
  (void)state;
  TraceReader *r;
  ProfileOptions opts = {0};
  Profile *p = build_mix(&r, &opts);
  // root, 10, 11, 12, 13, 12 (under 12), 99, 12 (under 99)
  assert_int_equal(profile_n_nodes(p), 8);
  assert_int_equal(profile_n_stacks(p), 4);
  assert_int_equal(profile_n_sites(p), 2);  // f2 and f3: the innermost locations
  ProfileStackId st1 = find_stack(p, 12, 3), st2 = find_stack(p, 13, 3), st3 = find_stack(p, 12, 4),
                 st4 = find_stack(p, 12, 2);
  ProfileCounts c1 = profile_stack_counts(p, st1), *k1 = &c1;
  assert_int_equal(k1->blocks, 2);
  assert_int_equal(k1->samples, 5);
  assert_int_equal(k1->promoted_blocks, 1);
  assert_int_equal(k1->live_blocks, 1);
  assert_int_equal(k1->live_samples, 3);
  assert_close(k1->objects, 2 * stats_block_weight(3, 0.5), 1e-12);
  assert_int_equal(profile_stack_counts(p, st2).live_blocks, 0);
  assert_int_equal(profile_stack_counts(p, st3).major_samples, 7);
  // Same site (f2), different stacks; the stack keys differ, the site keys agree.
  assert_int_equal(profile_stack_site(p, st1), profile_stack_site(p, st3));
  assert_int_equal(profile_stack_site(p, st1), profile_stack_site(p, st4));
  assert_true(profile_stack_key(p, st1, PROFILE_BY_STACK) != profile_stack_key(p, st3, PROFILE_BY_STACK));
  assert_true(profile_stack_key(p, st1, PROFILE_BY_SITE) == profile_stack_key(p, st3, PROFILE_BY_SITE));
  assert_true(profile_stack_key(p, st1, PROFILE_BY_FILE) == profile_stack_key(p, st2, PROFILE_BY_FILE));
  assert_true(profile_stack_key(p, st1, PROFILE_BY_FUNCTION) != profile_stack_key(p, st2, PROFILE_BY_FUNCTION));
  const ProfileCounts *tot = profile_totals(p);
  assert_int_equal(tot->samples, 14);
  assert_int_equal(tot->blocks, 5);
  assert_int_equal(tot->live_samples, 3 + 7 + 1);
  assert_int_equal(tot->at_samples, tot->live_samples);  // no --at: live at the end
  assert_int_equal(profile_summary(p)->unknown_ids, 0);
  assert_int_equal(profile_summary(p)->minor_heap_words, 4096);
  assert_close(profile_sample_bytes(p), 16, 0);
  ProfileGroups *g = profile_group(p, PROFILE_BY_SITE);
  assert_int_equal(g->n, 2);
  assert_int_equal(profile_group_counts(p, g, g->of_stack[st1]).samples, 5 + 7 + 1);
  assert_int_equal(g->rows[g->of_stack[st1]].first, st3);  // the stack with the most samples names it
  profile_groups_free(g);
  profile_free(p);
  trace_reader_close(r);
}

// allocations_only: the same allocated counts, stack by stack, and no
// live, promoted or --at counts; promotions and collections still counted.
static void test_allocations_only(void **state) {
  (void)state;
  TraceReader *r_full, *r_alloc;
  ProfileOptions full_opts = {0}, alloc_opts = {.allocations_only = true};
  Profile *full = build_mix(&r_full, &full_opts), *only = build_mix(&r_alloc, &alloc_opts);
  assert_int_equal(profile_n_stacks(only), profile_n_stacks(full));
  assert_int_equal(profile_n_nodes(only), profile_n_nodes(full));
  for (ProfileStackId s = 0; s < profile_n_stacks(full); s++) {
    ProfileCounts fc = profile_stack_counts(full, s), oc = profile_stack_counts(only, s), *f = &fc, *o = &oc;
    assert_int_equal(o->blocks, f->blocks);
    assert_int_equal(o->samples, f->samples);
    assert_close(o->objects, f->objects, 0);
    assert_int_equal(o->major_samples, f->major_samples);
    assert_int_equal(o->live_samples + o->promoted_samples + o->at_samples, 0);
  }
  assert_true(profile_totals(full)->live_samples > 0 && profile_totals(full)->promoted_samples > 0);
  assert_int_equal(profile_totals(only)->live_samples + profile_totals(only)->promoted_samples, 0);
  assert_int_equal(profile_summary(only)->promotes, 1);
  assert_int_equal(profile_summary(only)->collects, 2);
  assert_int_equal(profile_summary(only)->unknown_ids, 0);
  // With what needs deaths (here lifetimes) it is ignored: live counts again.
  TraceReader *r_both;
  ProfileOptions both_opts = {.allocations_only = true, .lifetimes = true};
  Profile *both = build_mix(&r_both, &both_opts);
  assert_int_equal(profile_totals(both)->live_samples, profile_totals(full)->live_samples);
  assert_int_equal(profile_totals(both)->promoted_samples, profile_totals(full)->promoted_samples);
  profile_free(both);
  trace_reader_close(r_both);
  profile_free(full);
  profile_free(only);
  trace_reader_close(r_full);
  trace_reader_close(r_alloc);
}

// --at: live at a moment inside the trace; lifetimes in time and allocation.
static void test_snapshot_and_lifetimes(void **state) {
  (void)state;
  Built b;
  build_start(&b, 1, "s=1k");
  const uint64_t s[] = {10, 11};
  uint64_t ids[10];
  for (int i = 0; i < 10; i++) ids[i] = alloc(&b, 100, 3, 4, TRACE_SOURCE_MINOR, s, 2);  // t = 100 .. 1000
  for (int i = 0; i < 5; i++) trace_writer_collect(b.w, b.t += 10, ids[i]);           // t = 1010 .. 1050
  TraceReader *r;
  ProfileOptions opts = {.lifetimes = true, .at_set = true, .at_us = 550};
  Profile *p = build_finish(&b, &r, &opts);
  assert_true(profile_summary(p)->at_taken);
  assert_int_equal(profile_totals(p)->at_blocks, 5);  // allocated at 100 .. 500
  assert_int_equal(profile_totals(p)->live_blocks, 5);
  assert_int_equal(profile_summary(p)->minor_heap_words, 1024);
  const ProfileLifetimes *l = profile_site_lifetimes(p, profile_stack_site(p, 0));
  assert_non_null(l);
  // Block i (born at 100 (i + 1), collected at 1010 + 10 i) lived 910 - 90 i us.
  for (int i = 0; i < 5; i++) assert_true(l->time_us[profile_hist_bucket(910 - 90 * (uint64_t)i)] >= 4);
  assert_int_equal(l->time_us[PROFILE_HIST_ALIVE], 20);
  // The clock: block 0 saw the 36 samples of the 9 later allocations.
  assert_true(l->clock[profile_hist_bucket(36)] >= 4);
  assert_int_equal(l->died_young_blocks, 5);
  for (uint64_t v = 4; v < 100000; v = v * 3 / 2 + 1) {
    double mid = profile_hist_value(profile_hist_bucket(v));
    assert_true(fabs(mid - (double)v) <= 0.125 * (double)v);
  }
  assert_true(isinf(profile_hist_value(PROFILE_HIST_ALIVE)));
  profile_free(p);
  trace_reader_close(r);
}

// Leak windows: blocks proven reachable by promotion or by a major
// collection they lived through, counted from the window after their birth.
static void test_windows(void **state) {
  (void)state;
  Built b;
  build_start(&b, 1, "");
  const uint64_t keep[] = {10, 11}, junk[] = {10, 12};
  uint64_t old_junk[8];
  int n_junk = 0;
  // 8 windows of 4 samples each (clock_total = 32): per window one kept block
  // (1 sample, promoted at once) and one junk block (3 samples).
  for (int w = 0; w < 8; w++) {
    uint64_t k = alloc(&b, 10, 0, 1, TRACE_SOURCE_MINOR, keep, 2);
    trace_writer_promote(b.w, b.t += 1, k);
    uint64_t j = alloc(&b, 10, 2, 3, TRACE_SOURCE_MINOR, junk, 2);
    if (w % 2 == 0) {  // promoted, dies at the next major collection
      trace_writer_promote(b.w, b.t += 1, j);
      old_junk[n_junk++] = j;
    } else {
      trace_writer_collect(b.w, b.t += 1, j);
    }
    if (w == 5)  // a major collection: the old junk dies; the kept blocks live through it
      for (int i = 0; i < n_junk; i++) trace_writer_collect(b.w, b.t += 1, old_junk[i]);
  }
  TraceReader *r;
  ProfileOptions opts = {.windows = 8};
  Profile *p = build_finish(&b, &r, &opts);
  assert_int_equal(profile_windows(p), 8);
  assert_int_equal(profile_major_collections(p), 1);
  assert_int_equal(profile_checkpoint_clock(p, 8), 32);
  for (uint32_t k = 1; k < 8; k++) assert_true(profile_checkpoint_clock(p, k) >= 4 * k);
  // Checkpoint 6 comes at the first event once the clock reached 24: before
  // the collection that follows that window's allocations, which is in window 7.
  assert_true(profile_proof_horizon(p) > profile_checkpoint_time(p, 6));
  assert_true(profile_proof_horizon(p) <= profile_checkpoint_time(p, 7));
  ProfileSiteId kept_site = profile_stack_site(p, find_stack(p, 11, 2));
  const uint64_t *m = profile_site_windows(p, kept_site);
  assert_non_null(m);
  // Kept block of window j: alive at the end, proven up to the collection in
  // window 7: counted at checkpoints j+1 .. 6, so d = 7 for j <= 5; the later
  // ones are proven only by their promotion, in their own window.
  for (uint32_t j = 1; j <= 8; j++)
    for (uint32_t d = 1; d <= 9; d++) assert_int_equal(m[j * 10 + d], j <= 5 && d == 7);
  // The junk that died old (promoted then collected) is proven only up to its
  // promotion, in its own window: never counted. The last junk kept (born in
  // window 7, promoted after checkpoint 7, alive at the end) is proven in the
  // last window: it counts at checkpoint 8, d = K + 1.
  const uint64_t *mj = profile_site_windows(p, profile_stack_site(p, find_stack(p, 12, 2)));
  assert_non_null(mj);
  for (uint32_t i = 0; i < 100; i++) assert_int_equal(mj[i], i == 7 * 10 + 9 ? 3 : 0);
  profile_free(p);
  trace_reader_close(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gamma_and_beta),   cmocka_unit_test(test_poisson_interval),
      cmocka_unit_test(test_proportion_interval), cmocka_unit_test(test_proportion_coverage),
      cmocka_unit_test(test_tallies),
      cmocka_unit_test(test_diff_pvalue),      cmocka_unit_test(test_block_weight),
      cmocka_unit_test(test_live_table),       cmocka_unit_test(test_trie_and_counts),
      cmocka_unit_test(test_allocations_only),
      cmocka_unit_test(test_snapshot_and_lifetimes), cmocka_unit_test(test_windows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
