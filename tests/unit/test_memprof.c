// test_memprof.c - cmocka tests of memprof: the sampler (memprof/sampler.c:
// sampler_log's accuracy, the geometric gaps' distribution, per-block
// binomial counts of the major heap, seeding) and the engine seen through
// the C tracker interface (memprof/tracker.h): order and multiplicity of
// events per block, callstacks checked against the VM's own stack walker at
// every sample, the `unchanged` prefix, stop/discard/release, rate 1.
//
// Statistical checks use fixed seeds and a tolerance of 5.7 standard
// deviations (a correct sampler fails one in about 10^8); each states its
// sigma where it is computed.
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

#include "../../lang/front/compiler.h"
#include "../../core/frames.h"
#include "../../lang/runtime/interp.h"
#include "../../memprof/memprof_internal.h"
#include "../../lang/vm.h"
#include "../../gc/gc.h"

#define TOL 5.7

// |x - mean| <= 5.7 sigma, with a message on failure.
static void check_within(const char *what, double x, double mean, double sigma) {
  if (!(fabs(x - mean) <= TOL * sigma)) {
    print_error("%s: %.6g, expected %.6g +- %.3g (5.7 sigma = %.3g)\n", what, x, mean, sigma, TOL * sigma);
    fail();
  }
}

// =====================================================================
// sampler_log
// =====================================================================

// Documented bound (sampler.c, part 3): |error| < 8e-10 absolute, and below
// 1e-8 relative to |log x|, for every x in (0, 1].
static void check_log(double x, double *worst_abs, double *worst_rel) {
  double want = log(x), got = sampler_log(x);
  double err = fabs(got - want);
  if (err > *worst_abs) *worst_abs = err;
  if (want != 0 && err / fabs(want) > *worst_rel) *worst_rel = err / fabs(want);
  if (!(err < 8e-10) || (want != 0 && !(err / fabs(want) < 1e-8))) {
    print_error("sampler_log(%.17g) = %.17g, log = %.17g\n", x, got, want);
    fail();
  }
}

static void test_log_sweep(void **state) {
  (void)state;
  double worst_abs = 0, worst_rel = 0;
  // Log-spaced over [1e-300, 1]: 2 * 10^6 points.
  const int n = 2000000;
  for (int i = 0; i <= n; i++) check_log(pow(10.0, -300.0 * i / n), &worst_abs, &worst_rel);
  // Every power of two and its neighbours down to 2^-996 (1e-300).
  for (int k = 0; k <= 996; k++) {
    double x = ldexp(1.0, -k);
    check_log(x, &worst_abs, &worst_rel);
    check_log(nextafter(x, 0), &worst_abs, &worst_rel);
    if (k > 0) check_log(nextafter(x, 1), &worst_abs, &worst_rel);
  }
  // Just below 1, where log x is tiny (the relative bound matters), and
  // around the reduction boundary sqrt(1/2).
  for (int k = 1; k <= 100000; k++) check_log(1.0 - k * 0x1p-53, &worst_abs, &worst_rel);
  for (int k = -50000; k <= 50000; k++) check_log(0.70710678118654752 + k * 0x1p-40, &worst_abs, &worst_rel);
  // The values the sampler actually feeds it: (k + 1) / 2^53.
  Sampler s;
  sampler_seed(&s, 99);
  for (int i = 0; i < 1000000; i++) {
    double u = (double)((sampler_next_u64(&s) >> 11) + 1) * (1.0 / 9007199254740992.0);
    check_log(u, &worst_abs, &worst_rel);
  }
  assert_true(sampler_log(1.0) == 0.0);
  assert_true(worst_abs < 8e-10);
  assert_true(worst_rel < 1e-8);
}

// The batched draws (sampler_refill, two logarithms at a time) are, bit for
// bit, part 1's formula computed one draw at a time with sampler_log (one
// lane of the same logarithm): the batch's order, scale, truncation and cap.
static void test_refill_is_the_scalar_formula(void **state) {
  (void)state;
  const double rates[] = {1e-6, 1e-4, 1e-3, 0.01, 0.5, 0.999};
  for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
    Sampler s, ref;
    sampler_seed(&s, 7 + r);
    sampler_set_rate(&s, rates[r]);
    ref = s;
    for (int i = 0; i < 200000; i++) {
      // A refill draws GEOM_BATCH uniforms in order, then hands the gaps out last first.
      if (i % GEOM_BATCH == 0) {
        uint64_t want[GEOM_BATCH];
        for (int j = 0; j < GEOM_BATCH; j++) {
          double u = (double)((sampler_next_u64(&ref) >> 11) + 1) * (1.0 / 9007199254740992.0);
          double x = sampler_log(u) * ref.inv_log1m;
          want[j] = x < 4.0e18 ? 1 + (uint64_t)(int64_t)x : (uint64_t)4e18;
        }
        for (int j = GEOM_BATCH - 1; j >= 0; j--) {
          uint64_t got = sampler_geometric(&s);
          if (got != want[j]) {
            print_error("rate %g, draw %d: %llu, the scalar formula gives %llu\n", rates[r], i + GEOM_BATCH - 1 - j,
                        (unsigned long long)got, (unsigned long long)want[j]);
            fail();
          }
        }
      }
    }
  }
}

// =====================================================================
// Geometric gaps
// =====================================================================

