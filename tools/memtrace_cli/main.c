// main.c - `memtrace SUBCOMMAND ...`: the trace tools' entry point; each
// subcommand lives in its own file (commands.h says how to add one).
#include <stdio.h>
#include <string.h>

#include "../../base/suggest.h"
#include "../../base/version.h"
#include "../../trace/format.h"
#include "base/xalloc.h"
#include "cli/tool.h"
#include "cli/outfile.h"
#include "commands/commands.h"

typedef struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} Command;

static const Command commands[] = {
    {"dump", cmd_dump, "every event, one per line, in the layout of memtrace's dump_trace"},
    {"info", cmd_info, "what the trace holds: header, event counts, duration, bytes per sample, snapshots"},
    {"top", cmd_top, "allocation sites ranked by bytes allocated, live (--live [--at T]) or promoted"},
    {"lifetimes", cmd_lifetimes, "per site: share of blocks promoted, lifetime quantiles (time, allocation, ~GCs)"},
    {"leaks", cmd_leaks, "the leak verdict from the snapshots: what keeps growing, its path and sites"},
    {"paths", cmd_paths, "a snapshot (the end state by default): each block alive, its path from a root"},
    {"diff", cmd_diff, "per site (or holder), the change from trace A to trace B, with its significance"},
    {"timeline", cmd_timeline, "estimated live heap over time, top sites stacked: CSV, or a chart by gnuplot"},
    {"flamegraph", cmd_flamegraph, "folded stacks of bytes allocated or live; -o X.svg: an SVG flame graph"},
    {"pprof", cmd_pprof, "the trace as a gzipped pprof profile (go tool pprof, Pyroscope, Parca)"},
    {"merge", cmd_merge, "several traces, each unbiased at its own rate, as one pprof profile"},
    {"report", cmd_report, "one self-contained HTML page: the leak verdict first, then summary, sites, charts"},
};


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

// A refusal of the command line: "memtrace: WHAT", the nearest command to
// `typed` when one is close, then the usage's first line; returns 2.
static int refuse(const char *prefix, const char *what, const char *typed) {
  fprintf(stderr, "%s: %s", prefix, what);
  if (typed) {
    Suggestion s;
    suggestion_init(&s, typed);
    for (size_t i = 0; i < n_commands; i++) suggestion_consider(&s, commands[i].name);
    suggestion_consider(&s, "help");
    suggestion_consider(&s, "--help");
    suggestion_consider(&s, "--version");
    if (suggestion_best(&s)) fprintf(stderr, " (did you mean %s?)", suggestion_best(&s));
  }
  tool_usage_hint(stderr, "usage: memtrace COMMAND [OPTIONS] FILE...", NULL);
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) return refuse("memtrace", "no command given", NULL);
  const char *word = argv[1];
  if (strcmp(word, "--version") == 0) {
    printf("memtrace %s (Minnow's trace tool; memtrace CTF format versions %d to %d)\n", MINNOW_VERSION,
           TRACE_VERSION_MIN, TRACE_VERSION_MAX);
    return 0;
  }
  if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0 || (strcmp(word, "help") == 0 && argc == 2)) {
    usage(stdout);
    return 0;
  }
  if (strcmp(word, "help") == 0) {
    const Command *c = find(argv[2]);
    if (argc > 3) return refuse("memtrace help", "one command expected", NULL);
    if (!c) {
      char what[300];
      snprintf(what, sizeof what, "unknown command '%s'", argv[2]);
      return refuse("memtrace help", what, argv[2]);
    }
    char *help_argv[] = {argv[2], "--help", NULL};
    return c->run(2, help_argv);
  }
  const Command *c = find(word);
  if (!c) {
    char what[300];
    snprintf(what, sizeof what, "unknown command '%s'", word);
    return refuse("memtrace", what, word);
  }
  xalloc_name(c->name);
  return outfile_finish(c->run(argc - 1, argv + 1));
}
