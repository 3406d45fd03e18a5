// live.c - the live table: a ring for young ids, a hash table for the
// others (live.h).
#include "live.h"

#include <stdlib.h>

#include "../base/hash.h"

static uint64_t slot_of(uint64_t id, uint64_t mask) { return hash_mix(id) & mask; }

static LiveEntry *empty_slots(uint64_t n) {
  LiveEntry *s = malloc(n * sizeof *s);
  for (uint64_t i = 0; s && i < n; i++) s[i].id = LIVE_EMPTY;
  return s;
}

bool live_init(LiveTable *t) {
  *t = (LiveTable){.ring = empty_slots(LIVE_RING_MIN), .ring_size = LIVE_RING_MIN, .old = empty_slots(1024),
                   .old_mask = 1023};
  if (t->ring && t->old) return true;
  live_free(t);
  return false;
}

void live_free(LiveTable *t) {
  free(t->ring);
  free(t->old);
  t->ring = t->old = NULL;
}

// ---------------------------------------------------------------- hash part

static bool old_grow(LiveTable *t) {
  uint64_t n = 2 * (t->old_mask + 1);
  LiveEntry *s = empty_slots(n);
  if (!s) return false;
  for (uint64_t i = 0; i <= t->old_mask; i++) {
    if (t->old[i].id == LIVE_EMPTY) continue;
    uint64_t j = slot_of(t->old[i].id, n - 1);
    while (s[j].id != LIVE_EMPTY) j = (j + 1) & (n - 1);
    s[j] = t->old[i];
  }
  free(t->old);
  t->old = s;
  t->old_mask = n - 1;
  return true;
}

static bool old_insert(LiveTable *t, const LiveEntry *e) {
  if (2 * (t->old_used + 1) > t->old_mask + 1 && !old_grow(t)) return false;
  uint64_t j = slot_of(e->id, t->old_mask);
  while (t->old[j].id != LIVE_EMPTY) j = (j + 1) & t->old_mask;
  t->old[j] = *e;
  t->old_used++;
  return true;
}

static void old_remove(LiveTable *t, LiveEntry *e) {
  uint64_t mask = t->old_mask, hole = (uint64_t)(e - t->old);
  for (uint64_t j = (hole + 1) & mask; t->old[j].id != LIVE_EMPTY; j = (j + 1) & mask) {
    uint64_t home = slot_of(t->old[j].id, mask);
    // The entry may fill the hole iff its home is not cyclically in (hole, j].
    bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    t->old[hole] = t->old[j];
    hole = j;
  }
  t->old[hole].id = LIVE_EMPTY;
  t->old_used--;
}

// ---------------------------------------------------------------- ring

// Doubles the ring: the ids in [base, next) keep their entries at id % size.
static void ring_grow(LiveTable *t) {
  uint64_t size = 2 * t->ring_size;
  LiveEntry *ring = empty_slots(size);
  if (!ring) return;  // the ring stays as it is: slower, still right
  for (uint64_t id = t->base; id < t->next; id++) {
    const LiveEntry *s = &t->ring[id & (t->ring_size - 1)];
    if (s->id == id) ring[id & (size - 1)] = *s;
  }
  free(t->ring);
  t->ring = ring;
  t->ring_size = size;
}

// Moves base up to new_base, the live entries passed over into the hash part.
static bool advance(LiveTable *t, uint64_t new_base) {
  uint64_t mask = t->ring_size - 1;
  uint64_t stop = new_base - t->base > t->ring_size ? t->base + t->ring_size : new_base;
  for (uint64_t id = t->base; id < stop; id++) {
    LiveEntry *s = &t->ring[id & mask];
    if (s->id == LIVE_EMPTY) continue;
    if (!old_insert(t, s)) return false;
    s->id = LIVE_EMPTY;
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
  t->ring[e->id & (t->ring_size - 1)] = *e;
  t->next = e->id + 1;
  t->count++;
  return LIVE_OK;
}

LiveEntry *live_find(LiveTable *t, uint64_t id) {
  if (id >= t->base) {
    LiveEntry *s = &t->ring[id & (t->ring_size - 1)];
    return id < t->next && s->id == id ? s : NULL;
  }
  for (uint64_t j = slot_of(id, t->old_mask);; j = (j + 1) & t->old_mask) {
    if (t->old[j].id == id) return &t->old[j];
    if (t->old[j].id == LIVE_EMPTY) return NULL;
  }
}

void live_remove(LiveTable *t, LiveEntry *e) {
  t->count--;
  if (e >= t->ring && e < t->ring + t->ring_size) e->id = LIVE_EMPTY;
  else old_remove(t, e);
}

void live_each(LiveTable *t, void (*f)(void *ctx, LiveEntry *e), void *ctx) {
  for (uint64_t i = 0; i < t->ring_size; i++)
    if (t->ring[i].id != LIVE_EMPTY) f(ctx, &t->ring[i]);
  for (uint64_t i = 0; i <= t->old_mask; i++)
    if (t->old[i].id != LIVE_EMPTY) f(ctx, &t->old[i]);
}
