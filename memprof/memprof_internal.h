// memprof_internal.h - state shared by the files of memprof/ only.
#ifndef MINNOW_MEMPROF_INTERNAL_H
#define MINNOW_MEMPROF_INTERNAL_H

#include "callstack.h"
#include "memprof.h"
#include "sampler.h"
#include "tracker.h"

// ---------------------------------------------------------------------------
// Profiles, entries, events (engine.c)
typedef struct Profile {
  int id;
  bool running, discarded;
  double rate;
  uint32_t callstack_size;
  MemprofTracker tracker;
  // The callstack frames shared by the captures this profile's tracker did
  // not see since the last one it saw (UINT32_MAX: none). capture_carry
  // folds the captures made for other profiles only (track), unchanged_carry
  // this profile's events skipped at delivery (deliver_alloc); both lower
  // the next sample's `unchanged` (tracker.h).
  uint32_t capture_carry, unchanged_carry;
} Profile;

typedef struct Entry {
  Value block;                 // weak: 0 once the block is dead
  MemprofBlock user;           // tracker's state (state is a root)
  uint64_t wosize;
  uint32_t n_samples;
  int profile;                 // index in profiles
  uint32_t pending;            // queued events naming this entry
  bool young;                  // in the young list (until the next minor GC)
  bool old_listed;             // in the old list (until a major GC finds it
                               // dead or no longer live)
  bool major_born, in_use;
  bool live;                   // block watched: false once dead or forgotten
  bool forgotten;              // no further callback (returned false, raised,
                               // stopped before its alloc event, discarded)
  uint8_t delivered;           // the last event delivered: 0 none, 1 + EventKind
                               // (ASSERT: alloc, at most one promote, one dealloc)
} Entry;
// Invariant: an entry slot is reused only when forgotten, with no pending
// event, and out of the young and old lists (maybe_release).

typedef enum EventKind { EV_ALLOC, EV_PROMOTE, EV_DEALLOC_MINOR, EV_DEALLOC_MAJOR } EventKind;

typedef struct Event {
  EventKind kind;
  uint32_t entry;
  // EV_ALLOC only: the callstack at the sample (valid until the interpreter
  // runs Minnow code other than callbacks: events are delivered before).
  const DebugInfo *site;
  uint32_t depth, unchanged;
  // A copy of the callers, made when an exception unwound frames the event
  // still needs (the stub stack no longer holds them); NULL otherwise.
  MemprofFrame *own;
  uint64_t allocation;         // which allocation (sub-blocks share it)
  uint32_t generation;         // EV_ALLOC: Callstacks.generation of its capture
} Event;

// Profiles sampling at once (engine.c part 5).
enum { MEMPROF_MAX_RUNNING = 4 };

struct Memprof {
  Sampler sampler;             // at the highest rate of the running profiles
  Callstacks stacks;
  Profile *profiles;
  uint32_t profile_count, profile_cap;
  int running[MEMPROF_MAX_RUNNING];  // the profiles sampling, in start order
  uint32_t running_count;
  Entry *entries;
  uint32_t entry_count, entry_cap;
  uint32_t *free_entries;
  uint32_t free_count, free_cap;
  uint32_t *young;             // indices of entries whose block is young
  uint32_t young_count, young_cap;
  // Indices of entries whose block is old: major-born ones at their sample,
  // young ones at their promotion, in that order. A major GC walks it, so the
  // order of its dealloc events does not depend on which slots were free.
  uint32_t *old;
  uint32_t old_count, old_cap;
  uint32_t *fresh_states;      // entries whose tracker state was set to a young
  uint32_t fresh_count, fresh_cap;  // value since the last minor GC
  Event *events;               // FIFO: events[event_head .. event_count)
  uint32_t event_head, event_count, event_cap;
  bool in_callback;
  uint32_t delivering;         // entry whose event is being delivered
  MemprofFrame *delivering_own;  // that event's own callers copy, if any
  uint32_t queued_depth;       // >= the depth of every queued alloc event
                               // without its own callers (callstack.c part 6)
  Event delivering_event;      // the event being delivered
  uint32_t callback_level;     // interpreter level that runs the callbacks
  uint64_t allocations;        // sampled allocations so far (Event.allocation)
  // Deliveries so far: events delivered with no Minnow code run between them
  // share one, and a trace reads the clock once for them (memtrace.c).
  uint64_t batches;
  bool states_set;             // a tracker set some entry's state to a block
                               // (else a major GC has no state to scan)
  bool direct;                 // an event is being delivered as it happens (part 4)
  bool retune_due;             // a profile stopped during a direct delivery:
                               // retune at the next safe point
                               // (memprof_run_callbacks)
  // The descriptor of the last allocation site sampled (engine.c site_of),
  // NULL before the first: a descriptor stays where it is and keeps its key
  // until frames_free (core/frames.h), so the pair stays true.
  const uint32_t *site_pc;
  const FrameDesc *site_desc;
  // Statistics (the bench and tests read them)
  uint64_t samples_taken, blocks_sampled;
};

#endif
