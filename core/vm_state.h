// vm_state.h - the one struct that holds all VM state, and the services every layer
// may call: raising, leaving the process, C roots, pending actions. It sits
// at the bottom (core/): gc/, memprof/ and lang/ include it, it includes none
// of them; the types of their state are opaque here but the heap's, whose
// hot fields every allocation reads. No subsystem keeps a mutable global:
// everything hangs off `Vm *vm`, passed explicitly. Design: docs/design.md.
#ifndef MINNOW_VM_STATE_H
#define MINNOW_VM_STATE_H

#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "debug.h"
#include "value.h"

// The Boehm build (make vm-boehm) allocates every block with GC_MALLOC: no
// minor heap, no sampling. Code tests this constant, never the macro.
#ifndef MINNOW_BOEHM
#define MINNOW_BOEHM 0
#endif
static const bool GC_IS_BOEHM = MINNOW_BOEHM;
// make vm-noprof builds without the profiler (the reference for measuring
// what memprof costs when it is off): every hook is compiled out.
#ifndef MINNOW_NO_MEMPROF
#define MINNOW_NO_MEMPROF 0
#endif
static const bool MEMPROF_BUILT = !MINNOW_NO_MEMPROF && !MINNOW_BOEHM;

typedef struct MajorHeap MajorHeap;    // the major heap (gc/gc_internal.h)
typedef struct FrameTable FrameTable; // descriptors (core/frames.h)
typedef struct Proto Proto;          // the code image (core/image.h)
typedef struct CallTarget CallTarget;
typedef struct Primitive Primitive;
typedef struct Memprof Memprof;      // the profiler (memprof/memprof.h)
typedef struct Shapes Shapes;        // record shapes (lang/runtime/shapes.h)
typedef struct Vm Vm;
typedef void (*RootVisitor)(Vm *vm, Value *slot, void *data);
// Replaces exit() at the end of a run (vm_exit): it must not return, and
// leaves by longjmp to whoever embeds the VM, which then frees it (if it
// returns, the process exits after all).
typedef void VmExitHook(Vm *vm, int status);

// A `try` that is running: where to resume when something is raised.
typedef struct Handler {
  Value *base;           // frame base of the function holding the try
  const uint32_t **ret_sp; // the return stack's top in that frame
  const uint32_t *pc;    // first instruction of the catch block
  uint32_t reg;          // register receiving the raised value
  uint32_t level;        // interpreter nesting level that owns the frame
} Handler;

// One nested entry of the interpreter from C (interp_call): the frame that was
// interrupted, so that the stack walker can step over the C boundary.
typedef struct Boundary {
  const uint32_t *pc;    // safe-point instruction of the interrupted frame
  Value *base;           // its frame base
  jmp_buf *escape;       // where vm_raise lands for this level
  uint32_t handler_floor; // handlers below this index belong to outer levels
  uint32_t root_floor;   // C roots below this index belong to outer levels
} Boundary;

enum { VM_MAX_LEVELS = 64, VM_MAX_ROOTS = 256, VM_SIGNAL_BACKEDGES = 1 << 16 };
// What asks for a snapshot while the program runs (vm->pending_snapshot).
typedef enum VmSnapshotAsk {
  VM_SNAPSHOT_SIGNAL = 1,   // SIGUSR1
  VM_SNAPSHOT_PERIOD = 2,   // the timer of --memtrace-snapshot-every
  VM_SNAPSHOT_PEAK = 3,     // a major cycle's live words passed gc.snapshot_peak_words
} VmSnapshotAsk;
// Largest VM stack, in words (memprof's callstack tables count frames in 32 bits).
#define VM_MAX_STACK_WORDS ((uint64_t)1 << 31)
// The words a call may find above its new frame's base when it checks the
// stack against stack_limit alone (a callee of frame size F needs F + 1).
// The VM stack has at least 1024 words (lang/main.c).
enum { VM_CALL_HEADROOM = 256 };

// Counters of Gc.stat, in words, headers included (as OCaml counts them).
typedef struct GcStats {
  double minor_words;        // allocated in the minor heap, up to the last minor GC
  double promoted_words;     // copied to the major heap by minor GCs
  double major_words;        // allocated in the major heap, promotions included
  double pretenured_words;   // of major_words: allocated there by pretenured sites
                             // (memprof/pretenure.c), which would have been young
  uint64_t minor_collections;
  uint64_t major_collections;
  uint64_t heap_words;       // words of size-class pages and large blocks (not pooled pages: gc_internal.h)
  uint64_t live_words;       // live major words after the last major GC
} GcStats;