// G = 1, 2, ... with P(G = k) = (1 - p)^(k-1) p: mean 1/p, variance
// q/p^2 (q = 1 - p), fourth central moment s^4 (9 + p^2/q). Over N draws:
//   mean:  sigma = sqrt(q/p^2 / N)
//   V = (1/N) sum (G - 1/p)^2 (known mean):  E V = q/p^2,
//          sigma = sqrt((m4 - s^4) / N) = s^2 sqrt((8 + p^2/q) / N)
//   #{G = 1} is Binomial(N, p):  sigma = sqrt(N p q)
//   #{G > k} is Binomial(N, q^k): sigma = sqrt(N t (1 - t)), t = q^k
static void check_geometric(double p, uint64_t seed) {
  const int n = 1000000;
  Sampler s;
  sampler_seed(&s, seed);
  sampler_set_rate(&s, p);
  double q = 1 - p, mean = 1 / p, var = q / (p * p);
  double sum = 0, sqdev = 0;
  long ones = 0, tail = 0;
  uint64_t k = (uint64_t)ceil(2 / p), min = UINT64_MAX;
  for (int i = 0; i < n; i++) {
    uint64_t g = sampler_geometric(&s);
    if (g < min) min = g;
    sum += (double)g;
    sqdev += ((double)g - mean) * ((double)g - mean);
    if (g == 1) ones++;
    if (g > k) tail++;
  }
  char what[64];
  assert_true(min >= 1);
  snprintf(what, sizeof what, "rate %g: mean gap", p);
  check_within(what, sum / n, mean, sqrt(var / n));
  snprintf(what, sizeof what, "rate %g: gap variance", p);
  check_within(what, sqdev / n, var, var * sqrt((8 + p * p / q) / n));
  snprintf(what, sizeof what, "rate %g: gaps of 1", p);
  check_within(what, (double)ones, n * p, sqrt(n * p * q));
  double t = pow(q, (double)k);
  snprintf(what, sizeof what, "rate %g: gaps over %llu", p, (unsigned long long)k);
  check_within(what, (double)tail, n * t, sqrt(n * t * (1 - t)));
}

static void test_geometric_moments(void **state) {
  (void)state;
  check_geometric(0.5, 1);
  check_geometric(0.1, 2);
  check_geometric(0.01, 3);
  check_geometric(1e-3, 4);
  check_geometric(1e-4, 5);
  check_geometric(1e-5, 6);
}

static void test_rate_one_gap_one(void **state) {
  (void)state;
  Sampler s;
  sampler_seed(&s, 7);
  sampler_set_rate(&s, 1.0);
  for (int i = 0; i < 100000; i++) assert_int_equal(sampler_geometric(&s), 1);
  // Every word of a major block is sampled.
  const uint64_t sizes[] = {1, 2, 3, 257, 1000, 100000};
  for (int r = 0; r < 3; r++)
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
      assert_int_equal(sampler_binomial_major(&s, sizes[i]), sizes[i]);
}

// A tiny rate: gaps are huge but finite and positive, the major stream is
// mostly empty.
static void test_tiny_rate(void **state) {
  (void)state;
  Sampler s;
  sampler_seed(&s, 8);
  sampler_set_rate(&s, 1e-12);
  double sum = 0;
  for (int i = 0; i < 10000; i++) {
    uint64_t g = sampler_geometric(&s);
    assert_true(g >= 1);
    sum += (double)g;
  }
  // Mean 1e12, sigma of the mean ~ 1e12 / sqrt(10^4) = 1e10.
  check_within("rate 1e-12: mean gap", sum / 10000, 1e12, 1e12 * sqrt(1 - 1e-12) / 100);
  uint64_t total = 0;
  for (int i = 0; i < 1000; i++) total += sampler_binomial_major(&s, 1000000);
  assert_true(total <= 5);   // mean 1e-3 samples
}

// =====================================================================
// Binomial counts of the major heap
// =====================================================================

// sampler_binomial_major(s, w) must be Binomial(w, p) (words independent),
// and consecutive blocks independent. Over B blocks of w words:
//   total ~ Binomial(B w, p):  sigma = sqrt(B w p q)
//   V = (1/B) sum (X - w p)^2:  E V = w p q,
//          sigma = sqrt((m4 - s^4) / B), m4 = s^2 (1 + 3 (w - 2) p q)
//   #{X = 0} ~ Binomial(B, q^w)
static void check_binomial(double p, uint64_t w, int blocks, uint64_t seed) {
  Sampler s;
  sampler_seed(&s, seed);
  sampler_set_rate(&s, p);
  double q = 1 - p, mu = (double)w * p, s2 = (double)w * p * q;
  double m4 = s2 * (1 + 3 * ((double)w - 2) * p * q);
  double total = 0, sqdev = 0;
  long zeros = 0;
  for (int i = 0; i < blocks; i++) {
    uint32_t x = sampler_binomial_major(&s, w);
    assert_true(x <= w);
    total += x;
    sqdev += (x - mu) * (x - mu);
    if (x == 0) zeros++;
  }
  char what[80];
  snprintf(what, sizeof what, "rate %g, %llu words: total", p, (unsigned long long)w);
  check_within(what, total, blocks * mu, sqrt(blocks * s2));
  snprintf(what, sizeof what, "rate %g, %llu words: variance", p, (unsigned long long)w);
  check_within(what, sqdev / blocks, s2, sqrt((m4 - s2 * s2) / blocks));
  double z = pow(q, (double)w);
  snprintf(what, sizeof what, "rate %g, %llu words: empty blocks", p, (unsigned long long)w);
  check_within(what, (double)zeros, blocks * z, sqrt(blocks * z * (1 - z)) + 1e-9);
}

static void test_binomial_major(void **state) {
  (void)state;
  check_binomial(0.01, 258, 100000, 11);
  check_binomial(0.01, 1001, 30000, 12);
  check_binomial(0.01, 2, 1000000, 13);
  check_binomial(0.1, 258, 20000, 14);
  check_binomial(0.1, 10001, 2000, 15);
  check_binomial(0.5, 301, 10000, 16);
  check_binomial(0.5, 1, 1000000, 17);
  check_binomial(1e-4, 100001, 10000, 18);
}

// Blocks of mixed sizes share one stream: the total over all of them is
// Binomial(sum of sizes, p); each size class on its own too.
static void test_binomial_major_mixed(void **state) {
  (void)state;
  const double p = 0.05;
  const uint64_t sizes[] = {1, 7, 300, 2, 5000, 258};
  double totals[6] = {0}, words[6] = {0}, all = 0, all_words = 0;
  Sampler s;
  sampler_seed(&s, 21);
  sampler_set_rate(&s, p);
  for (int i = 0; i < 300000; i++) {
    int k = i % 6;
    uint32_t x = sampler_binomial_major(&s, sizes[k]);
    totals[k] += x;
    words[k] += (double)sizes[k];
    all += x;
    all_words += (double)sizes[k];
  }
  check_within("mixed sizes: total", all, all_words * p, sqrt(all_words * p * (1 - p)));
  for (int k = 0; k < 6; k++) {
    char what[64];
    snprintf(what, sizeof what, "mixed sizes: blocks of %llu words", (unsigned long long)sizes[k]);
    check_within(what, totals[k], words[k] * p, sqrt(words[k] * p * (1 - p)));
  }
}

