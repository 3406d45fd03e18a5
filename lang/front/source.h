// source.h - reading a script or module file, refusing what is not one:
// a directory, a file that cannot be read, one longer than SOURCE_MAX_BYTES
// (an endless stream such as /dev/zero stops there), one holding a NUL byte.
#ifndef MINNOW_SOURCE_H
#define MINNOW_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"

// What is wrong with a file that source_read refuses.
typedef struct SourceError {
  bool cannot_read;        // open or read failed (message: strerror's text)
  uint32_t line, col;      // 1-based position of the fault, or 0 when none
  char message[128];
} SourceError;

// Reads the file at `path` into a malloc'ed, NUL-terminated buffer (*text,
// *len bytes before the terminator). On failure returns false with *text
// NULL and *err filled.
bool source_read(const char *path, char **text, size_t *len, SourceError *err);
// The checks source_read makes on what it read (length, NUL bytes), for a
// text that did not come from a file.
bool source_check(const char *text, size_t len, SourceError *err);

#endif
