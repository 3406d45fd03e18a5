// image.c - the code image's tables: growing them, linking the call targets,
// the line tables' lookup, freeing (contract in image.h).
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "image.h"
#include "vm_state.h"
#include "../base/grow.h"

// Room for one more item after `count` (base/grow.h).
static void *grow(void *p, uint32_t count, uint32_t *cap, size_t elem) {
  void *q = grow_array(p, cap, (uint64_t)count + 1, elem, 8);
  if (!q) vm_out_of_memory(NULL, "compiling");
  return q;
}

static char *copy_name(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (!d) vm_out_of_memory(NULL, "compiling");
  memcpy(d, s, n);
  return d;
}

Proto *image_add_proto(Vm *vm, const char *name, const char *file) {
  Proto *p = calloc(1, sizeof *p);
  if (!p) vm_out_of_memory(NULL, "compiling");
  p->name = copy_name(name);
  p->file = file;
  p->prim = -1;
  vm->protos = grow(vm->protos, vm->proto_count, &vm->proto_cap, sizeof *vm->protos);
  p->id = vm->proto_count;
  vm->protos[vm->proto_count++] = p;
  return p;
}

uint32_t image_add_constant(Vm *vm, Value v) {
  vm->constants = grow(vm->constants, vm->constant_count, &vm->constant_cap, sizeof *vm->constants);
  vm->constants[vm->constant_count] = v;
  return vm->constant_count++;
}

uint32_t image_add_global(Vm *vm, const char *name) {
  if (vm->global_count >= vm->global_cap) {
    uint32_t cap = vm->global_cap ? vm->global_cap * 2 : 64;
    Value *globals = realloc(vm->globals, cap * sizeof *vm->globals);
    if (globals) vm->globals = globals;
    char **names = globals ? realloc(vm->global_names, cap * sizeof(char *)) : NULL;
    if (!names) vm_out_of_memory(NULL, "compiling");
    vm->global_names = names;
    vm->global_cap = cap;
  }
  vm->globals[vm->global_count] = VAL_NIL;
  vm->global_names[vm->global_count] = copy_name(name);
  return vm->global_count++;
}

uint32_t *image_code_slot(Proto *p) {
  p->code = grow(p->code, p->code_len, &p->code_cap, sizeof *p->code);
  return &p->code[p->code_len++];
}

LinePos *image_line_slot(Proto *p) {
  p->lines = grow(p->lines, p->line_count, &p->line_cap, sizeof *p->lines);
  return &p->lines[p->line_count++];
}

uint32_t image_add_local(Proto *p, const char *name, uint32_t reg, uint32_t start) {
  p->locals = grow(p->locals, p->local_count, &p->local_cap, sizeof *p->locals);
  p->locals[p->local_count] = (LocalVar){copy_name(name), reg, start, UINT32_MAX};
  return p->local_count++;
}

void image_end_local(Proto *p, uint32_t index, uint32_t end) {
  if (index < p->local_count) p->locals[index].end = end;
}

void image_set_captures(Proto *p, const char *const *names, uint32_t count) {
  if (!count) return;
  p->captures = calloc(count, sizeof *p->captures);
  if (!p->captures) vm_out_of_memory(NULL, "capture names");
  for (uint32_t i = 0; i < count; i++) p->captures[i] = copy_name(names[i] ? names[i] : "");
  p->capture_count = count;
}

const char *image_local_name(const Proto *p, const uint32_t *pc, uint32_t reg) {
  if (!p || pc < p->code || pc >= p->code + p->code_len) return NULL;
  uint32_t off = (uint32_t)(pc - p->code);
  for (uint32_t i = p->local_count; i-- > 0;) {
    const LocalVar *l = &p->locals[i];
    if (l->reg == reg && l->start <= off && off < l->end) return l->name;
  }
  return NULL;
}

const char *image_capture_name(const Proto *p, uint32_t field) {
  return p && field >= 1 && field <= p->capture_count ? p->captures[field - 1] : NULL;
}

