// collapse.c - recursion folded into runs (collapse.h).
// 1. Two interning tables, open addressing at most half full: runs by
//    (parent, unit, count), units by their key sequence (keys and reps in two
//    parallel pools).
// 2. A push expands the tail (the last runs holding at most 2 * max_period
//    frames) once, and the suffix hashes S[c] of its last c frames, a
//    polynomial hash mod 2^64 of the mixed keys (S[c] = S[c-1] + v * B^(c-1)).
//    Each candidate fold is then tested in O(1): (a) at the run boundary c = p
//    frames from the end, the run before has a unit of p frames whose hash is
//    S[p]; (b) at the boundary c = 2p, S[2p] = S[p] * (B^p + 1) (the last 2p
//    frames read x x). A hash that matches is confirmed by comparing the keys,
//    so a collision costs a comparison, never a wrong fold. Covers grow with
//    the boundary's index, so one pass over p and the boundaries finds them.
// 3. c->steps counts frames expanded and keys compared: the work per push
//    that tests/unit/test_tool_collapse.c bounds.
#include "collapse.h"

#include <stdlib.h>
#include <string.h>

#include "../../../base/hash.h"
#include "../base/xalloc.h"

typedef struct Unit {
  uint32_t start, len;  // frames pool[start .. start + len)
  uint64_t hash;        // the table's hash of its keys
  uint64_t poly;        // poly_hash of its keys (2.)
} Unit;

typedef struct Table {
  uint32_t *slots;      // id + 1; 0 empty
  uint32_t mask, used;
} Table;

struct Collapse {
  uint32_t max_period;
  CollapseRun *runs;    // runs[0]: the empty stack
  uint32_t n_runs, cap_runs;
  Unit *units;
  uint32_t n_units, cap_units;
  uint64_t *keys;       // unit frames' keys
  uint32_t *reps;       // and reps
  uint32_t n_frames, cap_frames;
  Table run_table, unit_table;
  uint64_t pow[2 * COLLAPSE_MAX_PERIOD + 1];  // POLY_BASE^i
  uint64_t steps;       // frames expanded and keys compared (3.)
  bool sealed;          // collapse_seal: the tables are gone
};

#define POLY_BASE HASH_FNV_PRIME  // odd: x -> x * B^i is a bijection mod 2^64

// A frame's value in the polynomial hashes: its key, mixed (keys may be small
// or structured; the mix spreads them over 64 bits).
static uint64_t poly_value(uint64_t key) { return hash_mix(key ^ 0x9e3779b97f4a7c15ull); }

// sum over i of poly_value(keys[i]) * B^(n-1-i) mod 2^64.
static uint64_t poly_hash(const uint64_t *keys, uint32_t n) {
  uint64_t h = 0;
  for (uint32_t i = 0; i < n; i++) h = h * POLY_BASE + poly_value(keys[i]);
  return h;
}

static uint64_t run_hash(CollapseId parent, uint32_t unit, uint32_t count) {
  return hash_combine(hash_combine(hash_mix(parent), unit), count);
}

static uint64_t keys_hash(const uint64_t *keys, uint32_t n) {
  uint64_t h = 0x5eed;
  for (uint32_t i = 0; i < n; i++) h = hash_combine(h, keys[i]);
  return h;
}

static uint64_t stored_hash(const Collapse *c, const Table *t, uint32_t id) {
  if (t == &c->unit_table) return c->units[id].hash;
  const CollapseRun *r = &c->runs[id];
  return run_hash(r->parent, r->unit, r->count);
}

// Makes room for one more entry (rehashing from the stored hashes).
static void table_reserve(Collapse *c, Table *t) {
  if (t->slots && 2 * (t->used + 1) <= t->mask + 1) return;
  uint32_t n = t->slots ? 2 * (t->mask + 1) : 1024;
  uint32_t *slots = xcalloc(n, sizeof *slots);
  for (uint32_t i = 0; t->slots && i <= t->mask; i++) {
    if (!t->slots[i]) continue;
    uint64_t j = stored_hash(c, t, t->slots[i] - 1) & (n - 1);
    while (slots[j]) j = (j + 1) & (n - 1);
    slots[j] = t->slots[i];
  }
  free(t->slots);
  t->slots = slots;
  t->mask = n - 1;
}

