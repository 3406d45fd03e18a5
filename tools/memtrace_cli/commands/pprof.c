// pprof.c - `memtrace pprof FILE -o OUT.pb.gz`: the trace as a gzipped pprof
// profile (pprof_export.h says what it holds).
#include <string.h>

#include "commands.h"
#include "../cli/pprof_export.h"

static const ToolUsage usage = {
    "pprof",
    "usage: memtrace pprof FILE -o OUT.pb.gz\n"
    "Writes the trace FILE (\"-\": stdin) as a gzipped pprof profile OUT (\"-\": stdout)\n"
    "for go tool pprof and the profilers that read pprof (Pyroscope, Parca). Sample\n"
    "types: alloc_objects, alloc_space (shown by default), inuse_objects, inuse_space\n"
    "(live at the end of the trace); each an unbiased estimate from the samples\n"
    "(bytes = samples x word bytes / sampling rate, headers included). Frames carry\n"
    "function, file and line; inlined frames are pprof inline lines.\n"
    "On a damaged or truncated trace: the profile of the events before the damage,\n"
    "marked PARTIAL in its comments, then the error on stderr; exit status 1.\n",
};

int cmd_pprof(int argc, char **argv) {
  const char *file = NULL, *out = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return fputs(usage.text, stdout), 0;
    if (strcmp(a, "-o") == 0) {
      if (i + 1 >= argc) return tool_usage_error(&usage, "-o needs a value");
      out = argv[++i];
    } else if (a[0] == '-' && a[1] != '\0') return tool_usage_error(&usage, "unknown option '%s'", a);
    else if (file) return tool_usage_error(&usage, "one trace file expected, got '%s' and '%s'", file, a);
    else file = a;
  }
  if (!file) return tool_usage_error(&usage, "no trace file given");
  if (!out) return tool_usage_error(&usage, "no output given (-o OUT.pb.gz)");
  return pprof_export(&usage, &file, 1, out);
}
