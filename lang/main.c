// main.c - the command line: ./vm [options] script.mn [args...] (options,
// environment and exit statuses: usage() below, and README.md's "Command
// line"). The options are one table read by base/options.h, the reader of
// tools/memtrace's commands too: --opt VALUE or --opt=VALUE, each at most
// once, "did you mean" on a typo. The one reader of the environment:
// MEMTRACE, MEMTRACE_RATE and MINNOW_SEED are parsed and validated here,
// once, into VmOptions. Every refusal is two lines on stderr (what is wrong,
// then the synopsis) and status 2.
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/number.h"
#include "../base/options.h"
#include "../base/version.h"
#include "vm.h"
#include "../gc/gc.h"
#include "../memprof/memtrace.h"
#include "../memprof/pretenure.h"
#include "../trace/format.h"

#define VM_SYNOPSIS "usage: vm [options] script.mn [args...]"

static void usage(FILE *out) {
  fprintf(out,
          VM_SYNOPSIS "\n"
          "  --memtrace FILE      write a memtrace trace of the run to FILE (also MEMTRACE=FILE)\n"
          "  --memtrace-rate R    its sampling rate, in (0, 1] (also MEMTRACE_RATE=R; default 1e-05)\n"
          "  --memtrace-format V  its format version: 2 (default: what memtrace 0.2 reads) or 3\n"
          "  --memtrace-no-end-state  when the trace ends: no final collection, no retaining\n"
          "                       paths (FILE.retain; docs/trace-format.md)\n"
          "  --memtrace-snapshot-every S  a snapshot of what keeps memory every S seconds\n"
          "                       (appended to FILE.retain; also SIGUSR1, Memtrace.snapshot())\n"
          "  --memtrace-snapshot-peak F  a snapshot whenever the live heap has grown F times\n"
          "                       (F > 1) since the last peak snapshot (first: F x the minor heap)\n"
          "  --memtrace-pprof-dir DIR  also a pprof profile of the live heap per snapshot, in DIR\n"
          "                       (each sample labelled with its holder; docs/snapshots.md)\n"
          "  --memprof-count R    sample every word with probability R; a C tracker counts\n"
          "                       samples, promotions and deallocations and prints totals\n"
          "  --pretenure          allocate in the major heap at the sites whose sampled blocks\n"
          "                       survive the minor heap, undone when they stop surviving\n"
          "                       (decided from a profile of its own; docs/design.md)\n"
          "  --pretenure-rate R   that profile's sampling rate (also Gc.set_pretenure's), in\n"
          "                       (0, 1] (default 1e-04)\n"
          "  --pretenure-from T   pretenure from the start the sites that trace T (a run's\n"
          "                       --memtrace) shows surviving, by the same rule\n"
          "  --pretenure-log      print each pretenuring decision and its evidence on stderr\n"
          "  --dump-bytecode      print every function's code and frame descriptors, run nothing\n"
          "  --stack-words N      VM stack size in words (default 16777216; at least 1024)\n"
          "  --minor-words N      minor heap size in words (default 2097152: 16 MiB)\n"
          "  --max-heap-words N   major heap limit; past it the program gets `out of memory`\n"
          "  --gc-stress          minor GC at every allocation (major every 64th)\n"
          "  --gc-verify          run the heap verifier after every collection\n"
          "  --help               print this and exit\n"
          "  --version            print the version and exit\n"
          "  --                   ends the options: the next word is the script\n"
          "An option's value follows it (--memtrace t.ctf) or is attached (--memtrace=t.ctf).\n"
          "environment (a flag on the command line wins):\n"
          "  MEMTRACE=FILE        as --memtrace FILE\n"
          "  MEMTRACE_RATE=R      as --memtrace-rate R\n"
          "  MINNOW_SEED=N        seeds the sampler, decimal or 0x hex (default: a fixed seed,\n"
          "                       runs are repeatable)\n"
          "exit status:\n"
          "  0                    the script ended; Sys.exit(n): n\n"
          "  1                    uncaught runtime error, out of memory included\n"
          "  2                    bad command line or environment, unreadable script, syntax\n"
          "                       or compile error\n"
          "  SIGINT, SIGTERM      the trackers finish (trace, --memprof-count), then the VM\n"
          "                       dies of the signal (status 128 + its number)\n");
}

