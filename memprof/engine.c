// engine.c - memprof's sampling engine: profiles, samples, tracking, events.
//
// 1. Trigger. While a profile runs, vm->young_trigger sits one word above the
//    next sampled word of the minor heap, and vm_update_limits folds it into
//    young_limit: the allocation that reaches it takes the slow path, which
//    calls memprof_sample_young. Nothing else on the fast path knows about
//    sampling. After a minor GC the minor heap is new and the gap is redrawn
//    (exact: the geometric process is memoryless, and words never allocated
//    are not words to sample).
// 2. Counting. memprof_sample_young walks the sampled words falling inside
//    the new allocation (the trigger, then successive geometric gaps) and
//    attributes each to the sub-block that holds it: a block of w words gets
//    exactly Binomial(w, lambda) samples, including the block holding the
//    trigger and every sub-block of a combined allocation. Major-heap blocks
//    draw the same count with sampler_binomial_major.
// 3. Entries. Each sampled block gets an entry (weak pointer to the block,
//    the tracker's state as a root). Minor GC: a young entry's block was
//    promoted iff its header is the forwarding marker (gc/minor.c part 2),
//    else it died. Major GC: an old entry's block is dead iff it is still
//    WHITE after marking. Each outcome becomes an event: a minor GC's in the
//    order of the samples (the young list), a major GC's in the order the
//    blocks became old (the old list), never in the order of entry slots,
//    which depends on when earlier events were delivered.
// 4. Events are queued and delivered by memprof_run_callbacks at the next
//    safe point, in order, one at a time, with sampling suspended
//    (in_callback): never inside an allocation or a collection. Allocation
//    instructions deliver at the end of their slow path; any other
//    instruction gets a poll written over its successor (set_pending,
//    lang/runtime/interp.c "Polls"), so no fast path tests for pending events. An
//    alloc event carries its callstack as (site, depth of the side stack):
//    no Minnow code runs between the sample and its delivery, so the
//    callstack below the sampling frame is the same (callstack.c part 6
//    covers the exceptions). An immediate tracker's event (tracker.h) with
//    none queued before it, outside a delivery, is delivered at once instead
//    (push_event): the order is the queue's, and nothing else waits, so no
//    poll. Each sample and each collection counts as one delivery batch
//    (Memprof.batches). A profile stopped by such a callback, inside an
//    allocation whose block is not yet taken from the minor heap, is
//    retuned at the next safe point (the trigger may not be drawn there).
// 5. Profiles: up to MEMPROF_MAX_RUNNING sample at once, each at its own rate
//    (a trace and a Memprof module profile, say). The sampler runs at the
//    highest of their rates; each sampled word is kept for a profile of rate
//    r with probability r / highest (binomial thinning), so each profile's
//    count for a block of w words is exactly Binomial(w, r), as if it
//    sampled alone. A block sampled for several profiles gets an entry and
//    an event for each, with one callstack capture. Alone, a profile draws
//    nothing more (the same seed gives the same samples as before). Stopping
//    ends a profile's sampling (and cancels its alloc events not yet
//    delivered); its entries keep reporting until discarded.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof_internal.h"
#include "../core/frames.h"
#include "../core/vm_state.h"
#include "../base/grow.h"

// Room for one more item in a full array (base/grow.h).
static void *grow_full(void *p, uint32_t *cap, size_t elem) {
  void *q = grow_array(p, cap, (uint64_t)*cap + 1, elem, 64);
  if (!q) vm_out_of_memory(NULL, "memprof");
  return q;
}

// The entry table starts at ENTRIES_INITIAL entries (3.5 MiB of address
// space, its pages untouched until used): an allocation that large is
// mapped, and so is every realloc of it, which moves pages instead of
// copying entries. A table grown from 64 by doubling copied each entry
// about twice (with a long-running trace: hundreds of KiB a run).
enum { ENTRIES_INITIAL = 1 << 16 };

static Entry *grow_entries(Memprof *mp) {
  if (mp->entry_cap > 0) return grow_full(mp->entries, &mp->entry_cap, sizeof(Entry));
  Entry *q = calloc(ENTRIES_INITIAL, sizeof(Entry));
  if (!q) vm_out_of_memory(NULL, "memprof");
  mp->entry_cap = ENTRIES_INITIAL;
  return q;
}

// =====================================================================
// Setup
// =====================================================================

Memprof *memprof_new(Vm *vm) {
  Memprof *mp = calloc(1, sizeof *mp);
  if (!mp) return NULL;
  sampler_seed(&mp->sampler, vm->options.seed_text ? vm->options.seed : 0x5eed5eed5eedull);
  vm->memprof_sampling = false;
  vm->finish_trackers = memprof_finish;
  return mp;
}