// Code does not move once compiled, so the pointers stay valid: the entries
// made by an earlier link are kept, and only new protos' code is checked.
static CallTarget target_of(const Proto *p, Value closure) {
  bool fits = (uint64_t)p->fsize + 1 <= VM_CALL_HEADROOM;
  return (CallTarget){.code = p->code, .closure = closure, .nparams = p->nparams,
                      .fast_nparams = fits ? p->nparams : UINT32_MAX, .fsize = p->fsize};
}

// A CALLG at pc whose global holds a fn of its arity that fits the headroom
// becomes CALLG<argc>; its global's target is filled.
static void link_callg(Vm *vm, uint32_t *pc) {
  uint32_t g = pc[1], argc = pc[2];
  Value f = vm->globals[g];
  if (argc > CALL_FORM_MAX_ARGC || !val_has_tag(f, TAG_CLOSURE)) return;
  const CallTarget *t = &vm->fn_targets[val_to_int(val_field(f, 0))];
  if (t->fast_nparams != argc) return;
  vm->global_targets[g] = target_of(vm->protos[val_to_int(val_field(f, 0))], f);
  pc[0] = BC_CALLG0 + argc;
}

void image_link_calls(Vm *vm) {
  uint32_t old_protos = vm->linked_protos, old_globals = vm->linked_globals;
  CallTarget *fn = realloc(vm->fn_targets, (vm->proto_count ? vm->proto_count : 1) * sizeof(CallTarget));
  if (fn) vm->fn_targets = fn;
  CallTarget *gt = realloc(vm->global_targets, (vm->global_count ? vm->global_count : 1) * sizeof(CallTarget));
  if (gt) vm->global_targets = gt;
  if (!fn || !gt) vm_out_of_memory(vm, "call targets");
  for (uint32_t i = old_protos; i < vm->proto_count; i++) vm->fn_targets[i] = target_of(vm->protos[i], 0);
  for (uint32_t g = old_globals; g < vm->global_count; g++)
    vm->global_targets[g] = (CallTarget){.nparams = UINT32_MAX, .fast_nparams = UINT32_MAX};
  for (uint32_t i = old_protos; i < vm->proto_count; i++) {
    Proto *p = vm->protos[i];
    uint32_t *prev = NULL;
    for (uint32_t *pc = p->code; pc < p->code + p->code_len; prev = pc, pc += bytecode_length(pc)) {
      if (pc[0] == BC_CALLG) link_callg(vm, pc);
      // An argument computed by SUBI or ADDI just before a CALLG1: one form.
      if (pc[0] == BC_CALLG1 && prev && (prev[0] == BC_SUBI || prev[0] == BC_ADDI))
        prev[0] = prev[0] == BC_SUBI ? BC_SUBI_CALLG1 : BC_ADDI_CALLG1;
    }
  }
  vm->linked_protos = vm->proto_count;
  vm->linked_globals = vm->global_count;
}

void image_position(const Proto *proto, const uint32_t *pc, uint32_t *line, uint32_t *col) {
  uint32_t off = (uint32_t)(pc - proto->code);
  *line = 0;
  *col = 0;
  uint32_t lo = 0, hi = proto->line_count;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (proto->lines[mid].offset <= off) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0) {
    *line = proto->lines[lo - 1].line;
    *col = proto->lines[lo - 1].col;
  }
}

void image_free(Vm *vm) {
  for (uint32_t i = 0; i < vm->proto_count; i++) {
    Proto *p = vm->protos[i];
    free(p->code);
    free(p->lines);
    for (uint32_t k = 0; k < p->local_count; k++) free((void *)p->locals[k].name);
    free(p->locals);
    for (uint32_t k = 0; k < p->capture_count; k++) free((void *)p->captures[k]);
    free(p->captures);
    free((void *)p->name);
    free(p);
  }
  for (uint32_t i = 0; i < vm->global_count; i++) free(vm->global_names[i]);
  free(vm->global_names);
  free(vm->globals);
  free(vm->protos);
  free(vm->fn_targets);
  free(vm->global_targets);
  free(vm->constants);
  vm->global_names = NULL;
  vm->globals = NULL;
  vm->protos = NULL;
  vm->fn_targets = vm->global_targets = NULL;
  vm->constants = NULL;
  vm->proto_count = vm->proto_cap = vm->global_count = vm->global_cap = 0;
  vm->constant_count = vm->constant_cap = vm->linked_protos = vm->linked_globals = 0;
}
