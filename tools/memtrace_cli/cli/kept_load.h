// kept_load.h - what the commands that read an end state share (leaks,
// paths, report, top --by holder; info for its JSON): the --retain option,
// loading a trace with its end state, and how the end state is announced
// (one text line, a JSON member, the exit status of a damaged one).
#ifndef MINNOW_MEMTRACE_KEPT_LOAD_H
#define MINNOW_MEMTRACE_KEPT_LOAD_H

#include <stdio.h>

#include "../analysis/end_state.h"
#include "../analysis/output.h"
#include "load.h"

// --retain FILE: the end state to read instead of TRACE.retain.
#define KEPT_OPTION_RETAIN(target) {"--retain", "FILE", (target), NULL, NULL, 0, 0}

// load_trace with the survivors watched, then end_state_load. Returns as
// load_trace (the end state's status is in *es whatever it is); on failure
// nothing is left to free. After the answer, kept_close.
int kept_load(const ToolUsage *usage, const char *path, const char *retain, ProfileOptions *opts, const AtTime *at,
              Loaded *l, EndState *es);

// "end state: FILE: final collection, N paths (...)" or why there is none.
void kept_print_end_state(FILE *f, const EndState *es);

// Member "end_state": {status, file, paths, why, fix, and the header's figures}.
void kept_json_end_state(Json *j, const EndState *es);
// The same as `info --json` writes it: "paths" only when the end state is
// present, after "final_collection": true, then the header's figures.
void kept_json_end_state_info(Json *j, const EndState *es);

// After the answer to what kept_load loaded: a damaged end state, then a
// damaged or truncated trace, said on stderr (load_status for the trace);
// both freed. Returns 1 if either was, else 0.
int kept_close(const ToolUsage *usage, Loaded *l, EndState *es);

#endif
