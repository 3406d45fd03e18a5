// snapshots.h - what keeps memory, while the program runs: snapshots of the
// running trace, each one major collection whose mark records the path from
// a root to every sampled block it finds alive (gc.h, "Snapshots"), each hop
// named as the program sees it (path_names.h), appended to T.ctf.retain
// beside the trace (trace/snapshot_writer.h). The end state is the last
// snapshot, taken when the trace ends. Design: docs/design.md ("Snapshots").
#ifndef MINNOW_SNAPSHOTS_H
#define MINNOW_SNAPSHOTS_H

#include <stdint.h>

typedef struct Vm Vm;

// After a trace starts: SIGUSR1, the period (--memtrace-snapshot-every) and
// the peak factor (--memtrace-snapshot-peak) start asking for snapshots.
void snapshots_arm(Vm *vm);
// Before a trace stops (Memtrace.stop): they stop.
void snapshots_disarm(Vm *vm);
// Memtrace.snapshot(): a snapshot now. Returns its number, or -1 with the
// reason in *why (no trace, no snapshot file, inside a collection).
int64_t snapshots_take_now(Vm *vm, const char **why);
// At an allocation slow path with vm->pending_snapshot set (vm->take_snapshot).
void snapshots_take_pending(Vm *vm);
// Takes the end state of the running trace, if any, before it closes (the
// trace stops sampling here). Runs no Minnow code; does nothing when no
// trace runs or a second time; when the run ends inside a collection or a
// Memprof callback, or with VmOptions.memtrace_no_end_state, the end state
// holds only the reason.
void snapshots_end_trace(Vm *vm);

#endif
