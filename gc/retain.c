// retain.c - retaining paths: one shortest path from a GC root to each of a
// set of target blocks (memprof's sampled blocks still alive when a trace
// ends), with runs of the same hop collapsed. Contract in gc.h ("Retaining
// paths").
//
// 1. When. Right after gc_major: the minor heap is empty, every live block
//    is in the major heap and WHITE. The walk turns each block it reaches
//    BLACK and whitens them all again before returning, so the heap is left
//    as it was found (the invariant "no BLACK block outside a major GC").
// 2. The walk is breadth-first from all roots at once (gc_scan_roots_named:
//    globals first, then the frames innermost first, the C roots, the
//    exception, the profiler's states), so each block's path is a shortest
//    one, ties going to the earlier root. The queue is the BFS tree: one
//    16-byte entry per reachable block (the block, its parent's entry, the
//    field it was reached through). Its first entries use the minor heap,
//    empty after the collection and already resident (a 2M-word minor heap
//    holds 1M entries); the rest is reserved once from the live words of
//    the collection (a block has at least 2 words) and touched only as it
//    fills: at most 16 bytes of new resident memory per reachable block.
// 3. Runs. A hop's key is its parent's tag and the field (and the record's
//    shape): consecutive hops with equal keys form a run ("list cell" x n).
//    For the ancestors of targets only, a memo keeps where each one's run
//    started, its depth, how many runs lie above it and the end of its
//    first MAX_ROOT_RUNS runs, so a path is read in O(runs) whatever its
//    length in hops, and the work over all targets is O(their distinct
//    ancestors + MEMO_STRIDE per target). The memo is sparse (runs' first
//    entries and every MEMO_STRIDE-th depth): 24 bytes per 16 ancestors
//    on a long list, not per ancestor. A path of more runs keeps its first and last runs and
//    reports the hops between as elided.
// 4. The debug build (vm-debug) walks every target's path hop by hop and
//    checks that each parent's field holds the next block and that the
//    root's slot holds the first.
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gc_internal.h"

enum { ROOT_BIT = 0x80000000u };   // a queue entry reached from root (parent & ~ROOT_BIT)
enum { MAX_ROOT_RUNS = GC_RETAIN_MAX_RUNS / 2, MEMO_STRIDE = 16, TARGET_BITS = 1 << 20 };

typedef struct QueueEntry {
  Value block;
  uint32_t parent;   // entry index, or ROOT_BIT | root index
  uint32_t field;
} QueueEntry;

typedef struct Memo {
  uint32_t key;        // entry index + 1 (0: empty slot)
  uint32_t run_start;  // entry whose incoming hop starts this entry's run
  uint32_t depth;      // hops from the root's block (0 for it)
  uint32_t runs;       // runs from the root's block down to this entry
  uint32_t anchor;     // the entry ending the first MAX_ROOT_RUNS runs (itself if fewer)
  uint32_t root;       // root index
} Memo;

struct GcRetain {
  // The queue: entries [0, near_cap) in the minor heap, which is empty after
  // the collection and already in memory (nothing allocates during the walk
  // nor until gc_retain_free), the rest in `far`, mapped for the walk.
  QueueEntry *near, *far;
  uint64_t near_cap;
  size_t far_bytes;     // mapped
  uint64_t count, cap;
  GcRootInfo *roots;
  uint32_t root_count, root_cap;
  // targets: open addressing, target index + 1 in each slot
  const Value *targets;
  uint32_t n_targets;
  uint32_t *target_slots;
  uint64_t target_mask;
  uint32_t *target_entry;   // per target: its entry index, or UINT32_MAX
  uint64_t *target_bits;    // bit (v >> 4) % TARGET_BITS set for every target:
                            // most blocks are no target, and one bit says so
  Memo *memo;
  uint64_t memo_mask, memo_count;
  uint64_t words;
  bool failed;
};

static inline QueueEntry *Q(const GcRetain *r, uint64_t i) {
  return i < r->near_cap ? &r->near[i] : &r->far[i - r->near_cap];
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdu;
  x ^= x >> 33;
  return x;
}

// --- the walk --------------------------------------------------------------

static void note_target(GcRetain *r, Value v, uint64_t entry) {
  uint64_t bit = (v >> 4) & (TARGET_BITS - 1);
  if (!(r->target_bits[bit >> 6] >> (bit & 63) & 1)) return;
  for (uint64_t h = mix(v) & r->target_mask;; h = (h + 1) & r->target_mask) {
    uint32_t t = r->target_slots[h];
    if (!t) return;
    if (r->targets[t - 1] == v) {
      if (r->target_entry[t - 1] == UINT32_MAX) r->target_entry[t - 1] = (uint32_t)entry;
      // another target with the same block (none expected) keeps searching
    }
  }
}

