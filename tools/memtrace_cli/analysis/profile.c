// profile.c - the analysis core: callstack trie, stacks, sites, live table,
// lifetime histograms and leak windows, built in one pass (profile.h).
//
// Hash tables are open-addressed with linear probing, at most half full,
// sizes powers of two; they store ids, their keys live in the nodes and
// sites. The live table is live.h's.
#include "profile.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../base/grow.h"
#include "../../../base/hash.h"
#include "../base/progress.h"
#include "live.h"

// ---------------------------------------------------------------- types

typedef struct IdTable {
  uint32_t *slots;       // ids + 1; 0 is empty
  uint32_t mask, used;
} IdTable;

// A distinct frame code: its stable key (hash_code, computed once per code,
// not per node) and its site as a leaf (PROFILE_NONE until a stack ends on it).
typedef struct CodeInfo {
  uint64_t code, key;
  ProfileSiteId site;
} CodeInfo;

// A per-stack counter: absent (every count 0) until a count first changes,
// then u32s, made u64s once a count would pass 2^32 - 1 (a count is at most
// its total, so most traces never widen).
typedef struct Column {
  uint32_t *narrow;
  uint64_t *wide;
} Column;

enum { SMALL_BLOCKS = 256 };  // blocks below this many words have their weight in a table

// Children of more than WIDE kids are found through the wide table, the
// others by walking their kid/sib list (most recently found first: a walk
// tends to repeat the previous one).
enum { WIDE_KIDS = 8 };

typedef struct SiteExtra {
  ProfileLifetimes *lifetimes;
  uint64_t *windows;
} SiteExtra;

enum { C_BLOCKS, C_SAMPLES, C_MAJOR_B, C_MAJOR_S, C_PROMOTED_B, C_PROMOTED_S, C_LIVE_B, C_LIVE_S, C_AT_B, C_AT_S,
       N_COLUMNS };

struct Profile {
  TraceReader *reader;
  ProfileOptions opts;
  double rate, sample_bytes;
  uint32_t word_bytes;
  bool ok;

  // Nodes, one array per field. kid, sib, wide_bits and the wide table serve
  // reading only (freed by profile_finish).
  uint32_t n_nodes, cap_nodes, n_cut_nodes;
  ProfileNodeId *parent;
  uint32_t *code_ix;           // index in codes
  ProfileStackId *stack_of;
  ProfileNodeId *kid, *sib;    // first child, next sibling (PROFILE_NONE: none)
  uint64_t *wide_bits;         // per node: its children are in the wide table
  IdTable wide;                // (parent, code) -> node, for wide parents' children
  ProfileNodeId cut_root;      // the root's "(frames left out)" node, PROFILE_NONE until made

  CodeInfo *codes;
  uint32_t n_codes, cap_codes;
  IdTable code_index;          // code -> index in codes

  // Stacks: their leaves, and their counters in columns.
  uint32_t n_stacks, cap_stacks;
  ProfileNodeId *leaf;
  Column col[N_COLUMNS];
  double *objects;
  double small_weight[SMALL_BLOCKS];   // stats_block_weight(w, rate) for w < SMALL_BLOCKS

  ProfileSite *sites;
  SiteExtra *extras;
  uint32_t n_sites, cap_sites, cap_extras;
  IdTable site_index;          // location (or code) -> site

  ProfileNodeId *path;         // the previous allocation's nodes, outermost first
  uint32_t path_len, path_cap;

  LiveTable live;
  // ProfileOptions.birth_ids: per id listed, its birth (LiveEntry's
  // convention: the clock after its samples), and the next id to fill.
  struct { uint64_t us, clock; } *births;
  uint64_t birth_next;

  ProfileCounts totals;
  ProfileSummary summary;
  ProfileCut cut;
  bool finished;

  uint32_t window;             // current window (1..K); 0 without windows
  uint64_t *checkpoint_us;     // [1..K]
  uint64_t *checkpoint_clock;  // [1..K]: the allocation clock there
  // Major collections, as seen through the collect events of old blocks
  // (promoted or born in the major heap): an episode is a run of them with
  // no allocation in between. Times of the latest two; LIVE_NEVER if none.
  uint64_t gc_prev_us, gc_cur_us;
  uint64_t gc_count;
  bool allocated_since_gc;
};

// ---------------------------------------------------------------- hashing

static uint64_t hash_location(const TraceReaderLocation *l) {
  uint64_t h = hash_combine(hash_string(l->function), hash_string(l->file));
  return hash_combine(hash_combine(hash_combine(h, l->line), l->start_col), l->end_col);
}

// A located site's keys (fill_site; the only place they are made).
uint64_t profile_location_key(const TraceReaderLocation *l, ProfileBy by) {
  uint64_t file = hash_string(l->file);
  switch (by) {
    case PROFILE_BY_FILE: return file;
    case PROFILE_BY_FUNCTION: return hash_combine(hash_string(l->function), file);
    default: return hash_location(l);
  }
}

// The nodes the profile adds where a limit left frames out: their one location.
static const TraceReaderLocation cut_nodes_location = {
    "(frames left out: more distinct frames than the tools' limit of 2097152)", "", 0, 0, 0};
static const TraceReaderLocation cut_frames_location = {
    "(frames left out: a backtrace deeper than the reader's limit of 8388608 frames)", "", 0, 0, 0};
_Static_assert(PROFILE_MAX_NODES == 2097152 && TRACE_READER_MAX_FRAMES == 8388608, "the names above say the limits");

static int code_locations(const TraceReader *r, uint64_t code, const TraceReaderLocation **locs) {
  if (code == PROFILE_CODE_CUT_NODES || code == PROFILE_CODE_CUT_FRAMES) {
    *locs = code == PROFILE_CODE_CUT_NODES ? &cut_nodes_location : &cut_frames_location;
    return 1;
  }
  return trace_reader_locations(r, code, locs);
}

// The key of a frame: its locations, or its code when it has none.
static uint64_t hash_code(const TraceReader *r, uint64_t code) {
  const TraceReaderLocation *locs;
  int n = code_locations(r, code, &locs);
  if (n <= 0) return hash_combine(0x5eed, code);
  uint64_t h = 0x10c;
  for (int i = 0; i < n; i++) h = hash_combine(h, hash_location(&locs[i]));
  return h;
}

// ---------------------------------------------------------------- memory

static void *grow(Profile *p, void *ptr, uint32_t *cap, size_t elem, uint32_t need) {
  void *q = grow_array(ptr, cap, need, elem, 256);
  if (!q) p->ok = false;
  return q;
}