void memprof_free(Vm *vm) {
  Memprof *mp = vm->memprof;
  if (!mp) return;
  memprof_finish(vm);
  callstacks_free(&mp->stacks);
  for (uint32_t k = mp->event_head; k < mp->event_count; k++) free((void *)mp->events[k].own);
  free(mp->profiles);
  free(mp->entries);
  free(mp->free_entries);
  free(mp->young);
  free(mp->old);
  free(mp->fresh_states);
  free(mp->events);
  free(mp);
  vm->memprof = NULL;
}

void memprof_set_seed(Vm *vm, uint64_t seed) {
  if (!vm->memprof) return;
  double rate = vm->memprof->sampler.rate;
  sampler_seed(&vm->memprof->sampler, seed);
  sampler_set_rate(&vm->memprof->sampler, rate > 0 ? rate : 1);
  vm->memprof_major_point = vm->gc.major_since_cycle;   // no major distance drawn yet (memprof_sample_major)
  memprof_renew_trigger(vm);
}


// Whether events wait for delivery. Outside callbacks (whose delivery loop
// takes new events as they come), the instruction that queued them gets a
// poll after it (vm_request_poll), and the next allocation takes the slow
// path, which delivers them, in case the poll does not run (the instruction
// raised, or is not one that polls).
static void set_pending(Vm *vm, bool pending) {
  Memprof *mp = vm->memprof;
  vm->memprof_pending = pending;
  bool force = pending && !mp->in_callback;
  if (force) vm_request_poll(vm);
  if (force != vm->memprof_force_slow) {
    vm->memprof_force_slow = force;
    vm_update_limits(vm);
  }
}

static bool sampling(const Memprof *mp) { return mp && mp->running_count > 0; }

// =====================================================================
// Trigger and samples
// =====================================================================

void memprof_renew_trigger(Vm *vm) {
  Memprof *mp = vm->memprof;
  vm->young_trigger = NULL;
  if (sampling(mp)) {
    uint64_t gap = sampler_geometric(&mp->sampler);
    if (gap <= (uint64_t)(vm->young_ptr - vm->young_start)) vm->young_trigger = vm->young_ptr - gap + 1;
  }
  vm_update_limits(vm);
}

static inline uint32_t new_entry(Memprof *mp) {
  if (mp->free_count > 0) return mp->free_entries[--mp->free_count];
  if (mp->entry_count == mp->entry_cap) mp->entries = grow_entries(mp);
  return mp->entry_count++;
}

static inline void release_entry(Memprof *mp, uint32_t i) {
  mp->entries[i].in_use = false;
  mp->entries[i].user.state = VAL_NIL;
  if (mp->free_count == mp->free_cap) mp->free_entries = grow_full(mp->free_entries, &mp->free_cap, sizeof(uint32_t));
  mp->free_entries[mp->free_count++] = i;
}

static inline void maybe_release(Memprof *mp, uint32_t i) {
  Entry *e = &mp->entries[i];
  if (e->in_use && e->forgotten && e->pending == 0 && !e->young && !e->old_listed) release_entry(mp, i);
}

static inline void forget(Memprof *mp, uint32_t i) {
  Entry *e = &mp->entries[i];
  e->forgotten = true;
  e->live = false;
  e->block = 0;
  e->user.state = VAL_NIL;
  maybe_release(mp, i);
}

static inline void list_old(Memprof *mp, uint32_t i) {
  if (mp->old_count == mp->old_cap) mp->old = grow_full(mp->old, &mp->old_cap, sizeof(uint32_t));
  mp->old[mp->old_count++] = i;
  mp->entries[i].old_listed = true;
}

static inline __attribute__((always_inline)) void call_tracker(Vm *vm, Profile *p, uint32_t i, const Event *ev,
                                                               bool direct);

// Queues an event for the next safe point (part 4). Its fields one by one:
// push_event's caller then builds no Event in memory on the direct path.
static __attribute__((noinline)) void enqueue(Vm *vm, EventKind kind, uint32_t entry, const DebugInfo *site,
                                              uint32_t depth, uint32_t unchanged, uint64_t allocation,
                                              uint32_t generation) {
  Memprof *mp = vm->memprof;
  mp->entries[entry].pending++;
  if (mp->event_head > 0 && mp->event_head == mp->event_count) mp->event_head = mp->event_count = 0;
  if (mp->event_count == mp->event_cap) mp->events = grow_full(mp->events, &mp->event_cap, sizeof(Event));
  mp->events[mp->event_count++] = (Event){kind, entry, site, depth, unchanged, NULL, allocation, generation};
  if (kind == EV_ALLOC && depth > mp->queued_depth) mp->queued_depth = depth;
  set_pending(vm, true);
}

