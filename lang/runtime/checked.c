// checked.c - checked_parse_count (checked.h).
#include "checked.h"

bool checked_parse_count(const char *text, uint64_t max, uint64_t *out) {
  uint64_t n = 0;
  if (!text || !*text) return false;
  for (const char *p = text; *p; p++) {
    if (*p < '0' || *p > '9') return false;
    if (!checked_mul(n, 10, &n) || !checked_add(n, (uint64_t)(*p - '0'), &n)) return false;
  }
  if (n == 0 || n > max) return false;
  *out = n;
  return true;
}
