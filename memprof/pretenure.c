// pretenure.c - pretenuring's feedback and switch (contract: pretenure.h; the
// rule: pretenure_rule.h; docs/design.md, "Pretenuring").
//
// 1. Sites. Per debug entry id, a Site: whether it is switchable (a
//    sub-block entry of an ALLOC1, ALLOCN or ALLOCN2 descriptor: found once,
//    from frames_debug_desc and the opcode at the descriptor's key), its
//    switch test, its undo window. The feedback's profile is site-only
//    (tracker.h: no callstack is captured for it) and native and immediate:
//    its events come as they happen, inside the allocation or collection.
//    A sample of another site is forgotten at its alloc event: no entry
//    kept, no further event.
// 2. The switch test's trials are the site's sampled blocks born young,
//    resolved by the next minor collection: promoted (a success) or dead.
//    A block is forgotten at its promotion: its later death says nothing
//    the rule uses.
// 3. An instruction switches when each of its sub-block sites has passed
//    its own test (one site for ALLOC1): its opcode becomes the old form
//    (vm_set_opcode, which sees through a POLL). A combined allocation thus
//    switches as a whole, and only on every block's own evidence, so the
//    error bound of pretenure_rule.h holds for each site it makes old.
// 4. The undo's trials are the sampled blocks born old at a switched site
//    (memprof_sample_major samples them, as their sub-block), stamped with
//    the major cycle of their birth (major_collections then). A
//    dealloc_major by the collection that ends the next cycle is a death at
//    the first major cycle. Births are grouped by cycle; the group of cycle
//    c is complete once cycle c + 1 has ended (every first-cycle death of it
//    reported), and is added to the site's window at the site's first birth
//    after that. The window's test then runs once it holds undo_window
//    births (pretenure_rule.h).
// 5. An undo writes the opcode the switch replaced back (Site.young_op: a
//    fused ALLOC2_RET comes back fused, not as the ALLOC1 its old form
//    ALLOC1_OLD maps to), as does a probe (part 8); every sub-block site of the
//    instruction starts afresh (a new switch test on new evidence, an empty
//    window). After MAX_UNDOS undos its sites stay young for the rest of the
//    run: a site whose blocks' fates keep changing gains nothing from moving.
// 6. Each decision is printed (--pretenure-log) and, while a trace runs,
//    written to its snapshot file as a decision record (T.retain; the
//    writer holds one made during a snapshot until the snapshot's end), one
//    per site: a combined allocation's switch makes one per sub-block, each
//    with its evidence.
// 7. The state outlives the feedback's profile: offline decisions
//    (--pretenure-from) need no profile, and stopping the feedback switches
//    every instruction it made old back (the keys are kept in `switched`).
// 8. The probe: a switched instruction learns at minor-collection speed
//    whether its blocks still survive. After probe_every sampled births old
//    at one of its sites, and at least PROBE_MIN_HEAP_SHARE of a minor heap
//    allocated old by pretenuring since its switch or last probe (so that
//    at high rates the minor collections probes ask for stay few), its young form is written back (the site stays
//    switched: `probing`) until one of its sites has undo_window sampled
//    births young (stamped PROBE_STAMP); then the old form is written again
//    and a minor collection asked for (vm->gc.minor_requested: the next
//    pretenured allocation runs it). Once every probe birth is resolved
//    (promoted, or dead at that minor collection), each site's window test
//    (pretenure_rule.h) on its probe births and deaths may undo the
//    instruction (part 5); else the probe ends. Sampling is untouched: the
//    probe's blocks are sampled young, as any young block is. The part 4
//    window stays the evidence for blocks that outlive a minor collection
//    but die at their first major cycle.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "memprof_internal.h"
#include "memtrace.h"
#include "pretenure.h"
#include "pretenure_rule.h"
#include "../base/grow.h"
#include "../core/bytecode.h"
#include "../core/vm_state.h"
#include "../trace/snapshot_writer.h"

_Static_assert(OPCODE_COUNT <= UINT8_MAX, "Site.young_op holds an Opcode");

enum { MAX_UNDOS = 3 };
// Part 8: a site's probes are at least this share of a minor heap's words
// allocated old (all sites) apart, whatever the rate.
#define PROBE_MIN_HEAP_SHARE 0.25
// The high half of MemprofBlock.user of a probe's birth (part 8).
#define PROBE_STAMP UINT32_MAX

typedef enum SiteKind { SITE_UNKNOWN = 0, SITE_SWITCHABLE, SITE_OTHER } SiteKind;