// An event of profile p's live entry: delivered at once to an immediate
// tracker with nothing queued before it, outside a delivery; queued
// otherwise (part 4). Inlined in each caller, so that the direct delivery of
// each kind of event is specialized. (A live entry is not forgotten, and its
// profile not discarded: memprof_discard_profile forgets its entries.)
static inline __attribute__((always_inline)) void push_event(Vm *vm, Profile *p, Event ev) {
  Memprof *mp = vm->memprof;
  if (__builtin_expect(p->tracker.immediate && mp->event_head == mp->event_count && !mp->in_callback, 1)) {
    mp->direct = true;
    call_tracker(vm, p, ev.entry, &ev, true);
    mp->direct = false;
    return;
  }
  enqueue(vm, ev.kind, ev.entry, ev.site, ev.depth, ev.unchanged, ev.allocation, ev.generation);
}

// =====================================================================
// Callstacks: the side stack's moves that concern queued events
// =====================================================================

// Queued alloc events whose callers reach above `depth` get their own copy
// of them, before a capture or an unwind overwrites the side stack there
// (callstack.c part 6).
static __attribute__((noinline)) void preserve_queued(Memprof *mp, uint32_t depth) {
  Callstacks *cs = &mp->stacks;
  for (uint32_t k = mp->event_head; k < mp->event_count; k++) {
    Event *ev = &mp->events[k];
    if (ev->kind != EV_ALLOC || ev->depth <= depth || ev->own) continue;
    MemprofFrame *own = malloc(ev->depth * sizeof *own);
    if (!own) vm_out_of_memory(NULL, "memprof callstacks");
    memcpy(own, callstacks_flat(cs, ev->depth), ev->depth * sizeof *own);
    ev->own = own;
  }
  mp->queued_depth = depth;
}

// The capture of a sample: the side stack from its depth on is rewritten.
static inline __attribute__((always_inline)) bool capture(Vm *vm, uint32_t *depth, uint32_t *unchanged) {
  Memprof *mp = vm->memprof;
  if (mp->stacks.depth < mp->queued_depth) preserve_queued(mp, mp->stacks.depth);
  return callstacks_capture(vm, &mp->stacks, depth, unchanged);
}

const uint32_t *memprof_stub_return(Vm *vm, const uint32_t *stub_pc) {
  return callstacks_stub_return(&vm->memprof->stacks, stub_pc);
}

void memprof_unwind(Vm *vm, const uint32_t *const *ret_sp) {
  Memprof *mp = vm->memprof;
  uint32_t depth, k = callstacks_surviving(&mp->stacks, ret_sp, &depth);
  if (depth < mp->queued_depth) preserve_queued(mp, depth);
  callstacks_pop(&mp->stacks, k);
}

// The debug entry of sub-block `sub` of the safe point the VM stands at.
// The last safe point's descriptor is kept (Memprof.site_pc): samples come
// from a few allocation sites, often the same one in a row.
static inline const DebugInfo *site_of(Vm *vm, uint32_t sub) {
  Memprof *mp = vm->memprof;
  if (!vm->pc) return NULL;
  const FrameDesc *d = mp->site_desc;
  if (vm->pc != mp->site_pc) {
    d = frames_find(vm->frames, vm->pc);
    if (!d) return NULL;
    mp->site_pc = vm->pc;
    mp->site_desc = d;
  }
  if (d->debug_count == 0) return NULL;
  return d->debug[sub < d->debug_count ? sub : d->debug_count - 1];
}

// How many of `n` words sampled at the sampler's rate a profile of `rate`
// keeps: each with probability rate / sampler rate (part 5). A profile alone
// (or the fastest one) keeps them all and draws nothing: that test is all a
// sample pays, the thinning draws are out of line.
static __attribute__((noinline)) uint32_t thin_draw(Sampler *s, uint32_t n, double rate) {
  uint64_t threshold = (uint64_t)(rate / s->rate * 9007199254740992.0);   // q * 2^53
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; i++) kept += (sampler_next_u64(s) >> 11) < threshold;
  return kept;
}

static inline uint32_t thin(Sampler *s, uint32_t n, double rate) {
  return rate >= s->rate ? n : thin_draw(s, n, rate);
}

