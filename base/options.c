// options.c - the option table's reader (options.h).
//   1. A word is matched against the names whole: no abbreviations (a
//      prefix accepted today is ambiguous once an option is added).
//   2. An unknown option gets the nearest name as a suggestion (suggest.h),
//      compared without its "=VALUE".
#include "options.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "number.h"
#include "suggest.h"

// The largest uint64_t a double `max` allows (doubles past 2^64 clamp).
static uint64_t count_max(double max) { return max >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)max; }

static bool count_in_range(const Option *o, const char *text, uint64_t *v) {
  return number_parse_count(text, count_max(o->max), v) && (double)*v >= o->min;
}

bool option_parse_u32(const Option *o, const char *text) {
  uint64_t v;
  if (!count_in_range(o, text, &v) || v > UINT32_MAX) return false;
  *(uint32_t *)o->target = (uint32_t)v;
  return true;
}

bool option_parse_u64(const Option *o, const char *text) {
  uint64_t v;
  if (!count_in_range(o, text, &v)) return false;
  *(uint64_t *)o->target = v;
  return true;
}

bool option_parse_number(const Option *o, const char *text) {
  double v;
  if (!number_parse_decimal(text, &v) || v < o->min || v > o->max) return false;
  *(double *)o->target = v;
  return true;
}

bool option_parse_rate(const Option *o, const char *text) { return number_parse_rate(text, (double *)o->target); }

const Option *option_find(const Option *options, size_t n, const char *word) {
  bool is_long = word[1] == '-';
  size_t len = is_long ? strcspn(word, "=") : 2;
  for (size_t i = 0; i < n; i++) {
    const char *name = options[i].name;
    if (strlen(name) == len && strncmp(name, word, len) == 0) return &options[i];
  }
  return NULL;
}

bool option_take(const Option *options, size_t n, bool *seen, int argc, char **argv, int *i, char *err,
                 size_t err_len) {
  const char *word = argv[*i];
  const Option *o = option_find(options, n, word);
  if (!o) {
    Suggestion s;
    suggestion_init_n(&s, word, word[1] == '-' ? strcspn(word, "=") : strlen(word));
    for (size_t k = 0; k < n; k++) suggestion_consider(&s, options[k].name);
    const char *best = suggestion_best(&s);
    if (best) snprintf(err, err_len, "unknown option '%s' (did you mean %s?)", word, best);
    else snprintf(err, err_len, "unknown option '%s'", word);
    return false;
  }
  if (seen[o - options]) {
    snprintf(err, err_len, "option %s given twice", o->name);
    return false;
  }
  seen[o - options] = true;
  size_t len = strlen(o->name);
  const char *attached = word[len] == '\0' ? NULL : word[len] == '=' ? word + len + 1 : o->name[1] != '-' ? word + len : NULL;
  if (!o->value) {
    if (attached) {
      snprintf(err, err_len, "option %s takes no value (got '%s')", o->name, word);
      return false;
    }
    *(bool *)o->target = true;
    return true;
  }
  const char *text = attached;
  if (!text) {
    if (*i + 1 >= argc) {
      snprintf(err, err_len, "option %s needs a value (%s)", o->name, o->value);
      return false;
    }
    text = argv[++*i];
  }
  if (!o->parse) {
    *(const char **)o->target = text;
    return true;
  }
  if (o->parse(o, text)) return true;
  snprintf(err, err_len, "option %s: '%s' is not %s", o->name, text, o->expected);
  return false;
}
