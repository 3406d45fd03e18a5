// fuzz_pair.c - afl++ target for a trace read together with its snapshot
// file (make fuzz-pair): the cross-checks of the trace tool's joint reading
// (tools/memtrace_cli/analysis/snapshots.c: a snapshot's blocks, alloc
// counts, places and times against the trace's) and what the commands
// compute from them (kept.c: holders and the leak verdict; pprof_export.c:
// a snapshot's profile), which tests/fuzz/reader/fuzz_reader.c, reading
// one file at a time, never reaches.
//
// 1. The input is a pair (docs: tests/fuzz/README.md):
//      bytes 0-7    "MNTPAIR1"
//      bytes 8-11   the trace's length T, little-endian (more than what
//                   follows the header: all of it, and an empty snapshot file)
//      byte 12      options: bit 0 --json; bit 1 --stdlib; bits 2-3 the
//                   snapshot asked for: 0 none (the default one), 1 its
//                   number (byte 13), 2 "end", 3 a time (byte 13 % 101, as
//                   "P%" of the trace)
//      byte 13      the number or percentage of bits 2-3
//      bytes 14-15  reserved (read as nothing)
//      then T bytes of trace, then the snapshot file (the rest).
//    Shorter than the header or another magic: nothing is run.
// 2. Both go to memory files (memfd) named by /proc/self/fd/N; the commands
//    run as `memtrace` runs them (their cmd_* functions, argv as typed,
//    --retain naming the snapshot file): info, leaks --all -n 0, paths,
//    paths --by holder, top --live --by holder, diff --by holder (one trace:
//    the first usable snapshot, or the one asked, to the default), pprof
//    --at -o /dev/null. Their output and messages go to /dev/null (stdout
//    and stderr's streams are swapped; fd 2 stays, where the sanitizers
//    write). Then top --follow --by holder's reading without its waits: the
//    trace followed and the snapshots watched as both grow in two halves
//    (snapshots_follow, snapshots_follow_update, profile_read), each usable
//    snapshot analysed as it is taken (kept_analyse).
// 3. Exit statuses are the commands' to choose (0 to 4); a status outside
//    them, a sanitizer report (ASan+UBSan) or a signal is a finding.
//    FUZZ_PAIR_VERBOSE=1 prints each command line and its status on stderr.
// Persistent mode under afl-clang-fast; built with a plain compiler it reads
// the pairs named on its command line (to replay the corpus and crashes).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../../tools/memtrace_cli/analysis/kept.h"
#include "../../../tools/memtrace_cli/analysis/snapshots.h"
#include "../../../tools/memtrace_cli/commands/commands.h"
#include "fuzz_main.h"

enum { PAIR_HEADER = 16 };
static const char pair_magic[8] = {'M', 'N', 'T', 'P', 'A', 'I', 'R', '1'};

typedef struct Pair {
  const unsigned char *trace, *retain;
  size_t trace_len, retain_len;
  unsigned options, at;
} Pair;

static bool split_pair(const unsigned char *data, size_t len, Pair *p) {
  if (len < PAIR_HEADER || memcmp(data, pair_magic, sizeof pair_magic) != 0) return false;
  size_t t = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 | (size_t)data[11] << 24;
  size_t rest = len - PAIR_HEADER;
  if (t > rest) t = rest;
  *p = (Pair){data + PAIR_HEADER, data + PAIR_HEADER + t, t, rest - t, data[12], data[13]};
  return true;
}

static int memory_file(const char *name, const unsigned char *data, size_t len) {
  int fd = memfd_create(name, 0);
  if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || lseek(fd, 0, SEEK_SET) != 0) abort();
  return fd;
}

static FILE *null_stream;
static bool verbose;

// Runs a command as main does, its output and messages into /dev/null.
static void run_command(int (*cmd)(int, char **), char **argv) {
  int argc = 0;
  while (argv[argc]) argc++;
  if (verbose)  // FUZZ_PAIR_VERBOSE=1: each command and its status, to reproduce by hand
    for (int i = 0; i < argc; i++) fprintf(stderr, "%s%s", i ? " " : "fuzz_pair: memtrace ", argv[i]);
  FILE *out = stdout, *err = stderr;
  stdout = stderr = null_stream;
  int status = cmd(argc, argv);  // (which may reorder argv)
  stdout = out;
  stderr = err;
  if (verbose) fprintf(stderr, ": exit %d\n", status);
  if (status < 0 || status > 4) abort();  // not one of the statuses the commands document
}

// The --at text of the options, or NULL for none.
static const char *pick_text(const Pair *p, char *buf, size_t len) {
  switch (p->options >> 2 & 3) {
  case 1: snprintf(buf, len, "%u", p->at); return buf;
  case 2: return "end";
  case 3: snprintf(buf, len, "%u%%", p->at % 101); return buf;
  default: return NULL;
  }
}

