// pretenure.h - pretenuring: allocation sites whose sampled blocks survive
// are switched to allocate in the major heap, decided online from memprof's
// samples (./vm --pretenure, Gc.set_pretenure) or offline from a previous
// run's trace (--pretenure-from, lang/runtime/pretenure_from.c). Design: the
// numbered comment at the top of memprof/pretenure.c; the rule and its error
// rate: memprof/pretenure_rule.h and docs/design.md ("Pretenuring").
//
// A site is an allocation instruction's debug entry (core/frames.h), the key
// of memprof's profiles and of the trace's locations. Only ALLOC1, ALLOCN and
// ALLOCN2 are switched, each by its opcode alone (core/bytecode.h,
// bytecode_old_form): an instruction not switched runs exactly as before.
#ifndef MINNOW_PRETENURE_H
#define MINNOW_PRETENURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/frames.h"

typedef struct Vm Vm;

// The rate --pretenure's profile samples at unless told otherwise
// (docs/design.md, "Pretenuring", says why).
#define PRETENURE_DEFAULT_RATE 1e-4

// One decision, as --pretenure-log prints it and the snapshot file beside a
// trace records it (docs/trace-format.md 12.1, record kind 5).
typedef struct PretenureDecision {
  bool old;                    // switched to the major heap (else back to the minor heap)
  const DebugInfo *site;
  uint64_t blocks;             // sampled blocks resolved: the evidence
  uint64_t count;              // of them promoted (old) or dead at their first major cycle (young again)
  double bound, threshold;     // the lower confidence bound that passed the threshold
  // When: the minor collection it was made in or after (a switch is made
  // inside the collection whose promotions decide), the major cycle (major
  // collections before it).
  uint64_t minor_collections, major_collections;
  bool offline;                // from --pretenure-from's trace
  bool probe;                  // young again on a probe's evidence: `count` of `blocks` born
                               // young in it died at the next minor collection (memprof/pretenure.c, part 8)
} PretenureDecision;

// Starts the online feedback: a profile at `rate` whose native tracker
// counts, per site, its sampled blocks' fates and switches sites by the
// rule. `log`: each decision on stderr. False, with a reason in err, when
// the profiler is not built (vm-noprof, vm-boehm), already runs, or has no
// room for another profile.
bool pretenure_start(Vm *vm, double rate, bool log, char *err, size_t err_len);
// Stops the feedback and switches every pretenured site back to the minor
// heap. False if it was not running.
bool pretenure_stop(Vm *vm);
bool pretenure_running(const Vm *vm);
// --pretenure-log without the online feedback (offline decisions only).
void pretenure_set_log(Vm *vm, bool log);

// Offline: switches the instruction of `site` to the major heap on the
// evidence of a previous run (d->site == site; d->offline). A combined
// allocation switches once every one of its sub-block sites has been given
// (the same rule as online). False if `site` is not a switchable allocation
// site. With the feedback running, the site's undo test watches it as if it
// had decided online.
bool pretenure_decide_offline(Vm *vm, const PretenureDecision *d);

// Sites switched to the major heap now (one in the middle of a probe
// counts: its instruction runs its young form meanwhile), decisions so far
// (either way), and probes started (memprof/pretenure.c, part 8).
uint64_t pretenure_sites_old(const Vm *vm);
uint64_t pretenure_decisions(const Vm *vm);
uint64_t pretenure_probes(const Vm *vm);

// Frees the state (the VM is freed; called by memprof_free).
void pretenure_free(Vm *vm);

#endif
