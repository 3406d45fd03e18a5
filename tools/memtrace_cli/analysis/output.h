// output.h - how the analysing commands print: sizes, durations, rates,
// locations and callstacks as text, and a small JSON writer (commas and
// nesting kept for the caller; strings escaped as RFC 8259 requires; numbers
// printed so that they read back as the same double; non-finite as null).
// Every function writes to the FILE given; nothing is buffered here.
#ifndef MINNOW_MEMTRACE_OUTPUT_H
#define MINNOW_MEMTRACE_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

enum { OUT_TEXT_MAX = 32 };

// "0 B", "912 B", "1.21 KiB", "45.7 MiB", "3.02 GiB" (binary units, three
// significant digits); negative sizes with a minus sign.
const char *out_bytes(char buf[OUT_TEXT_MAX], double bytes);

// "0 us", "850 us", "12.3 ms", "1.25 s", "3.5 min".
const char *out_duration(char buf[OUT_TEXT_MAX], double us);

// A site as one line: "function file:line:start-end", or "$code" for a
// code without location (OCaml's 63-bit int, as memtrace prints it).
void out_site(FILE *f, const ProfileSite *site);

// The text of a group's key: its site, "function (file)", "file", or the
// stack's site (the callers are printed by out_callers).
void out_group_key(FILE *f, const Profile *p, ProfileBy by, ProfileStackId first);

// How stacks print in this run (out_callers, json_stack, and what commands
// pass to calltree_build): recursion folded (collapse.h; the default) or,
// after out_set_whole_stacks(true) (--whole-stacks), every frame.
void out_set_whole_stacks(bool whole);
uint32_t out_fold_period(void);   // 0 when whole, else COLLAPSE_MAX_PERIOD

// The callers of a stack, innermost first, one per line after `indent`
// ("called from function file:line:start-end"; each inlined location a
// line), at most max_frames lines then "... N more frames". Folded
// recursion is a line "called from LOCATION ×N" (a cycle or an inlined
// frame: "called from (f LOCATION → g LOCATION) ×N", outermost first).
void out_callers(FILE *f, const Profile *p, ProfileStackId s, const char *indent, uint32_t max_frames);

// The same for many stacks of one profile (the rows of top, diff): each
// node's callers folded once, kept for the next stack that shares them, so
// that rows under one deep path cost their new frames, not the path each
// (the same lines as out_callers). NULL from out_folds_new: out of memory
// is xalloc_fail.
typedef struct OutFolds OutFolds;
OutFolds *out_folds_new(const Profile *p);
void out_folds_free(OutFolds *o);
void out_callers_folded(FILE *f, OutFolds *o, ProfileStackId s, const char *indent, uint32_t max_frames);

// "by site" / "function" / "file" / "stack": the name of a grouping.
const char *out_by_name(ProfileBy by);

// ---------------------------------------------------------------- JSON

typedef struct Json {
  FILE *f;
  uint32_t depth;
  bool first[64];   // no member written yet at this depth
} Json;

void json_init(Json *j, FILE *f);
// key is NULL inside arrays.
void json_object(Json *j, const char *key);
void json_array(Json *j, const char *key);
void json_end_object(Json *j);
void json_end_array(Json *j);
void json_string(Json *j, const char *key, const char *value);
void json_number(Json *j, const char *key, double value);
void json_uint(Json *j, const char *key, uint64_t value);
void json_bool(Json *j, const char *key, bool value);
void json_null(Json *j, const char *key);
// Ends the document with a newline.
void json_finish(Json *j);

// {"lo": .., "hi": ..} under `key`.
void json_interval(Json *j, const char *key, double lo, double hi);

// The members describing a site: "site" (its one-line text), "function",
// "file", "line", "start_col", "end_col" (the location fields null for a
// code without location).
void json_site_fields(Json *j, const ProfileSite *site);

// "key": the group's key object (json_site_fields for by site; "function"
// and "file" for by function; "file"; for by stack the site fields and
// "stack": every frame innermost first, each {"function", "file", "line",
// "start_col", "end_col"} or {"code": N} without location).
void json_group_key(Json *j, const Profile *p, ProfileBy by, ProfileStackId first);

// The frames of a stack under `key`, innermost first, each {"function",
// "file", "line", "start_col", "end_col"} or {"code": N} without location;
// folded recursion (out_fold_period) as {"repeat": N, "frames": [the
// unit's frames, innermost first]}. A stack past the run's stack budget
// (stack_budget.h; an entry a frame or a folded run) is the one element
// {"frames_left_out": N}.
void json_stack(Json *j, const char *key, const Profile *p, ProfileStackId s);

// "trace": {"file", "executable", "format_version", "sample_rate",
// "word_bytes", "duration_s", "events", "samples"} of a profile.
void json_trace(Json *j, const char *path, const Profile *p);
// The same under another key.
void json_trace_as(Json *j, const char *key, const char *path, const Profile *p);

#endif