// =====================================================================
// Seeding
// =====================================================================

static void test_seed_reproducible(void **state) {
  (void)state;
  Sampler a, b, c;
  sampler_seed(&a, 12345);
  sampler_seed(&b, 12345);
  sampler_seed(&c, 12346);
  bool differ = false;
  for (int i = 0; i < 1000; i++) {
    uint64_t x = sampler_next_u64(&a), y = sampler_next_u64(&b), z = sampler_next_u64(&c);
    assert_true(x == y);
    if (x != z) differ = true;
  }
  assert_true(differ);
  sampler_set_rate(&a, 0.01);
  sampler_set_rate(&b, 0.01);
  for (int i = 0; i < 1000; i++) assert_true(sampler_geometric(&a) == sampler_geometric(&b));
  for (int i = 0; i < 100; i++) assert_true(sampler_binomial_major(&a, 500) == sampler_binomial_major(&b, 500));
  // Reseeding restarts the sequence and drops pre-drawn gaps.
  Sampler d;
  sampler_seed(&d, 5);
  sampler_set_rate(&d, 0.2);
  uint64_t first[100];
  for (int i = 0; i < 100; i++) first[i] = sampler_geometric(&d);
  sampler_seed(&d, 5);
  sampler_set_rate(&d, 0.2);
  for (int i = 0; i < 100; i++) assert_true(sampler_geometric(&d) == first[i]);
  // A zero seed still gives a working generator (splitmix expands it).
  Sampler e;
  sampler_seed(&e, 0);
  uint64_t or_all = 0;
  for (int i = 0; i < 10; i++) or_all |= sampler_next_u64(&e);
  assert_true(or_all != 0);
}

static Vm *new_vm(uint64_t minor_words) {
  VmOptions opt = {.stack_words = 1u << 20, .minor_words = minor_words};
  Vm *vm = vm_new(&opt);
  assert_non_null(vm);
  assert_non_null(vm->memprof);
  return vm;
}

// memprof_new seeds from VmOptions.seed when MINNOW_SEED was given
// (seed_text: lang/main.c parsed it), else from a fixed seed;
// memprof_set_seed reseeds.
static Vm *new_seeded_vm(const char *text, uint64_t seed) {
  VmOptions opt = {.stack_words = 1u << 20, .minor_words = 1u << 16, .seed_text = text, .seed = seed};
  Vm *vm = vm_new(&opt);
  assert_non_null(vm);
  assert_non_null(vm->memprof);
  return vm;
}

static void test_seed_from_options(void **state) {
  (void)state;
  Sampler ref;
  Vm *vm = new_seeded_vm("42", 42);
  sampler_seed(&ref, 42);
  assert_memory_equal(vm->memprof->sampler.s, ref.s, sizeof ref.s);
  vm_free(vm);
  vm = new_seeded_vm("0x2a", 42);
  assert_memory_equal(vm->memprof->sampler.s, ref.s, sizeof ref.s);
  memprof_set_seed(vm, 77);
  sampler_seed(&ref, 77);
  assert_memory_equal(vm->memprof->sampler.s, ref.s, sizeof ref.s);
  vm_free(vm);
  Vm *v1 = new_vm(1u << 16), *v2 = new_seeded_vm(NULL, 42);
  assert_memory_equal(v1->memprof->sampler.s, v2->memprof->sampler.s, sizeof ref.s);
  sampler_seed(&ref, 42);
  assert_memory_not_equal(v1->memprof->sampler.s, ref.s, sizeof ref.s);
  vm_free(v1);
  vm_free(v2);
}

// =====================================================================
// The engine through a C tracker
// =====================================================================

typedef struct Block {
  bool major;                 // born in the major heap
  bool forgotten;             // alloc returned false
  int promotes, deallocs;
  bool dealloc_major;
  uint64_t alloc_seq, promote_seq, dealloc_seq;
  uint32_t n_samples;
  uint64_t wosize;
  const DebugInfo *site;
} Block;

typedef struct Rec {
  Block *blocks;
  size_t n, cap;
  uint64_t seq;               // event counter
  int forget_every;           // alloc returns false for every k-th block (0: never)
  MemprofFrame *prev;         // previous sample's callers
  uint32_t prev_n, prev_cap;
  uint64_t callers_total, unchanged_total, walked_checked;
  int releases;
  int errors;
  char first_error[256];
  const char *program;        // the temporary script's path
} Rec;

static void rec_error(Rec *r, const char *fmt, ...) {
  if (r->errors++ > 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->first_error, sizeof r->first_error, fmt, ap);
  va_end(ap);
}

static Block *block_of(Rec *r, const MemprofBlock *b) {
  if (b->user == 0 || b->user > r->n) {
    rec_error(r, "event for unknown block %llu", (unsigned long long)b->user);
    return NULL;
  }
  return &r->blocks[b->user - 1];
}

