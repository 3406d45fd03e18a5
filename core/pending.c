// pending.c - the pending-action path (core/vm_state.h): work the interpreter must
// do at its next safe point, requested from any layer below it. Two kinds:
// memprof's queued callbacks (vm->memprof_pending), which must run right
// after the instruction that queued them, a signal (vm->pending_signal),
// which ends the run, and a snapshot asked for (vm->pending_snapshot, taken
// at the next allocation slow path: vm_request_snapshot). Both raise young_limit to young_end, so the next
// interpreter allocation stops at its slow path (vm_update_limits); for the
// callbacks, vm_request_poll also writes POLL over the opcode of the next
// instruction, so that no fast path tests a flag (lang/runtime/interp.c, "Polls");
// the signal is seen at the next loop back-edge (LOOP, FORLOOP, ITERLOOP),
// since a signal handler cannot know where the interpreter stands, or at the
// next allocation slow path (gc_young_slow). The interpreter runs the
// callbacks in run_poll and after_alloc (lang/runtime/interp.c); a signal ends the run
// through vm_handle_signal (core/fail.c).
// Pretenuring also rewrites opcodes (an allocation site's, memprof/pretenure.c):
// vm_opcode_at and vm_set_opcode, below, see through a POLL written over
// that instruction, so that neither undoes the other.
#include "bytecode.h"
#include "vm_state.h"

void vm_request_poll(Vm *vm) {
  if (vm->poll_at || !vm->pc || bytecode_poll_result(vm->pc) < 0) return;
  uint32_t *next = (uint32_t *)(uintptr_t)(vm->pc + bytecode_length(vm->pc));
  vm->poll_origin = vm->pc;
  vm->poll_at = next;
  vm->poll_saved_op = next[0];
  next[0] = BC_POLL;
}

void vm_cancel_poll(Vm *vm) {
  if (!vm->poll_at) return;
  vm->poll_at[0] = vm->poll_saved_op;
  vm->poll_at = NULL;
}

void vm_request_snapshot(Vm *vm, VmSnapshotAsk ask) {
  if (vm->pending_snapshot) return;   // one waits already: they are one snapshot
  vm->pending_snapshot = ask;
  vm->young_limit = vm->young_end;    // the next interpreter allocation stops
}

uint32_t vm_opcode_at(const Vm *vm, const uint32_t *pc) {
  return pc == vm->poll_at ? vm->poll_saved_op : pc[0];
}

void vm_set_opcode(Vm *vm, const uint32_t *pc, uint32_t op) {
  if (pc == vm->poll_at) vm->poll_saved_op = op;
  else *(uint32_t *)(uintptr_t)pc = op;
}