Collapse *collapse_new(uint32_t max_period) {
  Collapse *c = xcalloc(1, sizeof *c);
  c->max_period = max_period > COLLAPSE_MAX_PERIOD ? COLLAPSE_MAX_PERIOD : max_period;
  c->pow[0] = 1;
  for (uint32_t i = 1; i <= 2 * COLLAPSE_MAX_PERIOD; i++) c->pow[i] = c->pow[i - 1] * POLY_BASE;
  c->runs = xrealloc(NULL, 1024 * sizeof *c->runs);
  c->cap_runs = 1024;
  c->runs[c->n_runs++] = (CollapseRun){0, UINT32_MAX, 0, 0};
  table_reserve(c, &c->run_table);
  table_reserve(c, &c->unit_table);
  return c;
}

void collapse_free(Collapse *c) {
  if (!c) return;
  free(c->runs);
  free(c->units);
  free(c->keys);
  free(c->reps);
  free(c->run_table.slots);
  free(c->unit_table.slots);
  free(c);
}

void collapse_seal(Collapse *c) {
  free(c->run_table.slots);
  free(c->unit_table.slots);
  c->run_table = c->unit_table = (Table){NULL, 0, 0};
  c->sealed = true;
}

// ---------------------------------------------------------------- units

// The unit of keys[0 .. n) (outermost first): its id, made when `make`
// (reps[0 .. n) then become its reps), else UINT32_MAX when there is none.
static uint32_t unit_of(Collapse *c, const uint64_t *keys, const uint32_t *reps, uint32_t n, bool make) {
  if (make) table_reserve(c, &c->unit_table);
  Table *t = &c->unit_table;
  uint64_t h = keys_hash(keys, n), j = h & t->mask;
  for (uint32_t v; (v = t->slots[j]); j = (j + 1) & t->mask) {
    const Unit *u = &c->units[v - 1];
    if (u->hash == h && u->len == n && memcmp(c->keys + u->start, keys, n * sizeof *keys) == 0) return v - 1;
  }
  if (!make) return UINT32_MAX;
  if (c->n_frames + n > c->cap_frames) {
    c->cap_frames = 2 * c->cap_frames + n + 1024;
    c->keys = xrealloc(c->keys, (size_t)c->cap_frames * sizeof *c->keys);
    c->reps = xrealloc(c->reps, (size_t)c->cap_frames * sizeof *c->reps);
  }
  if (c->n_units == c->cap_units) c->units = xrealloc(c->units, (c->cap_units = 2 * c->cap_units + 1024) * sizeof *c->units);
  memcpy(c->keys + c->n_frames, keys, n * sizeof *keys);
  memcpy(c->reps + c->n_frames, reps, n * sizeof *reps);
  c->units[c->n_units] = (Unit){c->n_frames, n, h, poly_hash(keys, n)};
  c->n_frames += n;
  t->slots[j] = ++c->n_units;
  t->used++;
  return c->n_units - 1;
}

uint32_t collapse_unit(const Collapse *c, uint32_t unit, const uint32_t **reps) {
  *reps = c->reps + c->units[unit].start;
  return c->units[unit].len;
}

// ---------------------------------------------------------------- runs

static CollapseId run_of(Collapse *c, CollapseId parent, uint32_t unit, uint32_t count) {
  table_reserve(c, &c->run_table);
  Table *t = &c->run_table;
  uint64_t j = run_hash(parent, unit, count) & t->mask;
  for (uint32_t v; (v = t->slots[j]); j = (j + 1) & t->mask) {
    const CollapseRun *r = &c->runs[v - 1];
    if (r->parent == parent && r->unit == unit && r->count == count) return v - 1;
  }
  if (c->n_runs == UINT32_MAX - 1) xalloc_fail();
  if (c->n_runs == c->cap_runs) c->runs = xrealloc(c->runs, (c->cap_runs *= 2) * sizeof *c->runs);
  c->runs[c->n_runs] = (CollapseRun){parent, unit, count, c->runs[parent].runs + 1};
  t->slots[j] = ++c->n_runs;
  t->used++;
  return c->n_runs - 1;
}

bool collapse_plain(const Collapse *c, CollapseId id) {
  return id != 0 && c->runs[id].count == 1 && c->units[c->runs[id].unit].len == 1;
}

const CollapseRun *collapse_run(const Collapse *c, CollapseId id) { return &c->runs[id]; }

uint32_t collapse_size(const Collapse *c) { return c->n_runs; }

uint64_t collapse_steps(const Collapse *c) { return c->steps; }

// Whether x[0 .. p) is no power of a shorter sequence (a unit is primitive:
// "g g" is g x2, never the unit (g g)).
static bool primitive(Collapse *c, const uint64_t *x, uint32_t p) {
  for (uint32_t d = 1; d < p; d++) {
    if (p % d) continue;
    bool power = true;
    for (uint32_t i = d; i < p && power; i++) power = x[i] == x[i - d], c->steps++;
    if (power) return false;
  }
  return true;
}