// The callstack of a sample must be what the VM's own walker (frames.c,
// stubs mapped back) sees at the allocating instruction: the site among the
// top frame's debug entries, then one caller per frame out to (excluding)
// the entry function's frame.
static void check_against_walker(Vm *vm, Rec *r, const MemprofSample *s) {
  FrameCursor c;
  frames_top(vm, &c);
  if (!c.desc) {
    rec_error(r, "no descriptor at the allocating instruction");
    return;
  }
  bool site_ok = false;
  for (uint32_t i = 0; i < c.desc->debug_count; i++)
    if (c.desc->debug[i] == s->site) site_ok = true;
  if (!site_ok) rec_error(r, "site %s:%u not at the top frame", s->site->function, s->site->line);
  uint32_t k = 0;
  while (frames_next(&c)) {
    if (c.desc->proto == vm->entry_proto) break;
    if (k >= s->caller_count) {
      rec_error(r, "callstack of %u callers is short: frame %u is %s:%u", s->caller_count, k,
                c.desc->debug[0]->function, c.desc->debug[0]->line);
      return;
    }
    MemprofFrame f = s->callers[s->caller_count - 1 - k];
    const DebugInfo *fd = memprof_frame_debug(vm, f);
    if (f != c.pc || fd != c.desc->debug[0]) {
      rec_error(r, "caller %u of %u: %s:%u, the walker sees %s:%u", k, s->caller_count,
                fd ? fd->function : "?", fd ? fd->line : 0, c.desc->debug[0]->function, c.desc->debug[0]->line);
      return;
    }
    k++;
  }
  if (k != s->caller_count) rec_error(r, "callstack has %u callers, the walker %u", s->caller_count, k);
  r->walked_checked++;
}

static bool on_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  Rec *r = data;
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 1024;
    r->blocks = realloc(r->blocks, r->cap * sizeof *r->blocks);
  }
  Block *b = &r->blocks[r->n++];
  memset(b, 0, sizeof *b);
  b->major = s->major;
  b->alloc_seq = ++r->seq;
  b->n_samples = s->n_samples;
  b->wosize = s->wosize;
  b->site = s->site;
  if (block->user != 0) rec_error(r, "alloc: user field not zeroed");
  if (block->state != VAL_NIL) rec_error(r, "alloc: state not nil");
  block->user = r->n;
  if (s->n_samples < 1 || s->n_samples > s->wosize + 1) rec_error(r, "n_samples %u for %llu fields", s->n_samples, (unsigned long long)s->wosize);
  if (s->major != (s->wosize > 256)) rec_error(r, "a block of %llu fields reported major=%d", (unsigned long long)s->wosize, s->major);
  if (s->external) rec_error(r, "external sample");
  // unchanged: the first `unchanged` callers are the previous sample's.
  if (s->unchanged > s->caller_count || s->unchanged > r->prev_n)
    rec_error(r, "unchanged %u, but %u callers here and %u in the previous sample received", s->unchanged,
              s->caller_count, r->prev_n);
  for (uint32_t i = 0; i < s->unchanged && i < r->prev_n && i < s->caller_count; i++)
    if (s->callers[i] != r->prev[i]) rec_error(r, "unchanged %u, but caller %u differs", s->unchanged, i);
  if (s->caller_count > r->prev_cap) {
    r->prev_cap = s->caller_count * 2;
    r->prev = realloc(r->prev, r->prev_cap * sizeof *r->prev);
  }
  memcpy(r->prev, s->callers, s->caller_count * sizeof *r->prev);
  r->prev_n = s->caller_count;
  r->callers_total += s->caller_count;
  r->unchanged_total += s->unchanged;
  check_against_walker(vm, r, s);
  if (r->forget_every && r->n % (size_t)r->forget_every == 0) {
    b->forgotten = true;
    return false;
  }
  return true;
}

static bool on_promote(Vm *vm, void *data, MemprofBlock *block) {
  (void)vm;
  Rec *r = data;
  Block *b = block_of(r, block);
  if (!b) return true;
  if (b->forgotten) rec_error(r, "promote of a forgotten block");
  if (b->major) rec_error(r, "promote of a major-born block");
  if (b->promotes++ > 0) rec_error(r, "second promote");
  if (b->deallocs > 0) rec_error(r, "promote after dealloc");
  b->promote_seq = ++r->seq;
  return true;
}

static void on_dealloc(Vm *vm, void *data, MemprofBlock *block, bool major) {
  (void)vm;
  Rec *r = data;
  Block *b = block_of(r, block);
  if (!b) return;
  if (b->forgotten) rec_error(r, "dealloc of a forgotten block");
  if (b->deallocs++ > 0) rec_error(r, "second dealloc");
  if (major != (b->major || b->promotes > 0)) rec_error(r, "dealloc major=%d for major=%d promoted=%d", major, b->major, b->promotes);
  b->dealloc_major = major;
  b->dealloc_seq = ++r->seq;
}

static void on_release(Vm *vm, void *data) {
  (void)vm;
  ((Rec *)data)->releases++;
}

static MemprofTracker tracker_for(Rec *r) {
  return (MemprofTracker){on_alloc, on_promote, on_dealloc, on_release, NULL, r, .native = true};
}

// Writes `src` to a fresh temporary .mn file, compiles and runs it.
static char script_path[64];
static bool run_source(Vm *vm, const char *src) {
  strcpy(script_path, "/tmp/test_memprof_XXXXXX.mn");
  int fd = mkstemps(script_path, 3);
  assert_true(fd >= 0);
  size_t len = strlen(src);
  assert_true(write(fd, src, len) == (ssize_t)len);
  close(fd);
  Proto *entry = compiler_compile_program(vm, script_path);
  assert_non_null(entry);
  vm->entry_proto = entry;
  bool ok = false;
  interp_run_entry(vm, entry, &ok);
  fflush(stdout);
  unlink(script_path);
  return ok;
}

// Every block allocated by the script's own functions (not its top level,
// whose lets stay alive) is dead at the end: exactly one dealloc each.
static const char *const workload =
    "fn leaf(n) { (n, n, n) }\n"
    "fn build(n, acc) { if n == 0 { acc } else { build(n - 1, leaf(n) :: acc) } }\n"
    "fn deep(n) { if n == 0 { [| 1, 2, 3 |] } else { let r = deep(n - 1); (r, n) } }\n"
    "fn pairs(n, acc) { if n == 0 { acc } else { let t = (n, n); pairs(n - 1, t :: acc) } }\n"
    "fn round(i) {\n"
    "  let l = build(200, [])\n"
    "  Gc.minor()\n"
    "  let big = Array.make(300 + i, l)\n"
    "  let d = deep(50 + 20 * i)\n"
    "  let p = pairs(100, [])\n"
    "  let s = String.repeat(\"ab\", 600 + i)\n"
    "  if i % 3 == 0 { Gc.full_major() }\n"
    "  List.length(l) + Array.length(big) + List.length(p) + String.length(s)\n"
    "}\n"
    "fn work() { var t = 0; for i in 0..12 { t = t + round(i) }; t }\n"
    "let total = work()\n"
    "Gc.full_major()\n"
    "Gc.full_major()\n";

