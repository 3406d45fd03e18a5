// vm.h - the one struct that holds all VM state, and the VM's public entry points.
// No subsystem keeps a mutable global: everything hangs off `Vm *vm`, passed
// explicitly (gc/, memprof/, builtins). Design: ../shared/DESIGN.md.
// Include order: gc.h needs the Vm struct for its inline barrier and vm.h needs
// GcState, so vm.h first includes gc.h, which includes vm.h back to define Vm
// before its inline functions. The outer guard makes either order work.
#ifndef MINNOW_VM_H
#include "../gc/gc.h"
#endif
#ifndef MINNOW_VM_H
#define MINNOW_VM_H

#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "value.h"

typedef struct Proto Proto;          // a compiled function (lang/compiler.h)
typedef struct FrameTable FrameTable; // descriptors (lang/frames.h)
typedef struct Memprof Memprof;      // the profiler (memprof/memprof.h)
typedef struct Shapes Shapes;        // record shapes (vm/shapes.h)
typedef struct Program Program;
typedef struct Vm Vm;
// Replaces exit() at the end of a run (vm_exit): it must not return, and
// leaves by longjmp to whoever embeds the VM, which then frees it (if it
// returns, the process exits after all).
typedef void VmExitHook(Vm *vm, int status);

// A `try` that is running: where to resume when something is raised.
typedef struct Handler {
  Value *base;           // frame base of the function holding the try
  const uint32_t *pc;    // first instruction of the catch block
  uint32_t reg;          // register receiving the raised value
  uint32_t level;        // interpreter nesting level that owns the frame
} Handler;

// One nested entry of the interpreter from C (vm_call): the frame that was
// interrupted, so that the stack walker can step over the C boundary.
typedef struct Boundary {
  const uint32_t *pc;    // safe-point instruction of the interrupted frame
  Value *base;           // its frame base
  jmp_buf *escape;       // where vm_raise lands for this level
  uint32_t handler_floor; // handlers below this index belong to outer levels
  uint32_t root_floor;   // C roots below this index belong to outer levels
} Boundary;

enum { VM_MAX_LEVELS = 64, VM_MAX_ROOTS = 256 };
// Largest VM stack, in words (memprof's callstack tables count frames in 32 bits).
#define VM_MAX_STACK_WORDS ((uint64_t)1 << 31)

// Where a call lands, read by CALL and CALLG without going through the Proto:
// the callee's first instruction, its arity and its frame size.
typedef struct CallTarget {
  const uint32_t *code;
  uint32_t nparams;       // UINT32_MAX in an unresolved global_targets entry
  uint32_t fsize;
} CallTarget;

typedef struct VmOptions {
  uint64_t stack_words;   // VM stack size in words
  uint64_t minor_words;   // minor heap size in words
  uint64_t max_heap_words; // major heap limit: past it, `out of memory`
  bool gc_stress;         // minor GC at every allocation
  bool gc_verify;         // verify the heap after every collection
  bool dump_bytecode;
  const char *memtrace_path;  // NULL: no trace
  double memtrace_rate;       // its sampling rate
  int memtrace_format;        // its format version (1 to 3)
  double memprof_count_rate;  // --memprof-count: > 0 starts the counting tracker
} VmOptions;

