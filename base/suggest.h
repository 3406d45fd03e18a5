// suggest.h - "did you mean": the known word nearest to a mistyped one.
// Distance is the optimal string alignment distance (insertions, deletions,
// substitutions and swaps of two neighbours, each 1), over bytes. A word is
// suggested only when it is close: at most 1 edit for words of up to 4
// bytes, 2 up to 8, 3 beyond; the first of equally near candidates wins.
// A typed word shorter than 3 bytes gets no suggestion.
// Usage:
//   Suggestion s;
//   suggestion_init(&s, typed);
//   for each known name: suggestion_consider(&s, name);
//   const char *best = suggestion_best(&s);   // NULL: nothing close
// Depends on nothing but libc.
#ifndef MINNOW_BASE_SUGGEST_H
#define MINNOW_BASE_SUGGEST_H

#include <stddef.h>

typedef struct Suggestion {
  const char *typed;
  size_t typed_len;      // up to SUGGEST_MAX_LEN bytes are compared
  const char *best;      // NULL until a close candidate is seen
  size_t best_distance;
} Suggestion;

enum { SUGGEST_MAX_LEN = 64 };  // longer words get no suggestion

void suggestion_init(Suggestion *s, const char *typed);
// `typed_len` bytes of typed only (e.g. "--rate" of "--rate=0.1").
void suggestion_init_n(Suggestion *s, const char *typed, size_t typed_len);
void suggestion_consider(Suggestion *s, const char *candidate);
const char *suggestion_best(const Suggestion *s);

#endif