// Grows the arrays of one node or stack field from `old` to `cap` elements;
// false (p->ok too) when out of memory.
static bool resize(Profile *p, void **ptr, size_t elem, uint32_t old, uint32_t cap, bool zero) {
  void *q = realloc(*ptr, (size_t)cap * elem);
  if (!q) return p->ok = false;
  if (zero) memset((char *)q + (size_t)old * elem, 0, (size_t)(cap - old) * elem);
  *ptr = q;
  return true;
}

static bool id_table_init(IdTable *t, uint32_t slots) {
  t->slots = calloc(slots, sizeof *t->slots);
  t->mask = slots - 1;
  t->used = 0;
  return t->slots != NULL;
}

// ---------------------------------------------------------------- columns

static inline uint64_t col_get(const Column *c, uint32_t i) {
  return c->narrow ? c->narrow[i] : c->wide ? c->wide[i] : 0;
}

static bool col_widen(Profile *p, Column *c) {
  uint64_t *w = malloc((size_t)p->cap_stacks * sizeof *w);
  if (!w) return p->ok = false;
  for (uint32_t i = 0; i < p->cap_stacks; i++) w[i] = c->narrow[i];
  free(c->narrow);
  c->narrow = NULL;
  c->wide = w;
  return true;
}

static inline void col_add(Profile *p, Column *c, uint32_t i, uint64_t v) {
  if (__builtin_expect(!c->narrow && !c->wide, 0)) {
    if (v == 0 || !(c->narrow = calloc(p->cap_stacks, sizeof *c->narrow))) {
      if (v) p->ok = false;
      return;
    }
  }
  if (c->narrow) {
    uint64_t x = c->narrow[i] + v;
    if (__builtin_expect(x <= UINT32_MAX && v <= UINT32_MAX, 1)) {
      c->narrow[i] = (uint32_t)x;
      return;
    }
    if (!col_widen(p, c)) return;
  }
  c->wide[i] += v;
}

// After a col_add of at least v at i.
static inline void col_sub(Column *c, uint32_t i, uint64_t v) {
  if (c->narrow) c->narrow[i] -= (uint32_t)v;
  else if (c->wide) c->wide[i] -= v;
}

static bool columns_reserve(Profile *p, uint32_t need) {
  if (need <= p->cap_stacks) return true;
  uint32_t old = p->cap_stacks, cap = old ? old : 256;
  while (cap < need) cap = cap > UINT32_MAX / 2 ? need : 2 * cap;
  if (!resize(p, (void **)&p->leaf, sizeof *p->leaf, old, cap, false) ||
      !resize(p, (void **)&p->objects, sizeof *p->objects, old, cap, true))
    return false;
  for (int k = 0; k < N_COLUMNS; k++) {
    Column *c = &p->col[k];
    if (c->narrow && !resize(p, (void **)&c->narrow, sizeof *c->narrow, old, cap, true)) return false;
    if (c->wide && !resize(p, (void **)&c->wide, sizeof *c->wide, old, cap, true)) return false;
  }
  p->cap_stacks = cap;
  return true;
}

// ---------------------------------------------------------------- codes

static uint64_t code_hash(uint64_t code) { return hash_mix(code ^ 0xc0de5); }

static bool code_index_grow(Profile *p) {
  IdTable bigger;
  if (!id_table_init(&bigger, 2 * (p->code_index.mask + 1))) return p->ok = false;
  for (uint32_t i = 0; i < p->n_codes; i++) {
    uint64_t j = code_hash(p->codes[i].code) & bigger.mask;
    while (bigger.slots[j]) j = (j + 1) & bigger.mask;
    bigger.slots[j] = i + 1;
  }
  bigger.used = p->n_codes;
  free(p->code_index.slots);
  p->code_index = bigger;
  return true;
}

// The index of `code` in codes, made if new; UINT32_MAX when out of memory.
static uint32_t code_ix_of(Profile *p, uint64_t code) {
  IdTable *t = &p->code_index;
  uint64_t j = code_hash(code) & t->mask;
  for (uint32_t v; (v = t->slots[j]); j = (j + 1) & t->mask)
    if (p->codes[v - 1].code == code) return v - 1;
  CodeInfo *codes = grow(p, p->codes, &p->cap_codes, sizeof *codes, p->n_codes + 1);
  if (!codes) return UINT32_MAX;
  p->codes = codes;
  uint32_t ix = p->n_codes++;
  codes[ix] = (CodeInfo){code, hash_code(p->reader, code), PROFILE_NONE};
  t->slots[j] = ix + 1;
  if (2 * ++t->used > t->mask && !code_index_grow(p)) return UINT32_MAX;
  return ix;
}

// ---------------------------------------------------------------- trie

static inline bool is_wide(const Profile *p, ProfileNodeId id) { return p->wide_bits[id >> 6] >> (id & 63) & 1; }

static uint64_t wide_hash(ProfileNodeId parent, uint32_t code_ix) {
  return hash_mix((uint64_t)parent << 32 | code_ix);
}

static bool wide_insert(Profile *p, ProfileNodeId id) {
  IdTable *t = &p->wide;
  if (2 * (t->used + 1) > t->mask + 1) {
    IdTable bigger;
    if (!id_table_init(&bigger, t->slots ? 2 * (t->mask + 1) : 1024)) return p->ok = false;
    for (uint32_t i = 0; t->slots && i <= t->mask; i++) {
      uint32_t v = t->slots[i];
      if (!v) continue;
      uint64_t j = wide_hash(p->parent[v - 1], p->code_ix[v - 1]) & bigger.mask;
      while (bigger.slots[j]) j = (j + 1) & bigger.mask;
      bigger.slots[j] = v;
    }
    bigger.used = t->used;
    free(t->slots);
    *t = bigger;
  }
  uint64_t j = wide_hash(p->parent[id], p->code_ix[id]) & t->mask;
  while (t->slots[j]) j = (j + 1) & t->mask;
  t->slots[j] = id + 1;
  t->used++;
  return true;
}

static ProfileNodeId wide_find(const Profile *p, ProfileNodeId parent, uint32_t code_ix) {
  const IdTable *t = &p->wide;
  for (uint64_t j = wide_hash(parent, code_ix) & t->mask;; j = (j + 1) & t->mask) {
    uint32_t v = t->slots[j];
    if (!v) return PROFILE_NONE;
    if (p->parent[v - 1] == parent && p->code_ix[v - 1] == code_ix) return v - 1;
  }
}

