// live.c - the live table: a ring for young ids, a sorted array for the
// others (live.h).
//
// An entry's bytes: a Base (id, stack and flags, samples), then the
// Lifetimes if kept, then the Windows if kept. An empty ring slot has id
// LIVE_EMPTY; a removed old entry keeps its id (the array stays sorted) and
// the flag DEAD.
#include "live.h"

#include <stdlib.h>
#include <string.h>

#define LIVE_EMPTY UINT64_MAX

typedef struct Base {
  uint64_t id;
  uint32_t sf;       // stack, and the flags below
  uint32_t samples;  // SAMPLES_BIG: in the side table
} Base;
typedef struct Lifetimes {
  uint64_t birth_us, birth_clock;
} Lifetimes;
typedef struct Windows {
  uint64_t old_us;
  uint16_t window;
} Windows;
_Static_assert(sizeof(Base) == 16 && sizeof(Lifetimes) == 16 && sizeof(Windows) == 16, "entries of 16-byte parts");

struct LiveBig {
  uint64_t id, samples;  // samples 0: removed
};

enum {
  SF_STACK = 0x1FFFFFFFu,
  SF_DEAD = 1u << 29,
  SF_PROMOTED = 1u << 30,
  SF_MINOR = 1u << 31,
  OLD_MIN_COMPACT = 1024,
};
static const uint32_t SAMPLES_BIG = UINT32_MAX;

static inline Base *base_of(uint8_t *slot) { return (Base *)(void *)slot; }
static inline Lifetimes *lifetimes_of(uint8_t *slot) { return (Lifetimes *)(void *)(slot + sizeof(Base)); }
static inline Windows *windows_of(const LiveTable *t, uint8_t *slot) {
  return (Windows *)(void *)(slot + sizeof(Base) + (t->extra & LIVE_LIFETIMES ? sizeof(Lifetimes) : 0));
}
static inline uint8_t *ring_slot(const LiveTable *t, uint64_t id) {
  return t->ring + (id & (t->ring_size - 1)) * t->entry_bytes;
}
static inline uint8_t *old_slot(const LiveTable *t, uint64_t i) { return t->old + i * t->entry_bytes; }

static uint8_t *empty_ring(const LiveTable *t, uint64_t n) {
  uint8_t *r = malloc(n * t->entry_bytes);
  for (uint64_t i = 0; r && i < n; i++) base_of(r + i * t->entry_bytes)->id = LIVE_EMPTY;
  return r;
}

bool live_init(LiveTable *t, unsigned extra) {
  *t = (LiveTable){.extra = extra};
  t->entry_bytes = (uint32_t)(sizeof(Base) + (extra & LIVE_LIFETIMES ? sizeof(Lifetimes) : 0) +
                              (extra & LIVE_WINDOWS ? sizeof(Windows) : 0));
  t->ring_size = LIVE_RING_MIN;
  t->ring = empty_ring(t, LIVE_RING_MIN);
  return t->ring != NULL;
}

void live_free(LiveTable *t) {
  free(t->ring);
  free(t->old);
  free(t->big);
  t->ring = t->old = NULL;
  t->big = NULL;
}

// ---------------------------------------------------------------- samples past 2^32 - 1

static bool big_add(LiveTable *t, uint64_t id, uint64_t samples) {
  if (t->big_n == t->big_cap) {
    uint64_t live = 0;
    for (uint64_t i = 0; i < t->big_n; i++)
      if (t->big[i].samples) t->big[live++] = t->big[i];
    t->big_n = live;
    if (live * 4 > t->big_cap * 3 || !t->big_cap) {
      uint64_t cap = t->big_cap ? 2 * t->big_cap : 64;
      LiveBig *b = realloc(t->big, cap * sizeof *b);
      if (!b) return false;
      t->big = b;
      t->big_cap = cap;
    }
  }
  t->big[t->big_n++] = (LiveBig){id, samples};  // ids come in increasing order: sorted
  return true;
}

