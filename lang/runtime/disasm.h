// disasm.h - the listing of ./vm --dump-bytecode: every function of the code
// image (core/image.h), instruction by instruction, with each safe point's
// frame descriptor (live registers, debug entries).
#ifndef MINNOW_DISASM_H
#define MINNOW_DISASM_H

#include <stdio.h>

typedef struct Vm Vm;

// Prints every function's code and descriptors.
void disasm_program(Vm *vm, FILE *out);

#endif