// Checks the event history of every block of the workload.
static void check_history(Rec *r, const char *file, bool all_dead, bool has_major) {
  size_t own = 0, promoted = 0, major = 0, dead = 0;
  for (size_t i = 0; i < r->n; i++) {
    Block *b = &r->blocks[i];
    if (b->promotes && b->promote_seq <= b->alloc_seq) rec_error(r, "promote before alloc");
    if (b->deallocs && b->dealloc_seq <= b->alloc_seq) rec_error(r, "dealloc before alloc");
    if (b->deallocs && b->promotes && b->dealloc_seq <= b->promote_seq) rec_error(r, "dealloc before promote");
    if (b->forgotten && (b->promotes || b->deallocs)) rec_error(r, "events after alloc returned false");
    bool mine = strcmp(b->site->file, file) == 0 && strcmp(b->site->function, "<top>") != 0;
    if (!mine || b->forgotten) continue;
    own++;
    if (b->promotes) promoted++;
    if (b->major) major++;
    if (b->deallocs) dead++;
    if (all_dead && b->deallocs != 1)
      rec_error(r, "block %zu (%s:%u, %llu fields) got %d deallocs", i + 1, b->site->function, b->site->line,
                (unsigned long long)b->wosize, b->deallocs);
  }
  if (r->errors) print_error("%d errors, first: %s\n", r->errors, r->first_error);
  assert_int_equal(r->errors, 0);
  assert_true(own > 100);
  assert_true(promoted > 0);
  assert_true(!has_major || major > 0);
  assert_true(dead > 0);
}

static void run_workload(double rate, uint64_t minor_words, int forget_every, bool stress) {
  Rec r = {0};
  r.forget_every = forget_every;
  Vm *vm = new_vm(minor_words);
  vm->options.gc_stress = stress;
  vm_update_limits(vm);
  memprof_set_seed(vm, 2024);
  MemprofTracker t = tracker_for(&r);
  int id = memprof_start_profile(vm, rate, 0, &t);
  assert_true(id >= 0);
  assert_true(run_source(vm, workload));
  const char *file = script_path;
  assert_true(memprof_stop_profile(vm, id));
  check_history(&r, file, true, true);
  assert_true(r.walked_checked == r.n);
  // Deep callstacks share their outer part with the previous sample.
  assert_true(r.unchanged_total * 2 > r.callers_total);
  assert_int_equal(r.releases, 0);
  vm_free(vm);
  assert_int_equal(r.releases, 1);
  free(r.blocks);
  free(r.prev);
}

static void test_engine_rate_one(void **state) {
  (void)state;
  run_workload(1.0, 1u << 18, 0, false);
}

static void test_engine_sampled(void **state) {
  (void)state;
  run_workload(0.05, 1u << 18, 0, false);
}

// A minor heap of 4096 words: allocation-triggered collections queue
// promote and dealloc events in front of alloc events.
static void test_engine_small_heap(void **state) {
  (void)state;
  run_workload(0.3, 4096, 0, false);
}

static void test_engine_forget(void **state) {
  (void)state;
  run_workload(1.0, 4096, 3, false);
}

static void test_engine_stress(void **state) {
  (void)state;
  run_workload(0.2, 1u << 18, 0, true);
}

// At rate 1, every sample's n_samples is its whole size, header included.
static void test_engine_exact_counts(void **state) {
  (void)state;
  Rec r = {0};
  Vm *vm = new_vm(1u << 18);
  MemprofTracker t = tracker_for(&r);
  int id = memprof_start_profile(vm, 1.0, 0, &t);
  assert_true(id >= 0);
  assert_true(run_source(vm, workload));
  assert_true(memprof_stop_profile(vm, id));
  assert_true(r.n > 1000);
  for (size_t i = 0; i < r.n; i++) assert_int_equal(r.blocks[i].n_samples, r.blocks[i].wosize + 1);
  assert_int_equal(r.errors, 0);
  vm_free(vm);
  free(r.blocks);
  free(r.prev);
}

// Profiles: several at once (MEMPROF_MAX_RUNNING); stop and discard by id;
// release exactly once; no callback for a discarded profile's blocks.
static void test_profiles_api(void **state) {
  (void)state;
  Rec r1 = {0}, r2 = {0};
  Vm *vm = new_vm(1u << 18);
  MemprofTracker t1 = tracker_for(&r1), t2 = tracker_for(&r2);
  assert_false(memprof_stop_profile(vm, 0));
  int id1 = memprof_start_profile(vm, 0.5, 7, &t1);
  assert_true(id1 >= 0);
  assert_int_equal(memprof_callstack_size(vm, id1), 7);
  assert_false(memprof_discard_profile(vm, id1));      // running
  assert_false(memprof_discard_profile(vm, id1 + 5));  // unknown
  assert_false(memprof_discard_profile(vm, -1));
  assert_true(run_source(vm, "fn f(n) { (n, n, n) }\nvar keep = []\nfor i in 0..1000 { keep = f(i) :: keep }\nGc.minor()\nkeep = []\n"));
  assert_true(memprof_stop_profile(vm, id1));
  assert_false(memprof_stop_profile(vm, id1));
  size_t allocs = r1.n;
  assert_true(allocs > 100);
  int id2 = memprof_start_profile(vm, 1.0, 0, &t2);
  assert_true(id2 >= 0 && id2 != id1);
  assert_true(memprof_discard_profile(vm, id1));
  assert_int_equal(r1.releases, 1);
  uint64_t seq1 = r1.seq;
  // Blocks of profile 1 die now (the script dropped them): nobody hears of it.
  gc_minor(vm);
  gc_major(vm);
  gc_major(vm);
  memprof_run_callbacks(vm);
  assert_true(r1.seq == seq1);
  assert_true(r1.n == allocs);
  // Up to MEMPROF_MAX_RUNNING sample at once.
  Rec extra[MEMPROF_MAX_RUNNING] = {{0}};
  int extra_ids[MEMPROF_MAX_RUNNING];
  for (int i = 0; i < MEMPROF_MAX_RUNNING - 1; i++) {
    MemprofTracker te = tracker_for(&extra[i]);
    extra_ids[i] = memprof_start_profile(vm, 0.01, 0, &te);
    assert_true(extra_ids[i] >= 0);
  }
  MemprofTracker over = tracker_for(&extra[MEMPROF_MAX_RUNNING - 1]);
  assert_int_equal(memprof_start_profile(vm, 0.01, 0, &over), -1);
  for (int i = 0; i < MEMPROF_MAX_RUNNING - 1; i++) assert_true(memprof_stop_profile(vm, extra_ids[i]));
  assert_true(memprof_stop_profile(vm, id2));
  assert_int_equal(r1.errors, 0);
  assert_int_equal(r2.errors, 0);
  vm_free(vm);
  assert_int_equal(r1.releases, 1);   // not again
  assert_int_equal(r2.releases, 1);
  free(r1.blocks);
  free(r1.prev);
  free(r2.blocks);
  free(r2.prev);
}

