// frames.h - frame descriptors and the one stack walker.
// The walker serves the GC's precise root scan, runtime-error backtraces and
// memprof's callstacks. Design: docs/design.md ("Frame descriptors and the
// one walker").
//
// 1. Stack layout. The VM stack grows upwards. A frame of a function whose
//    frame size is F occupies base[0 .. F-1]: base[0] holds the running
//    closure, base[1 .. nparams] the arguments; the callee's frame starts
//    right after its caller's. Return addresses (pointers into the callers' CALL
//    instructions) are on a stack of their own, vm->ret_stack, one a frame,
//    outermost first; vm->ret_sp is one past the top frame's. Nothing else
//    is saved: no frame pointer, no frame size.
//
//        caller frame (fsize Fc)      callee frame
//     ... [ c0 | c1 | ... | cFc-1 ] [ clos | a1 | ... ]
//         ^ caller base              ^ base
//     ret_stack: [ ... | ra of the caller | ra ]  ret_sp ->
//
//    A CALL pushes a return address and RET pops one, the interpreter
//    keeping the top in a register: RET's next base does not wait on a load
//    from the frame it leaves, and a walk that needs only the return
//    addresses (memprof's capture) reads eight frames' from a cache line.
//
// 2. A return address ra points at the last word of a CALL instruction, which
//    holds the caller's frame step, Fc * sizeof(Value) bytes (see
//    frames_step); the word before it holds the register receiving the
//    result. Returning sets base = (char *)base - ra[0] and resumes at
//    ra + 1. That word is the one record of a frame's size on the stack: the
//    walker steps with it (frames_caller), reading the descriptor keyed by
//    ra (the caller's live slots at the call, its debug entry); memprof's
//    callstack capture reads the return stack alone.
//
// 3. Every other safe point (allocation, primitive call, float arithmetic...)
//    has a descriptor keyed by the address of its first word: it describes the
//    frame while that instruction runs (the instruction's destination register
//    excluded: it is written only once the instruction is complete).
//
// 4. A return address may instead point into a C-boundary trampoline (the
//    frame was called from C by interp_call; the walker continues with the frame
//    recorded in vm->levels) or into a memprof stub (memprof walked that
//    frame already; frames_stub_ret gives the real address back). The frames
//    called by the entry function (every module's top level) are the
//    outermost of a callstack: memprof's capture stops there, and the walker
//    steps into the entry frame only for the GC (FrameBounds says both).
//
// 5. Every call site has a memprof stub of four words past the end of its
//    function's code: { dst, caller step, MEMPROF_RETURN, back }. The CALL
//    word ra[-2] is the distance from ra to the stub's return address
//    &stub[1]. Memprof redirects some walked frames' return addresses (their
//    return stack entries) there (memprof/callstack.c part 2): RET
//    runs unchanged (it reads dst and step from the stub), then
//    MEMPROF_RETURN resumes after the real call. A return address is a stub
//    iff the word after it is MEMPROF_RETURN: no instruction follows a call
//    with that opcode.
#ifndef MINNOW_FRAMES_H
#define MINNOW_FRAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bytecode.h"
#include "value.h"

typedef struct Vm Vm;
typedef struct Proto Proto;

// A source location shown in backtraces and memprof callstacks.
typedef struct DebugInfo {
  const char *function;   // "List.map", "<top>", "f.<fn>"
  const char *file;       // as given to the VM, or "stdlib/list.mn"
  uint32_t line;          // 1-based
  uint32_t start_col;     // 0-based, inclusive
  uint32_t end_col;       // 0-based, exclusive (may pass the line's end)
  uint32_t id;            // unique within a run: memprof's frame code
  // Inlining chain: the entry of the code this one was inlined into, or NULL.
  // The compiler does not inline yet, so chains have length 1.
  const struct DebugInfo *inlined_into;
} DebugInfo;

typedef struct FrameDesc {
  const uint32_t *key;       // return address, or first word of a safe point
  const Proto *proto;        // function owning the frame
  uint32_t live_count;
  const uint32_t *live;      // slots holding live values, ascending; slot 0 always
  uint32_t debug_count;      // one per sub-block of an ALLOCN, else 1
  const DebugInfo *const *debug;
  bool is_call;              // keyed by a return address
} FrameDesc;

typedef struct FrameTable FrameTable;