// Visits v; if it is a heap block not reached yet, queues it.
static void reach(Vm *vm, GcRetain *r, Value v, uint32_t parent, uint32_t field) {
  if (!val_is_ptr(v)) return;
  Header *hd = val_hd_ptr(v);
  if (hd_color(*hd) != COLOR_WHITE) return;   // reached already, or static
  ASSERT(!vm_is_young(vm, v), "no young block after a major collection");
  (void)vm;
  if (r->count == r->cap) {
    r->failed = true;
    return;
  }
  *hd = hd_with_color(*hd, COLOR_BLACK);
  *Q(r, r->count) = (QueueEntry){v, parent, field};
  r->words += hd_wosize(*hd) + 1;
  note_target(r, v, r->count);
  r->count++;
}

static void visit_root(Vm *vm, Value *slot, const GcRootInfo *info, void *data) {
  GcRetain *r = data;
  Value v = *slot;
  if (r->failed || !val_is_ptr(v) || hd_color(val_hd(v)) != COLOR_WHITE) return;
  if (r->root_count == r->root_cap) {
    uint32_t cap = r->root_cap ? r->root_cap * 2 : 256;
    GcRootInfo *roots = cap < ROOT_BIT ? realloc(r->roots, cap * sizeof *roots) : NULL;
    if (!roots) {
      r->failed = true;
      return;
    }
    r->roots = roots;
    r->root_cap = cap;
  }
  r->roots[r->root_count] = *info;
  r->roots[r->root_count].slot = slot;
  reach(vm, r, v, ROOT_BIT | r->root_count, 0);
  r->root_count++;
}

static bool setup_targets(GcRetain *r, const Value *targets, uint32_t n) {
  r->targets = targets;
  r->n_targets = n;
  r->target_entry = malloc((n ? n : 1) * sizeof *r->target_entry);
  uint64_t cap = 16;
  while (cap < 2 * (uint64_t)n) cap *= 2;
  r->target_slots = calloc(cap, sizeof *r->target_slots);
  r->target_mask = cap - 1;
  r->target_bits = calloc(TARGET_BITS / 64, sizeof *r->target_bits);
  if (!r->target_entry || !r->target_slots || !r->target_bits) return false;
  for (uint32_t i = 0; i < n; i++) {
    r->target_entry[i] = UINT32_MAX;
    uint64_t bit = (targets[i] >> 4) & (TARGET_BITS - 1);
    r->target_bits[bit >> 6] |= (uint64_t)1 << (bit & 63);
    uint64_t h = mix(targets[i]) & r->target_mask;
    while (r->target_slots[h]) h = (h + 1) & r->target_mask;
    r->target_slots[h] = i + 1;
  }
  return true;
}

