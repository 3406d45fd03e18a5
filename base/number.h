// number.h - numbers written on a command line or in the environment, read
// strictly: what a user types by mistake ("1e6" for a count, " 12", "-1",
// "0x10", "inf", "12abc") is refused, never wrapped, truncated or guessed.
//   a count:   decimal digits only (no sign, space, suffix), at most max;
//   a decimal: digits with at most one '.' and an exponent "e[+-]D"
//              (".5", "1.", "2e3", "1e-5"), finite: no sign, space, hex,
//              inf or nan (strtod takes all of those);
//   a rate:    a decimal in (0, 1], the sampling rates of ./vm and the tool.
// Each returns false (and leaves *out alone) when the text is anything else.
// Depends on nothing but libc (base/ is the bottom of the house).
#ifndef MINNOW_BASE_NUMBER_H
#define MINNOW_BASE_NUMBER_H

#include <stdbool.h>
#include <stdint.h>

bool number_parse_count(const char *text, uint64_t max, uint64_t *out);
bool number_parse_decimal(const char *text, double *out);
bool number_parse_rate(const char *text, double *out);

#endif
