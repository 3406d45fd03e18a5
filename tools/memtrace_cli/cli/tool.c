// tool.c - shared helpers of the memtrace subcommands (tool.h).
#include "tool.h"

#include <stdarg.h>
#include <string.h>
#include <unistd.h>

int tool_usage_error(const ToolUsage *usage, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "memtrace %s: ", usage->name);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n%s", usage->text);
  va_end(ap);
  return 2;
}

int tool_one_file(int argc, char **argv, const ToolUsage *usage, const char **file) {
  *file = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage->text, stdout);
      return 0;
    }
    if (a[0] == '-' && a[1] != '\0') return tool_usage_error(usage, "unknown option '%s'", a);
    if (*file) return tool_usage_error(usage, "one trace file expected, got '%s' and '%s'", *file, a);
    *file = a;
  }
  if (!*file) return tool_usage_error(usage, "no trace file given");
  return TOOL_CONTINUE;
}

TraceReader *tool_open(const ToolUsage *usage, const char *path) {
  TraceReaderError err;
  TraceReader *r = strcmp(path, "-") == 0 ? trace_reader_open_fd(dup(0), &err) : trace_reader_open(path, &err);
  if (!r) fprintf(stderr, "memtrace %s: %s: %s\n", usage->name, path, err.message);
  return r;
}

int tool_trace_error(const ToolUsage *usage, const char *path, const TraceReader *r) {
  fflush(stdout);
  fprintf(stderr, "memtrace %s: %s: %s\n", usage->name, path, trace_reader_error(r)->message);
  return 1;
}
