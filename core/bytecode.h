// bytecode.h - the instruction set, defined once (X-macro) and expanded into the
// opcode enum, the names and lengths used by the disassembler and compiler.
//
// An instruction is a run of 32-bit words: the opcode, then operands.
//
//   +--------+--------+--------+-----
//   | opcode |  op1   |  op2   | ...        each box one uint32_t
//   +--------+--------+--------+-----
//
// Operand kinds: r = register (slot of the current frame, base[r]), k = index of
// vm->constants, g = index of vm->globals, i = signed 32-bit immediate, o = jump
// offset relative to the start of the instruction, n = count, p = primitive or
// function id, s = field-name symbol, c = inline-cache word (written at run time).
// Variable-length instructions (len 0 below) say how long they are in their
// operands; bytecode_length() computes it.
//
// Safe points (instructions that may allocate, collect, call or raise through
// C) carry a frame descriptor (core/frames.h): CALL keyed by its return address,
// the others by their first word.
#ifndef MINNOW_BYTECODE_H
#define MINNOW_BYTECODE_H

#include <stdint.h>

//  X(name, length, safe point, operand kinds)
#define BYTECODE_OPS(X)                                                      \
  X(MOVE, 3, 0, "rr")         /* dst src */                                  \
  X(LOADK, 3, 0, "rk")        /* dst constant */                             \
  X(LOADI, 3, 0, "ri")        /* dst small int */                            \
  X(LOADK2, 6, 0, "rknrk")    /* two LOADKs in a row, the second not a jump  \
                                 target: dst k (LOADK) dst2 k2; one dispatch \
                                 (compiler.c, pair_loads) */                 \
  X(GETGLOBAL, 3, 0, "rg")    /* dst global */                               \
  X(SETGLOBAL, 3, 0, "gr")    /* global src */                               \
  X(GETUPVAL, 3, 0, "rn")     /* dst index into the running closure */      \
  X(ADD, 4, 1, "rrr")         /* dst a b: ints wrap, floats allocate */      \
  X(SUB, 4, 1, "rrr")                                                        \
  X(MUL, 4, 1, "rrr")                                                        \
  X(DIV, 4, 1, "rrr")                                                        \
  X(MOD, 4, 1, "rrr")                                                        \
  X(CONCAT, 4, 1, "rrr")      /* dst a b: ++ on strings or lists */          \
  X(NEG, 3, 1, "rr")                                                         \
  X(NOT, 3, 0, "rr")                                                         \
  X(EQ, 4, 0, "rrr")                                                         \
  X(NE, 4, 0, "rrr")                                                         \
  X(LT, 4, 0, "rrr")                                                         \
  X(LE, 4, 0, "rrr")                                                         \
  X(GT, 4, 0, "rrr")                                                         \
  X(GE, 4, 0, "rrr")                                                         \
  X(JMP, 2, 0, "o")                                                          \
  X(LOOP, 2, 0, "o")          /* a JMP that may go back: polls for signals */ \
  X(JMPIF, 3, 0, "ro")        /* cond must be a bool */                      \
  X(JMPIFNOT, 3, 0, "ro")                                                    \
  X(JNLT, 4, 0, "rro")        /* jump unless a < b (ints fast) */            \
  X(JNLE, 4, 0, "rro")        /* jump unless a <= b */                       \
  X(JNGT, 4, 0, "rro")        /* jump unless a > b */                        \
  X(JNGE, 4, 0, "rro")        /* jump unless a >= b */                       \
  X(JNEQ, 4, 0, "rro")        /* jump unless a == b */                       \
  X(JNNE, 4, 0, "rro")        /* jump unless a != b */                       \
  X(JNLTI, 4, 0, "rio")       /* jump unless a < imm (an int: fast if a is) */ \
  X(JNLEI, 4, 0, "rio")       /* jump unless a <= imm */                     \
  X(JNGTI, 4, 0, "rio")       /* jump unless a > imm */                      \
  X(JNGEI, 4, 0, "rio")       /* jump unless a >= imm */                     \
  X(JNEQK, 4, 0, "rvo")       /* jump unless a == v, an immediate Value     \
                                 (nil, bool, [], small int) sign-extended  \
                                 from the word */                          \
  X(JNNEK, 4, 0, "rvo")       /* jump unless a != v */                       \
  X(ADDI, 4, 0, "rri")        /* dst a imm: a + imm (ints fast) */           \
  X(SUBI, 4, 0, "rri")        /* dst a imm: a - imm */                       \
  X(IADD, 4, 0, "rri")        /* dst a imm: imm + a (literal on the left) */ \
  X(MULI, 4, 0, "rri")        /* dst a imm: a * imm */                       \
  X(DIVI, 4, 0, "rri")        /* dst a imm: a / imm, imm >= 1 */             \
  X(MODI, 4, 0, "rri")        /* dst a imm: a % imm, imm >= 1 */             \
  X(SUBI_CALLG1, 4, 0, "rri") /* a SUBI (ADDI) whose next instruction is a \
                                 CALLG1 (image_link_calls): on an int, the  \
                                 call follows without a dispatch */          \
  X(ADDI_CALLG1, 4, 0, "rri")                                                \
  X(ADDI_RET, 4, 0, "rri")    /* an ADDI followed by RET of its dst: on an \
                                 int, returns the sum (fuse_pairs) */        \
  X(ADD_RET, 4, 1, "rrr")     /* an ADD followed by RET of its dst (kept    \
                                 after it): on ints, returns the sum        \
                                 (compiler.c, fuse_pairs) */                 \
  X(EQK, 4, 0, "rrv")         /* dst a v: a == v (an immediate Value, as    \
                                 JNEQK's; identity) */                       \
  X(NEK, 4, 0, "rrv")         /* dst a v: a != v */                          \
  X(CALL, 0, 1, "rn*irn")     /* fn argc arg_regs... stub dst caller_step; \
                                 stub: memprof's stub for this call site  \
                                 is at return address + stub */           \
  X(CALLG, 0, 1, "gn*irn")    /* as CALL, the function in global g (a     \
                                 top-level fn, never reassigned) */          \
  X(CALL0, 0, 1, "rn*irn")    /* CALL of a closure with argc 0 .. 3 (the    \
                                 compiler's choice): argument copies        \
                                 unrolled; the arity and frame-size check  \
                                 one compare (CallTarget.fast_nparams) */ \
  X(CALL1, 0, 1, "rn*irn")                                                   \
  X(CALL2, 0, 1, "rn*irn")                                                   \
  X(CALL3, 0, 1, "rn*irn")                                                   \
  X(CALLG0, 0, 1, "gn*irn")   /* CALLG with argc 0 .. 3 whose target the   \
                                 link checked (image_link_calls): a fn of  \
                                 that arity whose frame fits the headroom: \
                                 no check but the stack limit's */         \
  X(CALLG1, 0, 1, "gn*irn")                                                  \
  X(CALLG2, 0, 1, "gn*irn")                                                  \
  X(CALLG3, 0, 1, "gn*irn")                                                  \
  X(CALLPRIM, 5, 1, "prnr")   /* prim first_arg argc dst */                  \
  X(RET, 2, 0, "r")                                                          \
  X(RETK, 2, 0, "k")          /* return constant k (compiler.c, fold_returns) */ \
  X(RETI, 2, 0, "i")          /* return the small int imm */                 \
  X(CLOSURE, 0, 1, "rpn*")    /* dst fn_id ncap cap_regs...                  \
                                 (a cap of 0xffffffff is the closure itself) */ \
  X(ALLOC1, 0, 1, "rnn*")     /* dst tag nfields field_regs... */            \
  X(ALLOC2, 6, 1, "rnnrr")    /* an ALLOC1 (same layout) of two fields, not  \
                                 a record: a pair or a cons cell          \
                                 (compiler.c, retag_alloc2) */           \
  X(ALLOC2_RET, 6, 1, "rnnrr") /* an ALLOC2 followed by RET of its dst      \
                                 (kept after it): returns the block on the  \
                                 fast path; the slow path writes dst and    \
                                 runs the RET (compiler.c, retag_alloc2) */ \
  X(ALLOCBIG, 0, 1, "rnn*")   /* as ALLOC1, more than 256 fields: major heap */ \
  X(ALLOCN, 0, 1, "nn*")      /* total_whsize nsub, per sub-block:           \
                                 dst tag nfields fields (a field with bit 31 \
                                 set is sub-block (x & 0x7fffffff); dst       \
                                 0xffffffff = none) */                       \
  X(ALLOCN2, 0, 1, "nn*")     /* an ALLOCN (same layout) of two pairs or    \
                                 cons cells, the first made of registers: \
                                 a fast path without loops (retag_allocn2) */ \
  X(ALLOC1_OLD, 0, 1, "rnn*") /* never compiled: pretenuring writes these   \
                                 over ALLOC1, ALLOCN and ALLOCN2 (the same  \
                                 layout) at a site it switched to the major \
                                 heap, and back (bytecode_old_form) */       \
  X(ALLOCN_OLD, 0, 1, "nn*")                                                 \
  X(ALLOCN2_OLD, 0, 1, "nn*")                                                \
  X(GETFIELD, 6, 0, "rrscc")  /* dst obj name cached_shape cached_index */   \
  X(SETFIELD, 6, 0, "rsrcc")  /* obj name src cached_shape cached_index */   \
  X(INDEX, 4, 0, "rrr")       /* dst obj idx */                              \
  X(SETINDEX, 4, 0, "rrr")    /* obj idx src */                              \
  X(GETF, 4, 0, "rrn")        /* dst block i: field i, no checks (match) */  \
  X(TESTCONS, 3, 0, "ro")     /* jump unless r is a cons */                  \
  X(TESTEMPTY, 3, 0, "ro")    /* jump unless r is [] */                      \
  X(TESTEMPTY_UNCONS, 3, 0, "ro") /* a TESTEMPTY whose target is an UNCONS \
                                 of the same register (a match on [] then  \
                                 x :: xs): a cons is taken apart at once    \
                                 (compiler.c, fuse_pairs) */                 \
  X(UNPAIR_JNEQK, 5, 0, "rrro") /* an UNPAIR followed by a JNEQK of its   \
                                 first field (let (l, r) = t; if l == nil): \
                                 both in one dispatch (fuse_pairs) */        \
  X(TESTTUPLE, 4, 0, "rno")   /* jump unless r is a tuple of n fields */     \
  X(UNCONS, 5, 0, "rrro")    /* r head tail fail: jump unless r is a cons; \
                                 else load both fields */                    \
  X(UNPAIR, 5, 0, "rrro")    /* r a b fail: jump unless r is a tuple of 2  \
                                 fields; else load both */                   \
  X(TESTEQ, 4, 0, "rko")      /* jump unless r == constant k (structural) */          \
  X(TESTFIELD, 5, 0, "rsro")  /* jump unless r is a record with field s;     \
                                 else dst = that field */                    \
  X(ITERLOOP, 5, 0, "rrro")   /* coll idx x back: next element of a list or  \
                                 array into x and jump back, or fall through \
                                 at the end */                               \
  X(FORPREP, 4, 0, "rro")     /* i hi exit: both ints (else type error);    \
                                 jump to exit unless i < hi */               \
  X(FORLOOP, 4, 0, "rro")     /* i hi back: i += 1; jump back if i < hi */   \
  X(TRY, 3, 0, "or")          /* handler catch_reg: push a handler */        \
  X(POPTRY, 1, 0, "")                                                        \
  X(MATCHFAIL, 1, 1, "")      /* raise `match failure` */                    \
  X(EXIT_NESTED, 1, 0, "")    /* trampoline: return from interp_call to C */     \
  X(MEMPROF_RETURN, 2, 0, "i") /* back: in a call site's memprof stub    \
                                 {dst, caller_step, MEMPROF_RETURN, back}  \
                                 (core/frames.h part 5); the call's return \
                                 address is this word + back */           \
  X(POLL, 1, 0, "")          /* never compiled: written at run time over \
                                 the opcode after an instruction that     \
                                 queued memprof callbacks (lang/runtime/interp.c, \
                                 "Polls"), restored when it runs */        \
  X(HALT, 1, 0, "")