// Two profiles sampling at once, at 0.2 and 0.01: each sees what it would
// alone, Binomial(words, its rate) per block (engine.c part 5: thinning), so
// over N blocks of w words each gets within 5.7 sigma of N * w * rate samples;
// every sampled block's callstack is exact for both (Rec checks against the
// walker), and each profile's `unchanged` is relative to its own previous
// sample although captures alternate between them.
static void test_two_profiles_at_once(void **state) {
  (void)state;
  Rec a = {0}, b = {0};
  Vm *vm = new_vm(1u << 16);
  memprof_set_seed(vm, 4242);
  MemprofTracker ta = tracker_for(&a), tb = tracker_for(&b);
  int ida = memprof_start_profile(vm, 0.2, 0, &ta), idb = memprof_start_profile(vm, 0.01, 0, &tb);
  assert_true(ida >= 0 && idb >= 0);
  // 20,000 blocks of 10 words (9 fields + header) in a recursion of varying depth.
  assert_true(run_source(vm, "fn leaf(n) { (n, n, n, n, n, n, n, n, n) }\n"
                             "fn down(d, n) { if d == 0 { leaf(n) } else { let r = down(d - 1, n); r } }\n"
                             "for i in 0..20000 { let t = down(i % 37, i) }\n"));
  assert_true(memprof_stop_profile(vm, ida));
  assert_true(memprof_stop_profile(vm, idb));
  double words = 20000.0 * 10;
  uint64_t sa = 0, sb = 0;
  for (size_t i = 0; i < a.n; i++) if (a.blocks[i].wosize == 9) sa += a.blocks[i].n_samples;
  for (size_t i = 0; i < b.n; i++) if (b.blocks[i].wosize == 9) sb += b.blocks[i].n_samples;
  int errors = a.errors + b.errors;
  if (a.errors) print_error("profile a: %s\n", a.first_error);
  if (b.errors) print_error("profile b: %s\n", b.first_error);
  vm_free(vm);
  free(a.blocks); free(a.prev); free(b.blocks); free(b.prev);
  check_within("samples at 0.2", (double)sa, words * 0.2, sqrt(words * 0.2 * 0.8));
  check_within("samples at 0.01", (double)sb, words * 0.01, sqrt(words * 0.01 * 0.99));
  assert_int_equal(errors, 0);
}

// An immediate tracker (tracker.h) gets its events as they happen, inside
// the allocation or collection, but the same events in the same order as a
// native tracker whose events wait in the queue for the next safe point.
typedef struct Direct {
  Rec rec;
  uint64_t direct_calls;      // callbacks run inside memprof's direct delivery
  uint64_t stop_after;        // stop profile `id` at this alloc (0: never)
  int id;
} Direct;

static bool direct_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  Direct *d = data;
  d->direct_calls += vm->memprof->direct;
  bool keep = on_alloc(vm, &d->rec, block, s);
  if (d->stop_after && d->rec.n == d->stop_after) assert_true(memprof_stop_profile(vm, d->id));
  return keep;
}
static bool direct_promote(Vm *vm, void *data, MemprofBlock *block) {
  Direct *d = data;
  d->direct_calls += vm->memprof->direct;
  return on_promote(vm, &d->rec, block);
}
static void direct_dealloc(Vm *vm, void *data, MemprofBlock *block, bool major) {
  Direct *d = data;
  d->direct_calls += vm->memprof->direct;
  on_dealloc(vm, &d->rec, block, major);
}

static Vm *run_direct(Direct *d, bool immediate, double rate, uint64_t minor_words) {
  Vm *vm = new_vm(minor_words);
  memprof_set_seed(vm, 31337);
  MemprofTracker t = {direct_alloc, direct_promote, direct_dealloc, NULL, NULL, d, .native = true,
                      .immediate = immediate};
  d->id = memprof_start_profile(vm, rate, 0, &t);
  assert_true(d->id >= 0);
  assert_true(run_source(vm, workload));
  assert_true(memprof_stop_profile(vm, d->id));
  return vm;
}

