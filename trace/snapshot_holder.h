// snapshot_holder.h - a snapshot's path as people read it, and its holder:
// what the trace tools print and group by, and what the VM labels its
// pprof profiles with (docs/retention.md, "Reading a path"). Like the rest
// of trace/, knows nothing of the VM.
//
// Text (retain_path_text): the root, then " -> " and each hop:
//   roots  "global log", "local rows of serve (request_log.mn:13)", "local #3
//          of f (x.mn:2)" (no name kept: the slot), "C root #3", "the exception
//          being raised", "Memprof callback state"
//   hops   "field items", "tuple .1", "array [4]", "list cell x18", "list
//          element", "capture samples" ("capture #0"), "Hashtbl value",
//          "Hashtbl key", "Hashtbl entry", "Hashtbl storage", "Buffer storage",
//          "field #2", "(37 hops elided)"; a hop repeated n > 1 times " xn".
// Names are written as the file has them, control characters as '?' (a
// name never moves a terminal's cursor or breaks a line).
//
// Erased (erase = true: how a holder reads): an array index "[*]", a run's
// length "xn" (of list cells and of any other hop repeated), the hops an
// elision left out "(hops elided)", any Hashtbl hop "Hashtbl" (a table's
// keys, values and cells together), a frame root without its line, a C root
// without its index: every block kept by one structure reads the same,
// whatever its depth in it.
//
// The holder of a path is its root and hops up to and including its first
// container hop (a run of list cells, an array element, a Hashtbl value,
// key, entry or storage), erased; a path without one is cut before its last
// hop. Below the cut, the block's depth: 0 the container's own cells (a
// list cell run, a Hashtbl entry or storage), 1 its elements (an array
// element, a Hashtbl key or value, a list cell's element), each further hop
// run one more (the data the elements hold).
#ifndef MINNOW_TRACE_SNAPSHOT_HOLDER_H
#define MINNOW_TRACE_SNAPSHOT_HOLDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "snapshot_file.h"

void retain_root_text(FILE *f, const RetainRoot *r, bool erase);
void retain_hop_text(FILE *f, const RetainHop *h, bool erase);
// The root and the first `hops` hops of a path (at most path->hop_count).
void retain_path_text(FILE *f, const RetainPath *path, uint32_t hops, bool erase);

// The number of hops that make the path's holder; *depth gets the block's
// depth below it.
uint32_t retain_holder_cut(const RetainPath *path, uint32_t *depth);
// The holder's text: retain_path_text(f, path, cut, true).
void retain_holder_text(FILE *f, const RetainPath *path, uint32_t cut);

#endif