static LiveBig *big_find(const LiveTable *t, uint64_t id) {
  uint64_t lo = 0, hi = t->big_n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (t->big[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < t->big_n && t->big[lo].id == id ? &t->big[lo] : NULL;
}

// ---------------------------------------------------------------- entries

static void put_entry(LiveTable *t, uint8_t *slot, const LiveEntry *e, bool big) {
  *base_of(slot) = (Base){e->id, (e->stack & SF_STACK) | (e->promoted ? SF_PROMOTED : 0) | (e->minor ? SF_MINOR : 0),
                          big ? SAMPLES_BIG : (uint32_t)e->samples};
  if (t->extra & LIVE_LIFETIMES) *lifetimes_of(slot) = (Lifetimes){e->birth_us, e->birth_clock};
  if (t->extra & LIVE_WINDOWS) *windows_of(t, slot) = (Windows){e->old_us, e->window};
}

static void get_entry(const LiveTable *t, uint8_t *slot, LiveEntry *out) {
  const Base *b = base_of(slot);
  *out = (LiveEntry){.id = b->id, .samples = b->samples, .stack = b->sf & SF_STACK,
                     .promoted = (b->sf & SF_PROMOTED) != 0, .minor = (b->sf & SF_MINOR) != 0, .old_us = LIVE_NEVER};
  if (b->samples == SAMPLES_BIG) {
    const LiveBig *big = big_find(t, b->id);
    out->samples = big ? big->samples : 0;
  }
  if (t->extra & LIVE_LIFETIMES) {
    const Lifetimes *l = lifetimes_of(slot);
    out->birth_us = l->birth_us, out->birth_clock = l->birth_clock;
  }
  if (t->extra & LIVE_WINDOWS) {
    const Windows *w = windows_of(t, slot);
    out->old_us = w->old_us, out->window = w->window;
  }
}

// ---------------------------------------------------------------- old part

static bool old_append(LiveTable *t, const uint8_t *slot) {
  if (t->old_n == t->old_cap) {
    uint64_t cap = t->old_cap ? 2 * t->old_cap : 1024;
    uint8_t *o = realloc(t->old, cap * t->entry_bytes);
    if (!o) return false;
    t->old = o;
    t->old_cap = cap;
  }
  memcpy(old_slot(t, t->old_n++), slot, t->entry_bytes);
  return true;
}

static void old_compact(LiveTable *t) {
  uint64_t live = 0;
  for (uint64_t i = 0; i < t->old_n; i++) {
    uint8_t *s = old_slot(t, i);
    if (base_of(s)->sf & SF_DEAD) continue;
    if (live != i) memcpy(old_slot(t, live), s, t->entry_bytes);
    live++;
  }
  t->old_n = live;
  t->old_dead = 0;
  t->finger = 0;
}

static inline uint64_t old_id(const LiveTable *t, uint64_t i) { return base_of(old_slot(t, i))->id; }

// The index of the first old entry whose id is >= id: galloping from the
// finger, then bisecting.
static uint64_t old_search(const LiveTable *t, uint64_t id) {
  uint64_t n = t->old_n, f = t->finger < n ? t->finger : 0, lo, hi;  // the answer is in [lo, hi]
  if (old_id(t, f) < id) {
    uint64_t step = 1;
    lo = f + 1;
    while (f + step < n && old_id(t, f + step) < id) lo = f + step + 1, step *= 2;
    hi = f + step < n ? f + step : n;
  } else {
    uint64_t step = 1;
    hi = f;
    while (step <= f && old_id(t, f - step) >= id) hi = f - step, step *= 2;
    lo = step <= f ? f - step + 1 : 0;
  }
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (old_id(t, mid) < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// ---------------------------------------------------------------- ring

// Doubles the ring: the ids in [base, next) keep their entries at id % size.
static void ring_grow(LiveTable *t) {
  uint64_t size = 2 * t->ring_size;
  uint8_t *ring = empty_ring(t, size);
  if (!ring) return;  // the ring stays as it is: slower, still right
  for (uint64_t id = t->base; id < t->next; id++) {
    uint8_t *s = ring_slot(t, id);
    if (base_of(s)->id == id) memcpy(ring + (id & (size - 1)) * t->entry_bytes, s, t->entry_bytes);
  }
  free(t->ring);
  t->ring = ring;
  t->ring_size = size;
}

// Moves base up to new_base, the live entries passed over into the old part.
static bool advance(LiveTable *t, uint64_t new_base) {
  uint64_t stop = new_base - t->base > t->ring_size ? t->base + t->ring_size : new_base;
  for (uint64_t id = t->base; id < stop; id++) {
    uint8_t *s = ring_slot(t, id);
    if (base_of(s)->id == LIVE_EMPTY) continue;
    if (!old_append(t, s)) return false;
    base_of(s)->id = LIVE_EMPTY;
    t->passed_live++;
  }
  t->passed += new_base - t->base;
  t->base = new_base;
  return true;
}

LiveInsert live_insert(LiveTable *t, const LiveEntry *e) {
  if (e->id < t->next || e->id == LIVE_EMPTY) return LIVE_OUT_OF_ORDER;
  if (e->id - t->base >= t->ring_size) {
    if (t->passed >= t->ring_size && t->ring_size < LIVE_RING_MAX) {
      if (8 * t->passed_live > t->passed) ring_grow(t);
      t->passed = t->passed_live = 0;
    }
    if (e->id - t->base >= t->ring_size && !advance(t, e->id - t->ring_size + 1)) return LIVE_NO_MEMORY;
  }
  bool big = e->samples >= SAMPLES_BIG;
  if (big && !big_add(t, e->id, e->samples)) return LIVE_NO_MEMORY;
  put_entry(t, ring_slot(t, e->id), e, big);
  t->next = e->id + 1;
  t->count++;
  return LIVE_OK;
}

bool live_get(LiveTable *t, uint64_t id, LiveEntry *out, LiveRef *ref) {
  uint8_t *s;
  if (id >= t->base) {
    s = ring_slot(t, id);
    if (id >= t->next || base_of(s)->id != id) return false;
  } else {
    if (t->old_n == 0) return false;
    uint64_t i = old_search(t, id);
    if (i >= t->old_n || old_id(t, i) != id) return false;
    t->finger = i;
    s = old_slot(t, i);
    if (base_of(s)->sf & SF_DEAD) return false;
  }
  get_entry(t, s, out);
  ref->slot = s;
  return true;
}

void live_promote(LiveTable *t, LiveRef ref, uint64_t old_us) {
  base_of(ref.slot)->sf |= SF_PROMOTED;
  if (t->extra & LIVE_WINDOWS) windows_of(t, ref.slot)->old_us = old_us;
}

void live_remove(LiveTable *t, LiveRef ref) {
  Base *b = base_of(ref.slot);
  t->count--;
  if (b->samples == SAMPLES_BIG) {
    LiveBig *big = big_find(t, b->id);
    if (big) big->samples = 0;
  }
  if (ref.slot >= t->ring && ref.slot < t->ring + t->ring_size * t->entry_bytes) {
    b->id = LIVE_EMPTY;
    return;
  }
  b->sf |= SF_DEAD;
  if (++t->old_dead * 4 > t->old_n && t->old_n >= OLD_MIN_COMPACT) old_compact(t);
}

void live_each(LiveTable *t, void (*f)(void *ctx, const LiveEntry *e), void *ctx) {
  LiveEntry e;
  for (uint64_t i = 0; i < t->ring_size; i++) {
    uint8_t *s = t->ring + i * t->entry_bytes;
    if (base_of(s)->id != LIVE_EMPTY) get_entry(t, s, &e), f(ctx, &e);
  }
  for (uint64_t i = 0; i < t->old_n; i++) {
    uint8_t *s = old_slot(t, i);
    if (!(base_of(s)->sf & SF_DEAD)) get_entry(t, s, &e), f(ctx, &e);
  }
}
