// bytecode.c - what the X-macro of bytecode.h tells about each instruction:
// its name, its length, whether it is a safe point, where its jump offset
// is, and after which instructions a poll may run (core/pending.c).
#include <string.h>

#include "bytecode.h"
#include "value.h"

const char *const bytecode_names[OPCODE_COUNT] = {
#define X(name, len, safe, kinds) [BC_##name] = #name,
    BYTECODE_OPS(X)
#undef X
};

static const uint8_t fixed_length[OPCODE_COUNT] = {
#define X(name, len, safe, kinds) [BC_##name] = len,
    BYTECODE_OPS(X)
#undef X
};

static const uint8_t safe_point[OPCODE_COUNT] = {
#define X(name, len, safe, kinds) [BC_##name] = safe,
    BYTECODE_OPS(X)
#undef X
};

int bytecode_is_safe_point(Opcode op) { return safe_point[op]; }

static const char *const operand_kinds[OPCODE_COUNT] = {
#define X(name, len, safe, kinds) [BC_##name] = kinds,
    BYTECODE_OPS(X)
#undef X
};

uint32_t bytecode_jump_word(Opcode op) {
  const char *o = strchr(operand_kinds[op], 'o');
  return o && fixed_length[op] ? (uint32_t)(o - operand_kinds[op]) + 1 : 0;
}

static uint32_t allocn_length(const uint32_t *pc) {
  const uint32_t *sub = pc + 3;
  for (uint32_t i = 0; i < pc[2]; i++) sub += 3 + ((sub[1] & 0xff) == TAG_RECORD) + sub[2];
  return (uint32_t)(sub - pc);
}

uint32_t bytecode_length(const uint32_t *pc) {
  switch (pc[0]) {
    case BC_CLOSURE: return 4 + pc[3];
    case BC_ALLOC1:
    case BC_ALLOC2:
    case BC_ALLOC2_RET:
    case BC_ALLOC1_OLD:
    case BC_ALLOCBIG: return 4 + ((pc[2] & 0xff) == TAG_RECORD) + pc[3];
    case BC_ALLOCN:
    case BC_ALLOCN2:
    case BC_ALLOCN_OLD:
    case BC_ALLOCN2_OLD: return allocn_length(pc);
    default: return bytecode_is_call(pc[0]) ? call_length(pc) : fixed_length[pc[0]];
  }
}

Opcode bytecode_old_form(Opcode op) {
  switch (op) {
    case BC_ALLOC1:
    case BC_ALLOC2:
    case BC_ALLOC2_RET: return BC_ALLOC1_OLD;   // the same layout (two fields; ALLOC2_RET's RET follows)
    case BC_ALLOCN: return BC_ALLOCN_OLD;
    case BC_ALLOCN2: return BC_ALLOCN2_OLD;
    default: return op;
  }
}

Opcode bytecode_young_form(Opcode op) {
  switch (op) {
    case BC_ALLOC1_OLD: return BC_ALLOC1;
    case BC_ALLOCN_OLD: return BC_ALLOCN;
    case BC_ALLOCN2_OLD: return BC_ALLOCN2;
    default: return op;
  }
}

int bytecode_poll_result(const uint32_t *pc) {
  switch ((Opcode)pc[0]) {
    case BC_CALLPRIM: return (int)pc[4];
    case BC_CONCAT: case BC_CLOSURE: case BC_ADD: case BC_SUB: case BC_MUL: case BC_DIV:
    case BC_MOD: case BC_NEG: case BC_ADDI: case BC_SUBI: case BC_IADD: case BC_MULI: case BC_DIVI:
    case BC_MODI:
    // The fused forms whose slow path is ADD, ADDI or SUBI's (it may box a
    // float): the poll runs before the RET or CALLG1 kept after them.
    case BC_ADD_RET: case BC_ADDI_RET: case BC_SUBI_CALLG1: case BC_ADDI_CALLG1:
      return (int)pc[1];
    default: return -1;
  }
}
