// main.c - `memtrace SUBCOMMAND ...`: the trace tools' entry point; each
// subcommand lives in its own file (commands.h says how to add one).
#include <stdio.h>
#include <string.h>

#include "../../trace/format.h"
#include "base/xalloc.h"
#include "cli/outfile.h"
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
    {"paths", cmd_paths, "the end state: each block alive at the end and its path from a root, or by holder"},
    {"diff", cmd_diff, "per-site change in bytes from trace A to trace B, with its significance"},
    {"timeline", cmd_timeline, "estimated live heap over time, top sites stacked: CSV, or a chart by gnuplot"},
    {"flamegraph", cmd_flamegraph, "folded stacks of bytes allocated or live; -o X.svg: an SVG flame graph"},
    {"pprof", cmd_pprof, "the trace as a gzipped pprof profile (go tool pprof, Pyroscope, Parca)"},
    {"merge", cmd_merge, "several traces, each unbiased at its own rate, as one pprof profile"},
    {"report", cmd_report, "one self-contained HTML page: summary, top sites, live heap, flame graph, leaks"},
};

// The tool's own version, apart from the trace format's (format.h).
#define MEMTRACE_TOOL_VERSION "1.0"

static const size_t n_commands = sizeof commands / sizeof commands[0];

static void usage(FILE *out) {
  fputs("usage: memtrace COMMAND [OPTIONS] FILE...\n"
        "Reads memtrace traces (CTF, format versions 1 to 3), as ./vm --memtrace or\n"
        "OCaml's memtrace write them.\n\ncommands:\n", out);
  for (size_t i = 0; i < n_commands; i++) fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fputs("\n`memtrace help COMMAND` or `memtrace COMMAND --help` describes each.\n"
        "`memtrace --version` prints the version.\n", out);
}

static const Command *find(const char *name) {
  for (size_t i = 0; i < n_commands; i++)
    if (strcmp(name, commands[i].name) == 0) return &commands[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("memtrace: no command given\n", stderr);
    usage(stderr);
    return 2;
  }
  const char *word = argv[1];
  if (strcmp(word, "--version") == 0) {
    printf("memtrace %s (Minnow's trace tool; memtrace CTF format versions %d to %d)\n", MEMTRACE_TOOL_VERSION,
           TRACE_VERSION_MIN, TRACE_VERSION_MAX);
    return 0;
  }
  if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0 || (strcmp(word, "help") == 0 && argc == 2)) {
    usage(stdout);
    return 0;
  }
  if (strcmp(word, "help") == 0) {
    const Command *c = find(argv[2]);
    if (!c || argc > 3) {
      fprintf(stderr, argc > 3 ? "memtrace help: one command expected\n" : "memtrace help: unknown command '%s'\n",
              argv[2]);
      usage(stderr);
      return 2;
    }
    char *help_argv[] = {argv[2], "--help", NULL};
    return c->run(2, help_argv);
  }
  const Command *c = find(word);
  if (!c) {
    fprintf(stderr, "memtrace: unknown command '%s'\n", word);
    usage(stderr);
    return 2;
  }
  xalloc_name(c->name);
  return outfile_finish(c->run(argc - 1, argv + 1));
}
