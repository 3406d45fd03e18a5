// number.c - strict readers of counts, decimals and rates (number.h).
//   1. Both readers check the whole syntax first, then convert: strtoull and
//      strtod only ever see text they read whole (no locale, sign or space).
//   2. Counts accumulate with overflow checks, so 2^64 is refused, not 0.
#include "number.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool number_parse_count(const char *text, uint64_t max, uint64_t *out) {
  if (!text || !*text) return false;
  uint64_t n = 0;
  for (const char *p = text; *p; p++) {
    if (*p < '0' || *p > '9') return false;
    if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, (uint64_t)(*p - '0'), &n)) return false;
  }
  if (n > max) return false;
  *out = n;
  return true;
}

// Whether text is digits, at most one '.', then an optional exponent, with
// at least one digit before the exponent.
static bool decimal_syntax(const char *text) {
  size_t digits = strspn(text, "0123456789");
  const char *p = text + digits;
  if (*p == '.') {
    size_t frac = strspn(p + 1, "0123456789");
    digits += frac;
    p += 1 + frac;
  }
  if (digits == 0) return false;
  if (*p == 'e' || *p == 'E') {
    p += p[1] == '+' || p[1] == '-' ? 2 : 1;
    size_t exp = strspn(p, "0123456789");
    if (exp == 0) return false;
    p += exp;
  }
  return *p == '\0';
}

bool number_parse_decimal(const char *text, double *out) {
  if (!text || !decimal_syntax(text)) return false;
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end || errno == ERANGE || !isfinite(v)) return false;
  *out = v;
  return true;
}

bool number_parse_rate(const char *text, double *out) {
  double r;
  if (!number_parse_decimal(text, &r) || !(r > 0 && r <= 1)) return false;
  *out = r;
  return true;
}