typedef struct GcState {
  GcStats stats;
  MajorHeap *major;
  Value **remembered;        // old fields that may point into the minor heap
  uint64_t remembered_count, remembered_cap;
  uint64_t major_since_cycle;   // major words allocated since the last major GC
  uint64_t major_threshold;  // major words a cycle lets be allocated before the
                             // next one runs (gc/gc_internal.h, major_threshold_for)
  uint64_t major_alloc_limit;   // gc_alloc_major takes its slow path once
                             // major_since_cycle + wosize reaches this: the
                             // major GC threshold, or memprof's next sampled
                             // major word if nearer (vm_update_limits)
  uint64_t stress_counter;
  bool collecting;           // a collection is running (no allocation allowed)
  bool major_requested;      // run a major GC at the end of the next minor GC
  bool minor_requested;      // run a minor GC before the next pretenured allocation
                             // (gc_alloc_pretenured; memprof/pretenure.c, part 8: the probe)
  struct GcPathRequest *path_request;   // the next major cycle's mark records paths (gc.h, "Snapshots")
  uint64_t snapshot_peak_words;   // a major cycle leaving more live words asks for a
                                  // snapshot (VM_SNAPSHOT_PEAK); 0: never
  bool scanning_for_minor;   // gc_scan_roots serves a minor GC: roots known
                             // not to point into the minor heap may be skipped
} GcState;

