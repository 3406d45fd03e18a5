// snapshot_pprof.h - one pprof profile per snapshot (--memtrace-pprof-dir
// DIR): the in-use heap the snapshot found, as continuous-profiling stores
// (Pyroscope, Parca, pprof itself) take it. Each profile holds, for every
// callstack and holder, the sampled blocks alive at the snapshot:
//   sample types  samples (count), inuse_objects (count), inuse_space
//                 (bytes: samples x word size / rate); inuse_space shown first
//   label         holder = what keeps the blocks (trace/snapshot_holder.h:
//                 the path's root and hops up to its first container)
//   time          the snapshot's wall-clock time
// The file is DIR/minnow-YYYYmmddTHHMMSS.uuuuuuZ-PID-N-TRIGGER.pb (UTC, the
// snapshot's number N in the trace and its trigger), uncompressed protobuf,
// which pprof and the stores read as they read gzipped profiles. It is
// written as a hidden temporary created exclusively in DIR and renamed when
// whole, so a reader of DIR never sees a partial profile and no file is
// overwritten. A snapshot without paths (a skipped end state) writes none.
// A failure (DIR refusing a file, memory) says why once on stderr and ends
// the profiles; the run and its trace go on.
//
// Use from lang/runtime/snapshots.c: begin when a snapshot begins, block for
// each path written, end when its end record is written.
#ifndef MINNOW_SNAPSHOT_PPROF_H
#define MINNOW_SNAPSHOT_PPROF_H

#include <stdbool.h>
#include <stdint.h>

#include "../../trace/snapshot_file.h"

typedef struct Vm Vm;
typedef struct SnapshotPprof SnapshotPprof;

// A profile for snapshot `number` (trigger, wall-clock time), or NULL when
// no profile is to be written (no --memtrace-pprof-dir, profiles stopped).
SnapshotPprof *snapshot_pprof_begin(Vm *vm, uint64_t number, RetainTrigger trigger, uint64_t time_us);
// The live sampled block `id`, kept by `path`.
void snapshot_pprof_block(Vm *vm, SnapshotPprof *p, uint64_t id, const RetainPath *path);
// Writes the profile if `whole` (every live sampled block given), and frees p.
void snapshot_pprof_end(Vm *vm, SnapshotPprof *p, bool whole);

#endif
