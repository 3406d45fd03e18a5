// compiler.c - AST to register bytecode, frame descriptors and debug entries.
//
// 1. Registers. Each function has a fixed frame: slot 0 holds the running
//    closure, slots 1..nparams the arguments, then locals and temporaries,
//    allocated like a stack (next_reg) and released when their scope ends.
//    The frame size is the highest register used plus one.
//
// 2. Liveness. `live[r]` is set when an instruction writing r has been
//    emitted and cleared when r is released; at every safe point the set is
//    copied into the descriptor, so the GC scans exactly the slots that hold a
//    value some later instruction may read. Control flow keeps this exact:
//    a register written on every path of an `if`/`match`/`try` is marked live
//    only after the join (each branch starts from the state before it), and
//    registers created inside a branch are released before the join.
//    Invariant: a slot marked live always holds a valid Value.
//
// 3. Descriptors. Safe points are recorded while compiling (offset, live
//    snapshot, debug entries) and turned into FrameDescs when the function is
//    finished, because the code array may move until then and the frame size
//    (every CALL repeats it, as a step in bytes, in its last word) is known
//    only at the end. Each call also gets its memprof stub, appended after
//    the function's code (frames.h part 5).
//
// 4. Combined allocations. An allocation emitted right after another one,
//    with no jump target between them, is merged into it (ALLOC1 becomes
//    ALLOCN): one limit check, one descriptor with one debug entry per
//    sub-block. Stores to the sub-blocks' registers are deferred to the end
//    of the instruction, so every register keeps its old value until then and
//    the merged instruction's live set is the first allocation's; a field that
//    names a register an earlier sub-block writes is rewritten to refer to
//    that sub-block directly.
//
// 5. Short forms, for the interpreter's sake (finish_function and the
//    emitters): a comparison with a small int literal jumps on an immediate
//    (JNLTI .. JNGEI); a return of a local, an int literal or a constant is
//    one instruction (fold_returns: RET src, RETI, RETK); a pair or cons cell
//    is ALLOC2, an ALLOCN of two pairs ALLOCN2 (retag_*: the same layouts as
//    ALLOC1 and ALLOCN); a closure call of up to three arguments is CALL0 ..
//    CALL3. A top-level fn's CALLG gets its form by argc when the code is
//    linked (core/image.c), which knows its target. A comparison with nil, a
//    bool, [] or an int below 2^30 holds the value itself (EQK, NEK, JNEQK,
//    JNNEK: literal_constant).
//    Fused forms run two instructions with one dispatch, the second left in
//    place (where a jump, a fallback or the slow path still finds it):
//    ALLOC2_RET, ADD_RET and ADDI_RET (a pair or a sum returned at once), LOADK2 (two
//    constants in a row), TESTEMPTY_UNCONS (a match of [] then x :: xs),
//    UNPAIR_JNEQK (a pair taken apart, its first field tested); the
//    link adds SUBI_CALLG1 and ADDI_CALLG1 (`f(n - 1)`).
//
// 6. Modules. Each file is a module; its top-level names are globals
//    ("List.map"). Top-level functions and externals are static closures made
//    at compile time, so code may call a function defined further down.
//    Module top-level code runs in dependency order (a module finishes
//    compiling after everything it uses), the main script last.
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/grow.h"
#include "../../core/bytecode.h"
#include "../../core/frames.h"
#include "../../core/image.h"
#include "../../core/namemap.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"
#include "../lib/primitives.h"
#include "../lib/stdlib_sources.h"
#include "../runtime/shapes.h"
#include "ast.h"
#include "compiler.h"
#include "source.h"

// =====================================================================
// Data
// =====================================================================

typedef struct Member {
  char *name;
  uint32_t global;
  int prim;            // >= 0: external bound to primitive `prim`
  int arity;           // externals and top-level functions; -1 otherwise
  bool is_var;         // `var`: assignable
  bool is_fn;          // fn or external (cannot be redefined)
  int item;            // index of the top-level item declaring it
} Member;

// The members that share one name (a top-level `let` may shadow an earlier
// one), in declaration order, so item numbers ascend.
typedef struct MemberList {
  uint32_t *ids;       // indices in Module.members
  uint32_t count, cap;
  bool has_fn;         // one of them is a fn or external
} MemberList;

typedef struct Module {
  char *name;          // "List", "Util"; "" for the main script
  char *path;
  char *text;
  Source source;
  Arena arena;
  ParseResult parse;
  Member *members;
  uint32_t member_count, member_cap;
  NameMap member_lists;  // name -> index in by_name
  struct MemberList *by_name;   // the members of each name, in declaration order
  uint32_t by_name_count, by_name_cap;
  char **imports;      // lower-case names imported by this module
  uint32_t import_count, import_cap;
  Proto *init;
  int state;           // 0 compiling, 1 done
  bool failed;         // could not be read or parsed (reported once)
  bool cycle_reported;
  int current_item;    // top-level item being compiled (name resolution)
} Module;

typedef struct ModuleTable {
  Module **items;
  uint32_t count, cap;
  Module **order;      // init order
  uint32_t order_count;
  int errors;
} ModuleTable;

typedef struct Local {
  const char *name;
  uint32_t reg;
  bool is_var;
  uint32_t depth;
  uint32_t shadowed;       // index of the local of that name it hides, or NAMEMAP_NONE
  uint32_t var;            // its entry in the proto's locals (image_add_local)
} Local;

typedef struct Capture {
  const char *name;
  uint32_t parent_reg;     // register in the parent (after GETUPVAL if needed)
  bool from_parent_cap;    // parent itself captured it (index parent_cap)
  uint32_t parent_cap;
  bool is_self;
} Capture;

typedef struct PendingDesc {
  uint32_t offset;         // instruction start
  bool is_call;
  const uint32_t *live;    // owned by the FnState (FnState.owned)
  uint32_t live_count;
  const DebugInfo **debug;
  uint32_t debug_count, debug_cap;
} PendingDesc;

typedef struct Loop {
  uint32_t continue_target;    // offset, or UINT32_MAX when patched later
  uint32_t *continue_patches;
  uint32_t continue_count, continue_cap;
  uint32_t *break_patches;
  uint32_t break_count, break_cap;
  uint32_t try_depth;
  uint32_t scope_depth;
  struct Loop *outer;
} Loop;

typedef struct FnState {
  struct FnState *parent;
  Vm *vm;
  Module *module;
  Proto *proto;
  bool is_top;             // module top-level code
  Local *locals;
  uint32_t local_count, local_cap;
  NameMap local_index;     // name -> index of its innermost local
  uint32_t scope_depth;
  Capture *caps;           // captured names, field i + 1 of the closure
  uint32_t cap_count, cap_cap;
  NameMap cap_index;       // name -> index in caps
  SrcPos last_pos;         // the expression being compiled (for errors without one)
  bool too_many_registers; // reported once; the rest of the function is skipped
  const char *self_name;   // name of a local fn being compiled (recursion)
  uint32_t next_reg, max_reg;
  uint8_t *live;
  uint32_t live_cap;
  uint32_t *live_list;     // the registers r with live[r], ascending
  uint32_t live_count, live_list_cap;
  uint64_t live_version;   // bumped whenever a bit of `live` changes
  // The latest safe point's live list (interned in the frame table), reused
  // by the next one when nothing changed since.
  const uint32_t *snap;
  uint32_t snap_count, snap_skip_from, snap_skip_to, snap_next_reg;
  uint64_t snap_version;
  uint32_t *scratch;       // where a live list is gathered before interning
  uint32_t scratch_cap;
  PendingDesc *descs;
  uint32_t desc_count, desc_cap;
  uint32_t *fsize_patches;
  uint32_t fsize_patch_count, fsize_patch_cap;
  uint32_t last_label;     // offset of the latest jump target
  uint32_t last_alloc;     // offset of the last allocation, if it ends the code
  bool last_alloc_valid;
  uint32_t try_depth;
  Loop *loop;
  struct LetFail *let_fails;   // MATCHFAILs of `let` patterns, emitted at the end
  uint32_t let_fail_count, let_fail_cap;
} FnState;

// A refutable `let` pattern's failure: its jumps, position and the registers
// live there, emitted as a MATCHFAIL after the function's code
// (finish_function) so that the success path runs straight on.
typedef struct LetFail {
  uint32_t *jumps;
  uint32_t jump_count;
  SrcPos pos;
  const uint32_t *live;    // interned in the frame table
  uint32_t live_count;
} LetFail;

typedef struct Compiler {
  Vm *vm;
  ModuleTable *modules;
} Compiler;

enum { K_NIL = 0, K_FALSE, K_TRUE, K_EMPTY, K_EMPTY_ARRAY };
// A function's frame holds at most this many registers (locals and
// temporaries live at once); past it, a compile error. It bounds the live
// set every safe point records, so that compile time stays linear.
enum { MAX_FUNCTION_REGISTERS = 4096 };
// A constructor (list, tuple, array literal) with more items than this is
// built through a temporary array, one item at a time, instead of in
// registers (compile_wide_ctor), and one whose nested constructors have more
// leaves than this is not flattened (prepare_leaves).
enum { MAX_CTOR_LEAVES = 256 };

// =====================================================================
// Small helpers
// =====================================================================

static void *xrealloc(void *p, size_t bytes) { return vm_realloc_or_die(p, bytes, "compiling"); }

// Room for one more item at (ptr)[count]: base/grow.h's doubling, from 8.
#define GROW(ptr, count, cap)                                                        \
  do {                                                                               \
    if ((count) >= (cap)) {                                                          \
      uint64_t cap_ = (uint64_t)(cap);                                               \
      void *grown_ = grow_array64((ptr), &cap_, (uint64_t)(count) + 1, sizeof *(ptr), 8); \
      if (!grown_) vm_out_of_memory(NULL, "compiling");                              \
      (ptr) = grown_;                                                                \
      (cap) = cap_;                                                                  \
    }                                                                                \
  } while (0)

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = xrealloc(NULL, n);
  memcpy(d, s, n);
  return d;
}