typedef enum Opcode {
#define X(name, len, safe, kinds) BC_##name,
  BYTECODE_OPS(X)
#undef X
  OPCODE_COUNT
} Opcode;

// A combined allocation (ALLOCN) holds at most ALLOCN_MAX_SUBBLOCKS
// sub-blocks of at most ALLOCN_MAX_WHSIZE words together: the compiler
// combines no more, and the interpreter's and memprof's per-sub-block arrays
// are that long.
enum { ALLOCN_MAX_SUBBLOCKS = 16, ALLOCN_MAX_WHSIZE = 256 };

// Operand values with a special meaning.
enum {
  OPERAND_NONE = 0xffffffffu,    // ALLOCN dst: the sub-block has no register
  OPERAND_SELF = 0xffffffffu,    // CLOSURE capture: the new closure itself
  OPERAND_SUBBLOCK = 0x80000000u, // ALLOCN field: bit set = earlier sub-block
};

extern const char *const bytecode_names[OPCODE_COUNT];
// Length in words of the instruction at `pc`.
uint32_t bytecode_length(const uint32_t *pc);
// Pretenuring (memprof/pretenure.c) switches an allocation site by its
// opcode alone: ALLOC1, ALLOCN and ALLOCN2 to the form that allocates in the
// major heap, ALLOC1_OLD, ALLOCN_OLD and ALLOCN2_OLD, and back. `op` itself
// when it has no such form (it allocates no switchable site).
Opcode bytecode_old_form(Opcode op);
Opcode bytecode_young_form(Opcode op);
// Whether instructions with this opcode are safe points.
int bytecode_is_safe_point(Opcode op);
// The word of the jump offset (kind "o") of a fixed-length instruction with
// opcode op, or 0 if it has none.
uint32_t bytecode_jump_word(Opcode op);
// The result register of an instruction that may queue memprof callbacks and
// falls through, after which a poll may run (core/pending.c), or -1.
int bytecode_poll_result(const uint32_t *pc);

// CALL, CALLG and their forms by argc (CALL0 .. CALLG3): { op, fn, argc,
// arg_reg[argc], stub, dst, caller_step }, the same layout whatever the form.
// The return address is the last word (core/frames.h part 2).
static inline int bytecode_is_call(uint32_t op) {
  return op == BC_CALL || op == BC_CALLG || (op >= BC_CALL0 && op <= BC_CALLG3);
}
// The most arguments a form by argc takes (CALL3, CALLG3).
enum { CALL_FORM_MAX_ARGC = 3 };
static inline uint32_t call_length(const uint32_t *pc) { return 6 + pc[2]; }
static inline const uint32_t *call_ret(const uint32_t *pc) { return pc + 5 + pc[2]; }
static inline uint32_t call_dst(const uint32_t *pc) { return call_ret(pc)[-1]; }

#endif
