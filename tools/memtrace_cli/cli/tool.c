// tool.c - shared helpers of the memtrace subcommands (tool.h).
#include "tool.h"

#include "outfile.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

void tool_usage_hint(FILE *out, const char *text, const char *name) {
  int first = (int)strcspn(text, "\n");
  if (name) fprintf(out, "\n%.*s (memtrace %s --help says more)\n", first, text, name);
  else fprintf(out, "\n%.*s (memtrace --help lists the commands)\n", first, text);
}

int tool_usage_error(const ToolUsage *usage, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "memtrace %s: ", usage->name);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  tool_usage_hint(stderr, usage->text, usage->name);
  return 2;
}

bool tool_output_to(const ToolUsage *usage, const char *path) {
  if (!path || strcmp(path, "-") == 0) return true;
  const char *name = outfile_begin(usage->name, path);
  if (!name) return false;
  int fd = outfile_fd(name);  // stdout's stream stays, on the output's file
  if (fd >= 0 && fflush(stdout) == 0 && dup2(fd, STDOUT_FILENO) >= 0) {
    close(fd);
    return true;
  }
  fprintf(stderr, "memtrace %s: cannot create %s: %s\n", usage->name, path, strerror(errno));
  if (fd >= 0) close(fd);
  outfile_discard();
  return false;
}

int tool_finish_output(const ToolUsage *usage) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  outfile_discard();
  fprintf(stderr, "memtrace %s: error writing the output\n", usage->name);
  return 1;
}

TraceReader *tool_open(const ToolUsage *usage, const char *path) {
  TraceReaderError err;
  TraceReader *r = strcmp(path, "-") == 0 ? trace_reader_open_fd(dup(0), &err) : trace_reader_open(path, &err);
  if (!r) fprintf(stderr, "memtrace %s: %s: %s\n", usage->name, path, err.message), outfile_discard();
  return r;
}

int tool_trace_error(const ToolUsage *usage, const char *path, const TraceReader *r) {
  fflush(stdout);
  fprintf(stderr, "memtrace %s: %s: %s\n", usage->name, path, trace_reader_error(r)->message);
  return 1;
}
