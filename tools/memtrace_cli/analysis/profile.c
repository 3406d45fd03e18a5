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

#include "../base/hash.h"
#include "../base/progress.h"
#include "live.h"

// ---------------------------------------------------------------- types

typedef struct IdTable {
  uint32_t *slots;       // ids + 1; 0 is empty
  uint32_t mask, used;
} IdTable;

// The children of a node last looked up through it, most recent first. Node
// ids are given in the order a first walk meets them (depth first, as
// programs recurse), and later walks tend to repeat that order, so kids[]
// is read nearly sequentially where a hash table would be read at random.
enum { KIDS = 4 };
typedef struct Kids {
  uint64_t code[KIDS];
  ProfileNodeId id[KIDS];   // PROFILE_NONE: empty
} Kids;


// Frame code -> hash_code(code): computed once per code, not per node.
typedef struct CodeKey {
  uint64_t code, key;
  bool used;
} CodeKey;

enum { SMALL_BLOCKS = 256 };  // blocks below this many words have their weight in a table

typedef struct SiteExtra {
  ProfileLifetimes *lifetimes;
  uint64_t *windows;
} SiteExtra;

struct Profile {
  TraceReader *reader;
  ProfileOptions opts;
  double rate, sample_bytes;
  uint32_t word_bytes;
  bool ok;

  ProfileNode *nodes;
  uint32_t n_nodes, cap_nodes, cap_stack_of, cap_kids;
  Kids *kids;                  // per node
  ProfileStackId *stack_of;    // per node: nodes[i].stack, kept apart (dense, hot)
  ProfileNodeId *node_slots;   // (parent, code) -> node, PROFILE_NONE empty; the kids
  uint32_t node_mask;          // caches answer most lookups before it
  CodeKey *code_keys;
  uint32_t code_mask, n_code_keys;
  double small_weight[SMALL_BLOCKS];   // stats_block_weight(w, rate) for w < SMALL_BLOCKS

  ProfileStack *stacks;
  uint32_t n_stacks, cap_stacks;

  ProfileSite *sites;
  SiteExtra *extras;
  uint32_t n_sites, cap_sites, cap_extras;
  IdTable site_index;          // location (or code) -> site

  ProfileNodeId *path;         // the previous allocation's nodes, outermost first
  uint32_t path_len, path_cap;

  LiveTable live;

