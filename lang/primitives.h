// primitives.h - the table of C primitives that `external` declarations bind.
// A primitive receives its arguments in place on the VM stack: the slots are
// GC roots, so after anything that allocates it must re-read args[i] rather
// than keep a copy in a C local. It returns its result; it raises with
// vm_raise / vm_raise_error.
#ifndef MINNOW_PRIMITIVES_H
#define MINNOW_PRIMITIVES_H

#include "../core/value.h"

typedef struct Vm Vm;
typedef Value (*PrimFn)(Vm *vm, Value *args);

typedef struct Primitive {
  const char *name;   // the C name used in `external ... = "name"`
  int arity;
  PrimFn fn;
} Primitive;

// Index of the primitive called `name`, or -1.
int prim_lookup(const char *name);
const Primitive *prim_get(int index);

#endif
