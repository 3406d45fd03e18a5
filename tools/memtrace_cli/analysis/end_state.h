// end_state.h - the end state of a trace as the tools see it: the file
// "T.ctf.retain" beside the trace T.ctf (trace/retain.h; docs/trace-format.md
// section 12), found, read, and checked against the trace it claims.
//
// Contract
//   * end_state_watch sets a profile's options so that profile_finish hands
//     over the sampled blocks without a collect event (the survivors);
//     end_state_load then decides, once the trace is read, one of:
//       PRESENT  the run ended with a final collection: every survivor was
//                reachable at the end; `paths` says whether each has its
//                path from a root (retain_find).
//       ABSENT   nothing tells kept blocks from garbage not yet collected:
//                `why` says why (no file, a trace from stdin, no final
//                collection and the file's reason, a truncated trace) and
//                `fix` what would give an end state.
//       DAMAGED  the file is unreadable or is not this trace's (another pid
//                or start time, another count of allocations, a path of a
//                block the trace collects): `why` names the file (and the
//                byte offset for bytes it cannot read). Commands exit 1.
//   * A survivor list is sorted by allocation id; ids are distinct.
//   * Nothing here aborts on bad input; out of memory is xalloc_fail.
#ifndef MINNOW_MEMTRACE_END_STATE_H
#define MINNOW_MEMTRACE_END_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "../../../trace/retain.h"
#include "profile.h"

typedef enum EndStateStatus { END_STATE_PRESENT, END_STATE_ABSENT, END_STATE_DAMAGED } EndStateStatus;

enum { END_STATE_TEXT = 1024, END_STATE_FILE = 512 };

typedef struct EndState {
  EndStateStatus status;
  bool paths;                    // PRESENT and the file holds the survivors' paths
  char file[END_STATE_FILE];      // the file looked for ("" for a trace from stdin without --retain)
  char why[END_STATE_TEXT];      // ABSENT, DAMAGED: what is missing or wrong
  char fix[END_STATE_TEXT];      // ABSENT: what would give an end state
  bool loaded;                   // `retain` holds the file (PRESENT, or ABSENT for its reason)
  RetainFile retain;
  ProfileSurvivor *survivors;    // sorted by id
  uint64_t n_survivors, cap_survivors;
} EndState;

// Zeroes *es and asks `opts` for the survivors (sets on_survivor).
void end_state_watch(EndState *es, ProfileOptions *opts);

// After profile_finish. `trace` is the trace's path ("-": stdin), `retain`
// the file given by --retain or NULL (then trace + ".retain"), `partial`
// whether the trace stopped at damage. Sets es->status (and the texts).
void end_state_load(EndState *es, const char *trace, const char *retain, const Profile *p, bool partial);

// The checks that need no survivors (info: reading the trace alone): finds
// and reads the file and compares its header with the trace's info and
// allocation count. True when PRESENT so far (end_state_load also checks
// the survivors against it). *es must be zeroed (or end_state_watch'ed).
bool end_state_open(EndState *es, const char *trace, const char *retain, const TraceReaderInfo *info,
                    uint64_t allocs, bool partial);

void end_state_free(EndState *es);

// The survivor of allocation `id`, or NULL.
const ProfileSurvivor *end_state_survivor(const EndState *es, uint64_t id);

// "present" / "absent" / "damaged".
const char *end_state_status_name(EndStateStatus s);

#endif
