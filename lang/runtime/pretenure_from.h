// pretenure_from.h - ./vm --pretenure-from T.ctf: pretenuring decided offline,
// from a previous run's trace (docs/design.md, "Pretenuring"). Each
// allocation site of the trace gets the online feedback's rule
// (memprof/pretenure_rule.h) over its sampled blocks' fates as the trace
// tells them: a block born in the minor heap is a trial, resolved by its
// promote event (promoted) or by its collect event without one (died young),
// in the order the trace resolves them. The sites that pass are matched by
// location (function, file, line, columns) to the allocation sites of the
// program about to run, which switch before it starts
// (pretenure_decide_offline).
#ifndef MINNOW_PRETENURE_FROM_H
#define MINNOW_PRETENURE_FROM_H

#include <stdbool.h>
#include <stddef.h>

#include "../../core/vm_state.h"

// Reads the trace at `path` and switches the sites it decides. False, with a
// message naming the file (and the byte, for a damaged trace) in err, when
// the trace cannot be read; a trace cut short (a run killed mid-write) is
// read to its last whole packet and used, with a warning in err and true.
bool pretenure_from_trace(Vm *vm, const char *path, char *err, size_t err_len);

#endif
