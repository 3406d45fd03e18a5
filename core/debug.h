// debug.h - ASSERT: the invariants the design comments state, checked in the
// debug build (make vm-debug, -DMINNOW_DEBUG=1). In the other builds a check
// compiles to nothing that runs (its condition is still type-checked, so it
// must have no side effect).
#ifndef MINNOW_DEBUG_H
#define MINNOW_DEBUG_H

#include <stdbool.h>

#ifndef MINNOW_DEBUG
#define MINNOW_DEBUG 0
#endif
static const bool DEBUG_CHECKS = MINNOW_DEBUG;

// Prints "minnow: internal error: invariant broken at FILE:LINE: COND (WHAT)"
// on stderr and aborts (core/fail.c).
_Noreturn void debug_fail(const char *file, int line, const char *cond, const char *what);

#define ASSERT(cond, what)                                                      \
  do {                                                                          \
    if (DEBUG_CHECKS && !(cond)) debug_fail(__FILE__, __LINE__, #cond, what);   \
  } while (0)

#endif