static bool nodes_reserve(Profile *p, uint32_t need) {
  if (need <= p->cap_nodes) return true;
  uint32_t old = p->cap_nodes, cap = old ? 2 * old : 1024;
  while (cap < need) cap *= 2;
  if (!resize(p, (void **)&p->parent, sizeof *p->parent, old, cap, false) ||
      !resize(p, (void **)&p->code_ix, sizeof *p->code_ix, old, cap, false) ||
      !resize(p, (void **)&p->stack_of, sizeof *p->stack_of, old, cap, false) ||
      !resize(p, (void **)&p->kid, sizeof *p->kid, old, cap, false) ||
      !resize(p, (void **)&p->sib, sizeof *p->sib, old, cap, false) ||
      !resize(p, (void **)&p->wide_bits, sizeof *p->wide_bits, (old + 63) / 64, (cap + 63) / 64, true))
    return false;
  p->cap_nodes = cap;
  return true;
}

static ProfileNodeId new_node(Profile *p, ProfileNodeId parent, uint32_t code_ix) {
  if (!nodes_reserve(p, p->n_nodes + 1)) return PROFILE_NONE;
  ProfileNodeId id = p->n_nodes++;
  p->parent[id] = parent;
  p->code_ix[id] = code_ix;
  p->stack_of[id] = PROFILE_NONE;
  p->kid[id] = PROFILE_NONE;
  p->sib[id] = PROFILE_NONE;
  if (is_wide(p, parent)) {
    if (!wide_insert(p, id)) return PROFILE_NONE;
  } else {
    p->sib[id] = p->kid[parent];
    p->kid[parent] = id;
  }
  return id;
}

// The parent's kids go to the wide table (they were more than WIDE_KIDS).
static bool make_wide(Profile *p, ProfileNodeId parent) {
  for (ProfileNodeId k = p->kid[parent]; k != PROFILE_NONE; k = p->sib[k])
    if (!wide_insert(p, k)) return false;
  p->wide_bits[parent >> 6] |= (uint64_t)1 << (parent & 63);
  p->kid[parent] = PROFILE_NONE;
  return true;
}

// The child of `parent` for code_ix, made if new and `make` (within the node
// limit); PROFILE_NONE when there is none (or out of memory: p->ok false).
static ProfileNodeId child(Profile *p, ProfileNodeId parent, uint32_t code_ix, bool make) {
  if (is_wide(p, parent)) {
    ProfileNodeId id = wide_find(p, parent, code_ix);
    if (id != PROFILE_NONE || !make) return id;
    return new_node(p, parent, code_ix);
  }
  uint32_t seen = 0;
  for (ProfileNodeId k = p->kid[parent], prev = PROFILE_NONE; k != PROFILE_NONE; prev = k, k = p->sib[k], seen++) {
    if (p->code_ix[k] != code_ix) continue;
    if (prev != PROFILE_NONE) {  // to the front
      p->sib[prev] = p->sib[k];
      p->sib[k] = p->kid[parent];
      p->kid[parent] = k;
    }
    return k;
  }
  if (!make) return PROFILE_NONE;
  if (seen >= WIDE_KIDS && !make_wide(p, parent)) return PROFILE_NONE;
  return new_node(p, parent, code_ix);
}

// Where an allocation whose stack is left out from frame `at` of its path
// on counts: the "(frames left out: ...)" child of path[at - 1] (the root's
// when the cut nodes ran out).
static ProfileNodeId cut_node(Profile *p, ProfileNodeId under, uint64_t code) {
  uint32_t ix = code_ix_of(p, code);
  if (ix == UINT32_MAX) return PROFILE_NONE;
  ProfileNodeId id = child(p, under, ix, false);
  if (id != PROFILE_NONE) return id;
  if (p->n_cut_nodes >= PROFILE_MAX_CUT_NODES) {
    if (p->cut_root == PROFILE_NONE) p->cut_root = new_node(p, 0, code_ix_of(p, PROFILE_CODE_CUT_NODES));
    return p->cut_root;
  }
  p->n_cut_nodes++;
  return new_node(p, under, ix);
}

// Follows the allocation's backtrace from its common prefix on; the leaf
// (PROFILE_NONE when out of memory). Past the node limit, or past the
// frames the reader kept, the stack ends in a node of what was left out.
static ProfileNodeId walk(Profile *p, const TraceEvent *ev) {
  uint32_t len = ev->backtrace_len, common = ev->common < p->path_len ? ev->common : p->path_len;
  // At least one slot: with none yet, grow would give back the NULL path
  // and a first allocation with an empty callstack would be dropped.
  ProfileNodeId *path = grow(p, p->path, &p->path_cap, sizeof *path, len ? len : 1);
  if (!path) return PROFILE_NONE;
  p->path = path;
  uint64_t code = 0;
  uint32_t ix = UINT32_MAX;
  for (uint32_t i = common; i < len; i++) {
    if (ev->backtrace[i] != code || ix == UINT32_MAX) {  // a recursion looks its code up once
      code = ev->backtrace[i];
      if ((ix = code_ix_of(p, code)) == UINT32_MAX) return PROFILE_NONE;
    }
    ProfileNodeId up = i ? path[i - 1] : 0;
    ProfileNodeId n = child(p, up, ix, p->n_nodes < PROFILE_MAX_NODES);
    if (n == PROFILE_NONE) {
      if (!p->ok) return PROFILE_NONE;
      // The node limit: this allocation ends at a node of what was left
      // out; the path the next allocation shares stops here.
      if (!p->cut.allocs) p->cut.first_offset = ev->offset;
      p->cut.allocs++;
      p->cut.samples += ev->n_samples;
      p->path_len = i;
      return cut_node(p, up, PROFILE_CODE_CUT_NODES);
    }
    path[i] = n;
  }
  p->path_len = len;
  ProfileNodeId leaf = len ? path[len - 1] : 0;
  if (__builtin_expect(ev->cut, 0)) return cut_node(p, leaf, PROFILE_CODE_CUT_FRAMES);
  return leaf;
}

// ---------------------------------------------------------------- sites

typedef struct SiteKey {
  bool located;
  TraceReaderLocation loc;
  uint64_t code;
} SiteKey;

static SiteKey site_key_of(const Profile *p, uint64_t code) {
  const TraceReaderLocation *locs;
  int n = code_locations(p->reader, code, &locs);
  if (n <= 0) return (SiteKey){false, {"", "", 0, 0, 0}, code};
  return (SiteKey){true, locs[n - 1], 0};
}

