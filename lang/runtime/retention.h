// retention.h - the end state of a trace: when a trace ends (every way out
// of the VM, and Memtrace.stop), a final major collection, so that every
// sampled block dead by then gets its collect event, then the retaining
// path of every sampled block still alive, each hop named as the program
// sees it, written beside the trace in T.ctf.retain (trace/retain.h).
// Design: docs/design.md ("The end state").
#ifndef MINNOW_RETENTION_H
#define MINNOW_RETENTION_H

typedef struct Vm Vm;

// Takes the end state of the running trace, if any, before it closes (the
// trace stops sampling here). Runs no Minnow code; does nothing when no
// trace runs, a second time, or (recorded as the reason in the file) when
// the run ends inside a collection or a Memprof callback. With
// VmOptions.memtrace_no_end_state it only writes that it was skipped.
void retention_end_trace(Vm *vm);

#endif