// The run's parameters, from the command line and the environment, parsed
// and validated once by lang/main.c (an embedder fills them itself); no code
// below main.c reads the environment.
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
  const char *seed_text;      // MINNOW_SEED as written (a trace's runtime
                              // parameters); NULL: unset, the sampler's fixed
                              // default seed is used and `seed` is ignored
  uint64_t seed;              // its value
  bool memtrace_no_end_state; // --memtrace-no-end-state: no final collection, no paths
  double memtrace_snapshot_every; // --memtrace-snapshot-every: seconds between snapshots (0: none)
  double memtrace_snapshot_peak;  // --memtrace-snapshot-peak: growth factor of the live
                                  // heap between peak snapshots (0: none)
  const char *memtrace_pprof_dir; // --memtrace-pprof-dir: a pprof profile per snapshot (NULL: none)
  bool pretenure;             // --pretenure: the online feedback (memprof/pretenure.h)
  double pretenure_rate;      // its profile's rate
  bool pretenure_log;         // --pretenure-log: each decision on stderr
  const char *pretenure_from; // --pretenure-from T.ctf: decisions from a trace, or NULL
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
  Value *base;            // frame base of the top frame
  const uint32_t **ret_sp; // one past the top frame's return address
  Value *stack_start;
  Value *stack_end;
  // stack_end - VM_CALL_HEADROOM: a call whose callee's frame fits the
  // headroom (CallTarget.fast_nparams) checks only that the new base is below
  // it (lang/runtime/interp.c, "Calls").
  Value *stack_limit;
  // The frames' return addresses, outermost first (core/frames.h part 1): a
  // frame's is ret_stack[k] for the k-th frame from the bottom of the stack.
  const uint32_t **ret_stack;
  // --- program: the code image (core/image.h owns these tables) -------------
  Value *globals;         // module members and top-level lets; GC roots
  uint32_t global_count, global_cap;
  char **global_names;    // "List.map" ..., for messages
  Proto **protos;         // function id -> proto
  uint32_t proto_count, proto_cap;
  // Call targets (lang/runtime/interp.c, "Calls"): fn_targets[proto id] for every proto, and
  // global_targets[g] for the top-level fn in global g, filled when the code
  // calling it is linked (image_link_calls) or by its first CALLG (the global
  // holds its static closure, never reassigned).
  CallTarget *fn_targets;
  CallTarget *global_targets;
  uint32_t linked_protos; // protos fn_targets covers (interp_call relinks when it grew)
  uint32_t linked_globals; // globals global_targets covers
  Value *constants;       // strings and floats of the program (static blocks)
  uint32_t constant_count, constant_cap;
  const Primitive *primitives; // the C primitives, by index (lang/lib/primitives.c)
  FrameTable *frames;
  // The entry function (runs each module's <top>; never part of a
  // callstack) and its code (frames.h, FrameBounds); set by the compiler.
  const Proto *entry_proto;
  const uint32_t *entry_code, *entry_code_end;
  Shapes *shapes;
  // The shape of the stdlib's Hashtbl records {size, data}, private
  // (shapes_make_private): only hashtbl_make gives it, so the end state
  // names a Hashtbl by what made it, never by a user record's field names.
  uint32_t hashtbl_shape;
  Value empty_array;      // the one block of 0 fields (static)
  Value oom_message;      // the string "out of memory" (static: vm_raise_out_of_memory)
  // Return address of frames entered from C (interp_call) and of the entry frame:
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
  struct Pretenure *pretenure; // pretenuring's sites and decisions (memprof/pretenure.c), or NULL
  int memprof_module;     // the Memprof module's running profile
                          // (lang/lib/memprof_module.c), or -1
  bool memprof_pending;   // callbacks are queued: run them at the next safe point
  bool memprof_force_slow; // pending outside callbacks: young_limit = young_end,
                          // so that the next allocation takes the slow path
  uint32_t *poll_at;      // the opcode word POLL was written over, or NULL
  uint32_t poll_saved_op; // what it held
  const uint32_t *poll_origin; // the instruction that queued the callbacks
  bool memprof_sampling;  // a profile is running (major allocations ask memprof)
  // While sampling: the value of gc.major_since_cycle at the next sampled
  // major word. A major block of wosize fields allocated when major_since_cycle
  // is `at` holds it iff at + wosize >= memprof_major_point (gc/heap.c);
  // memprof/engine.c draws it; gc/minor.c and gc/major.c move it with
  // major_since_cycle's promotions and resets, which allocate nothing.
  // Invariant while sampling: memprof_major_point >= gc.major_since_cycle.
  uint64_t memprof_major_point;
  bool sampling_suspended; // runtime-internal allocations (error messages)
  // SIGINT or SIGTERM arrived (its number; 0: none). Written by the signal
  // handler only (vm_catch_signals), read at safe points: loop back-edges and
  // allocation slow paths (young_limit is raised to young_end for them).
  volatile sig_atomic_t pending_signal;
  // A snapshot asked for (a VmSnapshotAsk; 0: none): by SIGUSR1 or the
  // snapshot timer (their handler, vm_catch_snapshot_signals) or by a major
  // cycle that passed gc.snapshot_peak_words. Like a signal it raises
  // young_limit; the next allocation slow path (gc/heap.c), a safe point,
  // takes it through take_snapshot. A loop that allocates nothing delays it.
  volatile sig_atomic_t pending_snapshot;
  // Allocations that found a pending snapshot inside the standard library
  // and left it pending (lang/runtime/snapshots.c part 2).
  uint32_t snapshot_deferred;
  // Loop back-edges passed since the signal arrived. A back-edge is not a
  // safe point (no descriptor: the GC cannot see its frame's registers), so
  // the signal waits there for the next allocation, which is one (every
  // allocation takes the slow path while it waits), and only a loop that
  // allocates nothing for VM_SIGNAL_BACKEDGES back-edges is stopped at one.
  // What a trace's end state then cannot see: the innermost frame's slots.
  uint32_t signal_backedges;
  VmOptions options;
  // --- what the layers above core/ plug in (core/fail.c) -------------------
  // Prints an uncaught error and its backtrace (the interpreter's, set by
  // vm_new); vm_raise then leaves through vm_exit.
  void (*uncaught)(Vm *vm, Value v);
  // Finishes every tracker (memprof_finish, set by memprof_new): called on
  // every way out of the process.
  void (*finish_trackers)(Vm *vm);
  // Takes a trace's end state before the trackers finish (lang/runtime/snapshots.c:
  // a final collection and the retaining paths): called on every way out
  // of the process, before finish_trackers.
  void (*end_trace)(Vm *vm);
  // Takes the snapshot vm->pending_snapshot asks for, then clears it
  // (lang/runtime/snapshots.c); NULL: requests are dropped.
  void (*take_snapshot)(Vm *vm);
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

// ---------------------------------------------------------------------------
// The allocation limits, from the fields that decide them (kept here, below
// gc/ and memprof/, both of which move those fields):
//  * young_limit = max(young_start, young_trigger), so that the allocation
//    reaching memprof's next sampled word takes the slow path (gc/heap.c);
//    young_end (every allocation slow) in stress mode, while memprof has
//    callbacks to deliver outside them (memprof_force_slow: allocation slow
//    paths deliver them), or while a signal waits (vm->pending_signal);
//  * young_limit_c, gc_alloc's: the same but for the last two (C allocations
//    deliver nothing: String.split across a minor GC keeps its fast path);
//  * major_alloc_limit: the major GC's threshold (gc.major_threshold), or,
//    while memprof samples, memprof's next sampled major word if nearer
//    (memprof_major_point): gc_alloc_major takes its slow path for a block
//    of wosize fields once major_since_cycle + wosize reaches it.
// Called whenever one of these fields changes; vm_update_major_limit and
// vm_update_young_limits do each half, for a change that concerns only it
// (memprof's sampled major word, its trigger).
static inline void vm_update_major_limit(Vm *vm) {
  uint64_t major = vm->gc.major_threshold;
  if (MEMPROF_BUILT && vm->memprof_sampling && vm->memprof_major_point < major) major = vm->memprof_major_point;
  vm->gc.major_alloc_limit = major;
}

