// options.h - the one command-line parser of every memtrace command. A
// command describes its options in a table of ToolOption (base/options.h's
// Option: the table ./vm's command line is read with too) and its trace
// files by a count (ToolArgs); tool_parse_args reads argv against them.
// Accepted, besides base/options.h's forms (--name VALUE, --name=VALUE,
// -x VALUE, -xVALUE, --flag, -f):
//   -h, --help                    the command's usage on stdout; status 0
//   --                            what follows is files, even "-x"
//   -                             a file: standard input
// Options and files mix in any order. Counts are decimal digits, numbers
// decimal (digits, one '.', an exponent): no sign, space, hex, inf or nan
// (base/number.h). -o OUT (and stdout) never names an input file
// (outfile.h), checked here. Every refusal prints two lines on stderr,
// "memtrace CMD: WHAT" naming the option and what is wrong (with the nearest
// option for an unknown one: "did you mean --live?"), then the usage's first
// line and where the rest is, and gives status 2 (tool_usage_error).
#ifndef MINNOW_MEMTRACE_OPTIONS_H
#define MINNOW_MEMTRACE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tool.h"

#include "../../../base/options.h"

typedef Option ToolOption;
typedef OptionParse ToolOptionParse;

// The options every command that prints shares: its output file ("-" or
// none: stdout) and JSON instead of text.
#define TOOL_OPTION_OUTPUT(target) {"-o", "OUT", (target), NULL, NULL, 0, 0}
#define TOOL_OPTION_JSON(target) {"--json", NULL, (target), NULL, NULL, 0, 0}
// --whole-stacks: callstacks shown whole; by default recursion is folded,
// a repeated frame or cycle of frames shown once with its count
// (analysis/collapse.h).
#define TOOL_OPTION_WHOLE_STACKS(target) {"--whole-stacks", NULL, (target), NULL, NULL, 0, 0}
// --max-frames N: the frames whole-stack outputs write in all, 0 for no
// limit (analysis/stack_budget.h). The caller starts its target at
// TOOL_MAX_FRAMES_UNSET and, once parsed, hands it to tool_max_frames.
enum { TOOL_MAX_FRAMES_UNSET = UINT32_MAX };
#define TOOL_OPTION_MAX_FRAMES(target) \
  {"--max-frames", "N", (target), tool_parse_count, "a count (0: no limit)", 0, UINT32_MAX - 1}
// -n N: rows to show, 0 for all.
#define TOOL_OPTION_ROWS(target) {"-n", "N", (target), tool_parse_count, "a count (0: all)", 0, UINT32_MAX}

// --max-frames as parsed (`value`): given where the command asks for no
// whole-stack output (`applies` false), a usage error "--max-frames goes
// with GOES_WITH" (status 2); else the stack budget is set to it, or to
// STACK_BUDGET_DEFAULT when unset. Returns TOOL_CONTINUE or 2.
int tool_max_frames(const ToolUsage *usage, uint32_t value, bool applies, const char *goes_with);

// A count from min to max into a uint32_t (no sign, decimal).
#define tool_parse_count option_parse_u32
// A finite number from min to max into a double.
#define tool_parse_number option_parse_number

typedef struct ToolArgs {
  const ToolUsage *usage;
  const ToolOption *options;
  size_t n_options;
  unsigned min_files, max_files;  // max_files 0: no limit
  // Filled by tool_parse_args: the files in order (pointers into argv).
  char **files;
  unsigned n_files;
} ToolArgs;

// Parses argv[1 .. argc) (argv[0] is the command's name; argv's order is
// changed: the files are moved to its front). Returns TOOL_CONTINUE, or the
// exit status: 0 after --help, 2 after a refusal (printed).
int tool_parse_args(ToolArgs *args, int argc, char **argv);

// tool_parse_args, then stdout to *out (-o, as parsed: tool_output_to).
// Returns TOOL_CONTINUE or the exit status.
int tool_parse_output(ToolArgs *args, int argc, char **argv, const char *const *out);

// For the commands that read one trace straight through the reader (dump,
// info): tool_parse_args (args wants one file), then stdout to *out (-o, as
// parsed) and the trace opened into *r (args->files[0]). Returns
// TOOL_CONTINUE, or the exit status (messages printed).
int tool_parse_and_open(ToolArgs *args, int argc, char **argv, const char *const *out, TraceReader **r);

#endif
