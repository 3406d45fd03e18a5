// merge.c - `memtrace merge A B ... -o OUT.pb.gz`: several traces (runs,
// possibly at different sampling rates) as one pprof profile, each unbiased
// then summed (pprof_export.h).
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "../cli/pprof_export.h"

static const ToolUsage usage = {
    "merge",
    "usage: memtrace merge FILE... -o OUT.pb.gz\n"
    "Writes the traces FILE... (at most one \"-\": stdin) as one gzipped pprof profile\n"
    "OUT (\"-\": stdout), as memtrace pprof writes one: each trace's samples are\n"
    "unbiased at its own sampling rate and word size, then the estimates summed;\n"
    "callstacks of different traces are matched by their locations (function, file,\n"
    "line, columns). A comment line per trace names it.\n"
    "A trace that cannot be read stops the merge (no output is left). A damaged or\n"
    "truncated trace counts with the events before the damage, marked PARTIAL in the\n"
    "comments; its error is printed on stderr and the exit status is 1.\n",
};

int cmd_merge(int argc, char **argv) {
  const char *out = NULL;
  const char **files = malloc((size_t)argc * sizeof *files);
  size_t n = 0, stdins = 0;
  int status = -1;
  if (!files) return fputs("memtrace merge: out of memory\n", stderr), 1;
  for (int i = 1; i < argc && status < 0; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) status = 0, fputs(usage.text, stdout);
    else if (strcmp(a, "-o") == 0 && i + 1 >= argc) status = tool_usage_error(&usage, "-o needs a value");
    else if (strcmp(a, "-o") == 0) out = argv[++i];
    else if (a[0] == '-' && a[1] != '\0') status = tool_usage_error(&usage, "unknown option '%s'", a);
    else stdins += strcmp(a, "-") == 0, files[n++] = a;
  }
  if (status < 0 && n == 0) status = tool_usage_error(&usage, "no trace file given");
  if (status < 0 && !out) status = tool_usage_error(&usage, "no output given (-o OUT.pb.gz)");
  if (status < 0 && stdins > 1) status = tool_usage_error(&usage, "stdin (\"-\") given %zu times", stdins);
  if (status < 0) status = pprof_export(&usage, files, n, out);
  free(files);
  return status;
}
