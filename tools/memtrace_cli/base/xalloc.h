// xalloc.h - memory for the tool's tables and texts, or an exit: every
// function here returns usable memory or does not return. On exhaustion it
// prints "memtrace CMD: out of memory" on stderr (CMD as xalloc_name last
// set it; "memtrace: out of memory" before) and exits with status 1, the
// status of a trace that could not be read. A size of 0 is a valid request
// (a block of one byte), so callers need no special case for empty tables.
#ifndef MINNOW_MEMTRACE_XALLOC_H
#define MINNOW_MEMTRACE_XALLOC_H

#include <stddef.h>

// Names the running command in the message; `name` must outlive the run.
void xalloc_name(const char *name);

// Prints the message and exits with status 1.
_Noreturn void xalloc_fail(void);

void *xrealloc(void *p, size_t n);
void *xcalloc(size_t n, size_t size);
char *xstrdup(const char *s);

#endif
