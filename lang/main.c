// main.c - the command line: ./vm [options] script.mn [args...] (options,
// environment and exit statuses: usage() below, and README.md's "Command
// line"). The one reader of the environment: MEMTRACE, MEMTRACE_RATE and
// MINNOW_SEED are parsed and validated here, once, into VmOptions.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/checked.h"
#include "vm.h"
#include "../gc/gc.h"
#include "../memprof/memtrace.h"
#include "../memprof/pretenure.h"
#include "../trace/format.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: vm [options] script.mn [args...]\n"
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

// A sampling rate in (0, 1]; `what` names its source in the message.
// Decimal only ("0.5", "1e-3"): no space, sign, hex, inf or nan.
static bool parse_rate(const char *what, const char *arg, double *out) {
  char *end;
  bool decimal = arg && (arg[0] == '.' || (arg[0] >= '0' && arg[0] <= '9')) && !strpbrk(arg, "xXpP");
  double r = decimal ? strtod(arg, &end) : 0;
  if (!decimal || end == arg || *end || !(r > 0 && r <= 1)) {
    fprintf(stderr, "vm: %s expects a rate in (0, 1], got '%s'\n", what, arg ? arg : "");
    return false;
  }
  *out = r;
  return true;
}

// The value of `flag`: a decimal number in (low, high] ("2", "0.5", "1e2";
// no sign, hex, inf or nan).
static bool parse_number(const char *flag, const char *arg, double low, double high, const char *what, double *out) {
  char *end;
  bool decimal = arg && (arg[0] == '.' || (arg[0] >= '0' && arg[0] <= '9')) && !strpbrk(arg, "xXpP");
  double r = decimal ? strtod(arg, &end) : 0;
  if (!decimal || end == arg || *end || !(r > low && r <= high)) {
    fprintf(stderr, "vm: %s expects %s, got '%s'\n", flag, what, arg ? arg : "");
    return false;
  }
  *out = r;
  return true;
}

// The value of `flag`: a count in 1 .. max, digits only ("-1", "1e6" and
// "12abc" are refused, and so is anything above max, rather than wrapped).
static bool parse_count(const char *flag, const char *arg, uint64_t max, uint64_t *out) {
  if (checked_parse_count(arg, max, out)) return true;
  fprintf(stderr, "vm: %s expects a number of words in 1..%llu, got %s\n", flag, (unsigned long long)max,
          arg ? arg : "nothing");
  return false;
}