static void run_commands(const Pair *p, const char *trace, const char *retain) {
  char at_buf[16];
  const char *at = pick_text(p, at_buf, sizeof at_buf);
  bool json = p->options & 1, stdlib = p->options & 2;
  // argv built as typed: NULL-terminated, optional words skipped.
  char *argv[24];
  int n;
#define ARG(s) (argv[n++] = (char *)(s))
#define OPT(cond, s) ((cond) ? (void)ARG(s) : (void)0)
#define END(file) (ARG("--retain"), ARG(retain), ARG(file), argv[n] = NULL)
  n = 0, ARG("info"), OPT(json, "--json"), END(trace);
  run_command(cmd_info, argv);
  n = 0, ARG("leaks"), ARG("--all"), ARG("-n"), ARG("0"), OPT(json, "--json"), OPT(stdlib, "--stdlib");
  if (at) ARG("--at"), ARG(at);
  END(trace);
  run_command(cmd_leaks, argv);
  n = 0, ARG("paths"), OPT(json, "--json");
  if (at) ARG("--at"), ARG(at);
  END(trace);
  run_command(cmd_paths, argv);
  n = 0, ARG("paths"), ARG("--by"), ARG("holder"), OPT(json, "--json"), OPT(stdlib, "--stdlib");
  if (at) ARG("--at"), ARG(at);
  END(trace);
  run_command(cmd_paths, argv);
  n = 0, ARG("top"), ARG("--live"), ARG("--by"), ARG("holder"), ARG("-n"), ARG("0"), OPT(json, "--json");
  if (at) ARG("--at"), ARG(at);
  END(trace);
  run_command(cmd_top, argv);
  n = 0, ARG("diff"), ARG("--by"), ARG("holder"), ARG("-n"), ARG("0"), OPT(json, "--json");
  if (at) ARG("--from"), ARG(at);
  END(trace);
  run_command(cmd_diff, argv);
  n = 0, ARG("pprof"), ARG("-o"), ARG("/dev/null"), ARG("--at"), ARG(at ? at : "end"), END(trace);
  run_command(cmd_pprof, argv);
#undef ARG
#undef OPT
#undef END
}

// top --follow --by holder's reading (commands/top.c follow_holders)
// without its waits: `steps` rounds, the k-th with the first k/steps of
// both files there; each usable snapshot taken is analysed once.
static void follow_pair(const Pair *p, bool stdlib) {
  int tfd = memory_file("trace", p->trace, p->trace_len / 2);
  int rfd = memory_file("retain", p->retain, p->retain_len / 2);
  char trace[64], retain[64];
  snprintf(trace, sizeof trace, "/proc/self/fd/%d", tfd);
  snprintf(retain, sizeof retain, "/proc/self/fd/%d", rfd);
  TraceReader *r = trace_reader_open_fd(dup(tfd), NULL);
  if (!r) {  // not even a header yet: top --follow waits; here, nothing more
    close(tfd), close(rfd);
    return;
  }
  trace_reader_follow(r, true);
  ProfileOptions popts = {0};
  Snapshots s;
  snapshots_follow(&s, trace, retain, &popts);
  Profile *profile = profile_new(r, &popts);
  if (!profile) abort();  // out of memory at the start: not the input's doing
  const TraceReaderInfo *info = trace_reader_info(r);
  uint32_t shown = 0;
  FILE *err = stderr;
  stderr = null_stream;
  for (int step = 0; step < 2; step++) {
    if (step == 1) {  // the rest of both files arrives
      size_t th = p->trace_len / 2, rh = p->retain_len / 2;
      if (pwrite(tfd, p->trace + th, p->trace_len - th, (off_t)th) != (ssize_t)(p->trace_len - th) ||
          pwrite(rfd, p->retain + rh, p->retain_len - rh, (off_t)rh) != (ssize_t)(p->retain_len - rh))
        abort();
    }
    if (!snapshots_follow_update(&s, info)) break;
    TraceReaderStatus st = profile_read(profile, NULL);
    if (!snapshots_follow_update(&s, info)) break;
    for (; shown < s.next; shown++) {
      if (!s.snaps[shown].usable) continue;
      KeptAnalysis an;
      KeptOptions ko = {.stdlib = stdlib};
      kept_analyse(profile, &s, shown, &ko, &an);
      kept_sort_by_kept(&an);
      kept_analysis_free(&an);
    }
    if (st == TRACE_READER_ERROR || !profile_ok(profile)) break;
  }
  stderr = err;
  snapshots_free(&s);
  profile_free(profile);
  trace_reader_close(r);
  close(tfd);
  close(rfd);
}

static void run(const unsigned char *data, size_t len) {
  Pair p;
  if (!split_pair(data, len, &p)) return;
  int tfd = memory_file("trace", p.trace, p.trace_len), rfd = memory_file("retain", p.retain, p.retain_len);
  char trace[64], retain[64];
  snprintf(trace, sizeof trace, "/proc/self/fd/%d", tfd);
  snprintf(retain, sizeof retain, "/proc/self/fd/%d", rfd);
  run_commands(&p, trace, retain);
  close(tfd);
  close(rfd);
  follow_pair(&p, p.options & 2);
}

static void setup(void) {
  setenv("MEMTRACE_PROGRESS", "0", 1);
  verbose = getenv("FUZZ_PAIR_VERBOSE") != NULL;
  if (!(null_stream = fopen("/dev/null", "w"))) abort();
}

FUZZ_MAIN(setup, run)