typedef struct Vm {
  // --- minor heap (hot: read by every allocation) -------------------------
  Value *young_ptr;       // header of the youngest block; allocation moves it down
  Value *young_limit;     // allocation takes the slow path when young_ptr < limit;
                          // = max(young_start, memprof trigger) or young_end in stress mode
                          // or while memprof has callbacks to deliver
  Value *young_limit_c;   // the same for C allocations (gc_alloc), which cannot
                          // deliver callbacks: never raised for them
  Value *young_start;     // lowest word of the minor heap
  Value *young_end;       // one past the highest word
  Value *young_trigger;   // memprof: the allocation reaching below this word
                          // holds the next sampled word (NULL: not sampling)
  // --- interpreter state saved at every safe point ------------------------
  const uint32_t *pc;     // start of the current safe-point instruction of the top frame
  Value *base;            // frame base of the top frame (base[-1] is its return address)
  Value *stack_start;     // stack[0] is the bottom sentinel return address
  Value *stack_end;
  // --- program ------------------------------------------------------------
  Value *globals;         // module members and top-level lets; GC roots
  uint32_t global_count, global_cap;
  char **global_names;    // "List.map" ..., for messages
  Proto **protos;         // function id -> proto
  uint32_t proto_count, proto_cap;
  // Call targets (interp.c, "Calls"): fn_targets[proto id] for every proto, and
  // global_targets[g] for the top-level fn in global g, filled by its first
  // CALLG once the global holds the closure (it is never reassigned after).
  CallTarget *fn_targets;
  CallTarget *global_targets;
  uint32_t linked_protos; // protos fn_targets covers (vm_call relinks when it grew)
  Value *constants;       // strings and floats of the program (static blocks)
  uint32_t constant_count, constant_cap;
  FrameTable *frames;
  // The entry function (runs each module's <top>; never part of a
  // callstack) and its code (frames.h, FrameBounds); set by the compiler.
  const Proto *entry_proto;
  const uint32_t *entry_code, *entry_code_end;
  Shapes *shapes;
  Value empty_array;      // the one block of 0 fields (static)
  Value oom_message;      // the string "out of memory" (static: vm_raise_out_of_memory)
  // Return address of frames entered from C (vm_call) and of the entry frame:
  // &trampoline_code[1]. Returning there runs EXIT_NESTED (frames.h, part 4).
  uint32_t trampoline_code[3];
  const uint32_t *trampoline_ret;
  // --- exceptions and C boundaries ----------------------------------------
  Handler *handlers;
  uint32_t handler_count, handler_cap;
  Boundary levels[VM_MAX_LEVELS];
  uint32_t level;         // nesting depth of vm_run (1 while the main program runs)
  Value exn;              // the value being raised
  const uint32_t *exn_pc; // where it was raised (for uncaught errors)
  Value *exn_base;
  bool exn_is_stack_overflow;
  // --- C roots ------------------------------------------------------------
  Value *roots[VM_MAX_ROOTS];  // temporary roots pushed by C code (vm_push_root)
  uint32_t root_count;
  // --- subsystems ---------------------------------------------------------
  GcState gc;
  Memprof *memprof;
  struct Tracer *memtrace; // the trace being written (memprof/memtrace.c), or NULL
  bool memprof_pending;   // callbacks are queued: run them at the next safe point
  bool memprof_force_slow; // pending outside callbacks: young_limit = young_end,
                          // so that the next allocation takes the slow path
  uint32_t *poll_at;      // the opcode word POLL was written over, or NULL
  uint32_t poll_saved_op; // what it held
  const uint32_t *poll_origin; // the instruction that queued the callbacks
  bool memprof_sampling;  // a profile is running (major allocations ask memprof)
  uint64_t memprof_major_skip; // while sampling: words the major heap may allocate
                          // before the next sampled major word (gc/heap.c skips
                          // memprof for blocks that fit; memprof/engine.c syncs)
  bool sampling_suspended; // runtime-internal allocations (error messages)
  // SIGINT or SIGTERM arrived (its number; 0: none). Written by the signal
  // handler only (vm_catch_signals), read at safe points: loop back-edges and
  // allocation slow paths (young_limit is raised to young_end for them).
  volatile sig_atomic_t pending_signal;
  VmOptions options;
  // --- embedding (unit tests, the in-process fuzz driver) ------------------
  VmExitHook *exit_hook;  // when set, vm_exit calls it instead of exit()
  void *exit_hook_data;   // the embedder's, for exit_hook
  uint64_t fuel;          // MINNOW_FUZZ builds: jumps back and calls left
                          // before the run ends with VM_EXIT_FUEL (interp.c);
                          // 0: no budget
  // --- process ------------------------------------------------------------
  int argc;
  char **argv;            // script path then its arguments
  const char *main_path;
  struct ModuleTable *modules;
} Vm;