// MINNOW_SEED: a whole number, decimal or 0x hex (a typo would otherwise
// seed 0 in silence).
static bool parse_seed(const char *text, VmOptions *opt) {
  char *end;
  errno = 0;
  bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');  // "010" is ten, not octal
  unsigned long long seed = strtoull(text, &end, hex ? 16 : 10);
  if (!(*text && *end == 0 && errno == 0 && text[0] >= '0' && text[0] <= '9')) {
    fprintf(stderr, "vm: MINNOW_SEED expects a number (decimal, or 0x hex), got '%s'\n", text);
    return false;
  }
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
  if (env_rate && *env_rate && !parse_rate("MEMTRACE_RATE", env_rate, &opt.memtrace_rate)) return VM_EXIT_USAGE;
  const char *env_seed = getenv("MINNOW_SEED");
  if (env_seed && !parse_seed(env_seed, &opt)) return VM_EXIT_USAGE;
  int i = 1;
  const char *given[16];  // the options taken so far: one given twice is refused
  unsigned n_given = 0;
  bool trace_option = false;  // --memtrace-rate, -format, -no-end-state, -snapshot-*: they need a trace
  for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
    const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
    for (unsigned k = 0; k < n_given; k++)
      if (strcmp(given[k], a) == 0) {
        fprintf(stderr, "vm: %s given twice\n", a);
        return VM_EXIT_USAGE;
      }
    if (n_given < sizeof given / sizeof given[0]) given[n_given++] = a;
    trace_option |= strncmp(a, "--memtrace-", 11) == 0;
    if (strcmp(a, "--dump-bytecode") == 0) opt.dump_bytecode = true;
    else if (strcmp(a, "--gc-stress") == 0) opt.gc_stress = true;
    else if (strcmp(a, "--gc-verify") == 0) opt.gc_verify = true;
    else if (strcmp(a, "--memtrace-no-end-state") == 0) opt.memtrace_no_end_state = true;
    else if (strcmp(a, "--pretenure") == 0) opt.pretenure = true;
    else if (strcmp(a, "--pretenure-log") == 0) opt.pretenure_log = true;
    else if (strcmp(a, "--help") == 0) { usage(stdout); return 0; }
    else if ((strcmp(a, "--memtrace") == 0 || strcmp(a, "--memprof-count") == 0 || strcmp(a, "--stack-words") == 0 ||
              strcmp(a, "--minor-words") == 0 || strcmp(a, "--max-heap-words") == 0 ||
              strcmp(a, "--memtrace-rate") == 0 || strcmp(a, "--memtrace-format") == 0 ||
              strcmp(a, "--memtrace-snapshot-every") == 0 || strcmp(a, "--memtrace-snapshot-peak") == 0 ||
              strcmp(a, "--memtrace-pprof-dir") == 0 ||
              strcmp(a, "--pretenure-rate") == 0 || strcmp(a, "--pretenure-from") == 0) && !next) {
      fprintf(stderr, "vm: %s expects an argument\n", a);
      return 2;
    }
    else if (strcmp(a, "--memtrace") == 0 && next) { opt.memtrace_path = next; i++; }
    else if (strcmp(a, "--memtrace-rate") == 0) { if (!parse_rate(a, next, &opt.memtrace_rate)) return VM_EXIT_USAGE; i++; }
    else if (strcmp(a, "--memtrace-snapshot-every") == 0) {
      if (!parse_number(a, next, 0.001 - 1e-12, 86400 * 365, "seconds in [0.001, 31536000]", &opt.memtrace_snapshot_every))
        return VM_EXIT_USAGE;
      i++;
    }
    else if (strcmp(a, "--memtrace-snapshot-peak") == 0) {
      if (!parse_number(a, next, 1, 1e6, "a growth factor in (1, 1000000]", &opt.memtrace_snapshot_peak))
        return VM_EXIT_USAGE;
      i++;
    }
    else if (strcmp(a, "--memtrace-pprof-dir") == 0) {
      struct stat st;
      if (stat(next, &st) != 0 || !S_ISDIR(st.st_mode) || access(next, W_OK | X_OK) != 0) {
        fprintf(stderr, "vm: --memtrace-pprof-dir %s: %s\n", next,
                stat(next, &st) != 0 ? strerror(errno) : !S_ISDIR(st.st_mode) ? "not a directory" : strerror(errno));
        return VM_EXIT_USAGE;
      }
      opt.memtrace_pprof_dir = next;
      i++;
    }
    else if (strcmp(a, "--memtrace-format") == 0) {
      if (!next || (strcmp(next, "2") != 0 && strcmp(next, "3") != 0)) {
        fprintf(stderr, "vm: --memtrace-format expects 2 or 3\n");
        return VM_EXIT_USAGE;
      }
      opt.memtrace_format = next[0] - '0';
      i++;
    }
    else if (strcmp(a, "--pretenure-rate") == 0) {
      if (!parse_rate(a, next, &opt.pretenure_rate)) return VM_EXIT_USAGE;
      i++;
    }
    else if (strcmp(a, "--pretenure-from") == 0) { opt.pretenure_from = next; i++; }
    else if (strcmp(a, "--memprof-count") == 0) { if (!parse_rate(a, next, &opt.memprof_count_rate)) return VM_EXIT_USAGE; i++; }
    else if (strcmp(a, "--stack-words") == 0) { if (!parse_count(a, next, VM_MAX_STACK_WORDS, &opt.stack_words)) return 2; i++; }
    else if (strcmp(a, "--minor-words") == 0) { if (!parse_count(a, next, GC_MAX_MINOR_WORDS, &opt.minor_words)) return 2; i++; }
    else if (strcmp(a, "--max-heap-words") == 0) { if (!parse_count(a, next, GC_MAX_HEAP_WORDS, &opt.max_heap_words)) return 2; i++; }
    else {
      fprintf(stderr, "vm: unknown option %s\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  if (trace_option && !opt.memtrace_path) {
    fprintf(stderr, "vm: --memtrace-rate, --memtrace-format, --memtrace-no-end-state, --memtrace-snapshot-*"
                    " and --memtrace-pprof-dir go with --memtrace FILE"
                    " (or MEMTRACE=FILE)\n");
    return VM_EXIT_USAGE;
  }
  if (opt.dump_bytecode && (opt.memtrace_path || opt.memprof_count_rate > 0)) {
    fprintf(stderr, "vm: --dump-bytecode runs nothing: no trace (--memtrace, MEMTRACE) nor --memprof-count\n");
    return VM_EXIT_USAGE;
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