// Whether a[0 .. n) == b[0 .. n), counted in c->steps.
static bool same_keys(Collapse *c, const uint64_t *a, const uint64_t *b, uint32_t n) {
  c->steps += n;
  return memcmp(a, b, n * sizeof *a) == 0;
}

// The tail of a stack: its last runs that hold at most 2 * max_period
// frames in all, expanded. frames[0 .. n) (keys and reps, outermost first)
// end the stack; cover[j] frames are held by its last j + 1 runs, and
// before[j] is the run before those (0: none), for j < runs; suffix[c] is
// the polynomial hash of the last c frames, c <= n.
typedef struct Tail {
  uint64_t keys[2 * COLLAPSE_MAX_PERIOD];
  uint32_t reps[2 * COLLAPSE_MAX_PERIOD];
  uint32_t n;
  uint32_t cover[2 * COLLAPSE_MAX_PERIOD];
  CollapseId before[2 * COLLAPSE_MAX_PERIOD];
  uint32_t runs;
  uint64_t suffix[2 * COLLAPSE_MAX_PERIOD + 1];
} Tail;

// The tail of the runs `last` (not interned yet: a push makes one run only,
// so that every run is some stack's) then the runs of `parent`.
static void tail_of(Collapse *c, CollapseRun last, Tail *t) {
  uint32_t room = 2 * c->max_period;
  uint64_t keys[2 * COLLAPSE_MAX_PERIOD];  // innermost first, then reversed
  uint32_t reps[2 * COLLAPSE_MAX_PERIOD];
  t->n = t->runs = 0;
  t->suffix[0] = 0;
  for (const CollapseRun *r = &last;;) {
    const Unit *u = &c->units[r->unit];
    if ((uint64_t)u->len * r->count > room - t->n) break;
    for (uint32_t k = r->count; k-- > 0;)
      for (uint32_t f = u->len; f-- > 0; t->n++) {
        keys[t->n] = c->keys[u->start + f], reps[t->n] = c->reps[u->start + f];
        t->suffix[t->n + 1] = t->suffix[t->n] + poly_value(keys[t->n]) * c->pow[t->n];
      }
    t->cover[t->runs] = t->n;
    t->before[t->runs++] = r->parent;
    if (r->parent == 0) break;
    r = &c->runs[r->parent];
  }
  c->steps += t->n;
  for (uint32_t i = 0; i < t->n; i++) t->keys[i] = keys[t->n - 1 - i], t->reps[i] = reps[t->n - 1 - i];
}

// The rule of collapse.h on the runs `last` (made by step 1, not interned):
// the first fold that applies to their tail, or `last` itself, interned.
// For each p, (a) looks at the boundary p frames from the end and (b) at the
// one 2p frames from the end (comment 2.).
static CollapseId fold_tail(Collapse *c, CollapseRun last) {
  if (c->max_period >= 2) {
    Tail t;
    tail_of(c, last, &t);
    uint32_t ja = 0, jb = 0;  // the first boundaries at least p, 2p frames from the end
    for (uint32_t p = 2; p <= c->max_period && p <= t.n; p++) {
      const uint64_t *tail = t.keys + t.n - p;
      while (ja < t.runs && t.cover[ja] < p) ja++;
      if (ja < t.runs && t.cover[ja] == p && t.before[ja] != 0) {  // (a): one more of the unit before
        const CollapseRun *before = &c->runs[t.before[ja]];
        const Unit *u = &c->units[before->unit];
        if (u->len == p && u->poly == t.suffix[p] && same_keys(c, c->keys + u->start, tail, p))
          return run_of(c, before->parent, before->unit, before->count + 1);
      }
      while (jb < t.runs && t.cover[jb] < 2 * p) jb++;
      if (jb < t.runs && t.cover[jb] == 2 * p && t.suffix[2 * p] == t.suffix[p] * (c->pow[p] + 1) &&
          same_keys(c, tail - p, tail, p) && primitive(c, tail, p))  // (b): x x
        return run_of(c, t.before[jb], unit_of(c, tail - p, t.reps + t.n - 2 * p, p, true), 2);
    }
  }
  return run_of(c, last.parent, last.unit, last.count);
}

CollapseId collapse_push(Collapse *c, CollapseId at, uint64_t key, uint32_t rep) {
  if (c->sealed) abort();
  uint32_t single = unit_of(c, &key, &rep, 1, true);
  const CollapseRun *last = &c->runs[at];
  if (at != 0 && last->unit == single && c->max_period > 0)
    return fold_tail(c, (CollapseRun){last->parent, single, last->count + 1, 0});
  return fold_tail(c, (CollapseRun){at, single, 1, 0});
}
