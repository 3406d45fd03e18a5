// hash.h - the one hash mixer of the tool's tables. hash_mix is MurmurHash3's
// 64-bit finalizer: a bijection of 64-bit words in which every input bit
// flips each output bit with probability close to 1/2, so the low bits that
// index a power-of-two table depend on all input bits. hash_combine folds
// one more word into a hash; hash_memory / hash_string are FNV-1a, mixed.
// Tables built on these are looked up, never iterated in hash order for
// output: a change of mixer changes no output.
#ifndef MINNOW_MEMTRACE_HASH_H
#define MINNOW_MEMTRACE_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hash_mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

static inline uint64_t hash_combine(uint64_t h, uint64_t v) {
  return hash_mix(h * 0x9e3779b97f4a7c15ull + v + 1);
}

static inline uint64_t hash_memory(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return hash_mix(h);
}

static inline uint64_t hash_string(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return hash_mix(h);
}

#endif
