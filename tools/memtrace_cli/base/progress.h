// progress.h - progress of a long read, on stderr: nothing during the first
// second, then a line per second ("memtrace top: FILE: 41% of 89.1 MiB, 3.9 M
// events"). On a terminal the line is rewritten in place and erased at the
// end; otherwise each update is a line of its own. MEMTRACE_PROGRESS=0 in
// the environment turns it off.
#ifndef MINNOW_MEMTRACE_PROGRESS_H
#define MINNOW_MEMTRACE_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct Progress {
  const char *command, *path;
  uint64_t total_bytes;       // 0: unknown (a pipe)
  double start, next;         // seconds (monotonic clock)
  bool tty, enabled, shown;
} Progress;

// total_bytes = 0 when the size is unknown.
void progress_init(Progress *p, const char *command, const char *path, uint64_t total_bytes);

// Called every few thousand events: looks at the clock, prints when due.
void progress_update(Progress *p, uint64_t bytes, uint64_t events);

// Erases the line on a terminal; nothing otherwise.
void progress_done(Progress *p);

#endif
