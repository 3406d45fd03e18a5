// retain_text.h - how the tools show a snapshot's paths and the callstacks
// of the sites they keep: paths as a string and as JSON (their text and
// their holders: trace/snapshot_holder.h), and callstacks with repeated
// frames collapsed.
//
// Folded callstacks: the callers go through collapse.h, the one recursion
// folding of every stack the tools show, with out_fold_period() (so
// --whole-stacks keeps them whole): a frame repeated in a row, or a cycle of
// up to COLLAPSE_MAX_PERIOD frames repeated in a row, is one line with the
// number of repetitions ("called from List.map (list.mn:12:3-20) x16", a
// cycle "called from g ... <- f ... x3", innermost first); frames are equal
// when their location (function, file, line, columns) and "inlined" are.
// Lines beyond max_lines are counted in "... N more frames".
#ifndef MINNOW_MEMTRACE_RETAIN_TEXT_H
#define MINNOW_MEMTRACE_RETAIN_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "../../../trace/snapshot_file.h"
#include "../../../trace/snapshot_holder.h"
#include "output.h"
#include "profile.h"

// retain_path_text (trace/snapshot_holder.h) as a string the caller frees
// (out of memory: xalloc_fail).
char *retain_path_string(const RetainPath *path, uint32_t hops, bool erase);

// JSON: {"root": {...}, "hops": [{kind, count, index?, name?}, ...]} as
// member `key` (the first `hops` hops; erased counts are omitted).
void retain_json_path(Json *j, const char *key, const RetainPath *path, uint32_t hops, bool erase);

// The callers of stack s, innermost first, folded (header comment); as
// out_callers otherwise.
void retain_text_callers(FILE *f, const Profile *p, ProfileStackId s, const char *indent, uint32_t max_lines);
// The same as a JSON array of lines {"frames": [{"function", "file",
// "line"} or {"code"}, innermost first], "repeat"} (innermost first); past
// the run's stack budget (stack_budget.h; an entry a line) the one element
// {"frames_left_out": N lines}.
void retain_json_callers(Json *j, const char *key, const Profile *p, ProfileStackId s);

#endif
