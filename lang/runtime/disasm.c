// disasm.c - the listing of ./vm --dump-bytecode: code and frame descriptors
// of every function (instruction names and lengths: core/bytecode.c).
#include <stdio.h>
#include <string.h>

#include "../../core/bytecode.h"
#include "../../core/image.h"
#include "../../core/frames.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"

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
  Opcode young = bytecode_young_form(pc[0]);
  if (young == BC_ALLOCN || young == BC_ALLOCN2) fprintf(out, "   ; combined: %u sub-blocks, %u words", pc[2], pc[1]);
  fprintf(out, "\n");
  const FrameDesc *d = frames_find(vm->frames, bytecode_is_call(pc[0]) ? call_ret(pc) : pc);
  if (d) dump_desc(out, d);
}

void disasm_program(Vm *vm, FILE *out) {
  for (uint32_t i = 0; i < vm->proto_count; i++) {
    const Proto *p = vm->protos[i];
    fprintf(out, "function %s (%s) params %u frame %u%s\n", p->name, p->file, p->nparams, p->fsize,
            p->prim >= 0 ? " [external]" : "");
    for (const uint32_t *pc = p->code; pc < p->code + p->code_len; pc += bytecode_length(pc))
      dump_instruction(vm, out, p, pc);
  }
}
