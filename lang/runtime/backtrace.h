// backtrace.h - the backtrace printed for an uncaught runtime error: the
// positions of the walker's frames (core/frames.h) in the program's source.
#ifndef MINNOW_BACKTRACE_H
#define MINNOW_BACKTRACE_H

#include <stdint.h>
#include <stdio.h>

#include "../../core/frames.h"

// Runtime position of the cursor's frame: the debug entry of its call or
// safe point, or (for a top frame at an ordinary instruction) the line
// table of its function.
void backtrace_position(const FrameCursor *cursor, const char **function,
                        const char **file, uint32_t *line, uint32_t *col);

// The position an error raised at the cursor's frame is reported at: that
// frame's, or, when it is in the standard library (stdlib/NAME.mn), the
// innermost caller's outside it (the line of the user's program that called
// the library; the backtrace still lists the library's frames). The
// library's position when no frame is outside it.
void backtrace_blame(const FrameCursor *cursor, const char **file, uint32_t *line, uint32_t *col);

// Whether `file` is a module of the standard library ("stdlib/NAME.mn", NAME
// one of the embedded modules).
bool backtrace_stdlib_file(const char *file);

// Prints the backtrace from the cursor outwards, one "  at f (file:l:c)" a
// line: the 20 innermost frames and the 10 outermost, and how many were left
// out between them (a stack overflow has a million frames).
void backtrace_print(Vm *vm, FrameCursor *cursor, FILE *out);

#endif