// The entry and alloc event of one block for the running profile `id`,
// which keeps `kept` (>= 1) of its sampled words; the callstack is the
// capture (site, depth, unchanged) shared by the block's profiles.
static inline __attribute__((always_inline)) void track_for(Vm *vm, int id, Value block, uint64_t wosize,
                                                            uint32_t kept, bool young, const DebugInfo *site,
                                                            uint32_t depth, uint32_t unchanged) {
  Memprof *mp = vm->memprof;
  Profile *p = &mp->profiles[id];
  uint32_t u = unchanged < p->capture_carry ? unchanged : p->capture_carry;
  p->capture_carry = UINT32_MAX;
  if (p->tracker.site_only) depth = u = 0;
  uint32_t i = new_entry(mp);
  mp->entries[i] = (Entry){.block = block, .user = {VAL_NIL, 0}, .wosize = wosize, .n_samples = kept,
                           .profile = id, .young = young, .major_born = !young,
                           .live = true, .in_use = true};
  if (young) {
    if (mp->young_count == mp->young_cap) mp->young = grow_full(mp->young, &mp->young_cap, sizeof(uint32_t));
    mp->young[mp->young_count++] = i;
  } else {
    list_old(mp, i);
  }
  mp->samples_taken += kept;
  mp->blocks_sampled++;
  push_event(vm, p, (Event){EV_ALLOC, i, site, depth, u, NULL, mp->allocations, mp->stacks.generation});
}

// Creates the entries and alloc events of one block with `n_samples` words
// sampled at the sampler's rate: one for each running profile that keeps
// some, sharing one callstack capture.
// A profile stopped by a direct delivery (part 4) gets no alloc event after.
// One profile running (the common case) takes a path of its own, without
// the per-profile arrays: the same draws, entries and events.
static inline __attribute__((always_inline)) void track(Vm *vm, Value block, uint64_t wosize, uint32_t n_samples,
                                                        bool young, uint32_t sub) {
  Memprof *mp = vm->memprof;
  uint32_t n_running = mp->running_count;
  uint32_t depth = 0, unchanged = 0;
  if (n_running == 1) {
    int id = mp->running[0];
    uint32_t kept = thin(&mp->sampler, n_samples, mp->profiles[id].rate);
    if (kept == 0) return;
    const DebugInfo *site = site_of(vm, sub);
    if (!site || (!mp->profiles[id].tracker.site_only && !capture(vm, &depth, &unchanged))) return;
    track_for(vm, id, block, wosize, kept, young, site, depth, unchanged);
    return;
  }
  uint32_t kept[MEMPROF_MAX_RUNNING];
  int running[MEMPROF_MAX_RUNNING];
  bool any = false, stacks = false;   // some profile keeps words; one that wants callstacks
  for (uint32_t r = 0; r < n_running; r++) {
    running[r] = mp->running[r];
    const Profile *p = &mp->profiles[running[r]];
    kept[r] = thin(&mp->sampler, n_samples, p->rate);
    any |= kept[r] > 0;
    stacks |= kept[r] > 0 && !p->tracker.site_only;
  }
  if (!any) return;
  const DebugInfo *site = site_of(vm, sub);
  if (!site || (stacks && !capture(vm, &depth, &unchanged))) return;
  for (uint32_t r = 0; r < n_running; r++) {
    Profile *p = &mp->profiles[running[r]];
    if (!p->running) continue;
    if (kept[r] == 0) {   // a capture this profile will not see
      if (stacks && unchanged < p->capture_carry) p->capture_carry = unchanged;
      continue;
    }
    track_for(vm, running[r], block, wosize, kept[r], young, site, depth, unchanged);
  }
}

// The sampled word after `t` in the minor heap (a geometric gap below it),
// NULL if it lies past the heap's end.
static inline Value *next_sampled(Vm *vm, Value *t) {
  uint64_t gap = sampler_geometric(&vm->memprof->sampler);
  return gap > (uint64_t)(t - vm->young_start) ? NULL : t - gap;
}

void memprof_sample_young(Vm *vm, Value *old_young_ptr, uint64_t whsize,
                          const uint32_t *sub_whsizes, uint32_t n_sub) {
  Memprof *mp = vm->memprof;
  if (!sampling(mp)) {
    vm->young_trigger = NULL;
    vm_update_limits(vm);
    return;
  }
  Value *low = old_young_ptr - whsize;
  Value *t = vm->young_trigger - 1;  // the sampled word: in the block (gc/heap.c)
  uint32_t counts[ALLOCN_MAX_SUBBLOCKS];
  if (n_sub == 1) {   // most allocations: one count, no sub-block to find
    counts[0] = 0;
    do {
      counts[0]++;
      t = next_sampled(vm, t);
    } while (t && t >= low);
  } else {
    memset(counts, 0, n_sub * sizeof counts[0]);
    uint32_t sub = 0;
    Value *sub_low = old_young_ptr - sub_whsizes[0];
    while (t && t >= low) {
      while (t < sub_low && sub + 1 < n_sub) sub_low -= sub_whsizes[++sub];
      counts[sub]++;
      t = next_sampled(vm, t);
    }
  }
  vm->young_trigger = t ? t + 1 : NULL;
  vm_update_young_limits(vm);
  if (mp->in_callback || vm->sampling_suspended) return;
  mp->allocations++;
  mp->batches++;
  Value *top = old_young_ptr;
  for (uint32_t i = 0; i < n_sub; i++) {
    top -= sub_whsizes[i];
    if (counts[i]) track(vm, val_of_ptr(top + 1), sub_whsizes[i] - 1, counts[i], true, i);
  }
}

