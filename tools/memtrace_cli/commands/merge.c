// merge.c - `memtrace merge A B ... [-o OUT.pb.gz]`: several traces (runs,
// possibly at different sampling rates) as one pprof profile, each unbiased
// then summed (pprof_export.h).
#include <string.h>

#include "../cli/options.h"
#include "../cli/pprof_export.h"
#include "commands.h"

static const ToolUsage usage = {
    "merge",
    "usage: memtrace merge [--whole-stacks] [-o OUT.pb.gz] FILE...\n"
    "Writes the traces FILE... (at most one \"-\": stdin) as one gzipped pprof profile\n"
    "to OUT, or to stdout (refused when it is a terminal), as memtrace pprof writes\n"
    "one: each trace's samples are unbiased at its own sampling rate and word size,\n"
    "then the estimates summed; callstacks of different traces are matched by their\n"
    "locations (function, file, line, columns). A comment line per trace names it.\n"
    "A trace that cannot be read stops the merge (no output is left). A damaged or\n"
    "truncated trace counts with the events before the damage, marked PARTIAL in the\n"
    "comments; its error is printed on stderr and the exit status is 1. Recursion is\n"
    "folded as memtrace pprof folds it.\n"
    "  -o OUT          write to OUT (\"-\": stdout)\n"
    "  --whole-stacks  every frame a location: recursion not folded\n",
};

int cmd_merge(int argc, char **argv) {
  const char *out = NULL;
  bool whole = false;
  const ToolOption options[] = {TOOL_OPTION_OUTPUT(&out), TOOL_OPTION_WHOLE_STACKS(&whole)};
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 0, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  unsigned stdins = 0;
  for (unsigned i = 0; i < args.n_files; i++) stdins += strcmp(args.files[i], "-") == 0;
  if (stdins > 1) return tool_usage_error(&usage, "stdin (\"-\") given %u times", stdins);
  if (!pprof_export_output_ok(&usage, &out)) return 2;
  return pprof_export(&usage, (const char *const *)args.files, args.n_files, out, whole);
}
