// suggest.c - the nearest known word (suggest.h).
//   1. The distance is computed over three rows of the usual table (the
//      swap looks two rows back), on the stack: words past SUGGEST_MAX_LEN
//      are never compared, so no allocation and no quadratic blow-up.
//   2. A word of one or two bytes ("-m") is one edit from every short
//      name: nothing is suggested for it.
//   3. A candidate equal to the typed word is not a suggestion (distance 0:
//      the caller found it already, or it was refused for another reason).
#include "suggest.h"

#include <string.h>

static size_t min3(size_t a, size_t b, size_t c) {
  size_t m = a < b ? a : b;
  return m < c ? m : c;
}

static size_t distance(const char *a, size_t n, const char *b, size_t m) {
  size_t rows[3][SUGGEST_MAX_LEN + 1];
  size_t *two_back = rows[0], *prev = rows[1], *cur = rows[2];
  for (size_t j = 0; j <= m; j++) prev[j] = j;
  for (size_t i = 1; i <= n; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && two_back[j - 2] + 1 < cur[j])
        cur[j] = two_back[j - 2] + 1;
    }
    size_t *t = two_back;
    two_back = prev;
    prev = cur;
    cur = t;
  }
  return prev[m];
}

void suggestion_init_n(Suggestion *s, const char *typed, size_t typed_len) {
  *s = (Suggestion){.typed = typed, .typed_len = typed_len};
}

void suggestion_init(Suggestion *s, const char *typed) { suggestion_init_n(s, typed, strlen(typed)); }

void suggestion_consider(Suggestion *s, const char *candidate) {
  size_t m = strlen(candidate), n = s->typed_len;
  if (n < 3 || n > SUGGEST_MAX_LEN || m > SUGGEST_MAX_LEN) return;
  size_t longer = n > m ? n : m;
  size_t allowed = longer <= 4 ? 1 : longer <= 8 ? 2 : 3;
  size_t d = distance(s->typed, n, candidate, m);
  if (d == 0 || d > allowed) return;
  if (!s->best || d < s->best_distance) {
    s->best = candidate;
    s->best_distance = d;
  }
}

const char *suggestion_best(const Suggestion *s) { return s->best; }
