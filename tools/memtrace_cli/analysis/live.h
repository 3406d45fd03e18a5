// live.h - the live table of the analysis core (profile.c): the sampled
// blocks allocated and not yet collected, by allocation id.
//
// Allocation ids come in increasing order (the reader checks that packets
// continue the numbering) and most blocks die young, so the table has two
// parts: a ring of ring_size slots indexed by id for the youngest ids, where
// an allocation is a sequential write and a young block's collection (in
// allocation order, as collectors report them) reads nearly sequentially;
// and a hash table (open addressing, linear probing, deletion by shifting
// back, at most half full) for the blocks still alive when their id leaves
// the ring. The ring doubles (from LIVE_RING_MIN to LIVE_RING_MAX slots)
// while more than an eighth of the ids it lets go are still alive, so that
// it spans the young blocks' lifetime (a minor heap's worth of samples).
// Memory is O(live blocks + ring), never O(events).
//
// Invariants: every live id >= base is in ring[id % ring_size] and no id
// below base is; base <= next <= base + ring_size; next is one past the
// largest id inserted; the hash table holds exactly the live ids below
// base; count = live ids in both.
#ifndef MINNOW_MEMTRACE_LIVE_H
#define MINNOW_MEMTRACE_LIVE_H

#include <stdbool.h>
#include <stdint.h>

enum { LIVE_RING_MIN = 1 << 14, LIVE_RING_MAX = 1 << 19 };

typedef struct LiveEntry {
  uint64_t id;           // allocation id; LIVE_EMPTY for a free slot
  uint64_t samples;
  uint64_t birth_us;
  uint64_t birth_clock;  // the allocation clock after this block's samples
  uint64_t promoted_us;  // time of its promote event; LIVE_NEVER if none
  uint32_t stack;        // ProfileStackId
  uint16_t window;       // birth window (1..K), 0 without windows
  bool promoted, minor;  // minor: born in the minor heap
} LiveEntry;

#define LIVE_EMPTY UINT64_MAX
#define LIVE_NEVER UINT64_MAX

typedef struct LiveTable {
  LiveEntry *ring;
  uint64_t ring_size;    // a power of two
  uint64_t base, next;
  uint64_t passed, passed_live;   // ids the ring let go since it last grew; of them alive
  LiveEntry *old;        // the hash table
  uint64_t old_mask, old_used;
  uint64_t count;
} LiveTable;

// False when out of memory.
bool live_init(LiveTable *t);
void live_free(LiveTable *t);

typedef enum LiveInsert { LIVE_OK, LIVE_OUT_OF_ORDER, LIVE_NO_MEMORY } LiveInsert;

// Adds e; its id must be above every id inserted before (else
// LIVE_OUT_OF_ORDER: a repeated or decreasing id, not added).
LiveInsert live_insert(LiveTable *t, const LiveEntry *e);

// The entry of a live id, or NULL. Valid until the next insert or remove.
LiveEntry *live_find(LiveTable *t, uint64_t id);

// Removes an entry live_find returned.
void live_remove(LiveTable *t, LiveEntry *e);

// Calls f on every live entry (in no particular order).
void live_each(LiveTable *t, void (*f)(void *ctx, LiveEntry *e), void *ctx);

#endif