// Creates a VM with the given options. Returns NULL (after printing why) when
// memory for the heap or stack cannot be had.
Vm *vm_new(const VmOptions *options);
void vm_free(Vm *vm);
// Makes vm what vm_new(options) would return, reusing its stack, minor heap
// and mark stack (an embedder running many programs, such as the fuzz
// driver, skips their allocation and first-touch cost). The stack size must
// not change. False when memory is short (vm is then only fit for vm_free).
bool vm_reset(Vm *vm, const VmOptions *options);

// Loads, compiles and runs `path` as the main script. Returns the process exit
// status: 0, 1 (uncaught runtime error) or 2 (syntax or compile error).
int vm_run_main(Vm *vm, const char *path);
// The same for a main script already in memory (text[0..len), malloc'ed,
// owned by the VM from now on), named `path` in messages.
int vm_run_text(Vm *vm, const char *path, char *text, size_t len);

// Raises `v` from C code: unwinds to the innermost handler (possibly in an
// outer interpreter level). Never returns.
_Noreturn void vm_raise(Vm *vm, Value v);
// Raises `out of memory` with a message made at start-up: nothing is
// allocated, so it works when the heap is full (vm_raise_error would need
// room for its message).
_Noreturn void vm_raise_out_of_memory(Vm *vm);
// Raises a runtime error whose message is printf-formatted.
_Noreturn void vm_raise_error(Vm *vm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// Calls a Minnow function value from C with `argc` arguments. May GC; the
// arguments are read before anything allocates. On an exception, returns
// false and leaves the raised value in vm->exn (the caller decides whether to
// re-raise with vm_raise(vm, vm->exn)).
bool vm_call(Vm *vm, Value fn, int argc, const Value *args, Value *result);

// memprof queued callbacks during the instruction at vm->pc (which is still
// running): have them run as soon as it completes, before the next
// instruction (lang/interp.c, "Polls"). A no-op for an instruction that runs
// them itself (allocations) or that may not fall through.
void vm_request_poll(Vm *vm);
// The callbacks are running or the instruction raised: no poll is needed.
void vm_cancel_poll(Vm *vm);

// Temporary C roots: the GC updates *slot when it moves the block.
static inline void vm_push_root(Vm *vm, Value *slot) {
  if (vm->root_count >= VM_MAX_ROOTS) __builtin_trap();
  vm->roots[vm->root_count++] = slot;
}
static inline void vm_pop_roots(Vm *vm, uint32_t n) { vm->root_count -= n; }

// ---------------------------------------------------------------------------
// Leaving the process. Every way out goes through vm_exit, which finishes the
// profiler's trackers first (the --memprof-count report, a trace's last
// packet): the end of the script, Sys.exit, an uncaught error, out of memory,
// and SIGINT/SIGTERM (vm_handle_signal).
enum {
  VM_EXIT_OK = 0,
  VM_EXIT_ERROR = 1,   // uncaught runtime error, out of memory included
  VM_EXIT_USAGE = 2,   // bad command line, unreadable script, syntax or compile error
  VM_EXIT_FUEL = -1,   // fuzz builds: the step budget ran out (never a process status)
};
// Flushes stdout, finishes every tracker, exits with `status` (or calls
// vm->exit_hook). Runs no Minnow code.
_Noreturn void vm_exit(Vm *vm, int status);
// Memory ran out where no exception can be raised (inside a collection, in
// the compiler's tables): prints "minnow: out of memory (what)" and exits
// with VM_EXIT_ERROR through vm_exit. Code with no Vm at hand calls it with
// NULL: the process's VM (the one vm_new made last) is finished.
_Noreturn void vm_out_of_memory(Vm *vm, const char *what);
// From now on SIGINT and SIGTERM set vm->pending_signal, and the VM leaves
// at its next safe point through vm_handle_signal. A second signal before
// that ends the process at once (the default action is back in place).
void vm_catch_signals(Vm *vm);
// At a safe point with vm->pending_signal set: finishes the trackers, then
// dies of that signal (the parent sees 128 + its number). Never returns.
_Noreturn void vm_handle_signal(Vm *vm);

// The type name of a value as used in error messages ("int", "record", ...).
const char *vm_type_name(Value v);

#endif
