// path_names.h - names for a retaining path, as the program sees it: the
// root (a global by name, a frame's local by function, file, line and local)
// and each hop from the parent block's kind (a record's field by its shape,
// a closure's capture by the compiler's capture names, list cells, a
// Hashtbl's inside as one hop). The GC finds paths (gc.h, "Retaining
// paths"); this module names them for the end-state file (trace/retain.h).
// It reads blocks and the code image, allocates nothing, runs no Minnow code.
#ifndef MINNOW_PATH_NAMES_H
#define MINNOW_PATH_NAMES_H

#include <stdint.h>

#include "../../gc/gc.h"
#include "../../trace/snapshot_file.h"

// Room path_names_path may fill: every run, the elided marker and a
// Hashtbl value's rest.
enum { PATH_NAMES_MAX_HOPS = GC_RETAIN_MAX_RUNS + 2 };

// The root `r` as the end-state file names it (strings borrowed from the VM).
RetainRoot path_names_root(const Vm *vm, const GcRootInfo *r);
// Names p's runs into hops[PATH_NAMES_MAX_HOPS]; returns how many.
uint32_t path_names_path(const Vm *vm, const GcRetainPath *p, RetainHop *hops);

#endif