static inline void vm_update_young_limits(Vm *vm) {
  Value *limit = vm->young_start;
  if (vm->young_trigger > limit) limit = vm->young_trigger;
  if (vm->options.gc_stress) limit = vm->young_end;
  vm->young_limit_c = limit;
  if ((MEMPROF_BUILT && (vm->memprof_force_slow || vm->pending_snapshot)) || vm->pending_signal) limit = vm->young_end;
  vm->young_limit = limit;
  ASSERT(vm->young_start <= vm->young_limit_c && vm->young_limit_c <= vm->young_limit &&
             vm->young_limit <= vm->young_end,
         "young_start <= young_limit_c <= young_limit <= young_end");
  ASSERT(!vm->young_trigger || (vm->young_trigger > vm->young_start && vm->young_trigger <= vm->young_ptr + 1),
         "memprof's trigger lies in the free part of the minor heap");
}

static inline void vm_update_limits(Vm *vm) {
  vm_update_major_limit(vm);
  vm_update_young_limits(vm);
}

// A major cycle starts (a major collection, a reset): major_since_cycle
// counts from 0 again, and memprof's next sampled major word stays as many
// words ahead of it (memprof_major_point's invariant).
static inline void vm_restart_major_cycle(Vm *vm) {
  uint64_t since = vm->gc.major_since_cycle;
  vm->memprof_major_point = vm->memprof_major_point > since ? vm->memprof_major_point - since : 0;
  vm->gc.major_since_cycle = 0;
}

// Blocks are young iff in (young_start, young_end).
static inline bool vm_is_young(const Vm *vm, Value v) {
  return val_is_ptr(v) && (Value *)(uintptr_t)v > vm->young_start &&
         (Value *)(uintptr_t)v < vm->young_end;
}

// Raises `v` from C code: unwinds to the innermost handler (possibly in an
// outer interpreter level); with none, prints it (vm->uncaught) and leaves
// with VM_EXIT_ERROR. Never returns.
_Noreturn void vm_raise(Vm *vm, Value v);
// Raises `out of memory` with a message made at start-up: nothing is
// allocated, so it works when the heap is full (gc_raise_error would need
// room for its message).
_Noreturn void vm_raise_out_of_memory(Vm *vm);
// The pending-action path (core/pending.c). memprof queued callbacks during
// the instruction at vm->pc (which is still running): have them run as soon
// as it completes, before the next instruction (lang/runtime/interp.c, "Polls"). A
// no-op for an instruction that runs them itself (allocations) or that may
// not fall through.
void vm_request_poll(Vm *vm);
// The callbacks are running or the instruction raised: no poll is needed.
void vm_cancel_poll(Vm *vm);
// The opcode the instruction at `pc` runs with (the one a POLL covers, if
// one was written over it), and its rewriting (under the POLL, then). For
// pretenuring's switch of an allocation site (core/bytecode.h).
uint32_t vm_opcode_at(const Vm *vm, const uint32_t *pc);
void vm_set_opcode(Vm *vm, const uint32_t *pc, uint32_t op);

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
// realloc(p, bytes) (bytes 0: a block of one byte), or vm_out_of_memory(NULL,
// what): for the C tables the VM cannot go on without (record shapes, the
// --pretenure-from table).
void *vm_realloc_or_die(void *p, size_t bytes, const char *what);
// Makes vm the process's VM: the one vm_out_of_memory(NULL, ...) and the
// signal handler finish (vm_new calls it; vm_free undoes it).
void vm_register(Vm *vm);
void vm_unregister(Vm *vm);
// From now on SIGINT and SIGTERM set vm->pending_signal, and the VM leaves
// at its next safe point through vm_handle_signal. A second signal before
// that ends the process at once (the default action is back in place).
void vm_catch_signals(Vm *vm);
// From now on SIGUSR1, and every `period_s` seconds a timer (SIGALRM; none
// if period_s is 0), ask for a snapshot (vm->pending_snapshot); system calls
// they interrupt restart. vm_release_snapshot_signals puts the default
// actions back and stops the timer.
void vm_catch_snapshot_signals(Vm *vm, double period_s);
void vm_release_snapshot_signals(Vm *vm);
// Asks for a snapshot at the next safe point (signal-safe).
void vm_request_snapshot(Vm *vm, VmSnapshotAsk ask);
// At a safe point with vm->pending_signal set: finishes the trackers, then
// dies of that signal (the parent sees 128 + its number). Never returns.
_Noreturn void vm_handle_signal(Vm *vm);

#endif
