// options.c - the command-line parser of every memtrace command (options.h).
#include "options.h"

#include "outfile.h"
#include "../analysis/stack_budget.h"

#include <string.h>

enum { MAX_OPTIONS = 32 };

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
    } else {
      char err[1024];
      if (!option_take(a->options, a->n_options, seen, argc, argv, &i, err, sizeof err))
        return tool_usage_error(a->usage, "%s", err);
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
