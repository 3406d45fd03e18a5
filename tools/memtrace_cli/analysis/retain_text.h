// retain_text.h - how the tools show an end state's paths and the
// callstacks of the sites they keep: text and JSON of a root, a hop, a path
// and a holder (a path's prefix with counts and indices erased), and
// callstacks with repeated frames collapsed.
//
// Text forms (tools/memtrace_cli/README.md, "Reading a path"):
//   root   "global log", "local rows of serve (request_log.mn:13, slot 2)",
//          "C root #3", "the exception being raised", "Memprof callback state"
//   hops   "field items", "tuple .1", "array [4]", "list cell x18", "list element",
//          "capture samples", "Hashtbl value", "Hashtbl key", "Hashtbl entry",
//          "Buffer storage", "field #2", "(37 hops elided)"
//   path   root, then " -> " and each hop.
// In a holder (erase = true) an array index is "[*]", a run of list cells
// "list cell xn", a Hashtbl hop "Hashtbl" (keys, values and entries of one
// table together), a frame's line is left out: every block of one container
// reads the same.
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

#include "../../../trace/retain.h"
#include "output.h"
#include "profile.h"

void retain_text_root(FILE *f, const RetainRoot *r, bool erase);
void retain_text_hop(FILE *f, const RetainHop *h, bool erase);
// The root and the first `hops` hops of a path (hops <= path->hop_count).
void retain_text_path(FILE *f, const RetainPath *path, uint32_t hops, bool erase);

// The same as a string the caller frees (out of memory: xalloc_fail).
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
