// options.c - the command-line parser of every memtrace command (options.h).
#include "options.h"

#include "outfile.h"
#include "../analysis/stack_budget.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// Decimal digits only for a count; for a number also one '.', and an
// exponent "e[+-]D": no sign, spaces, hex, inf or nan (strtod takes them).
static bool decimal(const char *text, bool number) {
  size_t digits = strspn(text, "0123456789");
  if (!number) return digits > 0 && text[digits] == '\0';
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

bool tool_parse_count(const ToolOption *o, const char *text) {
  if (!decimal(text, false)) return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (end == text || *end || errno || text[0] == '-' || text[0] == '+' || (double)v < o->min || (double)v > o->max)
    return false;
  *(uint32_t *)o->target = (uint32_t)v;
  return true;
}

bool tool_parse_number(const ToolOption *o, const char *text) {
  if (!decimal(text, true)) return false;
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end || errno || !isfinite(v) || v < o->min || v > o->max) return false;
  *(double *)o->target = v;
  return true;
}

// The option `word` names (up to '=' for a long one; its first two bytes for
// a short one), or NULL.
static const ToolOption *find(const ToolArgs *a, const char *word) {
  bool is_long = word[1] == '-';
  size_t n = is_long ? strcspn(word, "=") : 2;
  for (size_t i = 0; i < a->n_options; i++) {
    const char *name = a->options[i].name;
    if (strlen(name) == n && strncmp(name, word, n) == 0) return &a->options[i];
  }
  return NULL;
}

enum { MAX_OPTIONS = 32 };

// Takes the option at argv[*i]; false after a refusal (printed). seen[k]:
// options[k] was given already (a second time is refused: which one would
// count is a guess the user should not have to make).
static bool take(const ToolArgs *a, int argc, char **argv, int *i, bool *seen) {
  const char *word = argv[*i];
  const ToolOption *o = find(a, word);
  if (!o) {
    tool_usage_error(a->usage, "unknown option '%s'", word);
    return false;
  }
  if (seen[o - a->options]) {
    tool_usage_error(a->usage, "option %s given twice", o->name);
    return false;
  }
  seen[o - a->options] = true;
  size_t n = strlen(o->name);
  const char *attached = word[n] == '\0' ? NULL : word[n] == '=' ? word + n + 1 : o->name[1] != '-' ? word + n : NULL;
  if (!o->value) {
    if (attached) {
      tool_usage_error(a->usage, "option %s takes no value (got '%s')", o->name, word);
      return false;
    }
    *(bool *)o->target = true;
    return true;
  }
  const char *text = attached;
  if (!text) {
    if (*i + 1 >= argc) {
      tool_usage_error(a->usage, "option %s needs a value (%s)", o->name, o->value);
      return false;
    }
    text = argv[++*i];
  }
  if (!o->parse) {
    *(const char **)o->target = text;
    return true;
  }
  if (o->parse(o, text)) return true;
  tool_usage_error(a->usage, "option %s: '%s' is not %s", o->name, text, o->expected);
  return false;
}

static const char *const count_words[] = {"no", "one", "two"};

static const char *count_word(unsigned n) { return n < 3 ? count_words[n] : "several"; }

int tool_parse_args(ToolArgs *a, int argc, char **argv) {
  a->files = argv + 1;
  a->n_files = 0;
  bool only_files = false, seen[MAX_OPTIONS] = {false};
  if (a->n_options > MAX_OPTIONS) return tool_usage_error(a->usage, "internal: too many options");
  for (int i = 1; i < argc; i++) {
    char *word = argv[i];
    if (only_files || word[0] != '-' || word[1] == '\0') {
      argv[1 + a->n_files++] = word;  // never past i: the files move to the front
      continue;
    }
    if (strcmp(word, "--") == 0) {
      only_files = true;
    } else if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
      fputs(a->usage->text, stdout);
      return 0;
    } else if (!take(a, argc, argv, &i, seen)) {
      return 2;
    }
  }
  unsigned min = a->min_files, max = a->max_files;
  if (a->n_files == 0 && min > 0) return tool_usage_error(a->usage, "no trace file given");
  if (max == 1 && a->n_files > 1)
    return tool_usage_error(a->usage, "one trace file expected, got '%s' and '%s'", a->files[0], a->files[1]);
  if ((max && a->n_files > max) || a->n_files < min)
    return tool_usage_error(a->usage, "%s trace files expected, got %u", count_word(min == max ? min : max),
                            a->n_files);
  const char *end_state = NULL;  // --retain FILE is read too
  for (size_t i = 0; i < a->n_options; i++)
    if (strcmp(a->options[i].name, "--retain") == 0) end_state = *(const char *const *)a->options[i].target;
  for (size_t i = 0; i < a->n_options; i++)  // -o OUT (or stdout) never names an input (outfile.h)
    if (strcmp(a->options[i].name, "-o") == 0 &&
        !outfile_check(a->usage->name, *(const char *const *)a->options[i].target, a->files, a->n_files,
                       end_state))
      return 2;
  return TOOL_CONTINUE;
}

int tool_parse_output(ToolArgs *args, int argc, char **argv, const char *const *out) {
  int status = tool_parse_args(args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  return tool_output_to(args->usage, *out) ? TOOL_CONTINUE : 1;
}

int tool_parse_and_open(ToolArgs *args, int argc, char **argv, const char *const *out, TraceReader **r) {
  int status = tool_parse_output(args, argc, argv, out);
  if (status != TOOL_CONTINUE) return status;
  return (*r = tool_open(args->usage, args->files[0])) ? TOOL_CONTINUE : 1;
}

int tool_max_frames(const ToolUsage *usage, uint32_t value, bool applies, const char *goes_with) {
  if (value != TOOL_MAX_FRAMES_UNSET && !applies)
    return tool_usage_error(usage, "--max-frames goes with %s", goes_with);
  stack_budget_set(value == TOOL_MAX_FRAMES_UNSET ? STACK_BUDGET_DEFAULT : value);
  return TOOL_CONTINUE;
}