static void test_immediate_same_events(void **state) {
  (void)state;
  const struct { double rate; uint64_t minor_words; } cases[] = {{0.05, 1u << 18}, {0.3, 4096}, {1.0, 4096}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    Direct q = {0}, im = {0};
    Vm *vq = run_direct(&q, false, cases[c].rate, cases[c].minor_words);
    Vm *vi = run_direct(&im, true, cases[c].rate, cases[c].minor_words);
    if (im.rec.errors) print_error("immediate: %s\n", im.rec.first_error);
    assert_int_equal(q.rec.errors, 0);
    assert_int_equal(im.rec.errors, 0);
    assert_int_equal(q.direct_calls, 0);
    assert_true(im.direct_calls > im.rec.n);   // allocs, and promotes or deallocs
    assert_true(q.rec.n > 100);
    assert_int_equal(im.rec.n, q.rec.n);
    for (size_t i = 0; i < q.rec.n; i++) {
      const Block *a = &q.rec.blocks[i], *b = &im.rec.blocks[i];
      assert_string_equal(a->site->function, b->site->function);
      assert_int_equal(a->site->line, b->site->line);
      assert_int_equal(a->site->start_col, b->site->start_col);
      assert_int_equal(a->wosize, b->wosize);
      assert_int_equal(a->n_samples, b->n_samples);
      assert_int_equal(a->major, b->major);
      assert_int_equal(a->promotes, b->promotes);
      assert_int_equal(a->deallocs, b->deallocs);
      assert_int_equal(a->alloc_seq, b->alloc_seq);
      assert_int_equal(a->promote_seq, b->promote_seq);
      assert_int_equal(a->dealloc_seq, b->dealloc_seq);
    }
    vm_free(vq);
    vm_free(vi);
    free(q.rec.blocks); free(q.rec.prev); free(im.rec.blocks); free(im.rec.prev);
  }
}

// An immediate tracker stops its own profile from an alloc callback, inside
// the allocation: no alloc event after, the other profile samples on, and
// the sampler is retuned to the other's rate at the next safe point.
static void test_immediate_stops_inside(void **state) {
  (void)state;
  Direct d = {.stop_after = 40};
  Rec other = {0};
  Vm *vm = new_vm(1u << 14);
  memprof_set_seed(vm, 5);
  MemprofTracker t = {direct_alloc, direct_promote, direct_dealloc, NULL, NULL, &d, .native = true, .immediate = true};
  MemprofTracker to = tracker_for(&other);
  d.id = memprof_start_profile(vm, 0.5, 0, &t);
  int ido = memprof_start_profile(vm, 0.3, 0, &to);
  assert_true(d.id >= 0 && ido >= 0);
  assert_true(run_source(vm, workload));
  const char *file = script_path;
  assert_false(vm->memprof->retune_due);
  assert_true(vm->memprof->sampler.rate == 0.3);
  assert_true(d.direct_calls >= 40);
  assert_false(memprof_stop_profile(vm, d.id));   // stopped already
  assert_true(memprof_stop_profile(vm, ido));
  if (d.rec.errors) print_error("stopped: %s\n", d.rec.first_error);
  assert_int_equal(d.rec.errors, 0);
  assert_int_equal(d.rec.n, 40);
  check_history(&other, file, true, true);
  vm_free(vm);
  free(d.rec.blocks); free(d.rec.prev); free(other.blocks); free(other.prev);
}

// A C tracker may raise from its callbacks (tracker.h): with vm_raise
// directly, or through memprof_callback_raised as the Memprof module does
// after interp_call failed. The exception propagates from the allocation point
// (a Minnow try catches it), the block is forgotten, and profiling goes on:
// later blocks are sampled and reported as before.
typedef struct Raiser {
  Rec rec;
  int raise_every;            // raise in the alloc callback of every k-th block
  bool via_callback_raised;
  int raised;
} Raiser;

static bool raising_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  Raiser *rz = data;
  bool keep = on_alloc(vm, &rz->rec, block, s);
  if (s->wosize == 5 && rz->rec.n % (size_t)rz->raise_every == 0) {
    rz->rec.blocks[rz->rec.n - 1].forgotten = true;
    rz->raised++;
    if (rz->via_callback_raised) {
      vm->exn = val_of_int(rz->raised);
      memprof_callback_raised(vm);
    }
    vm_raise(vm, val_of_int(rz->raised));
  }
  return keep;
}

static bool raising_promote(Vm *vm, void *data, MemprofBlock *block) { return on_promote(vm, &((Raiser *)data)->rec, block); }
static void raising_dealloc(Vm *vm, void *data, MemprofBlock *block, bool major) { on_dealloc(vm, &((Raiser *)data)->rec, block, major); }
static void raising_release(Vm *vm, void *data) { on_release(vm, &((Raiser *)data)->rec); }

static const char *const raising_workload =
    "fn five(n) { (n, n, n, n, n) }\n"
    "fn g(n) { let t = five(n); t }\n"
    "fn run() {\n"
    "  var caught = 0\n"
    "  var keep = []\n"
    "  for i in 0..3000 {\n"
    "    try { keep = g(i) :: keep } catch e { caught = caught + 1 }\n"
    "    if i % 500 == 0 { keep = [] }\n"
    "  }\n"
    "  caught\n"
    "}\n"
    "let caught = run()\n"
    "Gc.full_major()\n"
    "Gc.full_major()\n";

static void run_raising(bool via_callback_raised) {
  Raiser rz = {0};
  rz.raise_every = 7;
  rz.via_callback_raised = via_callback_raised;
  Vm *vm = new_vm(4096);
  MemprofTracker t = {raising_alloc, raising_promote, raising_dealloc, raising_release, NULL, &rz, .native = false};
  int id = memprof_start_profile(vm, 1.0, 0, &t);
  assert_true(id >= 0);
  assert_true(run_source(vm, raising_workload));
  const char *file = script_path;
  assert_true(memprof_stop_profile(vm, id));
  // Raised on every 7th block: about 3000 * 3 / 7 of them (conses and
  // 5-tuples both count), and every later block was still reported.
  assert_true(rz.raised > 300);
  size_t tuples = 0;
  for (size_t i = 0; i < rz.rec.n; i++)
    if (rz.rec.blocks[i].wosize == 5) tuples++;
  assert_true(tuples > 2500);
  check_history(&rz.rec, file, true, false);
  vm_free(vm);
  free(rz.rec.blocks);
  free(rz.rec.prev);
}

static void test_engine_raise_via_callback_raised(void **state) {
  (void)state;
  run_raising(true);
}

static void test_engine_raise_directly(void **state) {
  (void)state;
  run_raising(false);
}

// `unchanged` lets a tracker encode each callstack as a difference from the
// previous one it received. A tracker has received nothing before its first
// sample, so that sample's `unchanged` must be 0, even when the stack is
// still marked from the samples of an earlier profile: here profile 1 stops
// itself from its 20th alloc callback, deep in a recursion, and starts
// profile 2, whose first sample is in the same deep stack.
typedef struct Switcher {
  Rec first, second;
  MemprofTracker t2;
  int id1, id2;
  bool switched;
  uint32_t first_unchanged_of_second;
  uint32_t first_callers_of_second;
} Switcher;

