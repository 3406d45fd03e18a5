// commands.h - the subcommands of `memtrace` (tools/memtrace_cli/README.md).
// Adding one: write commands/NAME.c with `int cmd_NAME(int argc, char
// **argv)` (argv[0] is the subcommand's name; options through the table of
// cli/options.h; returns the exit status: 0 done, 1 bad or unreadable trace
// or output, 2 bad usage) and add one line here and one line to the table
// in main.c.
#ifndef MINNOW_MEMTRACE_COMMANDS_H
#define MINNOW_MEMTRACE_COMMANDS_H

int cmd_dump(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_lifetimes(int argc, char **argv);
int cmd_leaks(int argc, char **argv);
int cmd_diff(int argc, char **argv);
// diff --by holder (diff_holder.c)
int cmd_diff_holder(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_paths(int argc, char **argv);

#endif