typedef struct Site {
  const FrameDesc *desc;       // its instruction's descriptor (switchable sites)
  ShareTest test;              // part 2; frozen once passed
  double bound;                // the bound that passed it
  uint32_t group_cycle;        // part 4: the cycle whose births the group counts
  uint32_t group_births, group_deaths;
  uint32_t window_births, window_deaths;
  uint32_t old_births;         // part 8: sampled births old since the last probe
  uint32_t probe_births, probe_resolved, probe_deaths;
  double probe_from;           // pretenured_words when it switched or its last probe ended
  bool probing;                // its instruction is young for a probe, or awaits the probe's minor collection
  bool probe_closed;           // the probe's births are complete (the old form is back)
  uint8_t kind;                // SiteKind
  uint8_t young_op;            // the Opcode its instruction had before any switch (part 5)
  bool passed;                 // its test passed since its instruction was last young
  uint8_t undos;
} Site;

typedef struct Pretenure {
  PretenureParams params;
  int profile;                 // the feedback's profile, -1 when not running
  bool log;
  Site *sites;                 // by debug entry id
  uint32_t site_cap;
  const uint32_t **switched;   // keys of the instructions ever made old (part 7)
  uint8_t *switched_young;     // their young opcodes (Site.young_op)
  uint32_t switched_count, switched_cap;
  uint64_t decisions, old_count, probes;
} Pretenure;

static Pretenure *state(Vm *vm) {
  if (vm->pretenure) return vm->pretenure;
  Pretenure *pt = calloc(1, sizeof *pt);
  if (!pt) vm_out_of_memory(vm, "pretenure");
  pt->params = PRETENURE_DEFAULTS;
  pt->profile = -1;
  vm->pretenure = pt;
  return pt;
}

// The site of debug entry `id`, classified on first sight (part 1).
static Site *site_for(Vm *vm, Pretenure *pt, uint32_t id) {
  if (id >= pt->site_cap) {
    uint32_t cap = frames_debug_count(vm->frames);
    if (cap <= id) cap = id + 1;
    Site *sites = realloc(pt->sites, (size_t)cap * sizeof *sites);
    if (!sites) vm_out_of_memory(vm, "pretenure");
    memset(sites + pt->site_cap, 0, (size_t)(cap - pt->site_cap) * sizeof *sites);
    pt->sites = sites;
    pt->site_cap = cap;
  }
  Site *st = &pt->sites[id];
  if (st->kind == SITE_UNKNOWN) {
    const FrameDesc *d = frames_debug_desc(vm->frames, id, NULL);
    Opcode op = d && !d->is_call ? bytecode_young_form(vm_opcode_at(vm, d->key)) : OPCODE_COUNT;
    st->kind = op == BC_ALLOC1 || op == BC_ALLOC2 || op == BC_ALLOC2_RET || op == BC_ALLOCN || op == BC_ALLOCN2 ? SITE_SWITCHABLE : SITE_OTHER;
    // Classified before its instruction is ever switched (maybe_switch asks
    // every sub-block site first), so that this is the opcode it replaces.
    st->young_op = (uint8_t)op;
    st->desc = d;
    share_test_init(&st->test, &pt->params);
  }
  return st;
}

static bool is_old(const Vm *vm, const Site *st) {
  uint32_t op = vm_opcode_at(vm, st->desc->key);
  return bytecode_young_form(op) != op;
}

// Switched to the major heap: old, or young for a probe (part 8).
static bool switched(const Vm *vm, const Site *st) { return st->probing || is_old(vm, st); }

static void probe_reset(Site *st) {
  st->old_births = st->probe_births = st->probe_resolved = st->probe_deaths = 0;
  st->probing = st->probe_closed = false;
}

// The number of the major collection running or last run (its cycle's end).
static uint32_t collection_now(const Vm *vm) {
  return (uint32_t)vm->gc.stats.major_collections + (vm->gc.collecting ? 1 : 0);
}

static uint64_t millionths(double x) { return x <= 0 ? 0 : (uint64_t)(x * 1e6 + 0.5); }