static bool switch_alloc1(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  Switcher *sw = data;
  bool keep = on_alloc(vm, &sw->first, block, s);
  if (!sw->switched && sw->first.n == 20) {
    sw->switched = true;
    if (!memprof_stop_profile(vm, sw->id1)) rec_error(&sw->first, "stop from a callback failed");
    sw->id2 = memprof_start_profile(vm, 1.0, 0, &sw->t2);
    if (sw->id2 < 0) rec_error(&sw->first, "start from a callback failed");
  }
  return keep;
}

static bool switch_alloc2(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  Switcher *sw = data;
  if (sw->second.n == 0) {
    sw->first_unchanged_of_second = s->unchanged;
    sw->first_callers_of_second = s->caller_count;
  }
  return on_alloc(vm, &sw->second, block, s);
}
static bool switch_promote(Vm *vm, void *data, MemprofBlock *block) { (void)vm; (void)data; (void)block; return true; }
static void switch_dealloc(Vm *vm, void *data, MemprofBlock *block, bool major) { (void)vm; (void)data; (void)block; (void)major; }

static void test_unchanged_first_sample_of_profile(void **state) {
  (void)state;
  Switcher sw = {0};
  sw.t2 = (MemprofTracker){switch_alloc2, switch_promote, switch_dealloc, NULL, NULL, &sw, .native = false};
  Vm *vm = new_vm(1u << 18);
  MemprofTracker t1 = {switch_alloc1, switch_promote, switch_dealloc, NULL, NULL, &sw, .native = false};
  sw.id1 = memprof_start_profile(vm, 1.0, 0, &t1);
  assert_true(sw.id1 >= 0);
  assert_true(run_source(vm,
                         "fn down(n) { if n == 0 { var l = []; for i in 0..100 { l = (i, i) :: l }; l } else { let r = down(n - 1); r } }\n"
                         "let r = down(500)\n"));
  memprof_stop_profile(vm, sw.id2);
  // Checked after freeing everything, so that a failure leaks nothing.
  vm_free(vm);
  size_t n2 = sw.second.n;
  int errors = sw.first.errors + sw.second.errors;
  if (sw.first.errors) print_error("profile 1: %s\n", sw.first.first_error);
  if (sw.second.errors) print_error("profile 2: %s\n", sw.second.first_error);
  free(sw.first.blocks);
  free(sw.first.prev);
  free(sw.second.blocks);
  free(sw.second.prev);
  assert_true(sw.switched);
  assert_true(n2 > 50);
  assert_true(sw.first_callers_of_second > 500);
  assert_int_equal(sw.first_unchanged_of_second, 0);
  assert_int_equal(errors, 0);
}

// `callers` stays valid for the whole alloc callback, collections included
// (tracker.h): the tracker copies it, collects, and compares.
typedef struct Collector {
  Rec rec;
  uint64_t checked;
  int collect_every;
} Collector;

static bool collecting_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  Collector *c = data;
  MemprofFrame *copy = malloc((s->caller_count + 1) * sizeof *copy);
  memcpy(copy, s->callers, s->caller_count * sizeof *copy);
  if (++c->checked % (uint64_t)c->collect_every == 0) gc_full_major(vm);
  else gc_minor(vm);
  if (memcmp(copy, s->callers, s->caller_count * sizeof *copy) != 0)
    rec_error(&c->rec, "callers changed by a collection inside the callback");
  free(copy);
  return on_alloc(vm, &c->rec, block, s);
}
static bool collecting_promote(Vm *vm, void *data, MemprofBlock *block) { return on_promote(vm, &((Collector *)data)->rec, block); }
static void collecting_dealloc(Vm *vm, void *data, MemprofBlock *block, bool major) { on_dealloc(vm, &((Collector *)data)->rec, block, major); }

static void test_callers_valid_through_collections(void **state) {
  (void)state;
  Collector c = {.collect_every = 5};
  Vm *vm = new_vm(1u << 14);
  memprof_set_seed(vm, 99);
  MemprofTracker t = {collecting_alloc, collecting_promote, collecting_dealloc, NULL, NULL, &c, .native = true};
  int id = memprof_start_profile(vm, 0.05, 0, &t);
  assert_true(id >= 0);
  assert_true(run_source(vm, workload));
  assert_true(memprof_stop_profile(vm, id));
  vm_free(vm);
  if (c.rec.errors) print_error("%s\n", c.rec.first_error);
  int errors = c.rec.errors;
  free(c.rec.blocks);
  free(c.rec.prev);
  assert_true(c.checked > 100);
  assert_int_equal(errors, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_log_sweep),
      cmocka_unit_test(test_refill_is_the_scalar_formula),
      cmocka_unit_test(test_geometric_moments),
      cmocka_unit_test(test_rate_one_gap_one),
      cmocka_unit_test(test_tiny_rate),
      cmocka_unit_test(test_binomial_major),
      cmocka_unit_test(test_binomial_major_mixed),
      cmocka_unit_test(test_seed_reproducible),
      cmocka_unit_test(test_seed_from_options),
      cmocka_unit_test(test_engine_rate_one),
      cmocka_unit_test(test_engine_sampled),
      cmocka_unit_test(test_engine_small_heap),
      cmocka_unit_test(test_engine_forget),
      cmocka_unit_test(test_engine_stress),
      cmocka_unit_test(test_engine_exact_counts),
      cmocka_unit_test(test_profiles_api),
      cmocka_unit_test(test_two_profiles_at_once),
      cmocka_unit_test(test_immediate_same_events),
      cmocka_unit_test(test_immediate_stops_inside),
      cmocka_unit_test(test_engine_raise_via_callback_raised),
      cmocka_unit_test(test_engine_raise_directly),
      cmocka_unit_test(test_unchanged_first_sample_of_profile),
      cmocka_unit_test(test_callers_valid_through_collections),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
