// tool.h - what the subcommands of `memtrace` share: usage messages, the
// output (-o), opening a trace and reporting its errors in one format
// ("memtrace CMD: FILE: byte N: what"). Options are parsed by options.h.
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

// What a parse step returns when the command goes on (else: the exit status).
enum { TOOL_CONTINUE = -1 };

// Prints "memtrace NAME: MESSAGE", then the usage's first line and where
// the rest is (tool_usage_hint): two lines on stderr; returns 2.
int tool_usage_error(const ToolUsage *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Ends the line of a refusal, then prints the first line of the usage
// `text` and where the rest is: "usage: memtrace top [OPTIONS] FILE
// (memtrace top --help says more)" (NAME NULL: the tool's own usage,
// "... (memtrace --help lists the commands)").
void tool_usage_hint(FILE *out, const char *text, const char *name);

// Opens `path` ("-" is stdin); on failure prints "memtrace NAME: PATH: what"
// on stderr and returns NULL.
TraceReader *tool_open(const ToolUsage *usage, const char *path);

// -o OUT: sends stdout to OUT (NULL or "-": stdout stays), created before the
// trace is read so that a bad name fails at once. False after printing
// "memtrace NAME: cannot create OUT: reason".
bool tool_output_to(const ToolUsage *usage, const char *path);

// Flushes stdout; returns 0, or 1 after printing "memtrace NAME: error
// writing the output" (a full disk, a closed pipe).
int tool_finish_output(const ToolUsage *usage);

// Prints the reader's error on stderr (after flushing stdout); returns 1.
int tool_trace_error(const ToolUsage *usage, const char *path, const TraceReader *r);

#endif
