// live.h - the live table of the analysis core (profile.c): the sampled
// blocks allocated and not yet collected, by allocation id.
//
// Allocation ids come in increasing order (the reader checks that packets
// continue the numbering) and most blocks die young, so the table has two
// parts: a ring of ring_size slots indexed by id for the youngest ids, where
// an allocation is a sequential write and a young block's collection (in
// allocation order, as collectors report them) reads nearly sequentially;
// and, for the blocks still alive when their id leaves the ring, the old
// part: an array sorted by id (ids leave the ring in increasing order, so
// they are appended), where a removed entry stays as a tombstone until
// tombstones are a quarter of it and it is compacted. A lookup there
// gallops from the last one (a major collection reports the old blocks it
// frees in the order they became old: nearly increasing ids), then
// bisects: O(log distance). The ring doubles (from LIVE_RING_MIN to
// LIVE_RING_MAX slots) while more than an eighth of the ids it lets go are
// still alive, so that it spans the young blocks' lifetime (a minor heap's
// worth of samples).
//
// Memory follows the live blocks, never the events: an entry is 16 bytes
// (id, stack, two flags, samples; a block of 2^32 samples or more keeps its
// count in a side table), plus, when the table is made with `extra` fields,
// 16 or 32 bytes of them: the birth time and allocation clock (lifetimes),
// the time the block became old and its birth window (leak windows). The
// old part holds at most 4/3 of its live entries; the ring's slots are
// ring_size x the entry's size.
//
// Invariants: every live id >= base is in ring slot id % ring_size and no id
// below base is; base <= next <= base + ring_size; next is one past the
// largest id inserted; the old part holds exactly the live ids below base
// (and tombstones), sorted; count = live ids in both.
#ifndef MINNOW_MEMTRACE_LIVE_H
#define MINNOW_MEMTRACE_LIVE_H

#include <stdbool.h>
#include <stdint.h>

enum { LIVE_RING_MIN = 1 << 14, LIVE_RING_MAX = 1 << 19 };

#define LIVE_NEVER UINT64_MAX

// What the table stores of a block, whole (what live_insert takes and
// live_get and live_each give back). Fields the table was not made to keep
// read back as 0 (LIVE_NEVER for old_us).
typedef struct LiveEntry {
  uint64_t id;           // allocation id
  uint64_t samples;
  uint32_t stack;        // ProfileStackId, below 2^30
  bool promoted, minor;  // minor: born in the minor heap
  // LIVE_LIFETIMES:
  uint64_t birth_us;
  uint64_t birth_clock;  // the allocation clock after this block's samples
  // LIVE_WINDOWS:
  uint64_t old_us;       // when it became old: its promotion, or its birth in
                         // the major heap; LIVE_NEVER if not (yet)
  uint16_t window;       // birth window (1..K)
} LiveEntry;

// The optional fields to keep (an or of them).
enum { LIVE_LIFETIMES = 1, LIVE_WINDOWS = 2 };

typedef struct LiveSlot LiveSlot;
typedef struct LiveBig LiveBig;

typedef struct LiveTable {
  unsigned extra;        // LIVE_LIFETIMES | LIVE_WINDOWS
  uint32_t entry_bytes;  // 16, 32 or 48
  uint8_t *ring;         // ring_size entries
  uint64_t ring_size;    // a power of two
  uint64_t base, next;
  uint64_t passed, passed_live;   // ids the ring let go since it last grew; of them alive
  uint8_t *old;          // the old part: old_n entries, sorted by id, tombstones included
  uint64_t old_n, old_cap, old_dead, finger;
  LiveBig *big;          // samples of blocks of 2^32 samples or more, by id
  uint64_t big_n, big_cap;
  uint64_t count;
} LiveTable;

// False when out of memory.
bool live_init(LiveTable *t, unsigned extra);
void live_free(LiveTable *t);

typedef enum LiveInsert { LIVE_OK, LIVE_OUT_OF_ORDER, LIVE_NO_MEMORY } LiveInsert;

// Adds e; its id must be above every id inserted before (else
// LIVE_OUT_OF_ORDER: a repeated or decreasing id, not added).
LiveInsert live_insert(LiveTable *t, const LiveEntry *e);

// Where a live entry is, for live_promote and live_remove: valid until the
// next insert or remove.
typedef struct LiveRef {
  uint8_t *slot;
} LiveRef;

// The entry of a live id into *out and where it is into *ref; false when the
// id is not live.
bool live_get(LiveTable *t, uint64_t id, LiveEntry *out, LiveRef *ref);

// Marks the entry promoted at old_us (kept with LIVE_WINDOWS).
void live_promote(LiveTable *t, LiveRef ref, uint64_t old_us);

// Removes the entry.
void live_remove(LiveTable *t, LiveRef ref);

// Calls f on every live entry (in no particular order).
void live_each(LiveTable *t, void (*f)(void *ctx, const LiveEntry *e), void *ctx);

#endif
