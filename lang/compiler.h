// compiler.h - compiles parsed modules to bytecode and frame descriptors.
// Registers, liveness and combined allocations are explained in the numbered
// comment at the top of compiler.c.
#ifndef MINNOW_COMPILER_H
#define MINNOW_COMPILER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ast.h"
#include "../core/value.h"

typedef struct Vm Vm;
typedef struct Proto Proto;

// pc offset -> source position, one entry each time the position changes.
typedef struct LinePos {
  uint32_t offset;
  uint32_t line;
  uint32_t col;      // 0-based
} LinePos;

struct Proto {
  uint32_t id;              // index in vm->protos (closure field 0)
  const char *name;         // "List.map", "<top>"
  const char *file;
  uint32_t nparams;
  uint32_t fsize;           // slots: closure, params, locals, temporaries
  uint32_t *code;
  uint32_t code_len, code_cap;  // instructions: code[0 .. code_len)
  uint32_t stub_words;      // then the memprof stubs of its calls (frames.h part 5)
  LinePos *lines;
  uint32_t line_count, line_cap;
  int prim;                 // >= 0: wrapper of primitive `prim` (external)
};

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

// Source position of the instruction at `pc` in `proto` (line table).
void compiler_position(const Proto *proto, const uint32_t *pc, uint32_t *line, uint32_t *col);

// Prints every function's code and descriptors (./vm --dump-bytecode).
void compiler_dump(Vm *vm, FILE *out);

void compiler_free(Vm *vm);

#endif
