// disasm.c - instruction lengths and names (bytecode.h) and the listing of
// ./vm --dump-bytecode: code and frame descriptors of every function.
#include <stdio.h>
#include <string.h>

#include "bytecode.h"
#include "compiler.h"
#include "frames.h"
#include "vm.h"

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
    case BC_ALLOCBIG: return 4 + ((pc[2] & 0xff) == TAG_RECORD) + pc[3];
    case BC_ALLOCN:
    case BC_ALLOCN2: return allocn_length(pc);
    case BC_CALL:
    case BC_CALLG: return call_length(pc);
    default: return fixed_length[pc[0]];
  }
}

static void dump_desc(FILE *out, const FrameDesc *d) {
  fprintf(out, "        ; frame %u, live {", d->proto->fsize);
  for (uint32_t i = 0; i < d->live_count; i++) fprintf(out, "%sr%u", i ? " " : "", d->live[i]);
  fprintf(out, "}");
  for (uint32_t i = 0; i < d->debug_count; i++) {
    const DebugInfo *e = d->debug[i];
    fprintf(out, "%s%s:%u:%u-%u", i == 0 ? " at " : ", ", e->file, e->line, e->start_col, e->end_col);
  }
  fprintf(out, "\n");
}

static void dump_instruction(Vm *vm, FILE *out, const Proto *p, const uint32_t *pc) {
  uint32_t len = bytecode_length(pc);
  fprintf(out, "  %5u  %-10s", (uint32_t)(pc - p->code), bytecode_names[pc[0]]);
  for (uint32_t i = 1; i < len; i++) fprintf(out, " %d", (int32_t)pc[i]);
  if (pc[0] == BC_ALLOCN || pc[0] == BC_ALLOCN2) fprintf(out, "   ; combined: %u sub-blocks, %u words", pc[2], pc[1]);
  fprintf(out, "\n");
  const FrameDesc *d = frames_find(vm->frames, pc[0] == BC_CALL || pc[0] == BC_CALLG ? call_ret(pc) : pc);
  if (d) dump_desc(out, d);
}

void compiler_dump(Vm *vm, FILE *out) {
  for (uint32_t i = 0; i < vm->proto_count; i++) {
    const Proto *p = vm->protos[i];
    fprintf(out, "function %s (%s) params %u frame %u%s\n", p->name, p->file, p->nparams, p->fsize,
            p->prim >= 0 ? " [external]" : "");
    for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc))
      dump_instruction(vm, out, p, pc);
  }
}
