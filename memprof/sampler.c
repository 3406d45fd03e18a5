// sampler.c - the random draws of memprof: xoshiro256+, a libm-free logarithm,
// batched geometric gaps and per-block binomial counts.
//
// 1. Each allocated word (header included) is sampled independently with
//    probability lambda. The distance from one sampled word to the next is
//    Geometric(lambda) on {1, 2, ...}:  G = 1 + floor(log(U) / log(1 - lambda))
//    with U uniform on (0, 1]  (inverse transform; Devroye, "Non-Uniform
//    Random Variate Generation", 1986, ch. X.2; the same draw as OCaml's
//    memprof.c and jemalloc's prof_sample_threshold_update).
// 2. log(1 - lambda) is computed once per profile with libm's log1p; the
//    per-draw log(U) uses part 3's logarithm. Draws are made GEOM_BATCH at a
//    time in a loop without calls or data-dependent branches, the logarithms
//    two at a time in SSE2 lanes (test_memprof checks a batch against the
//    formula drawn one at a time with sampler_log; measured cost per draw:
//    bench/MEMPROF.md, "draw").
// 3. sampler_log: U = m * 2^e with m in [sqrt(1/2), sqrt(2)); with
//    s = (m - 1) / (m + 1), log(m) = 2 (s + s^3/3 + s^5/5 + s^7/7 + s^9/9 + R)
//    where |s| <= 0.1716 and the remainder R < s^11/11 / (1 - s^2) < 3.9e-10,
//    so |error| < 8e-10 absolute, and relatively < 8e-10 / |log(m)| near m = 1
//    where every term scales with s (relative error below 1e-8 overall). The
//    induced error on a gap is below one word for gaps under 10^8 words.
// 4. Major-heap blocks draw their sample count as a binomial by walking the
//    same geometric process over their words (major_next carries the distance
//    to the next sampled word across blocks: exact by memorylessness).
#include <math.h>
#include <string.h>

#include "sampler.h"
#include "../base/splitmix.h"

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sampler_next_u64(Sampler *s) {
  uint64_t *st = s->s;
  uint64_t result = st[0] + st[3];
  uint64_t t = st[1] << 17;
  st[2] ^= st[0];
  st[3] ^= st[1];
  st[1] ^= st[2];
  st[0] ^= st[3];
  st[2] ^= t;
  st[3] = rotl(st[3], 45);
  return result;
}

// splitmix64 expands one seed into the four words of state.
void sampler_seed(Sampler *s, uint64_t seed) {
  for (int i = 0; i < 4; i++) s->s[i] = splitmix64_next(&seed);
  s->batch_left = 0;
  s->major_next = 0;
}

void sampler_set_rate(Sampler *s, double rate) {
  s->rate = rate;
  s->inv_log1m = rate >= 1 ? 0 : 1 / log1p(-rate);
  s->batch_left = 0;
  s->major_next = 0;
}

// U in (0, 1]: 53 random bits, never 0.
static inline double uniform(Sampler *s) {
  return (double)((sampler_next_u64(s) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

// Part 3's logarithm of two values at once, with GCC's vector extension (SSE2
// on x86-64): IEEE arithmetic in each lane, no contraction, about half the
// instructions a draw of a scalar version. Branch-free (random m would
// mispredict half the time). sampler_log is one lane of it.
typedef double Double2 __attribute__((vector_size(16)));
typedef uint64_t Bits2 __attribute__((vector_size(16)));
typedef int64_t Int2 __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) Double2 log_approx2(Double2 x) {
  Bits2 bits;
  memcpy(&bits, &x, sizeof bits);
  Int2 e = (Int2)((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // m in [1, 2)
  Double2 m, half;
  memcpy(&m, &bits, sizeof m);
  Int2 big = m > 1.4142135623730951;   // -1 (all ones) where m is big
  half = m * 0.5;
  Bits2 hbits, mbits;
  memcpy(&hbits, &half, sizeof hbits);
  memcpy(&mbits, &m, sizeof mbits);
  mbits = (hbits & (Bits2)big) | (mbits & ~(Bits2)big);
  memcpy(&m, &mbits, sizeof m);
  e -= big;
  Double2 s = (m - 1) / (m + 1), s2 = s * s;
  Double2 poly = s * (2 + s2 * (2.0 / 3 + s2 * (2.0 / 5 + s2 * (2.0 / 7 + s2 * (2.0 / 9)))));
  return __builtin_convertvector(e, Double2) * 0.69314718055994530942 + poly;
}

double sampler_log(double x) { return log_approx2((Double2){x, x})[0]; }

// x = log(U) / log(1 - lambda) >= 0, so floor(x) is a truncation; gaps are
// capped at 4e18 words (never reached). No call, no data-dependent branch.
void sampler_refill(Sampler *s) {
  _Static_assert(GEOM_BATCH % 2 == 0, "draws go by pairs");
  double u[GEOM_BATCH];
  // The generator is a serial chain; the logarithms are independent of each
  // other, so the second loop overlaps them, two at a time.
  for (int i = 0; i < GEOM_BATCH; i++) u[i] = uniform(s);
  double k = s->inv_log1m;
  for (int i = 0; i < GEOM_BATCH; i += 2) {
    Double2 two;
    memcpy(&two, &u[i], sizeof two);
    two = log_approx2(two) * k;
    memcpy(&u[i], &two, sizeof two);
  }
  if (k == 0) {   // rate 1: every word
    for (int i = 0; i < GEOM_BATCH; i++) s->batch[i] = 1;
  } else {
    for (int i = 0; i < GEOM_BATCH; i++) {
      double x = u[i];
      s->batch[i] = x < 4.0e18 ? 1 + (uint64_t)(int64_t)x : (uint64_t)4e18;
    }
  }
  s->batch_left = GEOM_BATCH;
}