// A refusal of the command line or the environment: "vm: WHAT", then the
// synopsis and where the rest is, on stderr (two lines). Returns the usage
// status.
static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("vm: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\n" VM_SYNOPSIS " (vm --help says more)\n", stderr);
  return VM_EXIT_USAGE;
}

// --memtrace-format: 2 or 3, into an int.
static bool parse_format(const Option *o, const char *text) {
  if (strcmp(text, "2") != 0 && strcmp(text, "3") != 0) return false;
  *(int *)o->target = text[0] - '0';
  return true;
}

// --memtrace-snapshot-peak: a growth factor F with min < F <= max (the
// table's range is inclusive; a factor of 1 would snapshot at every check).
static bool parse_growth(const Option *o, const char *text) {
  double v;
  if (!number_parse_decimal(text, &v) || !(v > o->min && v <= o->max)) return false;
  *(double *)o->target = v;
  return true;
}

// MINNOW_SEED: a whole number, decimal or 0x hex (a typo would otherwise
// seed 0 in silence).
static bool parse_seed(const char *text, VmOptions *opt) {
  char *end;
  errno = 0;
  bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');  // "010" is ten, not octal
  unsigned long long seed = strtoull(text, &end, hex ? 16 : 10);
  if (!(*text && *end == 0 && errno == 0 && text[0] >= '0' && text[0] <= '9')) return false;
  opt->seed_text = text;
  opt->seed = seed;
  return true;
}

