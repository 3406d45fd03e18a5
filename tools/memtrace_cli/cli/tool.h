// tool.h - what the subcommands of `memtrace` share: argument checks, usage
// messages, opening a trace and reporting its errors in one format
// ("memtrace CMD: FILE: byte N: what"), buffered output.
#ifndef MINNOW_MEMTRACE_TOOL_H
#define MINNOW_MEMTRACE_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../../trace/reader.h"

// A subcommand's usage: `text` is its whole help ("usage: memtrace dump
// FILE\n..."), printed on stdout for --help and on stderr after a usage error.
typedef struct ToolUsage {
  const char *name;  // "dump"
  const char *text;
} ToolUsage;

enum { TOOL_CONTINUE = -1 };

// For subcommands taking one FILE and no options: sets *file and returns
// TOOL_CONTINUE, or returns the exit status (0 after --help, 2 after a
// usage error, whose message it printed).
int tool_one_file(int argc, char **argv, const ToolUsage *usage, const char **file);

// Prints "memtrace NAME: MESSAGE" and the usage on stderr; returns 2.
int tool_usage_error(const ToolUsage *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Opens `path` ("-" is stdin); on failure prints "memtrace NAME: PATH: what"
// on stderr and returns NULL.
TraceReader *tool_open(const ToolUsage *usage, const char *path);

// Prints the reader's error on stderr (after flushing stdout); returns 1.
int tool_trace_error(const ToolUsage *usage, const char *path, const TraceReader *r);

#endif
