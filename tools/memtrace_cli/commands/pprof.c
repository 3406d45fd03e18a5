// pprof.c - `memtrace pprof FILE [-o OUT.pb.gz]`: the trace as a gzipped pprof
// profile (pprof_export.h says what it holds).
#include "../cli/options.h"
#include "../cli/pprof_export.h"
#include "commands.h"

static const ToolUsage usage = {
    "pprof",
    "usage: memtrace pprof [-o OUT.pb.gz] FILE\n"
    "Writes the trace FILE (\"-\": stdin) as a gzipped pprof profile to OUT, or to\n"
    "stdout (refused when it is a terminal), for go tool pprof and the profilers\n"
    "that read pprof (Pyroscope, Parca). Sample\n"
    "types: alloc_objects, alloc_space (shown by default), inuse_objects, inuse_space\n"
    "(live at the end of the trace); each an unbiased estimate from the samples\n"
    "(bytes = samples x word bytes / sampling rate, headers included). Frames carry\n"
    "function, file and line; inlined frames are pprof inline lines. Recursion is\n"
    "folded: callers repeating a frame (or a cycle of up to 4) are one location\n"
    "\"f \u00d7N\" (\"(f \u2192 g) \u00d7N\").\n"
    "  -o OUT          write to OUT (\"-\": stdout)\n"
    "  --whole-stacks  every frame a location: recursion not folded\n"
    "On a damaged or truncated trace: the profile of the events before the damage,\n"
    "marked PARTIAL in its comments, then the error on stderr; exit status 1.\n",
};

int cmd_pprof(int argc, char **argv) {
  const char *out = NULL;
  bool whole = false;
  const ToolOption options[] = {TOOL_OPTION_OUTPUT(&out), TOOL_OPTION_WHOLE_STACKS(&whole)};
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 1, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  if (!pprof_export_output_ok(&usage, &out)) return 2;
  return pprof_export(&usage, (const char *const *)args.files, 1, out, whole);
}
