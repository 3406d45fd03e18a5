// pprof.c - `memtrace pprof FILE [-o OUT.pb.gz]`: the trace as a gzipped pprof
// profile (pprof_export.h says what it holds).
#include "../cli/kept_load.h"
#include "../cli/options.h"
#include "../cli/pprof_export.h"
#include "commands.h"

static const ToolUsage usage = {
    "pprof",
    "usage: memtrace pprof [--at N [--retain FILE]] [--whole-stacks] [-o OUT.pb.gz] FILE\n"
    "Writes the trace FILE (\"-\": stdin) as a gzipped pprof profile to OUT, or to\n"
    "stdout (refused when it is a terminal), for go tool pprof and the profilers\n"
    "that read pprof (Pyroscope, Parca). Sample\n"
    "types: alloc_objects, alloc_space (shown by default), inuse_objects, inuse_space\n"
    "(live at the end of the trace); each an unbiased estimate from the samples\n"
    "(bytes = samples x word bytes / sampling rate, headers included). Frames carry\n"
    "function, file and line; inlined frames are pprof inline lines. Recursion is\n"
    "folded: callers repeating a frame (or a cycle of up to 4) are one location\n"
    "\"f \u00d7N\" (\"(f \u2192 g) \u00d7N\").\n"
    "  --at N          a snapshot's profile (FILE.retain: its number, 'end', or a\n"
    "                  time: 1.5s, 250ms, P%): inuse_objects and inuse_space of\n"
    "                  the blocks it lists, each sample labelled with its holder\n"
    "                  (holder=\"global log -> field items -> list cell xn\"), the\n"
    "                  form continuous profilers (Pyroscope, Parca) ingest\n"
    "  --retain FILE   with --at: the snapshot file (default: FILE.retain)\n"
    "  -o OUT          write to OUT (\"-\": stdout)\n"
    "  --whole-stacks  every frame a location: recursion not folded\n"
    "On a damaged or truncated trace: the profile of the events before the damage,\n"
    "marked PARTIAL in its comments, then the error on stderr; exit status 1.\n",
};

int cmd_pprof(int argc, char **argv) {
  const char *out = NULL, *retain = NULL;
  bool whole = false;
  SnapPick at = {0};
  const ToolOption options[] = {TOOL_OPTION_OUTPUT(&out), TOOL_OPTION_WHOLE_STACKS(&whole), KEPT_OPTION_AT(&at),
                                KEPT_OPTION_RETAIN(&retain)};
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 1, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  if (retain && !at.set) return tool_usage_error(&usage, "--retain goes with --at");
  if (!pprof_export_output_ok(&usage, &out)) return 2;
  if (at.set) return pprof_export_snapshot(&usage, args.files[0], retain, &at, out, whole);
  return pprof_export(&usage, (const char *const *)args.files, 1, out, whole);
}