int main(int argc, char **argv) {
  VmOptions opt = {.stack_words = 16u << 20, .minor_words = 2u << 20, .memtrace_rate = MEMTRACE_DEFAULT_RATE,
                   .memtrace_format = TRACE_VERSION_DEFAULT, .pretenure_rate = PRETENURE_DEFAULT_RATE};
  // The environment first: the command line's flags win.
  const char *env_trace = getenv("MEMTRACE"), *env_rate = getenv("MEMTRACE_RATE");
  if (env_trace && *env_trace) opt.memtrace_path = env_trace;
  if (env_rate && *env_rate && !number_parse_rate(env_rate, &opt.memtrace_rate))
    return refuse("MEMTRACE_RATE: '%s' is not a rate in (0, 1]", env_rate);
  const char *env_seed = getenv("MINNOW_SEED");
  if (env_seed && !parse_seed(env_seed, &opt))
    return refuse("MINNOW_SEED: '%s' is not a number (decimal, or 0x hex)", env_seed);
  bool help = false, version = false;
  // Invariant: the options that only modify a trace are the ones named
  // "--memtrace-..." (checked below by that prefix).
  const Option options[] = {
      {"--memtrace", "FILE", &opt.memtrace_path, NULL, NULL, 0, 0},
      {"--memtrace-rate", "R", &opt.memtrace_rate, option_parse_rate, "a rate in (0, 1]", 0, 0},
      {"--memtrace-format", "V", &opt.memtrace_format, parse_format, "2 or 3", 0, 0},
      {"--memtrace-no-end-state", NULL, &opt.memtrace_no_end_state, NULL, NULL, 0, 0},
      {"--memtrace-snapshot-every", "S", &opt.memtrace_snapshot_every, option_parse_number,
       "seconds in [0.001, 31536000]", 0.001, 86400 * 365},
      {"--memtrace-snapshot-peak", "F", &opt.memtrace_snapshot_peak, parse_growth, "a growth factor in (1, 1000000]",
       1, 1e6},
      {"--memtrace-pprof-dir", "DIR", &opt.memtrace_pprof_dir, NULL, NULL, 0, 0},
      {"--memprof-count", "R", &opt.memprof_count_rate, option_parse_rate, "a rate in (0, 1]", 0, 0},
      {"--pretenure", NULL, &opt.pretenure, NULL, NULL, 0, 0},
      {"--pretenure-rate", "R", &opt.pretenure_rate, option_parse_rate, "a rate in (0, 1]", 0, 0},
      {"--pretenure-from", "T", &opt.pretenure_from, NULL, NULL, 0, 0},
      {"--pretenure-log", NULL, &opt.pretenure_log, NULL, NULL, 0, 0},
      {"--dump-bytecode", NULL, &opt.dump_bytecode, NULL, NULL, 0, 0},
      {"--stack-words", "N", &opt.stack_words, option_parse_u64, "a number of words in 1..2147483648", 1,
       (double)VM_MAX_STACK_WORDS},
      {"--minor-words", "N", &opt.minor_words, option_parse_u64, "a number of words in 1..4294967296", 1,
       (double)GC_MAX_MINOR_WORDS},
      {"--max-heap-words", "N", &opt.max_heap_words, option_parse_u64, "a number of words in 1..18014398509481984",
       1, (double)GC_MAX_HEAP_WORDS},
      {"--gc-stress", NULL, &opt.gc_stress, NULL, NULL, 0, 0},
      {"--gc-verify", NULL, &opt.gc_verify, NULL, NULL, 0, 0},
      {"--help", NULL, &help, NULL, NULL, 0, 0},
      {"--version", NULL, &version, NULL, NULL, 0, 0},
  };
  enum { N_OPTIONS = sizeof options / sizeof options[0] };
  bool seen[N_OPTIONS] = {false};
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    }
    char err[1024];
    if (!option_take(options, N_OPTIONS, seen, argc, argv, &i, err, sizeof err)) return refuse("%s", err);
    if (help) {
      usage(stdout);
      return VM_EXIT_OK;
    }
    if (version) {
      printf("vm %s (Minnow; writes memtrace CTF format versions %d and %d)\n", MINNOW_VERSION,
             TRACE_VERSION_DEFAULT, TRACE_VERSION_MAX);
      return VM_EXIT_OK;
    }
  }
  if (i >= argc) return refuse("no script given");
  bool trace_option = false;  // an option that modifies the trace: it needs one
  for (size_t k = 0; k < N_OPTIONS; k++) trace_option |= seen[k] && strncmp(options[k].name, "--memtrace-", 11) == 0;
  if (trace_option && !opt.memtrace_path)
    return refuse("--memtrace-rate, --memtrace-format, --memtrace-no-end-state, --memtrace-snapshot-*"
                  " and --memtrace-pprof-dir go with --memtrace FILE (or MEMTRACE=FILE)");
  if (opt.dump_bytecode && (opt.memtrace_path || opt.memprof_count_rate > 0))
    return refuse("--dump-bytecode runs nothing: no trace (--memtrace, MEMTRACE) nor --memprof-count");
  if (opt.memtrace_pprof_dir) {
    struct stat st;
    const char *dir = opt.memtrace_pprof_dir;
    bool found = stat(dir, &st) == 0;
    if (!found || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0)
      return refuse("--memtrace-pprof-dir %s: %s", dir,
                    !found ? strerror(errno) : !S_ISDIR(st.st_mode) ? "not a directory" : strerror(errno));
  }
  if (opt.stack_words < 1024) opt.stack_words = 1024;
  Vm *vm = vm_new(&opt);
  if (!vm) return VM_EXIT_ERROR;
  vm->argc = argc - i;
  vm->argv = argv + i;
  vm_catch_signals(vm);
  // SIGUSR1 asks for a snapshot from the start (one asked before the trace
  // starts is dropped), rather than killing a traced run that is starting.
  if (opt.memtrace_path) vm_catch_snapshot_signals(vm, 0);
  vm_exit(vm, vm_run_main(vm, argv[i]));
}