// Names are interned by the reader: equal strings are equal pointers.
static uint64_t site_key_hash(const SiteKey *k) {
  if (!k->located) return hash_mix(k->code ^ 0x51e);
  uint64_t h = hash_combine((uint64_t)(uintptr_t)k->loc.function, (uint64_t)(uintptr_t)k->loc.file);
  return hash_combine(hash_combine(hash_combine(h, k->loc.line), k->loc.start_col), k->loc.end_col);
}

static bool site_matches(const ProfileSite *s, const SiteKey *k) {
  if (s->located != k->located) return false;
  if (!k->located) return s->code == k->code;
  return s->loc.function == k->loc.function && s->loc.file == k->loc.file && s->loc.line == k->loc.line &&
         s->loc.start_col == k->loc.start_col && s->loc.end_col == k->loc.end_col;
}

static bool site_table_grow(Profile *p) {
  IdTable bigger;
  if (!id_table_init(&bigger, 2 * (p->site_index.mask + 1))) return p->ok = false;
  for (uint32_t i = 0; i < p->n_sites; i++) {
    const ProfileSite *s = &p->sites[i];
    SiteKey k = {s->located, s->loc, s->code};
    uint64_t j = site_key_hash(&k) & bigger.mask;
    while (bigger.slots[j]) j = (j + 1) & bigger.mask;
    bigger.slots[j] = i + 1;
  }
  bigger.used = p->n_sites;
  free(p->site_index.slots);
  p->site_index = bigger;
  return true;
}

static void fill_site(ProfileSite *s, const SiteKey *k, uint64_t code) {
  *s = (ProfileSite){.loc = k->loc, .located = k->located, .code = code};
  if (!k->located) {
    s->key_site = s->key_function = s->key_file = hash_combine(0x5eed, code);
    return;
  }
  s->key_site = profile_location_key(&k->loc, PROFILE_BY_SITE);
  s->key_file = profile_location_key(&k->loc, PROFILE_BY_FILE);
  s->key_function = profile_location_key(&k->loc, PROFILE_BY_FUNCTION);
}

static ProfileSiteId site_of(Profile *p, uint64_t code) {
  SiteKey k = site_key_of(p, code);
  IdTable *t = &p->site_index;
  uint64_t j = site_key_hash(&k) & t->mask;
  for (uint32_t v; (v = t->slots[j]); j = (j + 1) & t->mask)
    if (site_matches(&p->sites[v - 1], &k)) return v - 1;
  ProfileSite *sites = grow(p, p->sites, &p->cap_sites, sizeof *sites, p->n_sites + 1);
  if (!sites) return PROFILE_NONE;
  p->sites = sites;
  SiteExtra *extras = grow(p, p->extras, &p->cap_extras, sizeof *extras, p->n_sites + 1);
  if (!extras) return PROFILE_NONE;
  p->extras = extras;
  ProfileSiteId id = p->n_sites++;
  fill_site(&sites[id], &k, code);
  extras[id] = (SiteExtra){NULL, NULL};
  t->slots[j] = id + 1;
  if (2 * ++t->used > t->mask && !site_table_grow(p)) return PROFILE_NONE;
  return id;
}

static ProfileStackId stack_of(Profile *p, ProfileNodeId leaf) {
  if (p->stack_of[leaf] != PROFILE_NONE) return p->stack_of[leaf];
  CodeInfo *code = &p->codes[p->code_ix[leaf]];
  if (code->site == PROFILE_NONE && (code->site = site_of(p, code->code)) == PROFILE_NONE) return PROFILE_NONE;
  if (!columns_reserve(p, p->n_stacks + 1)) return PROFILE_NONE;
  ProfileStackId id = p->n_stacks++;
  p->leaf[id] = leaf;
  p->stack_of[leaf] = id;
  return id;
}

static inline ProfileSiteId site_of_stack(const Profile *p, ProfileStackId s) {
  return p->codes[p->code_ix[p->leaf[s]]].site;
}

// ---------------------------------------------------------------- counting

// What an event changes: a stack's columns, its site's counters, the
// totals. `k` names the counter (C_*), `d` the change.
static inline void count(Profile *p, ProfileStackId s, ProfileCounts *site, int k, uint64_t v) {
  col_add(p, &p->col[k], s, v);
  uint64_t *f[N_COLUMNS][2] = {
      {&site->blocks, &p->totals.blocks},
      {&site->samples, &p->totals.samples},
      {&site->major_blocks, &p->totals.major_blocks},
      {&site->major_samples, &p->totals.major_samples},
      {&site->promoted_blocks, &p->totals.promoted_blocks},
      {&site->promoted_samples, &p->totals.promoted_samples},
      {&site->live_blocks, &p->totals.live_blocks},
      {&site->live_samples, &p->totals.live_samples},
      {&site->at_blocks, &p->totals.at_blocks},
      {&site->at_samples, &p->totals.at_samples},
  };
  *f[k][0] += v, *f[k][1] += v;
}

static ProfileLifetimes *lifetimes_of(Profile *p, ProfileSiteId site) {
  SiteExtra *x = &p->extras[site];
  if (!x->lifetimes && !(x->lifetimes = calloc(1, sizeof *x->lifetimes))) p->ok = false;
  return x->lifetimes;
}

static uint64_t *windows_of(Profile *p, ProfileSiteId site) {
  SiteExtra *x = &p->extras[site];
  size_t side = p->opts.windows + 2;
  if (!x->windows && !(x->windows = calloc(side * side, sizeof *x->windows))) p->ok = false;
  return x->windows;
}