// Major blocks that end before the next sampled major word never reach
// memprof_sample_major: gc/heap.c allocates them on its fast path, below
// vm->memprof_major_point (core/vm_state.h). The block was counted in
// major_since_cycle already. Invariant: once the sampler has drawn its first
// major distance (major_next >= 1 from then on), the next sampled major word
// is major_next - 1 words past the last block that came here; before it,
// major_next is 0 and memprof_major_point is major_since_cycle (every block
// comes here).
void memprof_sample_major(Vm *vm, Value block, uint64_t wosize, uint32_t sub) {
  Memprof *mp = vm->memprof;
  if (!sampling(mp)) return;
  uint64_t at = vm->gc.major_since_cycle - (wosize + 1);   // where the block starts
  if (mp->sampler.major_next > 0) mp->sampler.major_next = vm->memprof_major_point - at + 1;
  uint32_t n = sampler_binomial_major(&mp->sampler, wosize + 1);
  vm->memprof_major_point = vm->gc.major_since_cycle + mp->sampler.major_next - 1;
  vm_update_major_limit(vm);
  if (n == 0 || mp->in_callback || vm->sampling_suspended) return;
  mp->allocations++;
  mp->batches++;
  track(vm, block, wosize, n, false, sub);
}

// =====================================================================
// Tracking through collections
// =====================================================================

void memprof_minor_gc_done(Vm *vm) {
  Memprof *mp = vm->memprof;
  mp->fresh_count = 0;   // every state is old now
  mp->batches++;
  for (uint32_t k = 0; k < mp->young_count; k++) {
    uint32_t i = mp->young[k];
    Entry *e = &mp->entries[i];
    e->young = false;
    if (!e->live) {
      maybe_release(mp, i);
      continue;
    }
    if (val_hd(e->block) == 0) {
      e->block = val_field(e->block, 0);
      list_old(mp, i);
      push_event(vm, &mp->profiles[e->profile], (Event){.kind = EV_PROMOTE, .entry = i});
    } else {
      e->live = false;
      e->block = 0;
      push_event(vm, &mp->profiles[e->profile], (Event){.kind = EV_DEALLOC_MINOR, .entry = i});
    }
  }
  mp->young_count = 0;
}

void memprof_major_mark_done(Vm *vm) {
  Memprof *mp = vm->memprof;
  mp->batches++;
  uint32_t kept = 0, n = mp->old_count;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t i = mp->old[k];
    Entry *e = &mp->entries[i];
    if (e->live && hd_color(val_hd(e->block)) != COLOR_WHITE) {
      mp->old[kept++] = i;
      continue;
    }
    e->old_listed = false;
    if (e->live) {
      e->live = false;
      e->block = 0;
      push_event(vm, &mp->profiles[e->profile], (Event){.kind = EV_DEALLOC_MAJOR, .entry = i});
    } else {
      maybe_release(mp, i);
    }
  }
  mp->old_count = kept;
}

typedef struct RootAdapter {
  RootVisitor visit;
  void *data;
} RootAdapter;

static void visit_adapter(Vm *vm, Value *slot, void *data) {
  RootAdapter *a = data;
  a->visit(vm, slot, a->data);
}

// Tracker states are roots. A minor GC needs only those that may point into
// the minor heap: the states set since the previous minor GC (fresh_states,
// filled after each delivery); the others are scanned by major GCs.
void memprof_scan_roots(Vm *vm, RootVisitor visit, void *data) {
  Memprof *mp = vm->memprof;
  if (vm->gc.scanning_for_minor) {
    for (uint32_t k = 0; k < mp->fresh_count; k++) {
      Entry *e = &mp->entries[mp->fresh_states[k]];
      if (e->in_use) visit(vm, &e->user.state, data);
    }
  } else if (mp->states_set) {
    for (uint32_t i = 0; i < mp->entry_count; i++)
      if (mp->entries[i].in_use && val_is_ptr(mp->entries[i].user.state)) visit(vm, &mp->entries[i].user.state, data);
  }
  RootAdapter a = {visit, data};
  for (uint32_t i = 0; i < mp->profile_count; i++) {
    Profile *p = &mp->profiles[i];
    if (!p->discarded && p->tracker.scan_roots) p->tracker.scan_roots(vm, p->tracker.data, visit_adapter, &a);
  }
}

