// ocaml_int.h - a frame code as memtrace prints it: the trace stores codes
// as unsigned 64-bit words, OCaml's tools print them as OCaml's 63-bit ints
// (the top bit dropped, bit 62 the sign). Every "$code" the tool prints goes
// through ocaml_int, so the two tools' texts agree.
#ifndef MINNOW_MEMTRACE_OCAML_INT_H
#define MINNOW_MEMTRACE_OCAML_INT_H

#include <stdint.h>

static inline int64_t ocaml_int(uint64_t code) { return (int64_t)(code << 1) >> 1; }

#endif
