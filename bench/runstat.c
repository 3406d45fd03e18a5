// runstat.c - runs a command and reports its wall time, CPU time and max RSS
// (bench/peers_bench.sh's stopwatch; built as build/bench/runstat by bench/peers.mk).
//
//   runstat [-n N] [-t SECONDS] -o FILE -- command [args...]
//
// Runs the command N times (default 1), one after the other, with the standard
// streams it was given, and writes one line to FILE:
//
//   wall_s cpu_s maxrss_kb status
//
// wall_s and cpu_s (user + system, from wait4's rusage: microseconds) are the
// means over the N runs; maxrss_kb is the largest max RSS of a run; status is 0
// if every run exited 0, else that of the first run that did not (128 + signal
// number if it was killed; 142, SIGALRM, if it ran out of time; 127 if it
// could not be executed), which ends the series (the means are then over the
// runs made). Counted per
// run: the child alone (not runstat), from fork to its reaping. With -t, each
// run gets an alarm(SECONDS) set before exec, which exec keeps: a run that
// takes longer dies of SIGALRM. Exit status: 0 if FILE was written, 2 on a
// usage error, if fork failed or if FILE could not be written.
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct Options {
  long runs;
  unsigned timeout_s;   // 0: none
  const char *out_path;
  char **argv;          // the command, NULL-terminated
} Options;

typedef struct RunTotals {
  double wall_s, cpu_s;
  long maxrss_kb;
  int status;           // first non-zero status, else 0
} RunTotals;

static double seconds_of(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(const char *msg) {
  fprintf(stderr, "runstat: %s\nusage: runstat [-n N] [-t SECONDS] -o FILE -- command [args...]\n", msg);
  return 2;
}

// Parses a positive integer option value; false if `s` is not one.
static bool parse_positive(const char *s, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v <= 0) return false;
  *out = v;
  return true;
}

static bool parse_options(int argc, char **argv, Options *opt) {
  *opt = (Options){.runs = 1};
  int opt_char;
  long timeout = 0;
  while ((opt_char = getopt(argc, argv, "+n:t:o:")) != -1) {
    if (opt_char == 'n' && parse_positive(optarg, &opt->runs)) continue;
    if (opt_char == 't' && parse_positive(optarg, &timeout)) continue;
    if (opt_char == 'o') { opt->out_path = optarg; continue; }
    return false;
  }
  opt->timeout_s = (unsigned)timeout;
  opt->argv = argv + optind;
  return opt->out_path && optind < argc;
}

// One run of the command, added to `t`. False if fork failed.
static bool run_once(const Options *opt, RunTotals *t) {
  double t0 = now_s();
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (opt->timeout_s) alarm(opt->timeout_s);
    execvp(opt->argv[0], opt->argv);
    fprintf(stderr, "runstat: cannot run %s: %s\n", opt->argv[0], strerror(errno));
    _exit(127);
  }
  int status;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0)
    if (errno != EINTR) return false;
  t->wall_s += now_s() - t0;
  t->cpu_s += seconds_of(ru.ru_utime) + seconds_of(ru.ru_stime);
  if (ru.ru_maxrss > t->maxrss_kb) t->maxrss_kb = ru.ru_maxrss;
  if (!t->status) t->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

int main(int argc, char **argv) {
  Options opt;
  if (!parse_options(argc, argv, &opt)) return usage("bad arguments");
  RunTotals t = {0};
  long done = 0;
  while (done < opt.runs && !t.status) {   // a failed run ends the series
    if (!run_once(&opt, &t)) return 2;
    done++;
  }
  FILE *out = fopen(opt.out_path, "w");
  if (!out) {
    fprintf(stderr, "runstat: cannot write %s: %s\n", opt.out_path, strerror(errno));
    return 2;
  }
  fprintf(out, "%.6f %.6f %ld %d\n", t.wall_s / (double)done, t.cpu_s / (double)done, t.maxrss_kb, t.status);
  return fclose(out) == 0 ? 0 : 2;
}
