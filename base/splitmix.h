// splitmix.h - SplitMix64 (Steele, Lea and Flood, 2014), header-only,
// depending on nothing but libc: the state advances by the golden-ratio
// increment and each new state, mixed, is the next 64-bit output. The one
// generator behind the sampler's seeding (memprof/sampler.c) and Minnow's
// Random module (lang/lib/random.c): both keep today's sequences, which
// fixed-seed traces and tests depend on.
#ifndef MINNOW_BASE_SPLITMIX_H
#define MINNOW_BASE_SPLITMIX_H

#include <stdint.h>

#define SPLITMIX64_INCREMENT 0x9e3779b97f4a7c15ull

// The output for a state already advanced.
static inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Advances *state and returns the next output.
static inline uint64_t splitmix64_next(uint64_t *state) {
  *state += SPLITMIX64_INCREMENT;
  return splitmix64_mix(*state);
}

#endif