// =====================================================================
// Delivering events
// =====================================================================

// An alloc event that its tracker will not see: the next sample it sees
// shares with the previous one only what this capture shared with both.
static void skip_alloc(Profile *p, const Event *ev) {
  if (ev->unchanged < p->unchanged_carry) p->unchanged_carry = ev->unchanged;
}

// The callers of an alloc event are the entries [0 .. ev->depth) (or its own
// copy): entries above the side stack's current depth that returns popped are
// still those of the event, since only a capture overwrites them and it
// preserves the queued events first (callstack.c part 6). They are listed
// one by one for a tracker that reads runs only when it asks
// (memprof_callers, during its alloc callback: the side stack is as it
// was). Its `unchanged` is relative to the previous capture; the tracker
// needs it relative to the previous sample it was given, so the captures it
// never saw fold into Profile.unchanged_carry (the frames common to all of
// them).
static inline __attribute__((always_inline)) bool deliver_alloc(Vm *vm, Profile *p, Entry *e, const Event *ev,
                                                                bool direct) {
  Memprof *mp = vm->memprof;
  if (!p->tracker.alloc) {
    skip_alloc(p, ev);
    return false;
  }
  uint32_t unchanged = ev->unchanged < p->unchanged_carry ? ev->unchanged : p->unchanged_carry;
  p->unchanged_carry = UINT32_MAX;
  MemprofSample s = {
      .wosize = e->wosize, .n_samples = e->n_samples, .major = e->major_born, .external = false,
      .site = ev->site, .callers = ev->own, .caller_count = ev->depth, .unchanged = unchanged,
  };
  // Delivered as it happens, the event's capture is the last one, and its
  // runs begin at runs_from: unchanged <= low_water <= runs_from <= depth.
  Callstacks *cs = &mp->stacks;
  if (p->tracker.site_only) return p->tracker.alloc(vm, p->tracker.data, &e->user, &s);
  if (direct
      || (!ev->own && ev->generation == cs->generation && cs->runs_from >= unchanged && cs->runs_from <= ev->depth)) {
    s.runs = cs->new_runs;
    s.run_count = cs->new_run_count;
    s.runs_from = cs->runs_from;
  }
  if (!ev->own && !p->tracker.reads_runs) s.callers = callstacks_flat(cs, ev->depth);
  return p->tracker.alloc(vm, p->tracker.data, &e->user, &s);
}


const MemprofFrame *memprof_callers(Vm *vm, const MemprofSample *sample) {
  return sample->callers ? sample->callers : callstacks_flat(&vm->memprof->stacks, sample->caller_count);
}

// Hands an event of a live entry to profile p's tracker. The entry being
// delivered is mp->delivering, so that memprof_callback_raised can forget it.
static inline __attribute__((always_inline)) void call_tracker(Vm *vm, Profile *p, uint32_t i, const Event *ev,
                                                               bool direct) {
  Memprof *mp = vm->memprof;
  Entry *e = &mp->entries[i];
  ASSERT(e->in_use && !e->forgotten && !p->discarded, "an event delivered names an entry in use");
  // Per block: alloc first, then at most one promote, then one dealloc
  // (tracker.h), in the order they happened.
  ASSERT(ev->kind == EV_ALLOC ? e->delivered == 0
         : ev->kind == EV_PROMOTE ? e->delivered == 1 + EV_ALLOC && !e->major_born
         : e->delivered == 1 + EV_ALLOC || e->delivered == 1 + EV_PROMOTE,
         "events of a block in order, each once");
  e->delivered = (uint8_t)(1 + ev->kind);
  mp->delivering = i;
  // Minnow code is about to run (and may move the profiles: p is not read
  // after the call): the events after it are of another batch.
  if (!direct && !p->tracker.native) mp->batches++;
  bool keep = true;
  switch (ev->kind) {
    case EV_ALLOC: keep = deliver_alloc(vm, p, e, ev, direct); break;
    case EV_PROMOTE: keep = !p->tracker.promote || p->tracker.promote(vm, p->tracker.data, &e->user); break;
    case EV_DEALLOC_MINOR:
    case EV_DEALLOC_MAJOR:
      if (p->tracker.dealloc) p->tracker.dealloc(vm, p->tracker.data, &e->user, ev->kind == EV_DEALLOC_MAJOR);
      if (direct) {
        // The collection took the entry out of its list, and nothing is
        // queued: forget's release is certain.
        ASSERT(mp->entries[i].pending == 0 && !mp->entries[i].young && !mp->entries[i].old_listed,
               "an entry delivered its dealloc event directly is free to release");
        release_entry(mp, i);
        return;
      }
      keep = false;
      break;
  }
  if (!keep) {
    forget(mp, i);
    return;
  }
  Value state = mp->entries[i].user.state;
  // An immediate tracker allocates nothing, so sets no state (tracker.h).
  ASSERT(!direct || !val_is_ptr(state), "an immediate tracker set no state");
  if (direct || !val_is_ptr(state)) return;
  mp->states_set = true;
  if (vm_is_young(vm, state)) {
    if (mp->fresh_count == mp->fresh_cap) mp->fresh_states = grow_full(mp->fresh_states, &mp->fresh_cap, sizeof(uint32_t));
    mp->fresh_states[mp->fresh_count++] = i;
  }
}

