// load.h - what the analysing commands (top, lifetimes, leaks, diff and
// the later ones) share: parsing their common options, reading a trace into
// a profile (progress on stderr, stdin spooled to a temporary file when the
// command needs the trace's size or two passes), and partial traces.
//
// A damaged or truncated trace is read up to the damage (reader.h, contract
// 4): the profile holds the events before it, `partial` is set, and the
// command prints its answer marked as partial, then the reader's message on
// stderr, and exits with status 1.
#ifndef MINNOW_MEMTRACE_LOAD_H
#define MINNOW_MEMTRACE_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "../analysis/output.h"
#include "../analysis/profile.h"
#include "options.h"
#include "tool.h"

// A moment of the trace as --at gives it: "1.5s", "200ms", "350us", "2min",
// a plain number of seconds ("1.5"), or "P%" of the trace's duration (the
// time of its last event; that needs a first pass over the trace).
typedef struct AtTime {
  bool set, percent;
  double value;   // µs, or a percentage
} AtTime;

// Option parsers (options.h) for the analysing commands: --at TIME into an
// AtTime (refused: negative, empty, a bad suffix, above 100%), and --by KEY
// into a ProfileBy from o->min to o->max (site, function, file, stack).
ToolOptionParse load_parse_at, load_parse_by;

#define LOAD_OPTION_AT(target) \
  {"--at", "TIME", (target), load_parse_at, "a time (1.5s, 250ms, 800us, 2min, seconds, or P%)", 0, 0}
#define LOAD_OPTION_BY(target) \
  {"--by", "KEY", (target), load_parse_by, "site, function, file or stack", PROFILE_BY_SITE, PROFILE_BY_STACK}
#define LOAD_OPTION_BY_NO_STACK(target) \
  {"--by", "KEY", (target), load_parse_by, "site, function or file", PROFILE_BY_SITE, PROFILE_BY_FILE}

// The options of the commands that print rows of groups of one trace
// (lifetimes, leaks): --by KEY (site, function or file), -n N, --json, -o
// OUT (stdout is sent there), and with_all (leaks, which shows callstacks)
// --all and --whole-stacks (out_set_whole_stacks).
typedef struct RowOptions {
  ProfileBy by;
  uint32_t rows;
  bool json, all;
  const char *path;
} RowOptions;

// Sets *o to the defaults (by site, `rows` rows), then parses argv. Returns
// TOOL_CONTINUE or the exit status (options.h).
int load_parse_rows(const ToolUsage *usage, int argc, char **argv, uint32_t rows, bool with_all, RowOptions *o);

typedef struct Loaded {
  const char *path;
  TraceReader *reader;
  Profile *profile;
  uint64_t file_bytes;   // 0 when unknown
  bool partial;          // the read stopped at damage: see the header
  char error[TRACE_READER_ERROR_MAX];
} Loaded;

// Opens `path` ("-": stdin), reads the whole trace into a profile built
// with `opts` and finishes it. A first pass over the trace (the reader
// alone: a tenth of the second's time) gets what the options need: the
// allocation clock's total for opts->windows (which stay off for a trace
// without samples), the time of the last event for --at P%.
// Returns 0 (loaded, maybe partial) or 1 (nothing to show: the trace could
// not be opened, or out of memory; the message is printed).
int load_trace(const ToolUsage *usage, const char *path, ProfileOptions *opts, const AtTime *at, Loaded *out);

void load_close(Loaded *l);

// load_trace, then the profile's rows grouped `by` into *groups (out of
// memory: xalloc_fail). Returns 0, or 1 when nothing could be loaded.
int load_grouped(const ToolUsage *usage, const char *path, ProfileOptions *opts, ProfileBy by, Loaded *out,
                 ProfileGroups **groups);

// After the answer: load_status, then frees the groups and closes `l`.
// Returns the exit status.
int load_finish_grouped(const ToolUsage *usage, Loaded *l, ProfileGroups *groups);

// Which run wrote a trace: its writer's pid and host, and its start time. Two
// traces with one identity are one recording (a file named twice, a copy, a
// prefix of it): summing or comparing them is probably not what was meant.
typedef struct LoadIdentity {
  uint64_t pid, start_time_us;
  char host[128];
} LoadIdentity;
LoadIdentity load_identity(const Loaded *l);
bool load_same_recording(const LoadIdentity *a, const LoadIdentity *b);
// "memtrace CMD: B is the same recording as A (pid P on HOST, started at
// T us): CONSEQUENCE" on stderr.
void load_warn_same_recording(const ToolUsage *usage, const char *a, const char *b, const LoadIdentity *id,
                              const char *consequence);

// What the limits left out of a loaded profile, said on stderr (nothing
// when nothing was): the backtraces the reader cut (deeper than
// TRACE_READER_MAX_FRAMES) and the allocations past PROFILE_MAX_NODES
// (profile.h). load_trace calls it; a command reading a profile itself does.
void load_note_cuts(const ToolUsage *usage, const char *path, const Profile *p);

// After the answer: prints the reader's message on stderr and returns 1 if
// the trace was partial, else returns 0.
int load_status(const ToolUsage *usage, const Loaded *l);

// Starts a command's JSON document on f: its object and the members every
// command has: "command", "trace" (json_trace), "partial", "error".
void load_json_begin(Json *j, FILE *f, const char *command, const Loaded *l);

// The line that marks a partial answer in text output ("" when complete).
void load_print_partial(FILE *f, const Loaded *l);

#endif
