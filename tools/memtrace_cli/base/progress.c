// progress.c - progress lines on stderr for long reads (progress.h).
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_init(Progress *p, const char *command, const char *path, uint64_t total_bytes) {
  const char *env = getenv("MEMTRACE_PROGRESS");
  *p = (Progress){command, path, total_bytes, now_seconds(), 0, isatty(2) == 1,
                  !(env && strcmp(env, "0") == 0), false};
  p->next = p->start + 1;
}

void progress_update(Progress *p, uint64_t bytes, uint64_t events) {
  if (!p->enabled) return;
  double t = now_seconds();
  if (t < p->next) return;
  p->next = t + 1;
  char where[64] = "";
  const double mib = 1024.0 * 1024.0;  // sizes in binary units, as everywhere in the tool
  if (p->total_bytes)
    snprintf(where, sizeof where, "%.0f%% of %.1f MiB, ", 100.0 * (double)bytes / (double)p->total_bytes,
             (double)p->total_bytes / mib);
  else
    snprintf(where, sizeof where, "%.1f MiB, ", (double)bytes / mib);
  fprintf(stderr, "%smemtrace %s: %s: %s%.1f M events, %.0f s%s", p->tty ? "\r" : "", p->command, p->path, where,
          (double)events / 1e6, t - p->start, p->tty ? "\033[K" : "\n");
  p->shown = true;
}

void progress_done(Progress *p) {
  if (p->shown && p->tty) fputs("\r\033[K", stderr);
  p->shown = false;
}
