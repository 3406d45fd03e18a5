// clock_shim.c - LD_PRELOAD'ed by bench/trace_identity.sh so that a traced run
// writes the same trace every time: the clock a counter (one microsecond a
// read, from a fixed epoch) and the pid a constant. Every clock the VM reads
// (gettimeofday, clock_gettime of any clock id, time) advances the one
// counter, so a run that reads its clock the same number of times in the same
// order gets the same times; a run that reads it differently shows in the
// dump's times.
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

enum { SHIM_EPOCH_S = 1700000000, SHIM_PID = 4242 };

static unsigned long long shim_us;   // microseconds since the epoch above

static unsigned long long shim_tick(void) { return shim_us++; }

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
  (void)tz;
  unsigned long long us = shim_tick();
  if (tv) {
    tv->tv_sec = (time_t)(SHIM_EPOCH_S + us / 1000000u);
    tv->tv_usec = (suseconds_t)(us % 1000000u);
  }
  return 0;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  (void)id;
  unsigned long long us = shim_tick();
  if (ts) {
    ts->tv_sec = (time_t)(SHIM_EPOCH_S + us / 1000000u);
    ts->tv_nsec = (long)(us % 1000000u) * 1000;
  }
  return 0;
}

time_t time(time_t *out) {
  time_t t = (time_t)(SHIM_EPOCH_S + shim_tick() / 1000000u);
  if (out) *out = t;
  return t;
}

pid_t getpid(void) { return SHIM_PID; }