GcRetain *gc_retain_walk(Vm *vm, const Value *targets, uint32_t n_targets) {
  if (GC_IS_BOEHM || vm->gc.collecting || vm->young_ptr != vm->young_end) return NULL;
  GcRetain *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  // Every reachable block is live after the collection and has >= 2 words.
  uint64_t most = vm->gc.stats.live_words / 2 + 1;
  if (most >= ROOT_BIT) most = ROOT_BIT - 1;
  r->cap = most;
  r->near = (QueueEntry *)(void *)vm->young_start;
  r->near_cap = (uint64_t)(vm->young_end - vm->young_start) * sizeof(Value) / sizeof(QueueEntry);
  if (most > r->near_cap) {
    r->far_bytes = (size_t)(most - r->near_cap) * sizeof(QueueEntry);
    void *q = mmap(NULL, r->far_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (q == MAP_FAILED) {
      gc_retain_free(r);
      return NULL;
    }
    r->far = q;
    madvise(q, r->far_bytes, MADV_HUGEPAGE);   // a hint: one fault per 2 MiB, not per 4 KiB
  }
  if (!setup_targets(r, targets, n_targets)) {
    gc_retain_free(r);
    return NULL;
  }
  vm->gc.collecting = true;   // nothing may allocate or collect meanwhile
  gc_scan_roots_named(vm, visit_root, r);
  for (uint64_t i = 0; i < r->count && !r->failed; i++) {
    Value b = Q(r, i)->block;
    Header hd = val_hd(b);
    unsigned tag = hd_tag(hd);
    if (tag >= TAG_NO_SCAN) continue;
    uint64_t n = hd_wosize(hd);
    const Value *f = val_fields(b);
    // Field 0 of records (shape id) and closures (function id) is an int.
    for (uint64_t k = 0; k < n; k++) reach(vm, r, f[k], (uint32_t)i, (uint32_t)k);
  }
  for (uint64_t i = 0; i < r->count; i++) {
    Header *hd = val_hd_ptr(Q(r, i)->block);
    *hd = hd_with_color(*hd, COLOR_WHITE);
  }
  vm->gc.collecting = false;
  if (r->failed) {
    gc_retain_free(r);
    return NULL;
  }
  return r;
}

void gc_retain_free(GcRetain *r) {
  if (!r) return;
  if (r->far) munmap(r->far, r->far_bytes);
  free(r->roots);
  free(r->target_slots);
  free(r->target_entry);
  free(r->target_bits);
  free(r->memo);
  free(r);
}

void gc_retain_reached(const GcRetain *r, uint64_t *blocks, uint64_t *words) {
  *blocks = r->count;
  *words = r->words;
}

// --- paths -----------------------------------------------------------------

static bool is_root_level(const GcRetain *r, uint32_t e) { return (Q(r, e)->parent & ROOT_BIT) != 0; }

// The key of the hop into entry e (its parent's tag, the field, a record's shape).
static uint64_t hop_key(const GcRetain *r, uint32_t e) {
  Value parent = Q(r, Q(r, e)->parent)->block;
  unsigned tag = val_tag(parent);
  uint64_t shape = tag == TAG_RECORD ? (uint64_t)val_field(parent, 0) : 0;
  return ((uint64_t)tag << 56 | (uint64_t)Q(r, e)->field << 24) ^ (shape * 0x9e3779b97f4a7c15u);
}

static Memo *memo_slot(GcRetain *r, uint32_t e) {
  for (uint64_t h = mix(e) & r->memo_mask;; h = (h + 1) & r->memo_mask) {
    if (r->memo[h].key == 0 || r->memo[h].key == e + 1) return &r->memo[h];
  }
}

static bool memo_grow(GcRetain *r) {
  uint64_t cap = r->memo ? (r->memo_mask + 1) * 2 : 1024;
  Memo *m = calloc(cap, sizeof *m);
  if (!m) return false;
  Memo *old = r->memo;
  uint64_t old_cap = old ? r->memo_mask + 1 : 0;
  r->memo = m;
  r->memo_mask = cap - 1;
  for (uint64_t i = 0; i < old_cap; i++)
    if (old[i].key) *memo_slot(r, old[i].key - 1) = old[i];
  free(old);
  return true;
}

// The memo of entry e, computed (with its ancestors') if needed, copied to
// *out; false if memory is short. Climbs to the nearest memoized ancestor
// (or the root's block), then comes back down filling the memo.
static bool memo_of(GcRetain *r, uint32_t e, Memo *out) {
  if (!r->memo && !memo_grow(r)) return false;
  uint32_t stack_small[64], *stack = stack_small, depth = 0, cap = 64;
  bool ok = true;
  bool depth_started = !memo_slot(r, e)->key;   // e itself needs computing
  for (uint32_t x = e; !memo_slot(r, x)->key;) {
    if (depth == cap) {
      uint32_t *s = malloc(2 * (size_t)cap * sizeof *s);
      if (!s) {
        ok = false;
        break;
      }
      memcpy(s, stack, depth * sizeof *s);
      if (stack != stack_small) free(stack);
      stack = s;
      cap *= 2;
    }
    stack[depth++] = x;
    if (is_root_level(r, x)) break;
    x = Q(r, x)->parent;
  }
  // `above`: the memo of the entry above the next one down (the climb's end).
  Memo above = {0};
  if (depth > 0 && !is_root_level(r, stack[depth - 1])) above = *memo_slot(r, Q(r, stack[depth - 1])->parent);
  bool above_key_known = false;   // above_key: the key of the hop into `above`'s entry
  uint64_t above_key = 0;
  while (ok && depth > 0) {
    uint32_t y = stack[--depth];
    if ((r->memo_count + 1) * 2 > r->memo_mask + 1 && !memo_grow(r)) {
      ok = false;
      break;
    }
    Memo m = {.key = y + 1};
    if (is_root_level(r, y)) {
      m.run_start = y;
      m.anchor = y;
      m.root = Q(r, y)->parent & ~ROOT_BIT;
    } else {
      uint32_t p = Q(r, y)->parent;
      m.depth = above.depth + 1;
      m.root = above.root;
      uint64_t key = hop_key(r, y);
      if (above.depth >= 1 && !above_key_known) above_key = hop_key(r, p);
      above_key_known = true;
      if (above.depth >= 1 && key == above_key) {
        m.run_start = above.run_start;
        m.runs = above.runs;
      } else {
        m.run_start = y;
        m.runs = above.runs + 1;
      }
      m.anchor = m.runs <= MAX_ROOT_RUNS ? y : above.anchor;
      above_key = key;
    }
    // Sparse: a run's first entry and every MEMO_STRIDE-th depth, so a
    // climb stops within MEMO_STRIDE entries of where an earlier one passed.
    if (m.run_start == y || m.depth % MEMO_STRIDE == 0) {
      *memo_slot(r, y) = m;
      r->memo_count++;
    }
    above = m;
  }
  if (stack != stack_small) free(stack);
  if (ok) *out = depth_started ? above : *memo_slot(r, e);
  return ok;
}

#if MINNOW_DEBUG
// Part 4: every hop of the path to entry e points to the next block.
static void check_path(const GcRetain *r, uint32_t e) {
  uint32_t x = e;
  while (!is_root_level(r, x)) {
    const QueueEntry *q = Q(r, x);
    const QueueEntry *p = Q(r, q->parent);
    ASSERT(q->field < val_wosize(p->block) && val_field(p->block, q->field) == q->block,
           "each hop of a retaining path points to the next block");
    x = q->parent;
  }
  ASSERT(*r->roots[Q(r, x)->parent & ~ROOT_BIT].slot == Q(r, x)->block,
         "a retaining path's root slot holds its first block");
}
#endif

// Appends to `out` (from position *n) the runs ending at entry e, walking
// up `limit` runs at most; returns the entry it stopped at.
static uint32_t collect_runs(GcRetain *r, uint32_t e, GcPathRun *out, uint32_t *n, uint32_t limit, bool *ok) {
  uint32_t x = e;
  for (uint32_t k = 0; k < limit; k++) {
    Memo m, sm;
    if (!memo_of(r, x, &m) || (m.depth > 0 && !memo_of(r, m.run_start, &sm))) {
      *ok = false;
      return x;
    }
    if (m.depth == 0) break;
    uint32_t parent = Q(r, m.run_start)->parent;
    out[(*n)++] = (GcPathRun){Q(r, parent)->block, Q(r, m.run_start)->field, (uint64_t)m.depth - sm.depth + 1};
    x = parent;
  }
  return x;
}

static void reverse_runs(GcPathRun *a, uint32_t n) {
  for (uint32_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
    GcPathRun t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

bool gc_retain_path(GcRetain *r, uint32_t target, GcRetainPath *out) {
  memset(out, 0, sizeof *out);
  if (target >= r->n_targets || r->target_entry[target] == UINT32_MAX) return false;
  uint32_t e = r->target_entry[target];
#if MINNOW_DEBUG
  check_path(r, e);
#endif
  Memo m;
  if (!memo_of(r, e, &m)) return false;
  out->root = r->roots[m.root];
  out->root_block = *out->root.slot;
  out->hops = m.depth;
  bool ok = true;
  if (m.runs <= GC_RETAIN_MAX_RUNS) {
    collect_runs(r, e, out->runs, &out->run_count, m.runs, &ok);
    reverse_runs(out->runs, out->run_count);
    return ok;
  }
  // The first MAX_ROOT_RUNS runs (up to the anchor), then the last ones.
  GcPathRun tail[MAX_ROOT_RUNS];
  uint32_t nt = 0;
  uint32_t stop = collect_runs(r, e, tail, &nt, MAX_ROOT_RUNS, &ok);
  Memo sm, am;
  if (!ok || !memo_of(r, stop, &sm) || !memo_of(r, sm.anchor, &am)) return false;
  out->elided_hops = sm.depth - am.depth;
  out->elided_runs = sm.runs - am.runs;
  collect_runs(r, sm.anchor, out->runs, &out->run_count, MAX_ROOT_RUNS, &ok);
  reverse_runs(out->runs, out->run_count);
  out->elided_at = out->run_count;
  reverse_runs(tail, nt);
  memcpy(out->runs + out->run_count, tail, nt * sizeof *tail);
  out->run_count += nt;
  return ok;
}
