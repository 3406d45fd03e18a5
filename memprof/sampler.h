// sampler.h - memprof's random draws (sampler.c): the geometric gaps between
// sampled words and the binomial counts of major blocks, from one xoshiro256+
// stream (the engine's, at the highest rate of the running profiles). The
// same seed and the same allocations give the same draws, bit for bit: the
// traces of a seed do not change when this code is made faster.
#ifndef MINNOW_MEMPROF_SAMPLER_H
#define MINNOW_MEMPROF_SAMPLER_H

#include <stdint.h>

enum { GEOM_BATCH = 64 };

typedef struct Sampler {
  uint64_t s[4];               // xoshiro256+ state
  double rate;                 // lambda
  double inv_log1m;            // 1 / log(1 - lambda) (0 when lambda == 1)
  uint64_t batch[GEOM_BATCH];  // pre-drawn geometric gaps
  uint32_t batch_left;
  uint64_t major_next;         // words until the next sampled major word (>= 1)
} Sampler;

void sampler_seed(Sampler *s, uint64_t seed);
void sampler_set_rate(Sampler *s, double rate);
// Draws the next GEOM_BATCH gaps into batch (sampler.c part 2).
void sampler_refill(Sampler *s);
// Next gap of Geometric(rate) on {1, 2, ...}: the sampled word is that many
// words further on. Inline: a sample's draw is a load, the refill one call
// in GEOM_BATCH.
static inline uint64_t sampler_geometric(Sampler *s) {
  if (s->batch_left == 0) sampler_refill(s);
  return s->batch[--s->batch_left];
}
// Number of sampled words among the next `words` words of the major stream
// (sampler.c part 4). Inline: a major block reaching its sampled word takes
// one call less.
static inline uint32_t sampler_binomial_major(Sampler *s, uint64_t words) {
  if (s->major_next == 0) s->major_next = sampler_geometric(s);
  uint32_t n = 0;
  while (s->major_next <= words) {
    n++;
    s->major_next += sampler_geometric(s);
  }
  s->major_next -= words;
  return n;
}
// Exposed for tests: the libm-free natural logarithm used per draw.
double sampler_log(double x);
uint64_t sampler_next_u64(Sampler *s);

#endif
