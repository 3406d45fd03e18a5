// image.h - the code image: the program's functions (Proto: code, line
// table), its constants, its globals, the call targets the interpreter
// reads, and the table of C primitives it calls. The compiler (lang/front/)
// writes it through these functions; the runtime (lang/runtime/, gc/,
// memprof/) only reads it; this file owns it: image_free frees every table
// it grew. The tables themselves are fields of Vm (core/vm_state.h,
// "program"), so that the GC scans globals and constants as roots and the
// interpreter reaches them in one load.
//
// Invariants: protos[i]->id == i, and a closure's field 0 is its proto's id;
// a Proto's code never moves once its function is compiled (call targets and
// frame descriptors point into it); fn_targets covers the first
// linked_protos protos and global_targets the globals that existed then.
#ifndef MINNOW_IMAGE_H
#define MINNOW_IMAGE_H

#include <stdint.h>

#include "value.h"

typedef struct Vm Vm;
typedef struct Proto Proto;
typedef struct Primitive Primitive;
typedef struct CallTarget CallTarget;

// pc offset -> source position, one entry each time the position changes.
typedef struct LinePos {
  uint32_t offset;
  uint32_t line;
  uint32_t col;      // 0-based
} LinePos;

// A named local's register over a range of the code, [start, end) in words
// (end UINT32_MAX: to the end of the function): what retaining paths call a
// frame's slot (image_local_name).
typedef struct LocalVar {
  const char *name;         // owned
  uint32_t reg, start, end;
} LocalVar;

struct Proto {
  uint32_t id;              // index in vm->protos (closure field 0)
  const char *name;         // "List.map", "<top>" (owned)
  const char *file;         // the module's path (owned by the compiler's module table)
  uint32_t nparams;
  uint32_t fsize;           // slots: closure, params, locals, temporaries
  uint32_t *code;
  uint32_t code_len, code_cap;  // instructions: code[0 .. code_len)
  uint32_t stub_words;      // then the memprof stubs of its calls (frames.h part 5)
  LinePos *lines;
  uint32_t line_count, line_cap;
  int prim;                 // >= 0: wrapper of primitive `prim` (external)
  LocalVar *locals;         // in the order they come into scope
  uint32_t local_count, local_cap;
  const char **captures;    // captures[i]: the name closure field i + 1 holds (owned)
  uint32_t capture_count;
};

// A C primitive that `external` declarations bind to. It receives its
// arguments in place on the VM stack: the slots are GC roots, so after
// anything that allocates it must re-read args[i] rather than keep a copy in
// a C local. It returns its result; it raises with vm_raise / gc_raise_error.
typedef Value (*PrimFn)(Vm *vm, Value *args);
struct Primitive {
  const char *name;   // the C name used in `external ... = "name"`
  int arity;
  PrimFn fn;
};

// Where a call lands, read by the calls without going through the Proto:
// the callee's first instruction, its arity and its frame size.
// fast_nparams is nparams when the callee's frame fits the stack's headroom
// (fsize + 1 <= VM_CALL_HEADROOM: vm_state.h), else UINT32_MAX, so that the
// calls by argc (CALL0 .. CALL3) test arity and frame size in one compare
// and check the stack against vm->stack_limit alone. closure is, in a
// global_targets entry, the fn's closure (static: it never moves), which the
// link-checked CALLG0 .. CALLG3 put in the new frame's slot 0.
struct CallTarget {
  const uint32_t *code;
  Value closure;          // global_targets only; else 0
  uint32_t nparams;       // UINT32_MAX in an unresolved global_targets entry
  uint32_t fast_nparams;
  uint32_t fsize;
  uint32_t unused;        // 32 bytes an entry: an index is one shift
};

// A new empty function named `name` (copied) in `file`, appended to
// vm->protos with the next id. Exits through vm_out_of_memory when memory
// is short (as every function here).
Proto *image_add_proto(Vm *vm, const char *name, const char *file);
// Appends v (a static block or an immediate) to the constants; its index.
uint32_t image_add_constant(Vm *vm, Value v);
// Appends a global named `name` (copied), holding nil; its index.
uint32_t image_add_global(Vm *vm, const char *name);
// Grows p->code or p->lines by one entry and returns it (the compiler
// fills it). The code may move until the function is finished.
uint32_t *image_code_slot(Proto *p);
LinePos *image_line_slot(Proto *p);

// Records that register `reg` holds the local `name` (copied) from code
// offset `start` on; returns its index for image_end_local.
uint32_t image_add_local(Proto *p, const char *name, uint32_t reg, uint32_t start);
// The local `index` goes out of scope at code offset `end`.
void image_end_local(Proto *p, uint32_t index, uint32_t end);
// Records the names of the closure's captured variables (copied).
void image_set_captures(Proto *p, const char *const *names, uint32_t count);
// The local that slot `reg` holds at the safe point `pc` of `p` (the one
// that came into scope last, if several), or NULL for a temporary.
const char *image_local_name(const Proto *p, const uint32_t *pc, uint32_t reg);
// The name of closure field `field` (1-based) of a closure of `p`, or NULL.
const char *image_capture_name(const Proto *p, uint32_t field);

// Makes the call targets of the protos added since the last link and an
// unresolved entry for each global added since, then checks each CALLG of
// those protos: one whose global holds a fn (a static closure) of its
// arity, with at most CALL_FORM_MAX_ARGC arguments and a frame that fits
// the headroom, becomes CALLG0 .. CALLG3 and fills the global's target; the
// others stay CALLG (checked when they run). The interpreter runs this when
// protos were added since the last link; ./vm --dump-bytecode before its
// listing.
void image_link_calls(Vm *vm);

// Source position of the instruction at `pc` in `proto` (line table).
void image_position(const Proto *proto, const uint32_t *pc, uint32_t *line, uint32_t *col);

// Frees every function, constant table, global and call target; the tables
// are empty afterwards.
void image_free(Vm *vm);

#endif