// A copy of `name` with its first letter changed to `upper` case (module
// names are capitalised, file and import names are not).
static char *case_first(const char *name, bool upper) {
  char *s = xstrdup(name);
  if (upper && s[0] >= 'a' && s[0] <= 'z') s[0] = (char)(s[0] - 32);
  if (!upper && s[0] >= 'A' && s[0] <= 'Z') s[0] = (char)(s[0] + 32);
  return s;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = xrealloc(NULL, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

static void error_at(FnState *fs, SrcPos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void error_at(FnState *fs, SrcPos pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%u:%u: error: ", fs->module->path, pos.line, pos.start - pos.line_start + 1);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fs->vm->modules->errors++;
}

// =====================================================================
// Constants and globals
// =====================================================================

static uint32_t string_constant(Vm *vm, const char *bytes, size_t len) {
  Value s = gc_alloc_static(vm, str_wosize_for(len), TAG_STRING);
  memcpy(val_fields(s), bytes, len);
  str_finish(s, len);
  return image_add_constant(vm, s);
}

static uint32_t float_constant(Vm *vm, double d) {
  Value f = gc_alloc_static(vm, 1, TAG_FLOAT);
  memcpy(val_fields(f), &d, sizeof d);
  return image_add_constant(vm, f);
}

static Value static_closure(Vm *vm, const Proto *p) {
  Value c = gc_alloc_static(vm, 1, TAG_CLOSURE);
  val_fields(c)[0] = val_of_int(p->id);
  return c;
}

// =====================================================================
// Emission
// =====================================================================

static uint32_t here(FnState *fs) { return fs->proto->code_len; }

static void emit(FnState *fs, uint32_t word) {
  *image_code_slot(fs->proto) = word;
}

static void note_position(FnState *fs, SrcPos pos) {
  Proto *p = fs->proto;
  uint32_t col = pos.start - pos.line_start;
  if (p->line_count > 0) {
    LinePos *last = &p->lines[p->line_count - 1];
    if (last->line == pos.line && last->col == col) return;
    if (last->offset == p->code_len) {
      last->line = pos.line;
      last->col = col;
      return;
    }
  }
  *image_line_slot(p) = (LinePos){p->code_len, pos.line, col};
}

// Starts an instruction: records its position; any instruction but an
// allocation ends the run of allocations that can be merged.
static uint32_t emit_op(FnState *fs, Opcode op, SrcPos pos) {
  note_position(fs, pos);
  fs->last_alloc_valid = false;
  uint32_t at = here(fs);
  emit(fs, op);
  return at;
}

static void mark_label(FnState *fs) {
  fs->last_label = here(fs);
  fs->last_alloc_valid = false;
}

// Index of the first entry of the live list that is >= reg.
static uint32_t live_lower_bound(const FnState *fs, uint32_t reg) {
  uint32_t lo = 0, hi = fs->live_count;
  if (hi > 0 && fs->live_list[hi - 1] < reg) return hi;   // the usual case: at the top
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (fs->live_list[mid] < reg) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void set_live(FnState *fs, uint32_t reg) {
  while (reg >= fs->live_cap) {
    uint32_t old = fs->live_cap;
    fs->live_cap = old ? old * 2 : 64;
    fs->live = xrealloc(fs->live, fs->live_cap);
    memset(fs->live + old, 0, fs->live_cap - old);
  }
  if (fs->live[reg]) return;
  fs->live[reg] = 1;
  fs->live_version++;
  GROW(fs->live_list, fs->live_count, fs->live_list_cap);
  uint32_t at = live_lower_bound(fs, reg);
  memmove(fs->live_list + at + 1, fs->live_list + at, (fs->live_count - at) * sizeof *fs->live_list);
  fs->live_list[at] = reg;
  fs->live_count++;
}

static bool is_live(FnState *fs, uint32_t reg) {
  return reg < fs->live_cap && fs->live[reg];
}

static void clear_live(FnState *fs, uint32_t reg) {
  if (reg >= fs->live_cap || !fs->live[reg]) return;
  fs->live[reg] = 0;
  fs->live_version++;
  uint32_t at = live_lower_bound(fs, reg);
  memmove(fs->live_list + at, fs->live_list + at + 1, (fs->live_count - at - 1) * sizeof *fs->live_list);
  fs->live_count--;
}

static uint32_t alloc_reg(FnState *fs) {
  if (fs->next_reg >= MAX_FUNCTION_REGISTERS && !fs->too_many_registers) {
    fs->too_many_registers = true;
    error_at(fs, fs->last_pos, "%s needs more than %d registers (too many locals, or too wide an expression)",
             fs->proto->name, MAX_FUNCTION_REGISTERS);
  }
  uint32_t r = fs->next_reg++;
  if (fs->next_reg > fs->max_reg) fs->max_reg = fs->next_reg;
  clear_live(fs, r);
  return r;
}

static void free_to(FnState *fs, uint32_t mark) {
  for (uint32_t r = mark; r < fs->next_reg; r++) clear_live(fs, r);
  fs->next_reg = mark;
}

static const DebugInfo *debug_for(FnState *fs, SrcPos pos) {
  return frames_debug_new(fs->vm->frames, fs->proto->name, fs->module->path, pos.line,
                          pos.start - pos.line_start, pos.end - pos.line_start);
}

// Records a safe point at `offset` with the current live set, minus the
// registers in [skip_from, skip_to) (arguments a call hands over).
// The live registers, minus [skip_from, skip_to), interned in the frame
// table: the previous safe point's list when nothing changed since.
static void live_snapshot(FnState *fs, uint32_t skip_from, uint32_t skip_to, const uint32_t **live,
                          uint32_t *count) {
  if (!(fs->snap && fs->snap_version == fs->live_version && fs->snap_skip_from == skip_from &&
        fs->snap_skip_to == skip_to && fs->snap_next_reg == fs->next_reg)) {
    // The live list minus [skip_from, skip_to): usually a prefix of it.
    uint32_t below = live_lower_bound(fs, skip_from), above = live_lower_bound(fs, skip_to);
    const uint32_t *list = fs->live_list;
    uint32_t n = below;
    if (above < fs->live_count && skip_from < skip_to) {
      if (fs->live_count >= fs->scratch_cap) {
        fs->scratch_cap = fs->live_count + 64;
        fs->scratch = xrealloc(fs->scratch, fs->scratch_cap * sizeof *fs->scratch);
      }
      memcpy(fs->scratch, list, below * sizeof *list);
      memcpy(fs->scratch + below, list + above, (fs->live_count - above) * sizeof *list);
      list = fs->scratch;
      n = below + fs->live_count - above;
    } else if (skip_from >= skip_to) {
      n = fs->live_count;
    }
    fs->snap = frames_live_list(fs->vm->frames, list, n);
    fs->snap_count = n;
    fs->snap_version = fs->live_version;
    fs->snap_skip_from = skip_from;
    fs->snap_skip_to = skip_to;
    fs->snap_next_reg = fs->next_reg;
  }
  *live = fs->snap;
  *count = fs->snap_count;
}

static PendingDesc *add_safepoint(FnState *fs, uint32_t offset, bool is_call, SrcPos pos,
                                  uint32_t skip_from, uint32_t skip_to) {
  GROW(fs->descs, fs->desc_count, fs->desc_cap);
  PendingDesc *d = &fs->descs[fs->desc_count++];
  memset(d, 0, sizeof *d);
  d->offset = offset;
  d->is_call = is_call;
  live_snapshot(fs, skip_from, skip_to, &d->live, &d->live_count);
  GROW(d->debug, d->debug_count, d->debug_cap);
  d->debug[d->debug_count++] = debug_for(fs, pos);
  return d;
}

static void emit_fsize_placeholder(FnState *fs) {
  GROW(fs->fsize_patches, fs->fsize_patch_count, fs->fsize_patch_cap);
  fs->fsize_patches[fs->fsize_patch_count++] = here(fs);
  emit(fs, 0);
}

static uint32_t emit_jump(FnState *fs, Opcode op, SrcPos pos, uint32_t a, uint32_t b, int nops) {
  uint32_t at = emit_op(fs, op, pos);
  if (nops >= 1) emit(fs, a);
  if (nops >= 2) emit(fs, b);
  emit(fs, 0);  // offset, patched
  return at;
}

// Points the jump instruction at `at` (its last word) to the current offset.
static void patch_here(FnState *fs, uint32_t at) {
  uint32_t len = bytecode_length(fs->proto->code + at);
  fs->proto->code[at + len - 1] = (uint32_t)((int32_t)here(fs) - (int32_t)at);
  mark_label(fs);
}

static void patch_to(FnState *fs, uint32_t at, uint32_t target) {
  uint32_t len = bytecode_length(fs->proto->code + at);
  fs->proto->code[at + len - 1] = (uint32_t)((int32_t)target - (int32_t)at);
}

static void emit_move(FnState *fs, uint32_t dst, uint32_t src, SrcPos pos) {
  if (dst == src) return;
  emit_op(fs, BC_MOVE, pos);
  emit(fs, dst);
  emit(fs, src);
  set_live(fs, dst);
}

static void emit_loadk(FnState *fs, uint32_t dst, uint32_t k, SrcPos pos) {
  emit_op(fs, BC_LOADK, pos);
  emit(fs, dst);
  emit(fs, k);
  set_live(fs, dst);
}

// =====================================================================
// Allocation (with merging into combined allocations)
// =====================================================================

static uint32_t tag_extra_words(unsigned tag) { return tag == TAG_RECORD ? 1 : 0; }

// Rewrites the ALLOC1 at `at` (the last instruction) as an ALLOCN of one block.
static void alloc1_to_allocn(FnState *fs, uint32_t at) {
  Proto *p = fs->proto;
  uint32_t *ins = p->code + at;
  uint32_t dst = ins[1], hd = ins[2], n = ins[3];
  uint32_t extra = tag_extra_words(hd & 0xff);
  uint32_t old_len = 4 + extra + n;
  uint32_t tmp[8 + MAX_YOUNG_WOSIZE];
  memcpy(tmp, ins, old_len * sizeof(uint32_t));
  p->code_len = at;
  emit(fs, BC_ALLOCN);
  emit(fs, (uint32_t)hd_wosize(hd) + 1);
  emit(fs, 1);
  emit(fs, dst);
  emit(fs, hd);
  emit(fs, n);
  for (uint32_t i = 0; i < extra + n; i++) emit(fs, tmp[4 + i]);
}

// Finds, in the ALLOCN at `at`, the latest sub-block writing register `reg`.
static int subblock_writing(FnState *fs, uint32_t at, uint32_t reg) {
  uint32_t *ins = fs->proto->code + at;
  uint32_t nsub = ins[2], *sub = ins + 3;
  int found = -1;
  for (uint32_t i = 0; i < nsub; i++) {
    uint32_t extra = tag_extra_words(sub[1] & 0xff);
    if (sub[0] == reg) found = (int)i;
    sub += 3 + extra + sub[2];
  }
  return found;
}

static bool can_merge(FnState *fs, uint64_t whsize) {
  if (!fs->last_alloc_valid || fs->last_label > fs->last_alloc) return false;
  uint32_t *ins = fs->proto->code + fs->last_alloc;
  if (ins[0] == BC_ALLOC1)
    return hd_wosize(ins[2]) + 1 + whsize <= ALLOCN_MAX_WHSIZE;
  return ins[2] < ALLOCN_MAX_SUBBLOCKS && ins[1] + whsize <= ALLOCN_MAX_WHSIZE;
}

// Emits an allocation of a block with header `hd` (wosize, tag) whose fields
// are the registers `regs` (records: preceded by the shape id), writing dst.
static void emit_alloc(FnState *fs, uint32_t dst, unsigned tag, uint32_t shape,
                       const uint32_t *regs, uint32_t n, SrcPos pos) {
  uint64_t wosize = n + tag_extra_words(tag);
  Header hd = hd_make(wosize, tag, 0);
  if (wosize > MAX_YOUNG_WOSIZE) {
    uint32_t at = emit_op(fs, BC_ALLOCBIG, pos);
    emit(fs, dst);
    emit(fs, (uint32_t)hd);
    emit(fs, n);
    if (tag == TAG_RECORD) emit(fs, shape);
    for (uint32_t i = 0; i < n; i++) emit(fs, regs[i]);
    add_safepoint(fs, at, false, pos, 0, 0);
  } else if (can_merge(fs, wosize + 1)) {
    uint32_t at = fs->last_alloc;
    if (fs->proto->code[at] == BC_ALLOC1) alloc1_to_allocn(fs, at);
    uint32_t *ins = fs->proto->code + at;
    uint32_t nsub = ins[2];
    uint32_t fields[MAX_YOUNG_WOSIZE];
    for (uint32_t i = 0; i < n; i++) {
      int sb = subblock_writing(fs, at, regs[i]);
      fields[i] = sb >= 0 ? (OPERAND_SUBBLOCK | (uint32_t)sb) : regs[i];
    }
    ins[1] += (uint32_t)wosize + 1;
    ins[2] = nsub + 1;
    emit(fs, dst);
    emit(fs, (uint32_t)hd);
    emit(fs, n);
    if (tag == TAG_RECORD) emit(fs, shape);
    for (uint32_t i = 0; i < n; i++) emit(fs, fields[i]);
    PendingDesc *d = &fs->descs[fs->desc_count - 1];
    GROW(d->debug, d->debug_count, d->debug_cap);
    d->debug[d->debug_count++] = debug_for(fs, pos);
  } else {
    uint32_t at = emit_op(fs, BC_ALLOC1, pos);
    emit(fs, dst);
    emit(fs, (uint32_t)hd);
    emit(fs, n);
    if (tag == TAG_RECORD) emit(fs, shape);
    for (uint32_t i = 0; i < n; i++) emit(fs, regs[i]);
    add_safepoint(fs, at, false, pos, 0, 0);
    fs->last_alloc = at;
    fs->last_alloc_valid = true;
  }
  set_live(fs, dst);
}

// =====================================================================
// Scopes and name resolution
// =====================================================================

static void begin_scope(FnState *fs) { fs->scope_depth++; }

// Drops the innermost local; its name means what it hid again.
static void pop_local(FnState *fs) {
  Local *l = &fs->locals[--fs->local_count];
  *namemap_slot(&fs->local_index, l->name) = l->shadowed;
  image_end_local(fs->proto, l->var, here(fs));
}

static void end_scope(FnState *fs, uint32_t reg_mark) {
  while (fs->local_count > 0 && fs->locals[fs->local_count - 1].depth >= fs->scope_depth) pop_local(fs);
  fs->scope_depth--;
  free_to(fs, reg_mark);
}

static void add_local(FnState *fs, const char *name, uint32_t reg, bool is_var) {
  GROW(fs->locals, fs->local_count, fs->local_cap);
  uint32_t *slot = namemap_slot(&fs->local_index, name);
  fs->locals[fs->local_count] =
      (Local){name, reg, is_var, fs->scope_depth, *slot, image_add_local(fs->proto, name, reg, here(fs))};
  *slot = fs->local_count++;
}

typedef enum { RES_NONE, RES_LOCAL, RES_UPVAL, RES_GLOBAL } ResKind;
typedef struct Resolved {
  ResKind kind;
  uint32_t index;     // register, capture index (1-based field), or global
  bool is_var;
  const Member *member;
} Resolved;

static Local *find_local(FnState *fs, const char *name) {
  uint32_t i = namemap_get(&fs->local_index, name);
  return i == NAMEMAP_NONE ? NULL : &fs->locals[i];
}

// A top-level `let` may shadow an earlier one: each gets its own global.
// While the module compiles, a name means the latest binding declared at or
// before the current item (or, for a forward reference, the first one);
// once compiled, the last one.
static MemberList *member_list(Module *m, const char *name) {
  uint32_t i = namemap_get(&m->member_lists, name);
  return i == NAMEMAP_NONE ? NULL : &m->by_name[i];
}

// The position in `list` of the last member declared at or before `item`
// (binary search: items ascend), or -1 when all are later.
static int64_t last_at_or_before(const Module *m, const MemberList *list, int item) {
  int64_t lo = 0, hi = list->count;   // answer in [lo - 1, hi)
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    if (m->members[list->ids[mid]].item <= item) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

static Member *find_member(Module *m, const char *name) {
  MemberList *list = member_list(m, name);
  if (!list) return NULL;
  if (m->state == 1) return &m->members[list->ids[list->count - 1]];
  int64_t k = last_at_or_before(m, list, m->current_item);
  return &m->members[list->ids[k < 0 ? 0 : k]];
}

static Member *find_member_at(Module *m, const char *name, int item) {
  MemberList *list = member_list(m, name);
  int64_t k = list ? last_at_or_before(m, list, item) : -1;
  return k >= 0 && m->members[list->ids[k]].item == item ? &m->members[list->ids[k]] : NULL;
}

static Module *prelude_of(Vm *vm) {
  ModuleTable *t = vm->modules;
  return t->count > 0 && strcmp(t->items[0]->name, "Prelude") == 0 ? t->items[0] : NULL;
}

static Resolved resolve_global(FnState *fs, const char *name) {
  Member *m = find_member(fs->module, name);
  if (!m) {
    Module *pre = prelude_of(fs->vm);
    if (pre && pre != fs->module) m = find_member(pre, name);
  }
  if (!m) return (Resolved){RES_NONE, 0, false, NULL};
  return (Resolved){RES_GLOBAL, m->global, m->is_var, m};
}

// The closure field (1-based) holding captured `name`, added if new.
static uint32_t add_capture(FnState *fs, const char *name, Resolved outer, bool self) {
  uint32_t *slot = namemap_slot(&fs->cap_index, name);
  if (*slot != NAMEMAP_NONE) return *slot + 1;
  *slot = fs->cap_count;
  GROW(fs->caps, fs->cap_count, fs->cap_cap);
  Capture *c = &fs->caps[fs->cap_count++];
  c->name = name;
  c->is_self = self;
  c->from_parent_cap = outer.kind == RES_UPVAL;
  c->parent_cap = outer.index;
  c->parent_reg = outer.index;
  return fs->cap_count;
}

static Resolved resolve(FnState *fs, const char *name) {
  Local *l = find_local(fs, name);
  if (l) return (Resolved){RES_LOCAL, l->reg, l->is_var, NULL};
  uint32_t cap = namemap_get(&fs->cap_index, name);
  if (cap != NAMEMAP_NONE) return (Resolved){RES_UPVAL, cap + 1, false, NULL};
  if (fs->self_name && strcmp(fs->self_name, name) == 0 && fs->parent) {
    Local *pl = find_local(fs->parent, name);
    if (pl) return (Resolved){RES_UPVAL, add_capture(fs, name, (Resolved){RES_LOCAL, pl->reg, false, NULL}, true), false, NULL};
  }
  if (fs->parent && !fs->is_top) {
    Resolved outer = resolve(fs->parent, name);
    if (outer.kind == RES_LOCAL || outer.kind == RES_UPVAL) {
      if (outer.is_var) return (Resolved){RES_LOCAL, UINT32_MAX, true, NULL};
      return (Resolved){RES_UPVAL, add_capture(fs, name, outer, false), false, NULL};
    }
    if (outer.kind == RES_GLOBAL) return outer;
  }
  return resolve_global(fs, name);
}

// =====================================================================
// Modules
// =====================================================================

static Module *load_module(Vm *vm, const char *name, const char *path, char *text, size_t len);
static Module *new_module(Vm *vm, const char *name, const char *path, char *text, size_t len);
static Module *module_for(FnState *fs, const char *name, SrcPos pos);

static void compile_expr(FnState *fs, Expr *e, uint32_t dst);
static void compile_stmt(FnState *fs, Expr *e);
static bool literal_constant(FnState *fs, const Expr *e, int64_t *k);
static uint32_t compile_to_reg(FnState *fs, Expr *e);
static Proto *compile_function(FnState *parent, Module *m, FnDef *fn, const char *name);

// =====================================================================
// Expressions
// =====================================================================

static uint32_t shape_for(Vm *vm, const char **names, int count) {
  uint32_t *syms = xrealloc(NULL, ((size_t)count + 1) * sizeof *syms);
  for (int i = 0; i < count; i++) syms[i] = shapes_symbol(vm->shapes, names[i]);
  uint32_t shape = shapes_intern(vm->shapes, syms, (uint32_t)count);
  free(syms);
  return shape;
}

static void compile_literal(FnState *fs, Expr *e, uint32_t dst) {
  Vm *vm = fs->vm;
  switch (e->kind) {
    case EX_NIL: emit_loadk(fs, dst, K_NIL, e->pos); break;
    case EX_BOOL: emit_loadk(fs, dst, e->u.boolean ? K_TRUE : K_FALSE, e->pos); break;
    case EX_EMPTY_LIST: emit_loadk(fs, dst, K_EMPTY, e->pos); break;
    case EX_INT:
      if (e->u.int_val >= INT32_MIN && e->u.int_val <= INT32_MAX) {
        emit_op(fs, BC_LOADI, e->pos);
        emit(fs, dst);
        emit(fs, (uint32_t)(int32_t)e->u.int_val);
        set_live(fs, dst);
      } else {
        emit_loadk(fs, dst, image_add_constant(vm, val_of_int(e->u.int_val)), e->pos);
      }
      break;
    case EX_FLOAT: emit_loadk(fs, dst, float_constant(vm, e->u.float_val), e->pos); break;
    case EX_STRING:
      emit_loadk(fs, dst, string_constant(vm, e->u.str.bytes, e->u.str.len), e->pos);
      break;
    default: break;
  }
}

static void compile_name(FnState *fs, Expr *e, uint32_t dst) {
  Resolved r = resolve(fs, e->u.name);
  switch (r.kind) {
    case RES_LOCAL:
      if (r.index == UINT32_MAX) {
        error_at(fs, e->pos, "cannot capture var %s in a closure", e->u.name);
        return;
      }
      emit_move(fs, dst, r.index, e->pos);
      return;
    case RES_UPVAL:
      emit_op(fs, BC_GETUPVAL, e->pos);
      emit(fs, dst);
      emit(fs, r.index);
      set_live(fs, dst);
      return;
    case RES_GLOBAL:
      emit_op(fs, BC_GETGLOBAL, e->pos);
      emit(fs, dst);
      emit(fs, r.index);
      set_live(fs, dst);
      return;
    case RES_NONE: error_at(fs, e->pos, "unbound name %s", e->u.name); return;
  }
}

static Member *member_of(FnState *fs, Expr *e) {
  Module *m = module_for(fs, e->u.member.module, e->pos);
  if (!m) return NULL;
  Member *mem = find_member(m, e->u.member.member);
  if (!mem) error_at(fs, e->pos, "module %s has no member %s", e->u.member.module, e->u.member.member);
  return mem;
}

static void compile_member(FnState *fs, Expr *e, uint32_t dst) {
  Member *mem = member_of(fs, e);
  if (!mem) return;
  emit_op(fs, BC_GETGLOBAL, e->pos);
  emit(fs, dst);
  emit(fs, mem->global);
  set_live(fs, dst);
}

// Compiles the items into fresh consecutive registers; returns the first.
static uint32_t compile_items(FnState *fs, Expr **items, int count) {
  uint32_t first = fs->next_reg;
  for (int i = 0; i < count; i++) compile_expr(fs, items[i], alloc_reg(fs));
  return first;
}

// ---------------------------------------------------------------------
// Constructor trees ((a, b) :: acc, [x, y], {p: (1, 2)}): all the leaves are
// evaluated first, left to right, then every block is allocated in post-order
// with nothing in between, so that the allocations merge (part 4).

typedef struct Leaves {
  uint32_t *regs;
  uint32_t count, cap;
} Leaves;

static bool is_ctor(const Expr *e) {
  switch (e->kind) {
    case EX_TUPLE: case EX_CONS: case EX_RECORD: case EX_LIST: return true;
    case EX_ARRAY: return e->u.items.count > 0;
    default: return false;
  }
}

static void push_leaf(Leaves *lv, uint32_t reg) {
  GROW(lv->regs, lv->count, lv->cap);
  lv->regs[lv->count++] = reg;
}

static Expr **ctor_children(Expr *e, int *n) {
  if (e->kind == EX_RECORD) {
    *n = e->u.record.count;
    return e->u.record.values;
  }
  *n = e->u.items.count;
  return e->u.items.items;
}

// The children of a constructor, in evaluation order, into kids[0..n).
static Expr **children(Expr *e, Expr *pair[2], int *n) {
  if (e->kind != EX_CONS) return ctor_children(e, n);
  pair[0] = e->u.binary.left;
  pair[1] = e->u.binary.right;
  *n = 2;
  return pair;
}

static void prepare_leaves(FnState *fs, Expr *e, Leaves *lv) {
  int n;
  Expr *pair[2];
  Expr **kids = children(e, pair, &n);
  for (int i = 0; i < n; i++) {
    if (is_ctor(kids[i])) prepare_leaves(fs, kids[i], lv);
    else push_leaf(lv, compile_to_reg(fs, kids[i]));
  }
  if (e->kind == EX_LIST) {
    uint32_t empty = alloc_reg(fs);
    emit_loadk(fs, empty, K_EMPTY, e->pos);
    push_leaf(lv, empty);
  }
}

// Allocates e (and, unless shallow, its nested constructors, post-order)
// from the leaves lv->regs[*cursor ...], in prepare_leaves' order.
static void emit_ctor_at(FnState *fs, Expr *e, uint32_t dst, const Leaves *lv, uint32_t *cursor, bool shallow) {
  int n;
  Expr *pair[2];
  Expr **kids = children(e, pair, &n);
  uint32_t *regs = xrealloc(NULL, (size_t)(n + 1) * sizeof *regs);
  for (int i = 0; i < n; i++) {
    if (!shallow && is_ctor(kids[i])) {
      regs[i] = alloc_reg(fs);
      emit_ctor_at(fs, kids[i], regs[i], lv, cursor, false);
    } else {
      regs[i] = lv->regs[(*cursor)++];
    }
  }
  switch (e->kind) {
    case EX_TUPLE: emit_alloc(fs, dst, TAG_TUPLE, 0, regs, (uint32_t)n, e->pos); break;
    case EX_ARRAY: emit_alloc(fs, dst, TAG_ARRAY, 0, regs, (uint32_t)n, e->pos); break;
    case EX_CONS: emit_alloc(fs, dst, TAG_CONS, 0, regs, 2, e->pos); break;
    case EX_RECORD:   // the parser refused duplicate fields
      emit_alloc(fs, dst, TAG_RECORD, shape_for(fs->vm, e->u.record.names, n), regs, (uint32_t)n, e->pos);
      break;
    case EX_LIST: {
      uint32_t tail = lv->regs[(*cursor)++];
      for (int i = n - 1; i >= 0; i--) {
        uint32_t target = i == 0 ? dst : alloc_reg(fs);
        uint32_t fields[2] = {regs[i], tail};
        emit_alloc(fs, target, TAG_CONS, 0, fields, 2, e->pos);
        tail = target;
      }
      break;
    }
    default: break;
  }
  free(regs);
}

// The leaves prepare_leaves would evaluate for e, counted up to `cap` + 1.
static uint32_t leaf_count(Expr *e, uint32_t cap) {
  int n;
  Expr *pair[2];
  Expr **kids = children(e, pair, &n);
  uint32_t count = e->kind == EX_LIST;
  for (int i = 0; i < n && count <= cap; i++) count += is_ctor(kids[i]) ? leaf_count(kids[i], cap - count) : 1;
  return count;
}

// CALLPRIM of the primitive named `name` on registers first..first+argc-1.
static void emit_callprim(FnState *fs, const char *name, uint32_t first, uint32_t argc, uint32_t dst, SrcPos pos) {
  int prim = primitives_lookup(name);
  uint32_t at = emit_op(fs, BC_CALLPRIM, pos);
  emit(fs, (uint32_t)prim);
  emit(fs, first);
  emit(fs, argc);
  emit(fs, dst);
  add_safepoint(fs, at, false, pos, 0, 0);
  set_live(fs, dst);
}

static void emit_loadi(FnState *fs, uint32_t dst, int32_t n, SrcPos pos) {
  emit_op(fs, BC_LOADI, pos);
  emit(fs, dst);
  emit(fs, (uint32_t)n);
  set_live(fs, dst);
}

// A list, tuple or array literal of more than MAX_CTOR_LEAVES items: a
// temporary array is made, each item evaluated (left to right) and stored
// into it, and the array becomes the result or is turned into the list or
// tuple by a primitive. Registers and the code per item stay constant, so
// a literal of a million items compiles in linear time and space.
static void compile_wide_ctor(FnState *fs, Expr *e, uint32_t dst) {
  uint32_t mark = fs->next_reg;
  int n = e->u.items.count;
  uint32_t tmp = alloc_reg(fs), count = alloc_reg(fs), fill = alloc_reg(fs);
  emit_loadi(fs, count, n, e->pos);
  emit_loadk(fs, fill, K_NIL, e->pos);
  emit_callprim(fs, "array_make", count, 2, tmp, e->pos);
  free_to(fs, tmp + 1);
  for (int i = 0; i < n; i++) {
    uint32_t item_mark = fs->next_reg;
    uint32_t r = compile_to_reg(fs, e->u.items.items[i]);
    uint32_t index = alloc_reg(fs);
    emit_loadi(fs, index, i, e->u.items.items[i]->pos);
    emit_op(fs, BC_SETINDEX, e->u.items.items[i]->pos);
    emit(fs, tmp);
    emit(fs, index);
    emit(fs, r);
    free_to(fs, item_mark);
  }
  if (e->kind == EX_ARRAY) emit_move(fs, dst, tmp, e->pos);
  else emit_callprim(fs, e->kind == EX_LIST ? "array_to_list" : "array_to_tuple", tmp, 1, dst, e->pos);
  free_to(fs, mark);
  set_live(fs, dst);
}

// A constructor whose nested constructors hold more than MAX_CTOR_LEAVES
// leaves: its direct items are compiled one after the other (each
// constructor among them on its own), then it is allocated.
static void compile_ctor_unflattened(FnState *fs, Expr *e, uint32_t dst) {
  uint32_t mark = fs->next_reg;
  int n;
  Expr *pair[2];
  Expr **kids = children(e, pair, &n);
  Leaves lv = {0};
  for (int i = 0; i < n; i++) {
    uint32_t r = alloc_reg(fs);
    compile_expr(fs, kids[i], r);
    push_leaf(&lv, r);
  }
  if (e->kind == EX_LIST) {
    uint32_t empty = alloc_reg(fs);
    emit_loadk(fs, empty, K_EMPTY, e->pos);
    push_leaf(&lv, empty);
  }
  uint32_t cursor = 0;
  emit_ctor_at(fs, e, dst, &lv, &cursor, true);
  free(lv.regs);
  free_to(fs, mark);
  set_live(fs, dst);
}

static void compile_ctor(FnState *fs, Expr *e, uint32_t dst) {
  if ((e->kind == EX_LIST || e->kind == EX_ARRAY || e->kind == EX_TUPLE) && e->u.items.count > MAX_CTOR_LEAVES) {
    compile_wide_ctor(fs, e, dst);
    return;
  }
  if (leaf_count(e, MAX_CTOR_LEAVES) > MAX_CTOR_LEAVES) {
    compile_ctor_unflattened(fs, e, dst);
    return;
  }
  uint32_t mark = fs->next_reg;
  Leaves lv = {0};
  prepare_leaves(fs, e, &lv);
  uint32_t cursor = 0;
  emit_ctor_at(fs, e, dst, &lv, &cursor, false);
  free(lv.regs);
  free_to(fs, mark);
  set_live(fs, dst);
}

static void compile_array(FnState *fs, Expr *e, uint32_t dst) {
  if (e->u.items.count == 0) {
    emit_loadk(fs, dst, K_EMPTY_ARRAY, e->pos);
    return;
  }
  compile_ctor(fs, e, dst);
}

// Emits the CLOSURE for `p` (compiled with state `child`) into dst.
static void emit_closure(FnState *fs, FnState *child, Proto *p, uint32_t dst, SrcPos pos) {
  uint32_t mark = fs->next_reg;
  uint32_t *regs = xrealloc(NULL, (child->cap_count + 1) * sizeof *regs);
  for (uint32_t i = 0; i < child->cap_count; i++) {
    Capture *c = &child->caps[i];
    if (c->is_self && c->parent_reg == dst) {
      regs[i] = OPERAND_SELF;
    } else if (c->from_parent_cap) {
      regs[i] = alloc_reg(fs);
      emit_op(fs, BC_GETUPVAL, pos);
      emit(fs, regs[i]);
      emit(fs, c->parent_cap);
      set_live(fs, regs[i]);
    } else {
      regs[i] = c->parent_reg;
    }
  }
  uint32_t at = emit_op(fs, BC_CLOSURE, pos);
  emit(fs, dst);
  emit(fs, p->id);
  emit(fs, child->cap_count);
  for (uint32_t i = 0; i < child->cap_count; i++) emit(fs, regs[i]);
  free(regs);
  add_safepoint(fs, at, false, pos, 0, 0);
  free_to(fs, mark);
  set_live(fs, dst);
}

static void init_fn_state(FnState *fs, FnState *parent, Vm *vm, Module *m, Proto *p) {
  memset(fs, 0, sizeof *fs);
  fs->parent = parent;
  fs->vm = vm;
  fs->module = m;
  fs->proto = p;
}

// Frees what compiling one function needed (finish_function freed the rest).
static void free_fn_state(FnState *fs) {
  free(fs->locals);
  free(fs->caps);
  namemap_free(&fs->local_index);
  namemap_free(&fs->cap_index);
}

static void finish_function(FnState *fs);

static void compile_fn_body(FnState *fs, FnDef *fn) {
  fs->next_reg = fs->max_reg = 1 + (uint32_t)fn->param_count;
  for (uint32_t r = 0; r < fs->next_reg; r++) set_live(fs, r);
  begin_scope(fs);
  for (int i = 0; i < fn->param_count; i++) add_local(fs, fn->params[i], 1 + (uint32_t)i, false);
  uint32_t result = alloc_reg(fs);
  compile_expr(fs, fn->body, result);
  emit_op(fs, BC_RET, fn->body->pos);
  emit(fs, result);
  end_scope(fs, 1 + (uint32_t)fn->param_count);
}

// Names as lang/README.md lists them: "f", "List.f", "f.<fn>", "List.<fn>".
static char *function_name(FnState *parent, Module *m, const char *name) {
  const char *prefix = m->name[0] ? m->name : NULL;
  if (name) return prefix ? xasprintf("%s.%s", prefix, name) : xasprintf("%s", name);
  if (!parent || parent->is_top) return prefix ? xasprintf("%s.<fn>", prefix) : xasprintf("<fn>");
  return xasprintf("%s.<fn>", parent->proto->name);
}

// Compiles a function literal or declaration nested in `parent`; emits its
// CLOSURE into dst.
static void compile_fn_expr(FnState *fs, FnDef *fn, uint32_t dst, SrcPos pos, const char *self) {
  char *name = function_name(fs, fs->module, fn->name);
  Proto *p = image_add_proto(fs->vm, name, fs->module->path);
  free(name);
  p->nparams = (uint32_t)fn->param_count;
  FnState child;
  init_fn_state(&child, fs, fs->vm, fs->module, p);
  child.self_name = self;
  compile_fn_body(&child, fn);
  finish_function(&child);
  emit_closure(fs, &child, p, dst, pos);
  free_fn_state(&child);
}

// Call of a primitive bound by an external: arguments in consecutive fresh
// registers, live during the call (the primitive reads them in place).
static void compile_prim_call(FnState *fs, Expr *e, const Member *mem, uint32_t dst) {
  ExprList *args = &e->u.call.args;
  if (args->count != mem->arity) {
    error_at(fs, e->pos, "%s expects %d argument%s, got %d", fs->vm->global_names[mem->global], mem->arity,
             mem->arity == 1 ? "" : "s", args->count);
    return;
  }
  uint32_t mark = fs->next_reg;
  uint32_t first = compile_items(fs, args->items, args->count);
  uint32_t at = emit_op(fs, BC_CALLPRIM, e->pos);
  emit(fs, (uint32_t)mem->prim);
  emit(fs, first);
  emit(fs, (uint32_t)args->count);
  emit(fs, dst);
  add_safepoint(fs, at, false, e->pos, 0, 0);
  free_to(fs, mark);
  set_live(fs, dst);
}

// `member`: the callee's Member when it is `Module.name` (member_of, looked
// up once a call so that a missing one is reported once).
static const Member *callee_external(FnState *fs, Expr *callee, const Member *member) {
  if (callee->kind == EX_MEMBER) return member->prim >= 0 ? member : NULL;
  if (callee->kind == EX_VAR) {
    Resolved r = resolve(fs, callee->u.name);
    if (r.kind == RES_GLOBAL && r.member && r.member->prim >= 0) return r.member;
  }
  return NULL;
}

// A top-level fn of some module (its global is never reassigned), or NULL.
static const Member *callee_function(FnState *fs, Expr *callee, const Member *member) {
  if (callee->kind == EX_MEMBER) return member->is_fn && member->prim < 0 ? member : NULL;
  if (callee->kind == EX_VAR) {
    Resolved r = resolve(fs, callee->u.name);
    if (r.kind == RES_GLOBAL && r.member && r.member->is_fn && r.member->prim < 0) return r.member;
  }
  return NULL;
}

static bool is_literal(const Expr *e) {
  switch (e->kind) {
    case EX_NIL: case EX_BOOL: case EX_INT: case EX_FLOAT: case EX_STRING: case EX_EMPTY_LIST: return true;
    default: return false;
  }
}

static void compile_call(FnState *fs, Expr *e, uint32_t dst) {
  const Member *member = NULL;
  if (e->u.call.callee->kind == EX_MEMBER && !(member = member_of(fs, e->u.call.callee))) return;  // reported
  const Member *ext = callee_external(fs, e->u.call.callee, member);
  if (ext) {
    compile_prim_call(fs, e, ext, dst);
    return;
  }
  uint32_t mark = fs->next_reg;
  const Member *known = callee_function(fs, e->u.call.callee, member);
  uint32_t fn = known ? UINT32_MAX : compile_to_reg(fs, e->u.call.callee);
  // CALL names each argument's register. An argument held by a local is
  // passed from the local's register, unless it is a `var` that a later
  // argument could assign (anything but a variable or a literal); the others
  // are evaluated, left to right, into fresh registers.
  int argc = e->u.call.args.count;
  Expr **items = e->u.call.args.items;
  uint32_t args_from = fs->next_reg;
  uint32_t *regs = xrealloc(NULL, ((size_t)argc + 1) * sizeof *regs);
  for (int i = 0; i < argc; i++) {
    const Local *l = items[i]->kind == EX_VAR ? find_local(fs, items[i]->u.name) : NULL;
    bool later_pure = true;
    for (int j = i + 1; l && l->is_var && j < argc; j++)
      if (items[j]->kind != EX_VAR && !is_literal(items[j])) later_pure = false;
    if (l && later_pure) {
      regs[i] = l->reg;
    } else {
      regs[i] = alloc_reg(fs);
      compile_expr(fs, items[i], regs[i]);
    }
  }
  // A closure call of up to three arguments has a form of its own (CALL0 ..
  // CALL3); a CALLG gets one when the code is linked (image_link_calls).
  Opcode op = known ? BC_CALLG : argc <= CALL_FORM_MAX_ARGC ? (Opcode)(BC_CALL0 + argc) : BC_CALL;
  uint32_t at = emit_op(fs, op, e->pos);
  emit(fs, known ? known->global : fn);
  emit(fs, (uint32_t)argc);
  for (int i = 0; i < argc; i++) emit(fs, regs[i]);
  free(regs);
  emit(fs, 0);   // stub offset (finish_function)
  emit(fs, dst);
  // Registers from skip_from on (callee and argument temporaries) are dead
  // once the callee has its copies.
  uint32_t skip_from = !known && fn >= mark ? fn : args_from;
  add_safepoint(fs, at, true, e->pos, skip_from, fs->next_reg);
  emit_fsize_placeholder(fs);
  free_to(fs, mark);
  set_live(fs, dst);
}

static const Opcode binop_code[] = {
    [OP_EQ] = BC_EQ, [OP_NE] = BC_NE, [OP_LT] = BC_LT, [OP_LE] = BC_LE,
    [OP_GT] = BC_GT, [OP_GE] = BC_GE, [OP_CONCAT] = BC_CONCAT, [OP_ADD] = BC_ADD,
    [OP_SUB] = BC_SUB, [OP_MUL] = BC_MUL, [OP_DIV] = BC_DIV, [OP_MOD] = BC_MOD,
};

// `a && b` / `a || b`: dst = a; unless it decides, dst = b.
static void compile_logical(FnState *fs, Expr *e, uint32_t dst) {
  bool was_live = is_live(fs, dst);
  compile_expr(fs, e->u.binary.left, dst);
  uint32_t j = emit_jump(fs, e->u.binary.op == OP_AND ? BC_JMPIFNOT : BC_JMPIF, e->pos, dst, 0, 1);
  if (!was_live) clear_live(fs, dst);
  compile_expr(fs, e->u.binary.right, dst);
  patch_here(fs, j);
  set_live(fs, dst);
}

static void compile_binary(FnState *fs, Expr *e, uint32_t dst) {
  BinOp op = e->u.binary.op;
  if (op == OP_AND || op == OP_OR) {
    compile_logical(fs, e, dst);
    return;
  }
  uint32_t mark = fs->next_reg;
  Expr *left = e->u.binary.left;
  if (op == OP_ADD && left->kind == EX_INT && left->u.int_val > -(1 << 30) && left->u.int_val < (1 << 30)) {
    uint32_t a = compile_to_reg(fs, e->u.binary.right);
    emit_op(fs, BC_IADD, e->pos);
    emit(fs, dst);
    emit(fs, a);
    emit(fs, (uint32_t)(int32_t)left->u.int_val);
    free_to(fs, mark);
    set_live(fs, dst);
    return;
  }
  uint32_t a = compile_to_reg(fs, left);
  Expr *right = e->u.binary.right;
  // An int literal on the right is an immediate operand. Division and
  // remainder take only divisors >= 1 (no zero or -1 case in the fast path).
  bool small = right->kind == EX_INT && right->u.int_val > -(1 << 30) && right->u.int_val < (1 << 30);
  Opcode imm_code = OPCODE_COUNT;
  if (small && op == OP_ADD) imm_code = BC_ADDI;
  if (small && op == OP_SUB) imm_code = BC_SUBI;
  if (small && op == OP_MUL) imm_code = BC_MULI;
  if (small && right->u.int_val >= 1 && op == OP_DIV) imm_code = BC_DIVI;
  if (small && right->u.int_val >= 1 && op == OP_MOD) imm_code = BC_MODI;
  if (imm_code != OPCODE_COUNT) {
    emit_op(fs, imm_code, e->pos);
    emit(fs, dst);
    emit(fs, a);
    emit(fs, (uint32_t)(int32_t)right->u.int_val);
    free_to(fs, mark);
    set_live(fs, dst);
    return;
  }
  int64_t k;
  if ((op == OP_EQ || op == OP_NE) && literal_constant(fs, right, &k)) {
    // x == literal: compared by identity with the literal's constant.
    emit_op(fs, op == OP_EQ ? BC_EQK : BC_NEK, e->pos);
    emit(fs, dst);
    emit(fs, a);
    emit(fs, (uint32_t)k);
    free_to(fs, mark);
    set_live(fs, dst);
    return;
  }
  uint32_t b = compile_to_reg(fs, right);
  Opcode code = binop_code[op];
  uint32_t at = emit_op(fs, code, e->pos);
  emit(fs, dst);
  emit(fs, a);
  emit(fs, b);
  if (bytecode_is_safe_point(code)) add_safepoint(fs, at, false, e->pos, 0, 0);
  free_to(fs, mark);
  set_live(fs, dst);
}

static void compile_unary(FnState *fs, Expr *e, uint32_t dst) {
  uint32_t mark = fs->next_reg;
  uint32_t a = compile_to_reg(fs, e->u.unary.operand);
  Opcode code = e->u.unary.op == OP_NEG ? BC_NEG : BC_NOT;
  uint32_t at = emit_op(fs, code, e->pos);
  emit(fs, dst);
  emit(fs, a);
  if (code == BC_NEG) add_safepoint(fs, at, false, e->pos, 0, 0);
  free_to(fs, mark);
  set_live(fs, dst);
}

static void compile_index(FnState *fs, Expr *e, uint32_t dst) {
  uint32_t mark = fs->next_reg;
  uint32_t a = compile_to_reg(fs, e->u.binary.left);
  uint32_t i = compile_to_reg(fs, e->u.binary.right);
  emit_op(fs, BC_INDEX, e->pos);
  emit(fs, dst);
  emit(fs, a);
  emit(fs, i);
  free_to(fs, mark);
  set_live(fs, dst);
}

static void compile_field(FnState *fs, Expr *e, uint32_t dst) {
  uint32_t mark = fs->next_reg;
  uint32_t obj = compile_to_reg(fs, e->u.field.object);
  emit_op(fs, BC_GETFIELD, e->pos);
  emit(fs, dst);
  emit(fs, obj);
  emit(fs, shapes_symbol(fs->vm->shapes, e->u.field.name));
  emit(fs, UINT32_MAX);
  emit(fs, 0);
  free_to(fs, mark);
  set_live(fs, dst);
}

static const Opcode jump_unless[] = {
    [OP_EQ] = BC_JNEQ, [OP_NE] = BC_JNNE, [OP_LT] = BC_JNLT,
    [OP_LE] = BC_JNLE, [OP_GT] = BC_JNGT, [OP_GE] = BC_JNGE,
};
// The same against a small int literal on the right (an immediate operand).
static const Opcode jump_unless_imm[] = {
    [OP_LT] = BC_JNLTI, [OP_LE] = BC_JNLEI, [OP_GT] = BC_JNGTI, [OP_GE] = BC_JNGEI,
};

// Whether e is an int literal that an immediate operand holds.
static bool small_int(const Expr *e) {
  return e->kind == EX_INT && e->u.int_val > -(1 << 30) && e->u.int_val < (1 << 30);
}

static bool is_comparison(BinOp op) { return op >= OP_EQ && op <= OP_GE; }

// The constant index of a nil, bool or int literal (compared by identity).
// A literal whose value is an immediate that one instruction word holds (nil,
// a bool, [] or an int of magnitude below 2^30): *k is its Value's low 32
// bits, which sign-extend back to it (the K operand of EQK, NEK, JNEQK and
// JNNEK, compared by identity).
static bool literal_constant(FnState *fs, const Expr *e, int64_t *k) {
  (void)fs;
  Value v;
  switch (e->kind) {
    case EX_NIL: v = VAL_NIL; break;
    case EX_BOOL: v = e->u.boolean ? VAL_TRUE : VAL_FALSE; break;
    case EX_EMPTY_LIST: v = VAL_EMPTY; break;
    case EX_INT:
      if (e->u.int_val <= -(1 << 30) || e->u.int_val >= (1 << 30)) return false;
      v = val_of_int(e->u.int_val);
      break;
    default: return false;
  }
  *k = (int64_t)(uint32_t)v;
  return true;
}

// Emits a conditional jump taken when `cond` is false; returns it for patching.
// A comparison fuses with the jump (one instruction, no bool materialised).
static uint32_t compile_condition(FnState *fs, Expr *cond) {
  uint32_t mark = fs->next_reg;
  uint32_t j;
  int64_t k;
  if (cond->kind == EX_BINARY && (cond->u.binary.op == OP_EQ || cond->u.binary.op == OP_NE) &&
      literal_constant(fs, cond->u.binary.right, &k)) {
    // x == literal: the literal's constant is an operand (no register load).
    uint32_t a = compile_to_reg(fs, cond->u.binary.left);
    j = emit_jump(fs, cond->u.binary.op == OP_EQ ? BC_JNEQK : BC_JNNEK, cond->pos, a, (uint32_t)k, 2);
  } else if (cond->kind == EX_BINARY && cond->u.binary.op >= OP_LT && cond->u.binary.op <= OP_GE &&
             small_int(cond->u.binary.right)) {
    // x < literal: the literal is an immediate (no register load).
    uint32_t a = compile_to_reg(fs, cond->u.binary.left);
    j = emit_jump(fs, jump_unless_imm[cond->u.binary.op], cond->pos, a, (uint32_t)(int32_t)cond->u.binary.right->u.int_val, 2);
  } else if (cond->kind == EX_BINARY && is_comparison(cond->u.binary.op)) {
    uint32_t a = compile_to_reg(fs, cond->u.binary.left);
    uint32_t b = compile_to_reg(fs, cond->u.binary.right);
    j = emit_jump(fs, jump_unless[cond->u.binary.op], cond->pos, a, b, 2);
  } else {
    uint32_t r = compile_to_reg(fs, cond);
    j = emit_jump(fs, BC_JMPIFNOT, cond->pos, r, 0, 1);
  }
  free_to(fs, mark);
  return j;
}

static void compile_if(FnState *fs, Expr *e, uint32_t dst) {
  bool was_live = is_live(fs, dst);
  uint32_t jelse = compile_condition(fs, e->u.if_.cond);
  compile_expr(fs, e->u.if_.then_, dst);
  uint32_t jend = emit_jump(fs, BC_JMP, e->pos, 0, 0, 0);
  patch_here(fs, jelse);
  if (!was_live) clear_live(fs, dst);
  if (e->u.if_.else_) compile_expr(fs, e->u.if_.else_, dst);
  else emit_loadk(fs, dst, K_NIL, e->pos);
  patch_here(fs, jend);
  set_live(fs, dst);
}

// ---------------------------------------------------------------------
// Patterns: test `reg` against `p`, binding names as new locals; every
// failing test jumps to a location added to `fails`.
typedef struct Fails {
  uint32_t *at;
  uint32_t count, cap;
} Fails;

static void add_fail(Fails *f, uint32_t at) {
  GROW(f->at, f->count, f->cap);
  f->at[f->count++] = at;
}

static uint32_t pattern_constant(FnState *fs, Pattern *p) {
  Vm *vm = fs->vm;
  switch (p->kind) {
    case PAT_NIL: return K_NIL;
    case PAT_BOOL: return p->u.boolean ? K_TRUE : K_FALSE;
    case PAT_INT: return image_add_constant(vm, val_of_int(p->u.int_val));
    case PAT_FLOAT: return float_constant(vm, p->u.float_val);
    case PAT_STRING: return string_constant(vm, p->u.str.bytes, p->u.str.len);
    default: return K_NIL;
  }
}

static void compile_pattern(FnState *fs, Pattern *p, uint32_t reg, Fails *fails);

// Loads field i of `reg` for sub-pattern p (directly into a new local when p
// is a name) and matches it.
static void compile_subpattern(FnState *fs, Pattern *p, uint32_t reg, uint32_t i, Fails *fails) {
  if (p->kind == PAT_WILD) return;
  uint32_t r = alloc_reg(fs);
  emit_op(fs, BC_GETF, p->pos);
  emit(fs, r);
  emit(fs, reg);
  emit(fs, i);
  set_live(fs, r);
  if (p->kind == PAT_VAR) add_local(fs, p->u.name, r, false);
  else compile_pattern(fs, p, r, fails);
}

// A cons or pair pattern with a sub-pattern that needs its field: one
// UNCONS / UNPAIR tests the block and loads both fields (a `_` part into a
// scratch register: a load is cheaper than a second instruction), then the
// sub-patterns are bound or matched.
static bool compile_pair_pattern(FnState *fs, Opcode op, Pattern *a, Pattern *b, uint32_t reg, SrcPos pos,
                                 Fails *fails) {
  if (a->kind == PAT_WILD && b->kind == PAT_WILD) return false;
  uint32_t ra = alloc_reg(fs), rb = alloc_reg(fs);
  uint32_t at = emit_op(fs, op, pos);
  emit(fs, reg);
  emit(fs, ra);
  emit(fs, rb);
  emit(fs, 0);
  add_fail(fails, at);
  set_live(fs, ra);
  set_live(fs, rb);
  Pattern *subs[2] = {a, b};
  uint32_t regs[2] = {ra, rb};
  for (int i = 0; i < 2; i++) {
    if (subs[i]->kind == PAT_WILD) continue;
    if (subs[i]->kind == PAT_VAR) add_local(fs, subs[i]->u.name, regs[i], false);
    else compile_pattern(fs, subs[i], regs[i], fails);
  }
  return true;
}

static void compile_pattern(FnState *fs, Pattern *p, uint32_t reg, Fails *fails) {
  switch (p->kind) {
    case PAT_WILD: return;
    case PAT_VAR: {
      uint32_t r = alloc_reg(fs);
      emit_move(fs, r, reg, p->pos);
      set_live(fs, r);
      add_local(fs, p->u.name, r, false);
      return;
    }
    case PAT_NIL: case PAT_BOOL: case PAT_INT: case PAT_FLOAT: case PAT_STRING: {
      uint32_t k = pattern_constant(fs, p);
      add_fail(fails, emit_jump(fs, BC_TESTEQ, p->pos, reg, k, 2));
      return;
    }
    case PAT_EMPTY: add_fail(fails, emit_jump(fs, BC_TESTEMPTY, p->pos, reg, 0, 1)); return;
    case PAT_CONS:
      if (compile_pair_pattern(fs, BC_UNCONS, p->u.cons.head, p->u.cons.tail, reg, p->pos, fails)) return;
      add_fail(fails, emit_jump(fs, BC_TESTCONS, p->pos, reg, 0, 1));
      compile_subpattern(fs, p->u.cons.head, reg, 0, fails);
      compile_subpattern(fs, p->u.cons.tail, reg, 1, fails);
      return;
    case PAT_LIST: {
      uint32_t cur = reg;
      for (int i = 0; i < p->u.items.count; i++) {
        add_fail(fails, emit_jump(fs, BC_TESTCONS, p->pos, cur, 0, 1));
        compile_subpattern(fs, p->u.items.items[i], cur, 0, fails);
        uint32_t next = alloc_reg(fs);
        emit_op(fs, BC_GETF, p->pos);
        emit(fs, next);
        emit(fs, cur);
        emit(fs, 1);
        set_live(fs, next);
        cur = next;
      }
      add_fail(fails, emit_jump(fs, BC_TESTEMPTY, p->pos, cur, 0, 1));
      return;
    }
    case PAT_TUPLE:
      if (p->u.items.count == 2 &&
          compile_pair_pattern(fs, BC_UNPAIR, p->u.items.items[0], p->u.items.items[1], reg, p->pos, fails))
        return;
      add_fail(fails, emit_jump(fs, BC_TESTTUPLE, p->pos, reg, (uint32_t)p->u.items.count, 2));
      for (int i = 0; i < p->u.items.count; i++)
        compile_subpattern(fs, p->u.items.items[i], reg, (uint32_t)i, fails);
      return;
    case PAT_RECORD:
      for (int i = 0; i < p->u.record.count; i++) {
        uint32_t r = alloc_reg(fs);
        uint32_t at = emit_op(fs, BC_TESTFIELD, p->pos);
        emit(fs, reg);
        emit(fs, shapes_symbol(fs->vm->shapes, p->u.record.names[i]));
        emit(fs, r);
        emit(fs, 0);
        add_fail(fails, at);
        set_live(fs, r);
        Pattern *sub = p->u.record.pats[i];
        if (sub->kind == PAT_VAR) add_local(fs, sub->u.name, r, false);
        else compile_pattern(fs, sub, r, fails);
      }
      return;
  }
}

static void compile_match(FnState *fs, Expr *e, uint32_t dst) {
  bool was_live = is_live(fs, dst);
  uint32_t mark = fs->next_reg;
  uint32_t s = compile_to_reg(fs, e->u.match.scrutinee);
  uint32_t *ends = xrealloc(NULL, (size_t)(e->u.match.arm_count + 1) * sizeof *ends);
  for (int i = 0; i < e->u.match.arm_count; i++) {
    MatchArm *arm = &e->u.match.arms[i];
    Fails fails = {0};
    uint32_t arm_mark = fs->next_reg;
    if (!was_live) clear_live(fs, dst);   // this arm's path has not written dst
    begin_scope(fs);
    compile_pattern(fs, arm->pattern, s, &fails);
    if (arm->guard) add_fail(&fails, compile_condition(fs, arm->guard));
    compile_expr(fs, arm->body, dst);
    end_scope(fs, arm_mark);
    ends[i] = emit_jump(fs, BC_JMP, arm->body->pos, 0, 0, 0);
    for (uint32_t f = 0; f < fails.count; f++) patch_here(fs, fails.at[f]);
    free(fails.at);
  }
  if (!was_live) clear_live(fs, dst);
  uint32_t at = emit_op(fs, BC_MATCHFAIL, e->pos);
  add_safepoint(fs, at, false, e->pos, 0, 0);
  for (int i = 0; i < e->u.match.arm_count; i++) patch_here(fs, ends[i]);
  free(ends);
  free_to(fs, mark);
  set_live(fs, dst);
}

static void compile_block(FnState *fs, Expr *e, uint32_t dst) {
  uint32_t mark = fs->next_reg;
  begin_scope(fs);
  int n = e->u.block.count;
  bool valued = false;
  for (int i = 0; i < n; i++) {
    Expr *item = e->u.block.items[i];
    bool is_stmt = item->kind == EX_LET || item->kind == EX_VAR_DECL || item->kind == EX_ASSIGN ||
                   item->kind == EX_FN_DECL || item->kind == EX_WHILE || item->kind == EX_FOR ||
                   item->kind == EX_IMPORT || item->kind == EX_EXTERNAL;
    if (i == n - 1 && !is_stmt) {
      compile_expr(fs, item, dst);
      valued = true;
    } else {
      compile_stmt(fs, item);
    }
  }
  end_scope(fs, mark);
  if (!valued) emit_loadk(fs, dst, K_NIL, e->pos);
  set_live(fs, dst);
}

static Loop *push_loop(FnState *fs, Loop *loop) {
  memset(loop, 0, sizeof *loop);
  loop->continue_target = UINT32_MAX;
  loop->try_depth = fs->try_depth;
  loop->scope_depth = fs->scope_depth;
  loop->outer = fs->loop;
  fs->loop = loop;
  return loop;
}

static void pop_loop(FnState *fs, Loop *loop, uint32_t continue_target) {
  for (uint32_t i = 0; i < loop->continue_count; i++) patch_to(fs, loop->continue_patches[i], continue_target);
  for (uint32_t i = 0; i < loop->break_count; i++) patch_here(fs, loop->break_patches[i]);
  free(loop->continue_patches);
  free(loop->break_patches);
  fs->loop = loop->outer;
}

static void compile_while(FnState *fs, Expr *e) {
  Loop loop;
  push_loop(fs, &loop);
  mark_label(fs);
  uint32_t top = here(fs);
  uint32_t jexit = compile_condition(fs, e->u.while_.cond);
  uint32_t mark = fs->next_reg;
  compile_stmt(fs, e->u.while_.body);
  free_to(fs, mark);
  uint32_t j = emit_jump(fs, BC_LOOP, e->pos, 0, 0, 0);
  patch_to(fs, j, top);
  patch_here(fs, jexit);
  pop_loop(fs, &loop, top);
}

static void compile_for_range(FnState *fs, Expr *e) {
  uint32_t mark = fs->next_reg;
  begin_scope(fs);
  uint32_t i = alloc_reg(fs);
  compile_expr(fs, e->u.for_.lo, i);
  uint32_t hi = alloc_reg(fs);
  compile_expr(fs, e->u.for_.hi, hi);
  uint32_t jexit = emit_jump(fs, BC_FORPREP, e->pos, i, hi, 2);
  add_local(fs, e->u.for_.var, i, false);
  Loop loop;
  push_loop(fs, &loop);
  mark_label(fs);
  uint32_t body = here(fs);
  uint32_t body_mark = fs->next_reg;
  compile_stmt(fs, e->u.for_.body);
  free_to(fs, body_mark);
  mark_label(fs);
  uint32_t cont = here(fs);
  uint32_t jback = emit_jump(fs, BC_FORLOOP, e->pos, i, hi, 2);
  patch_to(fs, jback, body);
  patch_here(fs, jexit);
  pop_loop(fs, &loop, cont);
  end_scope(fs, mark);
}

// for x in coll { body }: the test sits at the bottom, so that an iteration
// runs the body and one ITERLOOP (which jumps back while there is an element).
static void compile_for_each(FnState *fs, Expr *e) {
  uint32_t mark = fs->next_reg;
  begin_scope(fs);
  uint32_t coll = alloc_reg(fs);
  compile_expr(fs, e->u.for_.lo, coll);
  uint32_t idx = alloc_reg(fs);
  emit_op(fs, BC_LOADI, e->pos);
  emit(fs, idx);
  emit(fs, 0);
  set_live(fs, idx);
  uint32_t x = alloc_reg(fs);
  Loop loop;
  push_loop(fs, &loop);
  uint32_t jtest = emit_jump(fs, BC_JMP, e->pos, 0, 0, 0);
  mark_label(fs);
  uint32_t body = here(fs);
  set_live(fs, x);
  add_local(fs, e->u.for_.var, x, false);
  uint32_t body_mark = fs->next_reg;
  compile_stmt(fs, e->u.for_.body);
  free_to(fs, body_mark);
  mark_label(fs);
  uint32_t test = here(fs);
  patch_to(fs, jtest, test);
  uint32_t at = emit_op(fs, BC_ITERLOOP, e->pos);
  emit(fs, coll);
  emit(fs, idx);
  emit(fs, x);
  emit(fs, 0);
  patch_to(fs, at, body);
  pop_loop(fs, &loop, test);
  end_scope(fs, mark);
}

static void compile_try(FnState *fs, Expr *e, uint32_t dst) {
  bool was_live = is_live(fs, dst);
  uint32_t mark = fs->next_reg;
  uint32_t catch_reg = alloc_reg(fs);
  uint32_t at = emit_op(fs, BC_TRY, e->pos);
  emit(fs, 0);
  emit(fs, catch_reg);
  fs->try_depth++;
  compile_expr(fs, e->u.try_.body, dst);
  fs->try_depth--;
  emit_op(fs, BC_POPTRY, e->pos);
  uint32_t jend = emit_jump(fs, BC_JMP, e->pos, 0, 0, 0);
  fs->proto->code[at + 1] = here(fs) - at;
  mark_label(fs);
  if (!was_live) clear_live(fs, dst);
  set_live(fs, catch_reg);
  begin_scope(fs);
  add_local(fs, e->u.try_.var, catch_reg, false);
  compile_expr(fs, e->u.try_.handler, dst);
  end_scope(fs, catch_reg + 1);
  patch_here(fs, jend);
  free_to(fs, mark);
  set_live(fs, dst);
}

static void emit_poptries(FnState *fs, uint32_t n, SrcPos pos) {
  for (uint32_t i = 0; i < n; i++) emit_op(fs, BC_POPTRY, pos);
}

static void compile_return(FnState *fs, Expr *e) {
  if (fs->is_top) {
    error_at(fs, e->pos, "return outside a function");
    return;
  }
  uint32_t mark = fs->next_reg;
  uint32_t r = alloc_reg(fs);
  if (e->u.ret.value) compile_expr(fs, e->u.ret.value, r);
  else emit_loadk(fs, r, K_NIL, e->pos);
  emit_poptries(fs, fs->try_depth, e->pos);
  emit_op(fs, BC_RET, e->pos);
  emit(fs, r);
  mark_label(fs);
  free_to(fs, mark);
}

static void compile_jump_out(FnState *fs, Expr *e) {
  Loop *loop = fs->loop;
  if (!loop) {
    error_at(fs, e->pos, "%s outside a loop", e->kind == EX_BREAK ? "break" : "continue");
    return;
  }
  emit_poptries(fs, fs->try_depth - loop->try_depth, e->pos);
  // `continue` in a `while` jumps back: like every edge that closes a cycle,
  // it is a LOOP (or FORLOOP, ITERLOOP), where a pending signal is noticed.
  uint32_t j = emit_jump(fs, e->kind == EX_BREAK ? BC_JMP : BC_LOOP, e->pos, 0, 0, 0);
  if (e->kind == EX_BREAK) {
    GROW(loop->break_patches, loop->break_count, loop->break_cap);
    loop->break_patches[loop->break_count++] = j;
  } else {
    GROW(loop->continue_patches, loop->continue_count, loop->continue_cap);
    loop->continue_patches[loop->continue_count++] = j;
  }
  mark_label(fs);
}

static void compile_expr(FnState *fs, Expr *e, uint32_t dst) {
  if (fs->too_many_registers) return;   // reported; nothing of it will run
  fs->last_pos = e->pos;
  switch (e->kind) {
    case EX_NIL: case EX_BOOL: case EX_INT: case EX_FLOAT: case EX_STRING: case EX_EMPTY_LIST:
      compile_literal(fs, e, dst); return;
    case EX_VAR: compile_name(fs, e, dst); return;
    case EX_MEMBER: compile_member(fs, e, dst); return;
    case EX_TUPLE: case EX_LIST: case EX_CONS: case EX_RECORD: compile_ctor(fs, e, dst); return;
    case EX_ARRAY: compile_array(fs, e, dst); return;
    case EX_FN: compile_fn_expr(fs, &e->u.fn, dst, e->pos, NULL); return;
    case EX_CALL: compile_call(fs, e, dst); return;
    case EX_INDEX: compile_index(fs, e, dst); return;
    case EX_FIELD: compile_field(fs, e, dst); return;
    case EX_UNARY: compile_unary(fs, e, dst); return;
    case EX_BINARY: compile_binary(fs, e, dst); return;
    case EX_IF: compile_if(fs, e, dst); return;
    case EX_MATCH: compile_match(fs, e, dst); return;
    case EX_BLOCK: compile_block(fs, e, dst); return;
    case EX_TRY: compile_try(fs, e, dst); return;
    case EX_RETURN: case EX_BREAK: case EX_CONTINUE:
    case EX_WHILE: case EX_FOR: case EX_LET: case EX_VAR_DECL: case EX_ASSIGN:
    case EX_FN_DECL: case EX_IMPORT: case EX_EXTERNAL:
      compile_stmt(fs, e);
      emit_loadk(fs, dst, K_NIL, e->pos);
      return;
  }
}

static uint32_t compile_to_reg(FnState *fs, Expr *e) {
  if (e->kind == EX_VAR) {
    Local *l = find_local(fs, e->u.name);
    if (l) return l->reg;
  }
  uint32_t r = alloc_reg(fs);
  compile_expr(fs, e, r);
  return r;
}

// =====================================================================
// Statements
// =====================================================================

static bool top_scope(FnState *fs) { return fs->is_top && fs->scope_depth == 1; }

static void bind_global(FnState *fs, const char *name, uint32_t reg, SrcPos pos) {
  Member *m = find_member_at(fs->module, name, fs->module->current_item);
  emit_op(fs, BC_SETGLOBAL, pos);
  emit(fs, m->global);
  emit(fs, reg);
}

// The value of a top-level `let` or `var` sees the bindings made before its
// item: `let x = x + 1` reads the previous x, as it does inside a function.
// (A name first declared by this item still resolves to it: a forward
// reference, read before it is set.)
static void compile_top_value(FnState *fs, Expr *value, uint32_t reg) {
  Module *m = fs->module;
  int item = m->current_item;
  m->current_item = item - 1;
  compile_expr(fs, value, reg);
  m->current_item = item;
}

// Binds the variables of a pattern at top level: each local becomes a global.
static void globalize_locals(FnState *fs, uint32_t from, SrcPos pos) {
  for (uint32_t i = from; i < fs->local_count; i++)
    bind_global(fs, fs->locals[i].name, fs->locals[i].reg, pos);
  while (fs->local_count > from) pop_local(fs);
}

static void compile_let(FnState *fs, Expr *e) {
  Pattern *p = e->u.let.pattern;
  if (p->kind == PAT_VAR && !top_scope(fs)) {
    uint32_t r = alloc_reg(fs);
    compile_expr(fs, e->u.let.value, r);
    add_local(fs, p->u.name, r, false);
    return;
  }
  uint32_t mark = fs->next_reg;
  uint32_t locals_before = fs->local_count;
  // Destructuring an immutable local reads its register (no copy): the
  // pattern only reads v, and nothing can reassign it.
  Local *src = e->u.let.value->kind == EX_VAR ? find_local(fs, e->u.let.value->u.name) : NULL;
  uint32_t v;
  if (src && !src->is_var) {
    v = src->reg;
  } else {
    v = alloc_reg(fs);
    if (top_scope(fs)) compile_top_value(fs, e->u.let.value, v);
    else compile_expr(fs, e->u.let.value, v);
  }
  uint32_t first = mark + (v == mark);   // the pattern's registers start here
  Fails fails = {0};
  compile_pattern(fs, p, v, &fails);
  if (fails.count > 0) {
    // A failing test may come before the pattern wrote its registers: live
    // at the failure are only the registers live below them.
    GROW(fs->let_fails, fs->let_fail_count, fs->let_fail_cap);
    LetFail *lf = &fs->let_fails[fs->let_fail_count++];
    uint32_t *live = xrealloc(NULL, (first + 1) * sizeof(uint32_t)), n = 0;
    for (uint32_t r = 0; r < first && r < fs->next_reg; r++)
      if (is_live(fs, r)) live[n++] = r;
    *lf = (LetFail){fails.at, fails.count, e->pos, frames_live_list(fs->vm->frames, live, n), n};
    free(live);
    fails.at = NULL;
  }
  free(fails.at);
  if (top_scope(fs)) {
    globalize_locals(fs, locals_before, e->pos);
    free_to(fs, mark);
  }
}

static void compile_var_decl(FnState *fs, Expr *e) {
  if (top_scope(fs)) {
    uint32_t mark = fs->next_reg;
    uint32_t r = alloc_reg(fs);
    compile_top_value(fs, e->u.var_decl.value, r);
    bind_global(fs, e->u.var_decl.name, r, e->pos);
    free_to(fs, mark);
    return;
  }
  uint32_t r = alloc_reg(fs);
  compile_expr(fs, e->u.var_decl.value, r);
  add_local(fs, e->u.var_decl.name, r, true);
}

static void compile_assign_name(FnState *fs, Expr *target, Expr *value) {
  Resolved r = resolve(fs, target->u.name);
  if (r.kind == RES_LOCAL && r.index != UINT32_MAX && r.is_var) {
    compile_expr(fs, value, r.index);
    return;
  }
  if (r.kind == RES_GLOBAL && r.is_var) {
    uint32_t mark = fs->next_reg;
    uint32_t v = compile_to_reg(fs, value);
    emit_op(fs, BC_SETGLOBAL, target->pos);
    emit(fs, r.index);
    emit(fs, v);
    free_to(fs, mark);
    return;
  }
  if (r.kind == RES_NONE) error_at(fs, target->pos, "unbound name %s", target->u.name);
  else if (r.kind == RES_LOCAL && r.index == UINT32_MAX)
    error_at(fs, target->pos, "cannot capture var %s in a closure", target->u.name);
  else error_at(fs, target->pos, "cannot assign to %s: it is not a var", target->u.name);
}

static void compile_assign(FnState *fs, Expr *e) {
  Expr *t = e->u.assign.target;
  if (t->kind == EX_VAR) {
    compile_assign_name(fs, t, e->u.assign.value);
    return;
  }
  uint32_t mark = fs->next_reg;
  if (t->kind == EX_INDEX) {
    uint32_t a = compile_to_reg(fs, t->u.binary.left);
    uint32_t i = compile_to_reg(fs, t->u.binary.right);
    uint32_t v = compile_to_reg(fs, e->u.assign.value);
    emit_op(fs, BC_SETINDEX, e->pos);
    emit(fs, a);
    emit(fs, i);
    emit(fs, v);
  } else if (t->kind == EX_FIELD) {
    uint32_t obj = compile_to_reg(fs, t->u.field.object);
    uint32_t v = compile_to_reg(fs, e->u.assign.value);
    emit_op(fs, BC_SETFIELD, e->pos);
    emit(fs, obj);
    emit(fs, shapes_symbol(fs->vm->shapes, t->u.field.name));
    emit(fs, v);
    emit(fs, UINT32_MAX);
    emit(fs, 0);
  } else {
    error_at(fs, e->pos, "invalid assignment target");
  }
  free_to(fs, mark);
}

// A block or `if` whose value nobody reads (a statement, a loop body):
// compiled without the register write of its value (no `nil` loaded at the
// end of a block ending in a statement, no `nil` for a missing else).
// compile_stmt, its only caller, frees the registers of an `if` afterwards.
static void compile_effect(FnState *fs, Expr *e) {
  if (e->kind == EX_BLOCK) {
    uint32_t mark = fs->next_reg;
    begin_scope(fs);
    for (int i = 0; i < e->u.block.count; i++) compile_stmt(fs, e->u.block.items[i]);
    end_scope(fs, mark);
    return;
  }
  // EX_IF
  uint32_t jelse = compile_condition(fs, e->u.if_.cond);
  compile_stmt(fs, e->u.if_.then_);
  if (e->u.if_.else_) {
    uint32_t jend = emit_jump(fs, BC_JMP, e->pos, 0, 0, 0);
    patch_here(fs, jelse);
    compile_stmt(fs, e->u.if_.else_);
    patch_here(fs, jend);
  } else {
    patch_here(fs, jelse);
  }
}

static void compile_stmt(FnState *fs, Expr *e) {
  if (fs->too_many_registers) return;
  fs->last_pos = e->pos;
  uint32_t mark = fs->next_reg;
  switch (e->kind) {
    case EX_BLOCK: case EX_IF: compile_effect(fs, e); break;
    case EX_LET: compile_let(fs, e); return;
    case EX_VAR_DECL: compile_var_decl(fs, e); return;
    case EX_ASSIGN: compile_assign(fs, e); break;
    case EX_FN_DECL:
      if (top_scope(fs)) return;  // made at compile time
      {
        uint32_t r = alloc_reg(fs);
        add_local(fs, e->u.fn.name, r, false);
        fs->locals[fs->local_count - 1].depth = fs->scope_depth;
        compile_fn_expr(fs, &e->u.fn, r, e->pos, e->u.fn.name);
      }
      return;
    case EX_WHILE: compile_while(fs, e); break;
    case EX_FOR:
      if (e->u.for_.hi) compile_for_range(fs, e);
      else compile_for_each(fs, e);
      break;
    case EX_RETURN: compile_return(fs, e); break;
    case EX_BREAK: case EX_CONTINUE: compile_jump_out(fs, e); break;
    case EX_IMPORT: case EX_EXTERNAL:
      if (!top_scope(fs)) error_at(fs, e->pos, "import and external belong at top level");
      return;
    default: {
      uint32_t r = alloc_reg(fs);
      compile_expr(fs, e, r);
      break;
    }
  }
  free_to(fs, mark);
}

// =====================================================================
// Functions and descriptors
// =====================================================================

// Jump threading: a jump landing on a JMP goes straight to that JMP's
// target (a chain is followed a few links, so that a cycle of JMPs stays);
// then a JMP landing on a RET becomes that RET (both 2 words).
// Invariant kept: every JMP goes forward, so every cycle of the control flow
// passes through a LOOP, FORLOOP or ITERLOOP, which notice pending signals
// (core/vm_state.h, vm_handle_signal); threading follows JMPs only.
static void thread_jumps(Proto *p) {
  for (uint32_t at = 0; at < p->code_len; at += bytecode_length(p->code + at)) {
    uint32_t *ins = p->code + at;
    uint32_t k = bytecode_jump_word((Opcode)ins[0]);
    if (k == 0) continue;
    int64_t target = (int64_t)at + (int32_t)ins[k];
    for (int hops = 0; hops < 8 && p->code[target] == BC_JMP; hops++)
      target += (int32_t)p->code[target + 1];
    ins[k] = (uint32_t)(int32_t)(target - (int64_t)at);
    if (ins[0] == BC_JMP && p->code[target] == BC_RET) {
      ins[0] = BC_RET;
      ins[1] = p->code[target + 1];
    }
  }
}

// A return of a local or a constant: MOVE r, s or LOADK r, k or LOADI r, i
// followed by RET r (a branch or a function whose value is a local or a
// literal: thread_jumps copies the RET to the end of each branch) becomes
// RET s, RETK k or RETI i when no jump lands on the RET: one instruction
// fewer a return. The old three-word instruction stays after the new
// two-word one, unreachable, so that every offset (jumps, descriptors,
// lines) stays where it was; a jump to it lands on the new return, which
// does both.
// The offsets some jump lands on (target[at] != 0), code_len + 1 bytes,
// for the caller to free.
static uint8_t *jump_targets(const Proto *p) {
  uint8_t *target = xrealloc(NULL, p->code_len + 1);
  memset(target, 0, p->code_len + 1);
  for (uint32_t at = 0; at < p->code_len; at += bytecode_length(p->code + at)) {
    uint32_t k = bytecode_jump_word((Opcode)p->code[at]);
    int64_t to = k ? (int64_t)at + (int32_t)p->code[at + k] : -1;
    if (to >= 0 && to <= p->code_len) target[to] = 1;
  }
  return target;
}

static void fold_returns(Proto *p) {
  uint8_t *target = jump_targets(p);
  for (uint32_t at = 0; at < p->code_len; at += bytecode_length(p->code + at)) {
    uint32_t *ins = p->code + at;
    Opcode ret = ins[0] == BC_MOVE ? BC_RET : ins[0] == BC_LOADK ? BC_RETK : ins[0] == BC_LOADI ? BC_RETI : OPCODE_COUNT;
    if (ret == OPCODE_COUNT || at + 5 > p->code_len || ins[3] != BC_RET || ins[4] != ins[1] || target[at + 3]) continue;
    uint32_t op = ins[0], r = ins[1], x = ins[2];
    ins[0] = ret;
    ins[1] = x;
    ins[2] = op;
    ins[3] = r;
    ins[4] = x;
  }
  free(target);
}

// Whether the ALLOCN sub-block at s is a pair or cons cell (two fields, not
// a record) whose fields are registers or, if `may_ref_first`, sub-block 0.
static bool is_pair_sub(const uint32_t *s, bool may_ref_first) {
  if (s[2] != 2 || hd_tag(s[1]) == TAG_RECORD || hd_wosize(s[1]) != 2) return false;
  for (int i = 3; i < 5; i++)
    if ((s[i] & OPERAND_SUBBLOCK) && !(may_ref_first && s[i] == (OPERAND_SUBBLOCK | 0))) return false;
  return true;
}

// Retags as ALLOCN2 the ALLOCNs that hold exactly two pairs, the first made
// of registers only, the second of registers and the first: the interpreter
// fills those without a loop. The layout stays the ALLOCN's, so everything
// else reads both alike.
static void retag_allocn2(Proto *p) {
  for (uint32_t at = 0; at < p->code_len; at += bytecode_length(p->code + at)) {
    uint32_t *pc = p->code + at;
    if (pc[0] == BC_ALLOCN && pc[1] == 6 && pc[2] == 2 && is_pair_sub(pc + 3, false) && is_pair_sub(pc + 8, true))
      pc[0] = BC_ALLOCN2;
  }
}

// Retags as ALLOC2 the ALLOC1s of two fields that are not records (pairs and
// cons cells, most allocations): the interpreter fills those without the
// record and length tests. The layout stays the ALLOC1's.
static void retag_alloc2(Proto *p) {
  for (uint32_t at = 0; at < p->code_len; at += bytecode_length(p->code + at)) {
    uint32_t *pc = p->code + at;
    if (pc[0] == BC_ALLOC1 && pc[3] == 2 && hd_tag(pc[2]) != TAG_RECORD) pc[0] = BC_ALLOC2;
  }
}

// Retags as ALLOC2_RET an ALLOC2 followed by a RET of the register it
// writes (a function whose value is a new pair or cons cell): the fast path
// returns the block itself, one dispatch fewer. The RET stays where it was,
// so that a jump to it and the slow path (which writes the register and
// goes on to the next instruction) still find it.
static void retag_alloc2_ret(Proto *p) {
  for (uint32_t at = 0; at < p->code_len; at += bytecode_length(p->code + at)) {
    uint32_t *pc = p->code + at;
    if (pc[0] == BC_ALLOC2 && at + 8 <= p->code_len && pc[6] == BC_RET && pc[7] == pc[1]) pc[0] = BC_ALLOC2_RET;
  }
}

// Fuses an instruction with the next one it runs where the pair is common
// (each fused form runs both, the second left in place): ADD or ADDI then
// RET of its sum (a function whose value is a sum), TESTEMPTY whose target is an
// UNCONS of the same register (a match of [] then x :: xs), UNPAIR then a
// JNEQK of its first field (`let (l, r) = t; if l == nil`).
static void fuse_pairs(Proto *p) {
  for (uint32_t at = 0; at < p->code_len; at += bytecode_length(p->code + at)) {
    uint32_t *pc = p->code + at;
    if ((pc[0] == BC_ADD || pc[0] == BC_ADDI) && at + 6 <= p->code_len && pc[4] == BC_RET && pc[5] == pc[1])
      pc[0] = pc[0] == BC_ADD ? BC_ADD_RET : BC_ADDI_RET;
    if (pc[0] == BC_UNPAIR && at + 9 <= p->code_len && pc[5] == BC_JNEQK && pc[6] == pc[2]) pc[0] = BC_UNPAIR_JNEQK;
    if (pc[0] == BC_TESTEMPTY) {
      int64_t to = (int64_t)at + (int32_t)pc[2];
      if (to >= 0 && to + 5 <= p->code_len && p->code[to] == BC_UNCONS && p->code[to + 1] == pc[1])
        pc[0] = BC_TESTEMPTY_UNCONS;
    }
  }
}

// Pairs two LOADKs in a row, the second not a jump target, into one LOADK2
// (the constants of a leaf `(nil, nil)`, of a call's literal arguments): the
// second stays in place, its words the LOADK2's last three.
static void pair_loads(Proto *p) {
  uint8_t *target = jump_targets(p);
  for (uint32_t at = 0; at < p->code_len; at += bytecode_length(p->code + at)) {
    uint32_t *pc = p->code + at;
    if (pc[0] == BC_LOADK && at + 6 <= p->code_len && pc[3] == BC_LOADK && !target[at + 3]) pc[0] = BC_LOADK2;
  }
  free(target);
}

static void finish_function(FnState *fs) {
  Proto *p = fs->proto;
  for (uint32_t i = 0; i < fs->let_fail_count; i++) {
    LetFail *lf = &fs->let_fails[i];
    for (uint32_t j = 0; j < lf->jump_count; j++) patch_here(fs, lf->jumps[j]);
    uint32_t at = emit_op(fs, BC_MATCHFAIL, lf->pos);
    PendingDesc *d = add_safepoint(fs, at, false, lf->pos, 0, 0);
    d->live = lf->live;   // the registers live where the pattern failed, not here
    d->live_count = lf->live_count;
    free(lf->jumps);
  }
  free(fs->let_fails);
  thread_jumps(p);
  fold_returns(p);
  retag_allocn2(p);
  retag_alloc2(p);
  retag_alloc2_ret(p);
  fuse_pairs(p);
  pair_loads(p);
  // The names retaining paths give a closure's fields (field i + 1: caps[i]).
  if (fs->cap_count) {
    const char **names = xrealloc(NULL, fs->cap_count * sizeof *names);
    for (uint32_t i = 0; i < fs->cap_count; i++) names[i] = fs->caps[i].name;
    image_set_captures(p, names, fs->cap_count);
    free(names);
  }
  p->fsize = fs->max_reg;
  // Each call's return address gets the caller's frame step and, past the
  // end of the code, a memprof stub of its own (core/frames.h part 5).
  uint32_t code_len = p->code_len;
  for (uint32_t i = 0; i < fs->fsize_patch_count; i++) {
    uint32_t ret = fs->fsize_patches[i], stub = here(fs);
    p->code[ret] = frames_step(p->fsize);
    p->code[ret - 2] = (uint32_t)(int32_t)(stub + 1 - ret);
    emit(fs, p->code[ret - 1]);
    emit(fs, p->code[ret]);
    emit(fs, BC_MEMPROF_RETURN);
    emit(fs, (uint32_t)(int32_t)(ret - (stub + 2)));
  }
  p->stub_words = p->code_len - code_len;
  p->code_len = code_len;
  p->code = xrealloc(p->code, (p->code_len + p->stub_words) * sizeof(uint32_t));
  p->code_cap = p->code_len + p->stub_words;
  for (uint32_t i = 0; i < fs->desc_count; i++) {
    PendingDesc *d = &fs->descs[i];
    FrameDesc desc = {
        .key = d->is_call ? call_ret(p->code + d->offset) : p->code + d->offset,
        .proto = p,
        .live_count = d->live_count,
        .live = d->live,
        .debug_count = d->debug_count,
        .debug = d->debug,
        .is_call = d->is_call,
    };
    frames_add(fs->vm->frames, &desc);
    free(d->debug);
  }
  free(fs->descs);
  free(fs->fsize_patches);
  free(fs->live);
  free(fs->scratch);
  free(fs->live_list);
}

// The names a top-level item declares, appended to *names.
typedef struct NameList {
  const char **items;
  uint32_t count, cap;
} NameList;

static void pattern_names(const Pattern *p, NameList *names) {
  switch (p->kind) {
    case PAT_VAR:
      GROW(names->items, names->count, names->cap);
      names->items[names->count++] = p->u.name;
      return;
    case PAT_CONS:
      pattern_names(p->u.cons.head, names);
      pattern_names(p->u.cons.tail, names);
      return;
    case PAT_LIST: case PAT_TUPLE:
      for (int j = 0; j < p->u.items.count; j++) pattern_names(p->u.items.items[j], names);
      return;
    case PAT_RECORD:
      for (int j = 0; j < p->u.record.count; j++) pattern_names(p->u.record.pats[j], names);
      return;
    default: return;
  }
}

static void item_names(const Expr *e, NameList *names) {
  const char *one = e->kind == EX_FN_DECL ? e->u.fn.name : e->kind == EX_VAR_DECL ? e->u.var_decl.name
                  : e->kind == EX_EXTERNAL ? e->u.external.name : NULL;
  if (one) {
    GROW(names->items, names->count, names->cap);
    names->items[names->count++] = one;
  } else if (e->kind == EX_LET) {
    pattern_names(e->u.let.pattern, names);
  }
}

// Adds member `name` declared by item i; returns false if it clashes with
// a function of the same name.
static bool add_member(FnState *fs, Module *m, const char *name, int i, bool is_var, bool is_fn) {
  uint32_t *slot = namemap_slot(&m->member_lists, name);
  if (*slot == NAMEMAP_NONE) {
    GROW(m->by_name, m->by_name_count, m->by_name_cap);
    m->by_name[m->by_name_count] = (MemberList){0};
    *slot = m->by_name_count++;
  }
  MemberList *list = &m->by_name[*slot];
  bool clash = list->count > 0 && (is_fn || list->has_fn);
  char *gname = m->name[0] ? xasprintf("%s.%s", m->name, name) : xstrdup(name);
  GROW(m->members, m->member_count, m->member_cap);
  Member *mem = &m->members[m->member_count];
  *mem = (Member){.name = xstrdup(name), .global = image_add_global(fs->vm, gname), .prim = -1, .arity = -1,
                  .is_var = is_var, .is_fn = is_fn, .item = i};
  free(gname);
  GROW(list->ids, list->count, list->cap);
  list->ids[list->count++] = m->member_count++;
  list->has_fn |= is_fn;
  return !clash;
}

// Declares the module's top-level names (before compiling any code, so that
// functions may refer to names defined further down).
static void declare_members(FnState *fs, Module *m) {
  ExprList *items = &m->parse.program.items;
  NameList names = {0};
  for (int i = 0; i < items->count; i++) {
    Expr *e = items->items[i];
    names.count = 0;
    item_names(e, &names);
    bool is_fn = e->kind == EX_FN_DECL || e->kind == EX_EXTERNAL;
    for (uint32_t j = 0; j < names.count; j++) {
      if (find_member_at(m, names.items[j], i)) continue;   // a pattern naming it twice
      if (!add_member(fs, m, names.items[j], i, e->kind == EX_VAR_DECL, is_fn))
        error_at(fs, e->pos, "%s is defined twice", names.items[j]);
    }
  }
  free(names.items);
}

static void define_external(FnState *fs, Module *m, Expr *e) {
  Vm *vm = fs->vm;
  Member *mem = find_member_at(m, e->u.external.name, m->current_item);
  int prim = primitives_lookup(e->u.external.c_name);
  if (prim < 0) {
    error_at(fs, e->pos, "unknown primitive \"%s\"", e->u.external.c_name);
    return;
  }
  if (primitives_table()[prim].arity != e->u.external.param_count) {
    error_at(fs, e->pos, "primitive \"%s\" takes %d arguments", e->u.external.c_name, primitives_table()[prim].arity);
    return;
  }
  mem->prim = prim;
  mem->arity = e->u.external.param_count;
  char *name = m->name[0] ? xasprintf("%s.%s", m->name, mem->name) : xstrdup(mem->name);
  Proto *p = image_add_proto(vm, name, m->path);
  free(name);
  p->nparams = (uint32_t)mem->arity;
  p->prim = prim;
  FnState w;
  init_fn_state(&w, NULL, vm, m, p);
  w.next_reg = w.max_reg = 1 + p->nparams;
  for (uint32_t r = 0; r < w.next_reg; r++) set_live(&w, r);
  uint32_t dst = alloc_reg(&w);
  uint32_t at = emit_op(&w, BC_CALLPRIM, e->pos);
  emit(&w, (uint32_t)prim);
  emit(&w, 1);
  emit(&w, p->nparams);
  emit(&w, dst);
  add_safepoint(&w, at, false, e->pos, 0, 0);
  emit_op(&w, BC_RET, e->pos);
  emit(&w, dst);
  finish_function(&w);
  free_fn_state(&w);
  vm->globals[mem->global] = static_closure(vm, p);
}

static void define_function(FnState *top, Module *m, Expr *e) {
  Member *mem = find_member_at(m, e->u.fn.name, m->current_item);
  mem->arity = e->u.fn.param_count;
  Proto *p = compile_function(top, m, &e->u.fn, e->u.fn.name);
  top->vm->globals[mem->global] = static_closure(top->vm, p);
}

static Proto *compile_function(FnState *parent, Module *m, FnDef *fn, const char *name) {
  char *pname = function_name(parent, m, name);
  Proto *p = image_add_proto(parent->vm, pname, m->path);
  free(pname);
  p->nparams = (uint32_t)fn->param_count;
  FnState fs;
  init_fn_state(&fs, parent, parent->vm, m, p);
  compile_fn_body(&fs, fn);
  finish_function(&fs);
  free_fn_state(&fs);
  return p;
}

static void compile_module(Vm *vm, Module *m) {
  char *name = m->name[0] ? xasprintf("%s.<top>", m->name) : xstrdup("<top>");
  Proto *p = image_add_proto(vm, name, m->path);
  free(name);
  FnState top;
  init_fn_state(&top, NULL, vm, m, p);
  top.is_top = true;
  top.next_reg = top.max_reg = 1;
  set_live(&top, 0);
  begin_scope(&top);
  m->current_item = -1;
  declare_members(&top, m);
  ExprList *items = &m->parse.program.items;
  for (int i = 0; i < items->count; i++) {
    Expr *e = items->items[i];
    m->current_item = i;
    if (e->kind == EX_IMPORT) {
      char *cap = case_first(e->u.name, true);
      module_for(&top, cap, e->pos);
      free(cap);
    }
    if (e->kind == EX_EXTERNAL) define_external(&top, m, e);
  }
  for (int i = 0; i < items->count; i++) {
    m->current_item = i;
    if (items->items[i]->kind == EX_FN_DECL) define_function(&top, m, items->items[i]);
    else compile_stmt(&top, items->items[i]);
  }
  uint32_t r = alloc_reg(&top);
  emit_loadk(&top, r, K_NIL, (SrcPos){0, 0, 1, 0});
  emit_op(&top, BC_RET, (SrcPos){0, 0, 1, 0});
  emit(&top, r);
  end_scope(&top, 1);
  finish_function(&top);
  free_fn_state(&top);
  m->init = p;
}

static Module *find_module(Vm *vm, const char *name) {
  for (uint32_t i = 0; i < vm->modules->count; i++)
    if (strcmp(vm->modules->items[i]->name, name) == 0) return vm->modules->items[i];
  return NULL;
}

static bool imported(Module *m, const char *lower) {
  for (uint32_t i = 0; i < m->import_count; i++)
    if (strcmp(m->imports[i], lower) == 0) return true;
  return false;
}

// The module called `name` (capitalised) as seen from fs's module: the stdlib
// module of that name, or a file imported by this module. NULL name: resolve
// every `import` of the module being compiled (called once per import).
static Module *module_for(FnState *fs, const char *name, SrcPos pos) {
  Vm *vm = fs->vm;
  if (!name) return NULL;
  Module *m = find_module(vm, name);
  if (m) {
    if (m->failed) return NULL;
    if (m->state == 0) {
      if (!m->cycle_reported)
        error_at(fs, pos, "modules %s and %s import each other", fs->module->name[0] ? fs->module->name : "main", name);
      m->cycle_reported = true;
      return NULL;
    }
    return m;
  }
  char *lower = case_first(name, false);
  const char *text = stdlib_source(lower);
  char *path = NULL;
  if (text) {
    path = xasprintf("stdlib/%s.mn", lower);
    m = load_module(vm, name, path, xstrdup(text), strlen(text));
  } else if (imported(fs->module, lower)) {
    const char *slash = strrchr(fs->module->path, '/');
    path = slash ? xasprintf("%.*s/%s.mn", (int)(slash - fs->module->path), fs->module->path, lower)
                 : xasprintf("%s.mn", lower);
    size_t len;
    char *src;
    SourceError err;
    if (source_read(path, &src, &len, &err)) {
      m = load_module(vm, name, path, src, len);
    } else {
      if (err.cannot_read) error_at(fs, pos, "cannot read module %s (%s): %s", name, path, err.message);
      else if (err.line) error_at(fs, pos, "module %s (%s:%u:%u): %s", name, path, err.line, err.col, err.message);
      else error_at(fs, pos, "module %s (%s): %s", name, path, err.message);
      new_module(vm, name, path, NULL, 0)->failed = true;
    }
  } else {
    error_at(fs, pos, "unknown module %s", name);
  }
  free(lower);
  free(path);
  return m;
}

static void collect_imports(Module *m) {
  ExprList *items = &m->parse.program.items;
  for (int i = 0; i < items->count; i++)
    if (items->items[i]->kind == EX_IMPORT) {
      GROW(m->imports, m->import_count, m->import_cap);
      m->imports[m->import_count++] = xstrdup(items->items[i]->u.name);
    }
}

// Parses and compiles the module `name` from text[0..len) (owned from now
// on); NULL after reporting its errors.
// A new entry of the module table holding text[0..len) (owned from now on).
static Module *new_module(Vm *vm, const char *name, const char *path, char *text, size_t len) {
  ModuleTable *t = vm->modules;
  Module *m = xrealloc(NULL, sizeof *m);
  memset(m, 0, sizeof *m);
  m->name = xstrdup(name);
  m->path = xstrdup(path);
  m->text = text;
  m->source = (Source){m->path, m->text, len};
  GROW(t->items, t->count, t->cap);
  t->items[t->count++] = m;
  return m;
}

static Module *load_module(Vm *vm, const char *name, const char *path, char *text, size_t len) {
  ModuleTable *t = vm->modules;
  Module *m = new_module(vm, name, path, text, len);
  if (!parse_program(&m->source, &m->arena, &m->parse)) {
    parse_print_errors(&m->source, &m->parse);
    t->errors += m->parse.error_count ? m->parse.error_count : 1;
    m->state = 1;
    m->failed = true;
    return NULL;
  }
  collect_imports(m);
  compile_module(vm, m);
  m->state = 1;
  t->order = xrealloc(t->order, (t->order_count + 1) * sizeof(Module *));
  t->order[t->order_count++] = m;
  return m;
}

// The program's entry: a function calling each module's <top> in order.
static Proto *make_entry(Vm *vm) {
  ModuleTable *t = vm->modules;
  Proto *p = image_add_proto(vm, "<entry>", "<entry>");
  FnState fs;
  Module fake = {.name = "", .path = "<entry>"};
  init_fn_state(&fs, NULL, vm, &fake, p);
  fs.next_reg = fs.max_reg = 1;
  set_live(&fs, 0);
  SrcPos pos = {0, 0, 1, 0};
  for (uint32_t i = 0; i < t->order_count; i++) {
    uint32_t k = image_add_constant(vm, static_closure(vm, t->order[i]->init));
    uint32_t f = alloc_reg(&fs);
    emit_loadk(&fs, f, k, pos);
    uint32_t at = emit_op(&fs, BC_CALL, pos);
    emit(&fs, f);
    emit(&fs, 0);   // no argument
    emit(&fs, 0);   // stub offset (finish_function)
    emit(&fs, f);
    add_safepoint(&fs, at, true, pos, f, f + 1);
    emit_fsize_placeholder(&fs);
    free_to(&fs, 1);
  }
  uint32_t r = alloc_reg(&fs);
  emit_loadk(&fs, r, K_NIL, pos);
  emit_op(&fs, BC_RET, pos);
  emit(&fs, r);
  finish_function(&fs);
  free_fn_state(&fs);
  return p;
}

static void init_constants(Vm *vm) {
  image_add_constant(vm, VAL_NIL);
  image_add_constant(vm, VAL_FALSE);
  image_add_constant(vm, VAL_TRUE);
  image_add_constant(vm, VAL_EMPTY);
  image_add_constant(vm, vm->empty_array);
}

static void report_source_error(const char *path, const SourceError *err) {
  if (err->line) fprintf(stderr, "%s:%u:%u: error: %s\n", path, err->line, err->col, err->message);
  else fprintf(stderr, "%s: error: %s%s\n", path, err->cannot_read ? "cannot read: " : "", err->message);
}

Proto *compiler_compile_text(Vm *vm, const char *path, char *text, size_t len) {
  ModuleTable *t = xrealloc(NULL, sizeof *t);
  memset(t, 0, sizeof *t);
  vm->modules = t;
  init_constants(vm);
  SourceError err;
  if (!source_check(text, len, &err)) {
    report_source_error(path, &err);
    free(text);
    return NULL;
  }
  const char *prelude = stdlib_source("prelude");
  load_module(vm, "Prelude", "stdlib/prelude.mn", xstrdup(prelude), strlen(prelude));
  load_module(vm, "", path, text, len);
  if (t->errors) return NULL;
  Proto *entry = make_entry(vm);
  // The entry function bounds every callstack (core/frames.h part 4).
  vm->entry_proto = entry;
  vm->entry_code = entry->code;
  vm->entry_code_end = entry->code + entry->code_len;
  return entry;
}

Proto *compiler_compile_program(Vm *vm, const char *path) {
  size_t len;
  char *text;
  SourceError err;
  if (!source_read(path, &text, &len, &err)) {
    report_source_error(path, &err);
    return NULL;
  }
  return compiler_compile_text(vm, path, text, len);
}

void compiler_free(Vm *vm) {
  ModuleTable *t = vm->modules;
  if (!t) return;
  for (uint32_t i = 0; i < t->count; i++) {
    Module *m = t->items[i];
    arena_free_all(&m->arena);
    for (uint32_t j = 0; j < m->member_count; j++) free(m->members[j].name);
    for (uint32_t j = 0; j < m->by_name_count; j++) free(m->by_name[j].ids);
    free(m->by_name);
    namemap_free(&m->member_lists);
    for (uint32_t j = 0; j < m->import_count; j++) free(m->imports[j]);
    free(m->imports);
    free(m->members);
    free(m->name);
    free(m->path);
    free(m->text);
    free(m);
  }
  free(t->items);
  free(t->order);
  free(t);
  vm->modules = NULL;
}