// Delivers one queued event to its profile's tracker, unless its entry was
// forgotten since. The entry being delivered is mp->delivering, so that
// memprof_callback_raised can forget it.
static void deliver(Vm *vm, const Event *ev) {
  Memprof *mp = vm->memprof;
  Entry *e = &mp->entries[ev->entry];
  Profile *p = &mp->profiles[e->profile];
  ASSERT(e->in_use && e->pending > 0, "an event names an entry in use");
  e->pending--;
  if (e->forgotten || p->discarded) {
    e->delivered = (uint8_t)(1 + ev->kind);
    if (ev->kind == EV_ALLOC) skip_alloc(p, ev);
    maybe_release(mp, ev->entry);
    return;
  }
  call_tracker(vm, p, ev->entry, ev, false);
}

static void retune(Vm *vm);

void memprof_run_callbacks(Vm *vm) {
  Memprof *mp = vm->memprof;
  if (!mp || mp->in_callback) return;
  if (mp->retune_due) {
    mp->retune_due = false;
    retune(vm);
  }
  mp->in_callback = true;
  mp->batches++;
  mp->callback_level = vm->level;
  vm_cancel_poll(vm);
  set_pending(vm, vm->memprof_pending);   // no forced slow path while delivering
  while (mp->event_head < mp->event_count) {
    Event ev = mp->events[mp->event_head++];
    mp->delivering_event = ev;
    mp->delivering_own = ev.own;
    deliver(vm, &ev);
    free((void *)ev.own);
    mp->delivering_own = NULL;
  }
  mp->event_head = mp->event_count = 0;
  mp->queued_depth = 0;
  mp->in_callback = false;
  set_pending(vm, false);
}

// The delivery in progress was cut short by an exception (raised by the
// callback or by the runtime while preparing it): the block is forgotten, and
// if it was an alloc callback, so are the other sub-blocks of the same
// allocation still waiting for theirs (the allocation never completed for
// the program, as in OCaml 5). Later events stay queued.
static void abort_delivery(Vm *vm) {
  Memprof *mp = vm->memprof;
  forget(mp, mp->delivering);
  if (mp->delivering_event.kind == EV_ALLOC)
    for (uint32_t k = mp->event_head; k < mp->event_count; k++) {
      Event *ev = &mp->events[k];
      if (ev->kind == EV_ALLOC && ev->allocation == mp->delivering_event.allocation) forget(mp, ev->entry);
    }
  free((void *)mp->delivering_own);
  mp->delivering_own = NULL;
  mp->in_callback = false;
  set_pending(vm, mp->event_head < mp->event_count);
}

void memprof_callback_raised(Vm *vm) {
  abort_delivery(vm);
  vm_raise(vm, vm->exn);
}

void memprof_exception_caught(Vm *vm) {
  Memprof *mp = vm->memprof;
  if (mp->in_callback && vm->level <= mp->callback_level) abort_delivery(vm);
}

// =====================================================================
// Profiles
// =====================================================================

// The sampler runs at the highest rate of the running profiles (part 5);
// the trigger and the major distance are drawn again for it (exact: the
// process is memoryless).
static void retune(Vm *vm) {
  Memprof *mp = vm->memprof;
  double rate = 0;
  for (uint32_t r = 0; r < mp->running_count; r++)
    if (mp->profiles[mp->running[r]].rate > rate) rate = mp->profiles[mp->running[r]].rate;
  if (rate > 0) sampler_set_rate(&mp->sampler, rate);
  vm->memprof_sampling = mp->running_count > 0;
  vm->memprof_major_point = vm->gc.major_since_cycle;   // no major distance drawn yet (memprof_sample_major)
  memprof_renew_trigger(vm);
}

