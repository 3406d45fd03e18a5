// hash.h - the project's one hash of bytes and words, header-only, for every
// layer's tables (core, trace, lang, tools). Depends on nothing but libc.
//   hash_fnv_*    FNV-1a, 64 bits: hash_fnv_step folds one more value (a
//                 byte, or a whole word such as a symbol id) into h;
//                 hash_fnv_bytes and hash_fnv_string run it from
//                 HASH_FNV_OFFSET over each byte.
//   hash_mix      MurmurHash3's 64-bit finalizer: a bijection of 64-bit
//                 words in which every input bit flips each output bit with
//                 probability close to 1/2, so the low bits that index a
//                 power-of-two table depend on all input bits.
//   hash_combine  folds one more word into a mixed hash.
//   hash_memory, hash_string  FNV-1a, mixed: for tables indexed by low bits.
// A table built on these is looked up, never iterated in hash order for
// output, so a change of hash changes no output (the callers say so where it
// matters).
#ifndef MINNOW_BASE_HASH_H
#define MINNOW_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV_OFFSET 0xcbf29ce484222325ull
#define HASH_FNV_PRIME 0x100000001b3ull

static inline uint64_t hash_fnv_step(uint64_t h, uint64_t v) { return (h ^ v) * HASH_FNV_PRIME; }

static inline uint64_t hash_fnv_bytes(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = HASH_FNV_OFFSET;
  for (size_t i = 0; i < n; i++) h = hash_fnv_step(h, s[i]);
  return h;
}

static inline uint64_t hash_fnv_string(const char *s) {
  uint64_t h = HASH_FNV_OFFSET;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = hash_fnv_step(h, *p);
  return h;
}

static inline uint64_t hash_mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

static inline uint64_t hash_combine(uint64_t h, uint64_t v) { return hash_mix(h * 0x9e3779b97f4a7c15ull + v + 1); }

static inline uint64_t hash_memory(const char *s, size_t n) { return hash_mix(hash_fnv_bytes(s, n)); }

static inline uint64_t hash_string(const char *s) { return hash_mix(hash_fnv_string(s)); }

#endif