// Part 6: the decision record in the running trace's snapshot file.
static void record(Vm *vm, const PretenureDecision *d) {
  if (!MEMPROF_BUILT || !vm->memprof) return;
  SnapshotWriter *w = memtrace_snapshots(vm);
  MemtraceIdentity id;
  if (!w || !memtrace_identity(vm, &id)) return;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const DebugInfo *s = d->site;
  RetainDecision r = {(uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u, id.alloc_count, d->old ? 1u : d->probe ? 2u : 0u,
                      s->function, s->file, s->line, s->start_col, s->end_col, d->blocks, d->count,
                      millionths(d->bound), millionths(d->threshold)};
  snapshot_writer_decision(w, &r);
}

static void decided(Vm *vm, Pretenure *pt, const PretenureDecision *d) {
  pt->decisions++;
  if (pt->log) {
    const DebugInfo *s = d->site;
    char when[96];
    if (d->offline) snprintf(when, sizeof when, "in the trace, before the run");
    else
      snprintf(when, sizeof when, "minor collection %llu, major cycle %llu", (unsigned long long)d->minor_collections,
               (unsigned long long)d->major_collections);
    fprintf(stderr, "pretenure: %s (%s:%u:%u-%u) -> %s: %llu of %llu sampled blocks %s; share >= %.4f > %.2f (%s)\n",
            s->function, s->file, s->line, s->start_col, s->end_col, d->old ? "major heap" : "minor heap again",
            (unsigned long long)d->count, (unsigned long long)d->blocks,
            d->old     ? "born young were promoted"
            : d->probe ? "born young in a probe died at the next minor collection"
                       : "born old died at their first major cycle",
            d->bound,
            d->threshold, when);
  }
  record(vm, d);
}

// A decision made now: inside a minor collection (a switch: the promotions
// it reports decide), that collection's number counts.
static PretenureDecision decision(const Vm *vm, bool old, const DebugInfo *site, uint64_t blocks, uint64_t count,
                                  double bound, double threshold) {
  return (PretenureDecision){.old = old, .site = site, .blocks = blocks, .count = count, .bound = bound,
                             .threshold = threshold,
                             .minor_collections = vm->gc.stats.minor_collections + vm->gc.collecting,
                             .major_collections = vm->gc.stats.major_collections};
}

// Makes the instruction of `st` old if each of its sub-block sites passed
// (part 3). `offline`: the decision of --pretenure-from.
static void maybe_switch(Vm *vm, Pretenure *pt, Site *st, bool offline) {
  const FrameDesc *d = st->desc;
  for (uint32_t i = 0; i < d->debug_count; i++)
    if (!site_for(vm, pt, d->debug[i]->id)->passed) return;
  if (is_old(vm, st)) return;
  vm_set_opcode(vm, d->key, bytecode_old_form(vm_opcode_at(vm, d->key)));
  pt->old_count++;
  uint32_t cap = pt->switched_cap;
  const uint32_t **keys = grow_array(pt->switched, &cap, (uint64_t)pt->switched_count + 1, sizeof *keys, 16);
  if (keys) pt->switched = keys;
  uint8_t *young = keys ? grow_array(pt->switched_young, &pt->switched_cap, (uint64_t)pt->switched_count + 1, 1, 16) : NULL;
  if (!young) vm_out_of_memory(vm, "pretenure");
  pt->switched_young = young;
  pt->switched_young[pt->switched_count] = st->young_op;
  pt->switched[pt->switched_count++] = d->key;
  uint32_t cycle = (uint32_t)vm->gc.stats.major_collections;
  for (uint32_t i = 0; i < d->debug_count; i++) {
    Site *sub = &pt->sites[d->debug[i]->id];
    sub->group_cycle = cycle;
    sub->group_births = sub->group_deaths = sub->window_births = sub->window_deaths = 0;
    probe_reset(sub);
    sub->probe_from = vm->gc.stats.pretenured_words;
    PretenureDecision dec = decision(vm, true, d->debug[i], sub->test.n, sub->test.k, sub->bound,
                                     pt->params.threshold);
    dec.offline = offline;
    decided(vm, pt, &dec);
  }
}

// Writes the young form back and starts every sub-block site afresh (part
// 5). `probe`: the evidence is the probe's (part 8), else the window's.
static void undo(Vm *vm, Pretenure *pt, Site *st, double bound, bool probe) {
  const FrameDesc *d = st->desc;
  PretenureDecision dec =
      decision(vm, false, frames_debug_by_id(vm->frames, (uint32_t)(st - pt->sites)),
               probe ? st->probe_births : st->window_births, probe ? st->probe_deaths : st->window_deaths, bound,
               pt->params.undo_threshold);
  dec.probe = probe;
  vm_set_opcode(vm, d->key, st->young_op);
  pt->old_count--;
  for (uint32_t i = 0; i < d->debug_count; i++) {
    Site *sub = &pt->sites[d->debug[i]->id];
    sub->passed = false;
    share_test_init(&sub->test, &pt->params);
    sub->group_births = sub->group_deaths = sub->window_births = sub->window_deaths = 0;
    probe_reset(sub);
    if (sub->undos < MAX_UNDOS) sub->undos++;
  }
  decided(vm, pt, &dec);
}

// Part 8: writes the young form of `st`'s instruction back for a probe.
static void probe_start(Vm *vm, Pretenure *pt, Site *st) {
  const FrameDesc *d = st->desc;
  vm_set_opcode(vm, d->key, st->young_op);
  pt->probes++;
  for (uint32_t i = 0; i < d->debug_count; i++) {
    Site *sub = &pt->sites[d->debug[i]->id];
    probe_reset(sub);
    sub->probing = true;
  }
}

// A probe's birth at `st` (part 8): the births are complete once one of the
// instruction's sites has undo_window of them.
static void probe_birth(Vm *vm, Pretenure *pt, Site *st) {
  st->probe_births++;
  if (st->probe_closed || st->probe_births < pt->params.undo_window) return;
  const FrameDesc *d = st->desc;
  vm_set_opcode(vm, d->key, bytecode_old_form(vm_opcode_at(vm, d->key)));
  for (uint32_t i = 0; i < d->debug_count; i++) pt->sites[d->debug[i]->id].probe_closed = true;
  vm->gc.minor_requested = true;
}

// A probe's birth at `st` was promoted or died (part 8). Once every birth of
// the closed probe is resolved, its sites' tests run.
static void probe_trial(Vm *vm, Pretenure *pt, Site *st, bool promoted) {
  if (!st->probing) return;   // a probe undone or ended meanwhile
  st->probe_resolved++;
  st->probe_deaths += !promoted;
  const FrameDesc *d = st->desc;
  for (uint32_t i = 0; i < d->debug_count; i++) {
    const Site *sub = &pt->sites[d->debug[i]->id];
    if (!sub->probe_closed || sub->probe_resolved < sub->probe_births) return;
  }
  for (uint32_t i = 0; i < d->debug_count; i++) {
    Site *sub = &pt->sites[d->debug[i]->id];
    double bound;
    if (undo_window_test(sub->probe_births, sub->probe_deaths, &pt->params, &bound)) {
      undo(vm, pt, sub, bound, true);
      return;
    }
  }
  for (uint32_t i = 0; i < d->debug_count; i++) {
    Site *sub = &pt->sites[d->debug[i]->id];
    probe_reset(sub);
    sub->probe_from = vm->gc.stats.pretenured_words;
  }
}

// A sampled block born young at `st` was promoted or died (part 2).
static void young_trial(Vm *vm, Pretenure *pt, Site *st, bool promoted) {
  if (st->passed || st->undos >= MAX_UNDOS || is_old(vm, st)) return;
  if (share_test_add(&st->test, promoted, &pt->params, &st->bound)) {
    st->passed = true;
    maybe_switch(vm, pt, st, false);
  }
}

// A sampled block was born old at the switched site `st` in `cycle` (part 4).
static void old_birth(Vm *vm, Pretenure *pt, Site *st, uint32_t cycle) {
  if (cycle != st->group_cycle) {
    st->window_births += st->group_births;
    st->window_deaths += st->group_deaths;
    st->group_births = st->group_deaths = 0;
    st->group_cycle = cycle;
    if (st->window_births >= pt->params.undo_window) {
      double bound;
      if (undo_window_test(st->window_births, st->window_deaths, &pt->params, &bound)) {
        undo(vm, pt, st, bound, false);
        return;
      }
      st->window_births = st->window_deaths = 0;
    }
  }
  st->group_births++;
  if (++st->old_births >= pt->params.probe_every &&
      vm->gc.stats.pretenured_words - st->probe_from >= PROBE_MIN_HEAP_SHARE * (double)vm->options.minor_words)
    probe_start(vm, pt, st);
}

// The tracker. MemprofBlock.user: the site's id, and in the high half 0 for
// a block born young, 1 + the major cycle of its birth for one born old.
static bool feedback_alloc(Vm *vm, void *data, MemprofBlock *block, const MemprofSample *s) {
  Pretenure *pt = data;
  uint32_t id = s->site->id;
  Site *st = site_for(vm, pt, id);
  if (st->kind != SITE_SWITCHABLE) return false;
  if (!s->major) {
    block->user = id;
    if (st->probing) {
      block->user |= (uint64_t)PROBE_STAMP << 32;
      probe_birth(vm, pt, st);
    }
    return true;
  }
  if (!is_old(vm, st) || st->probing) return false;
  uint32_t cycle = (uint32_t)vm->gc.stats.major_collections;
  block->user = id | (uint64_t)(cycle + 1) << 32;
  old_birth(vm, pt, st, cycle);
  return is_old(vm, st);   // false when this birth closed a window that undid it
}

static bool feedback_promote(Vm *vm, void *data, MemprofBlock *block) {
  Pretenure *pt = data;
  Site *st = &pt->sites[(uint32_t)block->user];
  if ((uint32_t)(block->user >> 32) == PROBE_STAMP) probe_trial(vm, pt, st, true);
  else young_trial(vm, pt, st, true);
  return false;
}

static void feedback_dealloc(Vm *vm, void *data, MemprofBlock *block, bool major) {
  Pretenure *pt = data;
  Site *st = &pt->sites[(uint32_t)block->user];
  uint32_t stamp = (uint32_t)(block->user >> 32);
  if (!major) {
    if (stamp == PROBE_STAMP) probe_trial(vm, pt, st, false);
    else young_trial(vm, pt, st, false);
    return;
  }
  if (stamp == 0 || stamp == PROBE_STAMP) return;
  uint32_t birth = stamp - 1;
  if (collection_now(vm) == birth + 1 && st->group_cycle == birth && switched(vm, st)) st->group_deaths++;
}

static void feedback_release(Vm *vm, void *data) {
  (void)vm;
  ((Pretenure *)data)->profile = -1;
}

bool pretenure_start(Vm *vm, double rate, bool log, char *err, size_t err_len) {
  if (!MEMPROF_BUILT || !vm->memprof) {
    snprintf(err, err_len, "this build has no profiler (vm-noprof, vm-boehm): no feedback to decide from");
    return false;
  }
  Pretenure *pt = state(vm);
  if (pt->profile >= 0) {
    snprintf(err, err_len, "the feedback is already running");
    return false;
  }
  MemprofTracker t = {feedback_alloc, feedback_promote, feedback_dealloc, feedback_release, NULL, pt,
                      .native = true, .immediate = true, .reads_runs = true, .site_only = true};
  pt->profile = memprof_start_profile(vm, rate, 0, &t);
  if (pt->profile < 0) {
    snprintf(err, err_len, "memprof cannot start another profile (%d run at once)", MEMPROF_MAX_RUNNING);
    return false;
  }
  pt->log |= log;
  return true;
}

bool pretenure_stop(Vm *vm) {
  Pretenure *pt = vm->pretenure;
  if (!pt || pt->profile < 0) return false;
  int id = pt->profile;
  memprof_stop_profile(vm, id);
  memprof_discard_profile(vm, id);
  pt->profile = -1;
  for (uint32_t i = 0; i < pt->switched_count; i++)
    vm_set_opcode(vm, pt->switched[i], pt->switched_young[i]);
  pt->switched_count = 0;
  pt->old_count = 0;
  for (uint32_t i = 0; i < pt->site_cap; i++) {
    Site *st = &pt->sites[i];
    st->passed = false;
    st->undos = 0;
    share_test_init(&st->test, &pt->params);
    st->group_births = st->group_deaths = st->window_births = st->window_deaths = 0;
    probe_reset(st);
  }
  return true;
}

bool pretenure_running(const Vm *vm) { return vm->pretenure && vm->pretenure->profile >= 0; }

void pretenure_set_log(Vm *vm, bool log) { state(vm)->log = log; }

bool pretenure_decide_offline(Vm *vm, const PretenureDecision *d) {
  Pretenure *pt = state(vm);
  Site *st = site_for(vm, pt, d->site->id);
  if (st->kind != SITE_SWITCHABLE) return false;
  st->passed = true;
  st->test.n = d->blocks;
  st->test.k = d->count;
  st->bound = d->bound;
  maybe_switch(vm, pt, st, true);
  return true;
}

uint64_t pretenure_sites_old(const Vm *vm) { return vm->pretenure ? vm->pretenure->old_count : 0; }
uint64_t pretenure_decisions(const Vm *vm) { return vm->pretenure ? vm->pretenure->decisions : 0; }
uint64_t pretenure_probes(const Vm *vm) { return vm->pretenure ? vm->pretenure->probes : 0; }

void pretenure_free(Vm *vm) {
  Pretenure *pt = vm->pretenure;
  if (!pt) return;
  free(pt->sites);
  free(pt->switched);
  free(pt->switched_young);
  free(pt);
  vm->pretenure = NULL;
}