int memprof_start_profile(Vm *vm, double rate, uint32_t callstack_size, const MemprofTracker *tracker) {
  Memprof *mp = vm->memprof;
  if (!mp || mp->running_count == MEMPROF_MAX_RUNNING) return -1;
  if (!mp->stacks.side && !callstacks_init(&mp->stacks, vm->options.stack_words)) return -1;
  if (mp->profile_count == mp->profile_cap) mp->profiles = grow_full(mp->profiles, &mp->profile_cap, sizeof(Profile));
  int id = (int)mp->profile_count++;
  // capture_carry 0: the tracker has seen no callstack yet, so its first
  // sample shares nothing with a previous one.
  mp->profiles[id] = (Profile){.id = id, .running = true, .rate = rate, .callstack_size = callstack_size,
                               .tracker = *tracker, .capture_carry = 0, .unchanged_carry = UINT32_MAX};
  mp->running[mp->running_count++] = id;
  retune(vm);
  return id;
}

bool memprof_stop_profile(Vm *vm, int id) {
  Memprof *mp = vm->memprof;
  uint32_t r = 0;
  while (mp && r < mp->running_count && mp->running[r] != id) r++;
  if (!mp || r == mp->running_count) return false;
  mp->profiles[id].running = false;
  memmove(&mp->running[r], &mp->running[r + 1], (mp->running_count - r - 1) * sizeof mp->running[0]);
  mp->running_count--;
  // Alloc events not yet delivered are cancelled: no alloc callback after stop.
  for (uint32_t k = mp->event_head; k < mp->event_count; k++)
    if (mp->events[k].kind == EV_ALLOC && mp->entries[mp->events[k].entry].profile == id)
      forget(mp, mp->events[k].entry);
  if (mp->direct) {
    mp->retune_due = true;
    set_pending(vm, true);
  } else {
    retune(vm);
  }
  return true;
}

bool memprof_discard_profile(Vm *vm, int id) {
  Memprof *mp = vm->memprof;
  if (!mp || id < 0 || (uint32_t)id >= mp->profile_count || mp->profiles[id].running) return false;
  Profile *p = &mp->profiles[id];
  if (p->discarded) return true;
  p->discarded = true;
  for (uint32_t i = 0; i < mp->entry_count; i++) {
    if (mp->entries[i].in_use && mp->entries[i].profile == id) forget(mp, i);
  }
  if (p->tracker.release) p->tracker.release(vm, p->tracker.data);
  return true;
}

// Events of native trackers still queued when the VM exits are theirs to
// write (a trace's last samples); a Minnow tracker's are dropped, since no
// Minnow code runs on the way out. Inside a collection or a delivery the
// queue may be half made: nothing is delivered then.
bool memprof_deliver_native(Vm *vm) {
  Memprof *mp = vm->memprof;
  if (!mp || mp->in_callback || vm->gc.collecting) return false;
  mp->in_callback = true;
  mp->batches++;
  while (mp->event_head < mp->event_count) {
    Event ev = mp->events[mp->event_head++];
    Entry *e = &mp->entries[ev.entry];
    if (mp->profiles[e->profile].tracker.native) {
      deliver(vm, &ev);
    } else {
      e->pending--;
      forget(mp, ev.entry);
    }
    free((void *)ev.own);
  }
  mp->event_head = mp->event_count = 0;
  mp->in_callback = false;
  return true;
}

void memprof_each_live(Vm *vm, int id, void (*fn)(void *data, Value block, uint64_t user), void *data) {
  Memprof *mp = vm->memprof;
  if (!mp) return;
  // In the order of the lists (part 3), not of the slots.
  for (uint32_t k = 0; k < mp->old_count + mp->young_count; k++) {
    const Entry *e = &mp->entries[k < mp->old_count ? mp->old[k] : mp->young[k - mp->old_count]];
    if (e->in_use && e->live && !e->forgotten && e->profile == id && e->delivered) fn(data, e->block, e->user.user);
  }
}

void memprof_finish(Vm *vm) {
  Memprof *mp = vm->memprof;
  if (!mp) return;
  while (mp->running_count > 0) memprof_stop_profile(vm, mp->running[mp->running_count - 1]);
  memprof_deliver_native(vm);
  for (uint32_t i = 0; i < mp->profile_count; i++) {
    Profile *p = &mp->profiles[i];
    if (p->discarded) continue;
    p->discarded = true;
    if (p->tracker.release) p->tracker.release(vm, p->tracker.data);
  }
}

uint32_t memprof_callstack_size(const Vm *vm, int id) {
  const Memprof *mp = vm->memprof;
  if (!mp || id < 0 || (uint32_t)id >= mp->profile_count) return 0;
  return mp->profiles[id].callstack_size;
}