  ProfileCounts totals;
  ProfileSummary summary;
  bool finished;
  char limit_error[TRACE_READER_ERROR_MAX];  // set when PROFILE_MAX_NODES stopped it

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

// The key of a frame: its locations, or its code when it has none.
static uint64_t hash_code(const TraceReader *r, uint64_t code) {
  const TraceReaderLocation *locs;
  int n = trace_reader_locations(r, code, &locs);
  if (n <= 0) return hash_combine(0x5eed, code);
  uint64_t h = 0x10c;
  for (int i = 0; i < n; i++) h = hash_combine(h, hash_location(&locs[i]));
  return h;
}

// ---------------------------------------------------------------- memory

static void *grow(Profile *p, void *ptr, uint32_t *cap, size_t elem, uint32_t need) {
  if (need <= *cap) return ptr;
  uint32_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  void *q = realloc(ptr, (size_t)c * elem);
  if (!q) {
    p->ok = false;
    return NULL;
  }
  *cap = c;
  return q;
}

static bool id_table_init(IdTable *t, uint32_t slots) {
  t->slots = calloc(slots, sizeof *t->slots);
  t->mask = slots - 1;
  t->used = 0;
  return t->slots != NULL;
}

// ---------------------------------------------------------------- trie

static uint64_t node_hash(ProfileNodeId parent, uint64_t code) { return hash_mix(code ^ ((uint64_t)parent << 40 | parent)); }

static bool code_keys_grow(Profile *p) {
  uint32_t n = 2 * (p->code_mask + 1);
  CodeKey *t = calloc(n, sizeof *t);
  if (!t) return p->ok = false;
  for (uint32_t i = 0; i <= p->code_mask; i++) {
    if (!p->code_keys[i].used) continue;
    uint64_t j = hash_mix(p->code_keys[i].code) & (n - 1);
    while (t[j].used) j = (j + 1) & (n - 1);
    t[j] = p->code_keys[i];
  }
  free(p->code_keys);
  p->code_keys = t;
  p->code_mask = n - 1;
  return true;
}

static uint64_t code_key(Profile *p, uint64_t code) {
  uint64_t j = hash_mix(code) & p->code_mask;
  for (; p->code_keys[j].used; j = (j + 1) & p->code_mask)
    if (p->code_keys[j].code == code) return p->code_keys[j].key;
  uint64_t key = hash_code(p->reader, code);
  p->code_keys[j] = (CodeKey){code, key, true};
  if (2 * ++p->n_code_keys > p->code_mask) code_keys_grow(p);
  return key;
}

static ProfileNodeId *empty_node_slots(uint32_t n) {
  ProfileNodeId *s = malloc((size_t)n * sizeof *s);
  for (uint32_t i = 0; s && i < n; i++) s[i] = PROFILE_NONE;
  return s;
}

static bool node_slots_grow(Profile *p) {
  uint32_t n = 2 * (p->node_mask + 1);
  ProfileNodeId *s = empty_node_slots(n);
  if (!s) return p->ok = false;
  for (uint32_t i = 0; i <= p->node_mask; i++) {
    ProfileNodeId id = p->node_slots[i];
    if (id == PROFILE_NONE) continue;
    uint64_t j = node_hash(p->nodes[id].parent, p->nodes[id].code) & (n - 1);
    while (s[j] != PROFILE_NONE) j = (j + 1) & (n - 1);
    s[j] = id;
  }
  free(p->node_slots);
  p->node_slots = s;
  p->node_mask = n - 1;
  return true;
}

static void remember_kid(Kids *k, uint64_t code, ProfileNodeId id) {
  memmove(&k->code[1], &k->code[0], (KIDS - 1) * sizeof k->code[0]);
  memmove(&k->id[1], &k->id[0], (KIDS - 1) * sizeof k->id[0]);
  k->code[0] = code;
  k->id[0] = id;
}

static ProfileNodeId new_node(Profile *p, ProfileNodeId parent, uint64_t code) {
  if (p->n_nodes >= PROFILE_MAX_NODES) return PROFILE_NONE;  // the caller tells it from no memory
  ProfileNode *nodes = grow(p, p->nodes, &p->cap_nodes, sizeof *nodes, p->n_nodes + 1);
  if (nodes) p->nodes = nodes;
  ProfileStackId *stack_of = nodes ? grow(p, p->stack_of, &p->cap_stack_of, sizeof *stack_of, p->n_nodes + 1) : NULL;
  if (stack_of) p->stack_of = stack_of;
  Kids *kids = stack_of ? grow(p, p->kids, &p->cap_kids, sizeof *kids, p->n_nodes + 1) : NULL;
  if (!kids) return PROFILE_NONE;
  p->kids = kids;
  ProfileNodeId id = p->n_nodes++;
  const ProfileNode *up = &nodes[parent];
  nodes[id] = (ProfileNode){code, parent, up->depth + 1, hash_combine(up->stack_key, code_key(p, code)),
                            PROFILE_NONE};
  stack_of[id] = PROFILE_NONE;
  for (int i = 0; i < KIDS; i++) kids[id].id[i] = PROFILE_NONE;
  return id;
}

// The child of `parent` for `code`, created if new; PROFILE_NONE when out of memory.
static ProfileNodeId child(Profile *p, ProfileNodeId parent, uint64_t code) {
  Kids *k = &p->kids[parent];
  for (int i = 0; i < KIDS; i++)
    if (k->code[i] == code && k->id[i] != PROFILE_NONE) return k->id[i];
  uint64_t j = node_hash(parent, code) & p->node_mask;
  for (ProfileNodeId id; (id = p->node_slots[j]) != PROFILE_NONE; j = (j + 1) & p->node_mask)
    if (p->nodes[id].code == code && p->nodes[id].parent == parent) {
      remember_kid(k, code, id);
      return id;
    }
  ProfileNodeId id = new_node(p, parent, code);
  if (id == PROFILE_NONE) return PROFILE_NONE;
  remember_kid(&p->kids[parent], code, id);
  p->node_slots[j] = id;
  if (2 * (uint64_t)p->n_nodes > p->node_mask && !node_slots_grow(p)) return PROFILE_NONE;
  return id;
}

// Follows the allocation's backtrace from its common prefix on; the leaf.
static ProfileNodeId walk(Profile *p, const TraceEvent *ev) {
  uint32_t len = ev->backtrace_len, common = ev->common < p->path_len ? ev->common : p->path_len;
  // At least one slot: with none yet, grow would give back the NULL path
  // and a first allocation with an empty callstack would be dropped.
  ProfileNodeId *path = grow(p, p->path, &p->path_cap, sizeof *path, len ? len : 1);
  if (!path) return PROFILE_NONE;
  p->path = path;
  for (uint32_t i = common; i < len; i++) {
    ProfileNodeId n = child(p, i ? path[i - 1] : 0, ev->backtrace[i]);
    if (n == PROFILE_NONE) {
      if (p->n_nodes >= PROFILE_MAX_NODES)
        snprintf(p->limit_error, sizeof p->limit_error,
                 "byte %" PRIu64 ": the callstacks hold more than %u distinct frames (a frame under a given "
                 "caller), the tools' limit; the figures are of the events before it",
                 ev->offset, (unsigned)PROFILE_MAX_NODES);
      p->path_len = i;
      return PROFILE_NONE;
    }
    path[i] = n;
  }
  p->path_len = len;
  return len ? path[len - 1] : 0;
}

// ---------------------------------------------------------------- sites

typedef struct SiteKey {
  bool located;
  TraceReaderLocation loc;
  uint64_t code;
} SiteKey;

static SiteKey site_key_of(const Profile *p, uint64_t code) {
  const TraceReaderLocation *locs;
  int n = trace_reader_locations(p->reader, code, &locs);
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
  s->key_site = hash_location(&k->loc);
  s->key_file = hash_string(k->loc.file);
  s->key_function = hash_combine(hash_string(k->loc.function), s->key_file);
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
  ProfileSiteId site = site_of(p, p->nodes[leaf].code);
  if (site == PROFILE_NONE) return PROFILE_NONE;
  ProfileStack *stacks = grow(p, p->stacks, &p->cap_stacks, sizeof *stacks, p->n_stacks + 1);
  if (!stacks) return PROFILE_NONE;
  p->stacks = stacks;
  ProfileStackId id = p->n_stacks++;
  stacks[id] = (ProfileStack){.leaf = leaf, .site = site};
  p->nodes[leaf].stack = p->stack_of[leaf] = id;
  return id;
}

// ---------------------------------------------------------------- counting

// The three sets of counters an event updates: its stack's, its site's, the totals.
typedef struct Targets {
  ProfileCounts *c[3];
} Targets;

static Targets targets(Profile *p, ProfileStackId s) {
  return (Targets){{&p->stacks[s].counts, &p->sites[p->stacks[s].site].counts, &p->totals}};
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
  uint64_t old = e->minor ? e->promoted_us : e->birth_us;
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
  uint64_t *m = windows_of(p, p->stacks[e->stack].site);
  if (m) m[(size_t)e->window * (k + 2) + d] += e->samples;
}

// A block leaves the live set: collected at now_us (alive = false), or still
// alive at the end (alive = true); survived_gc_us: the last major collection
// it lived through (LIVE_NEVER: none seen).
static void record_end(Profile *p, const LiveEntry *e, uint64_t now_us, uint64_t survived_gc_us, bool alive) {
  if (p->opts.lifetimes) {
    ProfileLifetimes *l = lifetimes_of(p, p->stacks[e->stack].site);
    if (l && alive) {
      l->time_us[PROFILE_HIST_ALIVE] += e->samples;
      l->clock[PROFILE_HIST_ALIVE] += e->samples;
    } else if (l) {
      l->time_us[profile_hist_bucket(now_us - e->birth_us)] += e->samples;
      l->clock[profile_hist_bucket(p->summary.clock - e->birth_clock)] += e->samples;
      if (e->minor && e->promoted_us == LIVE_NEVER) {
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
    LiveEntry e = {ev->id, n, ev->dtime_us, p->summary.clock, LIVE_NEVER, s, (uint16_t)p->window, false, minor};
    LiveInsert added = live_insert(&p->live, &e);
    if (added != LIVE_OK) {
      if (added == LIVE_NO_MEMORY) p->ok = false;
      else p->summary.unknown_ids++;  // an id allocated twice
      return;
    }
  }
  double weight = ev->length < SMALL_BLOCKS ? p->small_weight[ev->length] : stats_block_weight(ev->length, p->rate);
  Targets t = targets(p, s);
  for (int i = 0; i < 3; i++) {
    ProfileCounts *c = t.c[i];
    c->blocks++, c->samples += n, c->objects += weight;
    if (tracked) c->live_blocks++, c->live_samples += n;
    if (!minor) c->major_blocks++, c->major_samples += n;
  }
}

static void on_promote(Profile *p, const TraceEvent *ev) {
  LiveEntry *e = live_find(&p->live, ev->id);
  if (!e) {
    p->summary.unknown_ids++;
    return;
  }
  if (e->promoted) return;
  e->promoted = true;
  e->promoted_us = ev->dtime_us;
  Targets t = targets(p, e->stack);
  for (int i = 0; i < 3; i++) t.c[i]->promoted_blocks++, t.c[i]->promoted_samples += e->samples;
}

static void on_collect(Profile *p, const TraceEvent *ev) {
  LiveEntry *e = live_find(&p->live, ev->id);
  if (!e) {
    p->summary.unknown_ids++;
    return;
  }
  Targets t = targets(p, e->stack);
  for (int i = 0; i < 3; i++) {
    ProfileCounts *c = t.c[i];
    c->live_blocks--, c->live_samples -= e->samples;
  }
  bool old = !e->minor || e->promoted;
  if (old && p->allocated_since_gc) {  // a new major collection
    p->gc_prev_us = p->gc_cur_us;
    p->gc_cur_us = ev->dtime_us;
    p->gc_count++;
    p->allocated_since_gc = false;
  }
  record_end(p, e, ev->dtime_us, p->gc_prev_us, false);
  live_remove(&p->live, e);
}

static void snapshot(Profile *p) {
  for (uint32_t i = 0; i < p->n_stacks; i++) {
    ProfileCounts *c = &p->stacks[i].counts;
    c->at_blocks = c->live_blocks, c->at_samples = c->live_samples;
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
  if (!p->ok || p->finished || p->limit_error[0]) return;
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
    if (p->limit_error[0]) return TRACE_READER_ERROR;
    if (progress && ++tick == 1u << 16) {
      tick = 0;
      const ProfileSummary *s = &p->summary;
      progress_update(progress, ev.offset, s->allocs + s->promotes + s->collects);
    }
  }
  return status;
}

static void flush_live(void *ctx, LiveEntry *e) {
  Profile *p = ctx;
  record_end(p, e, p->summary.last_us, p->gc_cur_us, true);
  if (p->opts.on_survivor) {
    ProfileSurvivor s = {e->id, e->samples, e->birth_us, e->birth_clock - e->samples, e->stack};
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
  live_each(&p->live, flush_live, p);
  p->finished = true;
  // What only reading needed goes: a diff holds two profiles at once.
  live_free(&p->live);
  free(p->kids);
  free(p->node_slots);
  free(p->stack_of);
  free(p->path);
  free(p->code_keys);
  free(p->site_index.slots);
  p->kids = NULL, p->node_slots = NULL, p->stack_of = NULL, p->path = NULL, p->code_keys = NULL;
  p->site_index.slots = NULL;
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
  p->nodes = malloc(256 * sizeof *p->nodes);
  p->stack_of = malloc(256 * sizeof *p->stack_of);
  p->kids = malloc(256 * sizeof *p->kids);
  p->cap_nodes = p->cap_stack_of = p->cap_kids = 256;
  p->node_slots = empty_node_slots(1024);
  p->node_mask = 1023;
  p->code_keys = calloc(256, sizeof *p->code_keys);
  p->code_mask = 255;
  for (uint32_t w = 0; w < SMALL_BLOCKS; w++) p->small_weight[w] = stats_block_weight(w, p->rate);
  if (p->nodes && p->stack_of && p->kids) {
    p->nodes[0] = (ProfileNode){0, PROFILE_NONE, 0, 0x7007, PROFILE_NONE};
    p->stack_of[0] = PROFILE_NONE;
    for (int i = 0; i < KIDS; i++) p->kids[0].id[i] = PROFILE_NONE;
    p->n_nodes = 1;
  }
  p->window = p->opts.windows ? 1 : 0;
  p->gc_prev_us = p->gc_cur_us = LIVE_NEVER;
  if (p->opts.windows) {
    p->checkpoint_us = calloc(p->opts.windows + 1, sizeof *p->checkpoint_us);
    p->checkpoint_clock = calloc(p->opts.windows + 1, sizeof *p->checkpoint_clock);
  }
  bool ok = p->nodes && p->stack_of && p->kids && p->node_slots && p->code_keys && id_table_init(&p->site_index, 256) &&
            live_init(&p->live) && (!p->opts.windows || (p->checkpoint_us && p->checkpoint_clock));
  if (!ok) {
    profile_free(p);
    return NULL;
  }
  return p;
}

void profile_free(Profile *p) {
  if (!p) return;
  for (uint32_t i = 0; i < p->n_sites; i++) {
    free(p->extras[i].lifetimes);
    free(p->extras[i].windows);
  }
  free(p->nodes);
  free(p->stack_of);
  free(p->kids);
  free(p->node_slots);
  free(p->code_keys);
  free(p->stacks);
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

const char *profile_error(const Profile *p) {
  return p->limit_error[0] ? p->limit_error : trace_reader_error(p->reader)->message;
}
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
const ProfileNode *profile_node(const Profile *p, ProfileNodeId id) { return &p->nodes[id]; }
const ProfileStack *profile_stack(const Profile *p, ProfileStackId id) { return &p->stacks[id]; }
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

uint64_t profile_stack_key(const Profile *p, ProfileStackId s, ProfileBy by) {
  const ProfileSite *site = &p->sites[p->stacks[s].site];
  switch (by) {
    case PROFILE_BY_SITE: return site->key_site;
    case PROFILE_BY_FUNCTION: return site->key_function;
    case PROFILE_BY_FILE: return site->key_file;
    case PROFILE_BY_STACK: break;
  }
  return p->nodes[p->stacks[s].leaf].stack_key;
}

int profile_node_locations(const Profile *p, ProfileNodeId n, const TraceReaderLocation **locs) {
  if (n == 0) {
    *locs = NULL;
    return 0;
  }
  return trace_reader_locations(p->reader, p->nodes[n].code, locs);
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
  free(g);
}

ProfileGroups *profile_group(const Profile *p, ProfileBy by) {
  ProfileGroups *g = calloc(1, sizeof *g);
  uint32_t slots = 16;
  while (slots < 2 * p->n_stacks + 2) slots *= 2;
  uint32_t *index = g ? calloc(slots, sizeof *index) : NULL;  // row + 1
  if (g) {
    g->by = by;
    g->rows = malloc(((size_t)p->n_stacks + 1) * sizeof *g->rows);
    g->of_stack = malloc(((size_t)p->n_stacks + 1) * sizeof *g->of_stack);
    g->of_site = malloc(((size_t)p->n_sites + 1) * sizeof *g->of_site);
  }
  if (!index || !g->rows || !g->of_stack || !g->of_site) {
    free(index);
    profile_groups_free(g);
    return NULL;
  }
  for (uint32_t i = 0; i < p->n_sites; i++) g->of_site[i] = PROFILE_NONE;
  for (ProfileStackId s = 0; s < p->n_stacks; s++) {
    uint64_t key = profile_stack_key(p, s, by);
    uint32_t j = (uint32_t)(hash_mix(key) & (slots - 1));
    while (index[j] && g->rows[index[j] - 1].key != key) j = (j + 1) & (slots - 1);
    if (!index[j]) {
      g->rows[g->n] = (ProfileGroup){key, s, 0, {0}};
      index[j] = ++g->n;
    }
    ProfileGroup *row = &g->rows[index[j] - 1];
    const ProfileCounts *c = &p->stacks[s].counts;
    if (c->samples > p->stacks[row->first].counts.samples) row->first = s;
    profile_counts_add(&row->counts, c);
    row->n_stacks++;
    g->of_stack[s] = index[j] - 1;
    if (by != PROFILE_BY_STACK) g->of_site[p->stacks[s].site] = index[j] - 1;
  }
  free(index);
  return g;
}
