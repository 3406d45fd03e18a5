// compiler.h - compiles parsed modules to bytecode and frame descriptors,
// written into the code image (core/image.h: functions, line tables,
// constants, globals) and the frame table (core/frames.h). Registers,
// liveness and combined allocations are explained in the numbered comment at
// the top of compiler.c.
#ifndef MINNOW_COMPILER_H
#define MINNOW_COMPILER_H

#include <stddef.h>

#include "../../core/image.h"

typedef struct Vm Vm;

// Compiles the program whose main script is `path` together with every module
// it uses (stdlib modules from the embedded sources, `import`ed files beside
// the importer). On success returns the proto of a function that runs every
// module's top-level code in dependency order, then the main script's, and
// records it as the VM's entry function (vm->entry_proto, entry_code). On
// failure prints the errors (syntax or compile) and returns NULL.
Proto *compiler_compile_program(Vm *vm, const char *path);
// The same for a main script already in memory: text[0..len), malloc'ed,
// owned by the compiler from now on; `path` names it in messages and is
// where its imports are looked for.
Proto *compiler_compile_text(Vm *vm, const char *path, char *text, size_t len);

// Frees the compiler's module table (sources, ASTs, names); the code image
// it wrote is image_free's.
void compiler_free(Vm *vm);

#endif