// The word at a return address: the distance in bytes from a callee's base
// down to its caller's, for a caller of frame size fsize (part 2).
static inline uint32_t frames_step(uint32_t fsize) { return fsize * (uint32_t)sizeof(Value); }

// Part 2, stepping: the base of the caller of the frame at `base` whose
// return address is `ret` (a real return address or a stub's: both hold the
// caller's step).
static inline Value *frames_caller(Value *base, const uint32_t *ret) { return (Value *)((char *)base - ret[0]); }

// Part 4, where the frames of one interpreter level end: a frame returning
// to the trampoline was called from C (interp_call), one returning into the
// entry function's code is a module's top level. Read once per walk.
typedef struct FrameBounds {
  const uint32_t *trampoline;
  uintptr_t entry_lo, entry_len;   // the entry function's code, in bytes
} FrameBounds;
// The bounds of a VM: frames_bounds(vm->trampoline_ret, vm->entry_code,
// vm->entry_code_end). Inline: a capture reads them at every sample.
static inline FrameBounds frames_bounds(const uint32_t *trampoline, const uint32_t *entry, const uint32_t *entry_end) {
  return (FrameBounds){trampoline, (uintptr_t)entry, entry ? (uintptr_t)entry_end - (uintptr_t)entry : 0};
}
static inline bool frames_from_c(const FrameBounds *b, const uint32_t *ret) { return ret == b->trampoline; }
static inline bool frames_from_entry(const FrameBounds *b, const uint32_t *ret) {
  return (uintptr_t)ret - b->entry_lo < b->entry_len;
}

// Part 5: the stub return address of the call whose return address is ra;
// whether a return address is a stub's; the real return address of a stub's.
static inline const uint32_t *frames_stub_of(const uint32_t *ra) { return ra + (int32_t)ra[-2]; }
static inline bool frames_is_stub(const uint32_t *ra) { return ra[1] == BC_MEMPROF_RETURN; }
static inline const uint32_t *frames_stub_ret(const uint32_t *stub_ra) { return stub_ra + 1 + (int32_t)stub_ra[2]; }

FrameTable *frames_new(void);
void frames_free(FrameTable *table);

// Creates a debug entry owned by the table (strings are copied).
const DebugInfo *frames_debug_new(FrameTable *table, const char *function,
                                  const char *file, uint32_t line,
                                  uint32_t start_col, uint32_t end_col);
// Number of debug entries created so far; ids are 0 .. count-1.
uint32_t frames_debug_count(const FrameTable *table);
const DebugInfo *frames_debug_by_id(const FrameTable *table, uint32_t id);
// The descriptor that holds debug entry `id` (the safe point whose site it
// is: an allocation site's instruction is desc->key), with the entry's
// index among its debug entries in *sub (an ALLOCN's sub-block; may be
// NULL). NULL for an entry no descriptor holds (yet).
const FrameDesc *frames_debug_desc(const FrameTable *table, uint32_t id, uint32_t *sub);

// The table's copy of the live list live[0..count): equal lists are stored
// once (interned); valid until frames_free.
const uint32_t *frames_live_list(FrameTable *table, const uint32_t *live, uint32_t count);
// Adds a descriptor (copied, with its debug array). Its live list must be
// one frames_live_list returned. `key` must not be present already.
void frames_add(FrameTable *table, const FrameDesc *desc);
// The descriptor for `key`, or NULL. A descriptor is never removed: the
// one returned for a key stays at that address, for that key, until
// frames_free (callers may keep the pair).
const FrameDesc *frames_find(const FrameTable *table, const uint32_t *key);

// ---------------------------------------------------------------------------
// The walker. A cursor stands on one frame; `frames_next` moves to its caller.
typedef struct FrameCursor {
  Vm *vm;
  Value *base;               // the frame's base
  const FrameDesc *desc;     // its descriptor (NULL for a top frame stopped
                             // at an instruction that is not a safe point)
  const uint32_t *pc;        // top frames: the current instruction
  uint32_t level;            // interpreter nesting level of the frame
  bool is_top;               // stopped at an instruction, not at a call
  FrameBounds bounds;
  const uint32_t **ret_sp;   // one past the frame's return address
} FrameCursor;

// Positions the cursor on the innermost frame (vm->pc, vm->base).
void frames_top(Vm *vm, FrameCursor *cursor);
// Moves to the caller; false when the cursor was on the outermost frame.
bool frames_next(FrameCursor *cursor);

#endif
