// main.c - `memtrace SUBCOMMAND ...`: the trace tools' entry point; each
// subcommand lives in its own file (commands.h says how to add one).
#include <stdio.h>
#include <string.h>

#include "base/xalloc.h"
#include "commands/commands.h"

typedef struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} Command;

static const Command commands[] = {
    {"dump", cmd_dump, "every event, one per line, in the layout of memtrace's dump_trace"},
    {"info", cmd_info, "what the trace holds: its header, event counts, duration, bytes per sample"},
    {"top", cmd_top, "allocation sites ranked by bytes allocated, live (--live [--at T]) or promoted"},
    {"lifetimes", cmd_lifetimes, "per site: share of blocks promoted, lifetime quantiles (time, allocation, ~GCs)"},
    {"leaks", cmd_leaks, "sites whose live bytes keep growing over the run, with growth rate and callstack"},
    {"diff", cmd_diff, "per-site change in bytes from trace A to trace B, with its significance"},
    {"timeline", cmd_timeline, "estimated live heap over time, top sites stacked: CSV, or a chart by gnuplot"},
    {"flamegraph", cmd_flamegraph, "folded stacks of bytes allocated or live; -o X.svg: an SVG flame graph"},
    {"pprof", cmd_pprof, "the trace as a gzipped pprof profile (go tool pprof, Pyroscope, Parca)"},
    {"merge", cmd_merge, "several traces, each unbiased at its own rate, as one pprof profile"},
    {"report", cmd_report, "one self-contained HTML page: summary, top sites, live heap, flame graph, leaks"},
};

static void usage(FILE *out) {
  fputs("usage: memtrace COMMAND [OPTIONS] FILE...\n"
        "Reads memtrace traces (CTF, format versions 1 to 3), as ./vm --memtrace or\n"
        "OCaml's memtrace write them.\n\ncommands:\n", out);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fputs("\n`memtrace COMMAND --help` describes each.\n", out);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("memtrace: no command given\n", stderr);
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0) {
      xalloc_name(commands[i].name);
      return commands[i].run(argc - 1, argv + 1);
    }
  fprintf(stderr, "memtrace: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