// The number of checkpoints among c_1 .. c_n at or before time t, plus one:
// the window whose end is the first checkpoint after t.
static uint32_t window_after(const Profile *p, uint64_t t, uint32_t n) {
  uint32_t lo = 0, hi = n;  // checkpoint_us[1..lo] <= t < checkpoint_us[hi + 1..]
  while (lo < hi) {
    uint32_t mid = (lo + hi + 1) / 2;
    if (p->checkpoint_us[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

// The latest time a block is known to have been reachable (profile.h,
// "Leak windows"): it became old (promoted, or born in the major heap) then,
// or survived a major collection later; LIVE_NEVER when never proven.
static uint64_t proven_until(const LiveEntry *e, uint64_t survived_gc_us) {
  uint64_t old = e->old_us;
  if (old == LIVE_NEVER) return LIVE_NEVER;
  return survived_gc_us != LIVE_NEVER && survived_gc_us > old ? survived_gc_us : old;
}

static void record_window(Profile *p, const LiveEntry *e, uint64_t survived_gc_us, bool alive) {
  uint64_t proven = proven_until(e, survived_gc_us);
  if (proven == LIVE_NEVER) return;
  uint32_t k = p->opts.windows, d;
  if (!alive) d = window_after(p, proven, p->window - 1);
  else d = window_after(p, proven, k - 1) == k ? k + 1 : window_after(p, proven, k - 1);
  if (d < (uint32_t)e->window + 2) return;
  uint64_t *m = windows_of(p, site_of_stack(p, e->stack));
  if (m) m[(size_t)e->window * (k + 2) + d] += e->samples;
}

// A block leaves the live set: collected at now_us (alive = false), or still
// alive at the end (alive = true); survived_gc_us: the last major collection
// it lived through (LIVE_NEVER: none seen).
static void record_end(Profile *p, const LiveEntry *e, uint64_t now_us, uint64_t survived_gc_us, bool alive) {
  if (p->opts.lifetimes) {
    ProfileLifetimes *l = lifetimes_of(p, site_of_stack(p, e->stack));
    if (l && alive) {
      l->time_us[PROFILE_HIST_ALIVE] += e->samples;
      l->clock[PROFILE_HIST_ALIVE] += e->samples;
    } else if (l) {
      l->time_us[profile_hist_bucket(now_us - e->birth_us)] += e->samples;
      l->clock[profile_hist_bucket(p->summary.clock - e->birth_clock)] += e->samples;
      if (e->minor && !e->promoted) {
        l->died_young_blocks++;
        l->died_young_samples += e->samples;
      }
    }
  }
  if (p->opts.windows) record_window(p, e, survived_gc_us, alive);
}

static void on_alloc(Profile *p, const TraceEvent *ev) {
  ProfileNodeId leaf = walk(p, ev);
  ProfileStackId s = leaf == PROFILE_NONE ? PROFILE_NONE : stack_of(p, leaf);
  if (s == PROFILE_NONE) return;
  uint64_t n = ev->n_samples;
  p->summary.clock += n;
  bool minor = ev->source == TRACE_SOURCE_MINOR;
  bool tracked = !p->opts.allocations_only;
  if (tracked) {
    p->allocated_since_gc = true;
    LiveEntry e = {.id = ev->id, .samples = n, .stack = s, .minor = minor, .birth_us = ev->dtime_us,
                   .birth_clock = p->summary.clock, .old_us = minor ? LIVE_NEVER : ev->dtime_us,
                   .window = (uint16_t)p->window};
    LiveInsert added = live_insert(&p->live, &e);
    if (added != LIVE_OK) {
      if (added == LIVE_NO_MEMORY) p->ok = false;
      else p->summary.unknown_ids++;  // an id allocated twice
      return;
    }
    if (p->births) {  // ids come in increasing order: a cursor over the listed ones
      const uint64_t *ids = p->opts.birth_ids;
      while (p->birth_next < p->opts.n_birth_ids && ids[p->birth_next] < ev->id) p->birth_next++;
      if (p->birth_next < p->opts.n_birth_ids && ids[p->birth_next] == ev->id) {
        p->births[p->birth_next].us = e.birth_us;
        p->births[p->birth_next].clock = e.birth_clock;
      }
    }
  }
  double weight = ev->length < SMALL_BLOCKS ? p->small_weight[ev->length] : stats_block_weight(ev->length, p->rate);
  ProfileCounts *site = &p->sites[site_of_stack(p, s)].counts;
  count(p, s, site, C_BLOCKS, 1);
  count(p, s, site, C_SAMPLES, n);
  p->objects[s] += weight, site->objects += weight, p->totals.objects += weight;
  if (tracked) count(p, s, site, C_LIVE_B, 1), count(p, s, site, C_LIVE_S, n);
  if (!minor) count(p, s, site, C_MAJOR_B, 1), count(p, s, site, C_MAJOR_S, n);
}

static void on_promote(Profile *p, const TraceEvent *ev) {
  LiveEntry e;
  LiveRef ref;
  if (!live_get(&p->live, ev->id, &e, &ref)) {
    p->summary.unknown_ids++;
    return;
  }
  if (e.promoted) return;
  live_promote(&p->live, ref, e.minor ? ev->dtime_us : e.old_us);
  ProfileCounts *site = &p->sites[site_of_stack(p, e.stack)].counts;
  count(p, e.stack, site, C_PROMOTED_B, 1);
  count(p, e.stack, site, C_PROMOTED_S, e.samples);
}

static void on_collect(Profile *p, const TraceEvent *ev) {
  LiveEntry e;
  LiveRef ref;
  if (!live_get(&p->live, ev->id, &e, &ref)) {
    p->summary.unknown_ids++;
    return;
  }
  ProfileCounts *site = &p->sites[site_of_stack(p, e.stack)].counts;
  col_sub(&p->col[C_LIVE_B], e.stack, 1);
  col_sub(&p->col[C_LIVE_S], e.stack, e.samples);
  site->live_blocks--, site->live_samples -= e.samples;
  p->totals.live_blocks--, p->totals.live_samples -= e.samples;
  bool old = !e.minor || e.promoted;
  if (old && p->allocated_since_gc) {  // a new major collection
    p->gc_prev_us = p->gc_cur_us;
    p->gc_cur_us = ev->dtime_us;
    p->gc_count++;
    p->allocated_since_gc = false;
  }
  record_end(p, &e, ev->dtime_us, p->gc_prev_us, false);
  live_remove(&p->live, ref);
}

// A live entry's birth from the births of the ids listed (births kept
// apart: ProfileOptions.birth_ids); 0 for an id not listed.
static void birth_of(const Profile *p, LiveEntry *e) {
  if (!p->births) return;
  uint64_t lo = 0, hi = p->opts.n_birth_ids;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (p->opts.birth_ids[mid] < e->id) lo = mid + 1;
    else hi = mid;
  }
  bool listed = lo < p->opts.n_birth_ids && p->opts.birth_ids[lo] == e->id;
  e->birth_us = listed ? p->births[lo].us : 0;
  e->birth_clock = listed ? p->births[lo].clock : e->samples;   // a birth clock of 0 once its samples are taken off
}

bool profile_live_block(const Profile *p, uint64_t id, ProfileSurvivor *out) {
  if (p->finished || p->opts.allocations_only) return false;
  LiveEntry e;
  LiveRef ref;
  if (!live_get((LiveTable *)&p->live, id, &e, &ref)) return false;
  birth_of(p, &e);
  *out = (ProfileSurvivor){e.id, e.samples, e.birth_us, e.birth_clock - e.samples, e.stack};
  return true;
}

// --at: the live counts of now kept as the at counts (profile_stack_counts
// reads the live ones as at without --at).
static void snapshot(Profile *p) {
  if (p->opts.at_set)
    for (int k = 0; k < 2; k++) {
      const Column *from = &p->col[C_LIVE_B + k];
      for (uint32_t i = 0; i < p->n_stacks; i++) {
        uint64_t v = col_get(from, i);
        if (v) col_add(p, &p->col[C_AT_B + k], i, v);
      }
    }
  for (uint32_t i = 0; i < p->n_sites; i++) {
    ProfileCounts *c = &p->sites[i].counts;
    c->at_blocks = c->live_blocks, c->at_samples = c->live_samples;
  }
  p->totals.at_blocks = p->totals.live_blocks, p->totals.at_samples = p->totals.live_samples;
}

// The allocation clock at which window w ends (w < K).
static uint64_t boundary(const Profile *p, uint32_t w) {
  uint64_t total = p->opts.clock_total, k = p->opts.windows;
  return total / k * w + total % k * w / k;
}

// The --at snapshot and the windows' checkpoints that fall before `ev`.
static void before_event(Profile *p, const TraceEvent *ev) {
  if (p->opts.at_set && !p->summary.at_taken && ev->dtime_us > p->opts.at_us) {
    snapshot(p);
    p->summary.at_taken = true;
  }
  while (p->window && p->window < p->opts.windows && p->summary.clock >= boundary(p, p->window)) {
    p->checkpoint_us[p->window] = p->summary.last_us;
    p->checkpoint_clock[p->window] = p->summary.clock;
    p->window++;
  }
}

void profile_event(Profile *p, const TraceEvent *ev) {
  if (!p->ok || p->finished) return;
  if (p->opts.before_event) p->opts.before_event(p->opts.hook_ctx, p, ev);
  before_event(p, ev);
  ProfileSummary *s = &p->summary;
  if (s->allocs + s->promotes + s->collects == 0) s->first_us = ev->dtime_us;
  s->last_us = ev->dtime_us;
  switch (ev->kind) {
    case TRACE_EVENT_ALLOC: s->allocs++, on_alloc(p, ev); break;
    case TRACE_EVENT_PROMOTE: s->promotes++; if (!p->opts.allocations_only) on_promote(p, ev); break;
    case TRACE_EVENT_COLLECT: s->collects++; if (!p->opts.allocations_only) on_collect(p, ev); break;
  }
}

TraceReaderStatus profile_read(Profile *p, Progress *progress) {
  TraceEvent ev;
  TraceReaderStatus status;
  uint32_t tick = 0;
  while ((status = trace_reader_next(p->reader, &ev)) == TRACE_READER_EVENT) {
    profile_event(p, &ev);
    if (progress && ++tick == 1u << 16) {
      tick = 0;
      const ProfileSummary *s = &p->summary;
      progress_update(progress, ev.offset, s->allocs + s->promotes + s->collects);
    }
  }
  return status;
}

static void flush_live(void *ctx, const LiveEntry *e) {
  Profile *p = ctx;
  record_end(p, e, p->summary.last_us, p->gc_cur_us, true);
  if (p->opts.on_survivor) {
    LiveEntry b = *e;
    birth_of(p, &b);
    ProfileSurvivor s = {b.id, b.samples, b.birth_us, b.birth_clock - b.samples, b.stack};
    p->opts.on_survivor(p->opts.survivor_ctx, &s);
  }
}

void profile_finish(Profile *p) {
  if (p->finished) return;
  if (!p->summary.at_taken) snapshot(p);
  uint32_t k = p->opts.windows;
  for (uint32_t w = p->window ? p->window : k + 1; w <= k; w++) {
    p->checkpoint_us[w] = p->summary.last_us;
    p->checkpoint_clock[w] = p->summary.clock;
  }
  // What only reading needed goes: a diff holds two profiles at once. The
  // trie's indexes before the live set is flushed (flush_live reads the
  // stacks, their leaves' codes and the sites, nothing of them), so that
  // they and what on_survivor gathers are never held together.
  free(p->kid);
  free(p->sib);
  free(p->wide_bits);
  free(p->wide.slots);
  free(p->path);
  free(p->code_index.slots);
  free(p->site_index.slots);
  p->kid = p->sib = NULL, p->wide_bits = NULL, p->wide.slots = NULL, p->path = NULL, p->code_index.slots = NULL;
  p->site_index.slots = NULL;
  live_each(&p->live, flush_live, p);
  p->finished = true;
  live_free(&p->live);
  free(p->births);
  p->births = NULL;
}

// ---------------------------------------------------------------- creation

// "minor_words=N" (Minnow) or "s=N" with an optional k/M/G suffix (OCaml's
// OCAMLRUNPARAM) in the runtime params; 0 when neither is there.
static uint64_t minor_heap_words(const char *params) {
  for (const char *s = params; s && *s;) {
    size_t key = strcspn(s, "=, ");
    if (s[key] == '=' && ((key == 11 && strncmp(s, "minor_words", 11) == 0) || (key == 1 && s[0] == 's'))) {
      char *end;
      unsigned long long v = strtoull(s + key + 1, &end, 10);
      if (*end == 'k') v <<= 10;
      else if (*end == 'M') v <<= 20;
      else if (*end == 'G') v <<= 30;
      return v;
    }
    s += key;
    s += strcspn(s, ", ");
    s += strspn(s, ", ");
  }
  return 0;
}

Profile *profile_new(TraceReader *r, const ProfileOptions *opts) {
  Profile *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  const TraceReaderInfo *info = trace_reader_info(r);
  p->reader = r;
  p->opts = *opts;
  // What needs the blocks' deaths reads everything (profile.h).
  if (p->opts.lifetimes || p->opts.windows || p->opts.at_set) p->opts.allocations_only = false;
  if (!p->opts.clock_total) p->opts.windows = 0;
  p->rate = info->sample_rate;
  p->word_bytes = info->word_size >= 8 ? info->word_size / 8 : 8;
  p->sample_bytes = p->word_bytes / p->rate;
  p->ok = true;
  p->summary.minor_heap_words = minor_heap_words(info->runtime_params);
  p->cut_root = PROFILE_NONE;
  for (uint32_t w = 0; w < SMALL_BLOCKS; w++) p->small_weight[w] = stats_block_weight(w, p->rate);
  // The root: no frame (its code, 0, names the site of an empty callstack).
  uint32_t root_code = id_table_init(&p->code_index, 256) ? code_ix_of(p, 0) : UINT32_MAX;
  if (root_code != UINT32_MAX && nodes_reserve(p, 1)) {
    p->parent[0] = PROFILE_NONE;
    p->code_ix[0] = root_code;
    p->stack_of[0] = p->kid[0] = p->sib[0] = PROFILE_NONE;
    p->n_nodes = 1;
  }
  p->window = p->opts.windows ? 1 : 0;
  p->gc_prev_us = p->gc_cur_us = LIVE_NEVER;
  if (p->opts.windows) {
    p->checkpoint_us = calloc(p->opts.windows + 1, sizeof *p->checkpoint_us);
    p->checkpoint_clock = calloc(p->opts.windows + 1, sizeof *p->checkpoint_clock);
  }
  bool apart = p->opts.birth_ids && !p->opts.lifetimes && !p->opts.windows;   // births kept apart
  if (apart) p->births = calloc(p->opts.n_birth_ids ? p->opts.n_birth_ids : 1, sizeof *p->births);
  if (apart && !p->births) p->ok = false;
  unsigned extra = (p->opts.lifetimes || (p->opts.on_survivor && !apart) ? LIVE_LIFETIMES : 0) |
                   (p->opts.windows ? LIVE_WINDOWS : 0);
  bool ok = p->ok && p->n_nodes == 1 && id_table_init(&p->site_index, 256) && live_init(&p->live, extra) &&
            (!p->opts.windows || (p->checkpoint_us && p->checkpoint_clock));
  if (!ok) {
    profile_free(p);
    return NULL;
  }
  return p;
}

void profile_free(Profile *p) {
  if (!p) return;
  free(p->births);
  for (uint32_t i = 0; i < p->n_sites; i++) {
    free(p->extras[i].lifetimes);
    free(p->extras[i].windows);
  }
  free(p->parent);
  free(p->code_ix);
  free(p->stack_of);
  free(p->kid);
  free(p->sib);
  free(p->wide_bits);
  free(p->wide.slots);
  free(p->codes);
  free(p->code_index.slots);
  free(p->leaf);
  free(p->objects);
  for (int k = 0; k < N_COLUMNS; k++) free(p->col[k].narrow), free(p->col[k].wide);
  free(p->sites);
  free(p->extras);
  free(p->site_index.slots);
  free(p->path);
  live_free(&p->live);
  free(p->checkpoint_us);
  free(p->checkpoint_clock);
  free(p);
}

// ---------------------------------------------------------------- reading

bool profile_ok(const Profile *p) { return p->ok; }

const char *profile_error(const Profile *p) { return trace_reader_error(p->reader)->message; }
const ProfileCut *profile_cut(const Profile *p) { return &p->cut; }
const TraceReader *profile_reader(const Profile *p) { return p->reader; }
double profile_rate(const Profile *p) { return p->rate; }
uint32_t profile_word_bytes(const Profile *p) { return p->word_bytes; }
double profile_sample_bytes(const Profile *p) { return p->sample_bytes; }

Tally profile_tally(const Profile *p, uint64_t samples) {
  Tally t = tally_empty(p->sample_bytes);
  tally_add(&t, samples, p->sample_bytes);
  return t;
}

uint32_t profile_n_nodes(const Profile *p) { return p->n_nodes; }
uint32_t profile_n_stacks(const Profile *p) { return p->n_stacks; }
uint32_t profile_n_sites(const Profile *p) { return p->n_sites; }
ProfileNodeId profile_node_parent(const Profile *p, ProfileNodeId id) { return p->parent[id]; }
uint64_t profile_node_code(const Profile *p, ProfileNodeId id) { return p->codes[p->code_ix[id]].code; }
ProfileStackId profile_node_stack(const Profile *p, ProfileNodeId id) { return p->stack_of[id]; }
ProfileNodeId profile_stack_leaf(const Profile *p, ProfileStackId id) { return p->leaf[id]; }
ProfileSiteId profile_stack_site(const Profile *p, ProfileStackId id) { return site_of_stack(p, id); }

ProfileCounts profile_stack_counts(const Profile *p, ProfileStackId id) {
  const Column *c = p->col;
  ProfileCounts k = {col_get(&c[C_BLOCKS], id),       col_get(&c[C_SAMPLES], id),     p->objects[id],
                     col_get(&c[C_MAJOR_B], id),      col_get(&c[C_MAJOR_S], id),     col_get(&c[C_PROMOTED_B], id),
                     col_get(&c[C_PROMOTED_S], id),   col_get(&c[C_LIVE_B], id),      col_get(&c[C_LIVE_S], id),
                     col_get(&c[C_AT_B], id),         col_get(&c[C_AT_S], id)};
  if (!p->opts.at_set) k.at_blocks = k.live_blocks, k.at_samples = k.live_samples;
  return k;
}
const ProfileSite *profile_site(const Profile *p, ProfileSiteId id) { return &p->sites[id]; }
const ProfileCounts *profile_totals(const Profile *p) { return &p->totals; }
const ProfileSummary *profile_summary(const Profile *p) { return &p->summary; }

const ProfileLifetimes *profile_site_lifetimes(const Profile *p, ProfileSiteId id) {
  return p->extras[id].lifetimes;
}

const uint64_t *profile_site_windows(const Profile *p, ProfileSiteId id) { return p->extras[id].windows; }
uint32_t profile_windows(const Profile *p) { return p->opts.windows; }
uint64_t profile_checkpoint_time(const Profile *p, uint32_t k) { return p->checkpoint_us[k]; }
uint64_t profile_checkpoint_clock(const Profile *p, uint32_t k) { return p->checkpoint_clock[k]; }
uint64_t profile_proof_horizon(const Profile *p) { return p->gc_count ? p->gc_cur_us : p->summary.last_us; }
uint64_t profile_major_collections(const Profile *p) { return p->gc_count; }

// The key of a stack: its frames' keys combined from the root.
static const uint64_t ROOT_KEY = 0x7007;

uint64_t profile_stack_key(const Profile *p, ProfileStackId s, ProfileBy by) {
  const ProfileSite *site = &p->sites[site_of_stack(p, s)];
  switch (by) {
    case PROFILE_BY_SITE: return site->key_site;
    case PROFILE_BY_FUNCTION: return site->key_function;
    case PROFILE_BY_FILE: return site->key_file;
    case PROFILE_BY_STACK: break;
  }
  uint32_t depth = 0;
  for (ProfileNodeId n = p->leaf[s]; n != 0; n = p->parent[n]) depth++;
  ProfileNodeId *path = malloc(((size_t)depth + 1) * sizeof *path);
  if (!path) return 0;
  uint32_t k = depth;
  for (ProfileNodeId n = p->leaf[s]; n != 0; n = p->parent[n]) path[--k] = n;
  uint64_t key = ROOT_KEY;
  for (k = 0; k < depth; k++) key = hash_combine(key, p->codes[p->code_ix[path[k]]].key);
  free(path);
  return key;
}

int profile_node_locations(const Profile *p, ProfileNodeId n, const TraceReaderLocation **locs) {
  if (n == 0) {
    *locs = NULL;
    return 0;
  }
  return code_locations(p->reader, p->codes[p->code_ix[n]].code, locs);
}

uint32_t profile_hist_bucket(uint64_t v) {
  if (v < 4) return (uint32_t)v;
  uint32_t e = 63 - (uint32_t)__builtin_clzll(v);
  return 4 + (e - 2) * PROFILE_HIST_SUB + (uint32_t)((v >> (e - 2)) & 3);
}

double profile_hist_value(uint32_t bucket) {
  if (bucket < 4) return bucket;
  if (bucket >= PROFILE_HIST_ALIVE) return INFINITY;
  uint32_t e = (bucket - 4) / PROFILE_HIST_SUB + 2, sub = (bucket - 4) % PROFILE_HIST_SUB;
  return (4.5 + sub) * (double)(1ull << (e - 2));
}

void profile_counts_add(ProfileCounts *a, const ProfileCounts *b) {
  a->blocks += b->blocks, a->samples += b->samples, a->objects += b->objects;
  a->major_blocks += b->major_blocks, a->major_samples += b->major_samples;
  a->promoted_blocks += b->promoted_blocks, a->promoted_samples += b->promoted_samples;
  a->live_blocks += b->live_blocks, a->live_samples += b->live_samples;
  a->at_blocks += b->at_blocks, a->at_samples += b->at_samples;
}

// ---------------------------------------------------------------- groups

void profile_groups_free(ProfileGroups *g) {
  if (!g) return;
  free(g->rows);
  free(g->of_stack);
  free(g->of_site);
  free(g->counts);
  free(g->next);
  free(g->head);
  free(g);
}

// The row of `key` in g (made when new, `first` its first stack), through
// `index` (slots + 1 = row + 1, a power of two of them, at most half full).
static uint32_t row_of(ProfileGroups *g, uint32_t *index, uint32_t mask, uint64_t key, ProfileStackId first) {
  uint32_t j = (uint32_t)(hash_mix(key) & mask);
  while (index[j] && g->rows[index[j] - 1].key != key) j = (j + 1) & mask;
  if (!index[j]) {
    g->rows[g->n] = (ProfileGroup){key, first, 0};
    index[j] = ++g->n;
  }
  return index[j] - 1;
}

ProfileGroups *profile_group(const Profile *p, ProfileBy by) {
  ProfileGroups *g = calloc(1, sizeof *g);
  bool by_stack = by == PROFILE_BY_STACK;
  uint32_t n_keys = by_stack ? p->n_stacks : p->n_sites, slots = 16;
  while (slots < 2 * (uint64_t)n_keys + 2) slots *= 2;
  uint32_t *index = g ? calloc(slots, sizeof *index) : NULL;  // row + 1
  uint64_t *keys = by_stack ? malloc(((size_t)p->n_nodes + 1) * sizeof *keys) : NULL;
  if (g) {
    g->by = by;
    g->rows = malloc(((size_t)n_keys + 1) * sizeof *g->rows);
    g->of_stack = malloc(((size_t)p->n_stacks + 1) * sizeof *g->of_stack);
    g->of_site = malloc(((size_t)p->n_sites + 1) * sizeof *g->of_site);
    if (by_stack) g->next = malloc(((size_t)p->n_stacks + 1) * sizeof *g->next);
    else g->counts = calloc((size_t)n_keys + 1, sizeof *g->counts);
  }
  if (!index || !g->rows || !g->of_stack || !g->of_site || (by_stack ? !g->next || !keys : !g->counts)) {
    free(index);
    free(keys);
    profile_groups_free(g);
    return NULL;
  }
  for (uint32_t i = 0; i < p->n_sites; i++) g->of_site[i] = PROFILE_NONE;
  if (by_stack) {
    // Every node's key from its parent's (parents come first), once.
    keys[0] = ROOT_KEY;
    for (ProfileNodeId n = 1; n < p->n_nodes; n++) keys[n] = hash_combine(keys[p->parent[n]], p->codes[p->code_ix[n]].key);
    for (ProfileStackId s = 0; s < p->n_stacks; s++) g->of_stack[s] = row_of(g, index, slots - 1, keys[p->leaf[s]], s);
    free(keys);
    if (!(g->head = malloc(((size_t)g->n + 1) * sizeof *g->head))) {
      free(index);
      profile_groups_free(g);
      return NULL;
    }
    for (uint32_t r = 0; r < g->n; r++) g->head[r] = PROFILE_NONE;
    for (ProfileStackId s = p->n_stacks; s-- > 0;) {
      uint32_t r = g->of_stack[s];
      g->next[s] = g->head[r];
      g->head[r] = s;
    }
  } else {
    for (ProfileSiteId i = 0; i < p->n_sites; i++) {
      const ProfileSite *site = &p->sites[i];
      uint64_t key = by == PROFILE_BY_SITE ? site->key_site : by == PROFILE_BY_FUNCTION ? site->key_function : site->key_file;
      uint32_t r = row_of(g, index, slots - 1, key, PROFILE_NONE);
      g->of_site[i] = r;
      profile_counts_add(&g->counts[r], &site->counts);
    }
    for (ProfileStackId s = 0; s < p->n_stacks; s++) g->of_stack[s] = g->of_site[site_of_stack(p, s)];
  }
  // Each row's stack count and the stack of the most samples (the first such).
  const Column *samples = &p->col[C_SAMPLES];
  for (ProfileStackId s = 0; s < p->n_stacks; s++) {
    ProfileGroup *row = &g->rows[g->of_stack[s]];
    if (row->first == PROFILE_NONE || col_get(samples, s) > col_get(samples, row->first)) row->first = s;
    row->n_stacks++;
  }
  free(index);
  return g;
}

ProfileCounts profile_group_counts(const Profile *p, const ProfileGroups *g, uint32_t row) {
  if (g->counts) return g->counts[row];
  ProfileCounts c = {0};
  for (ProfileStackId s = g->head[row]; s != PROFILE_NONE; s = g->next[s]) {
    ProfileCounts k = profile_stack_counts(p, s);
    profile_counts_add(&c, &k);
  }
  return c;
}
