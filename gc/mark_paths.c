// mark_paths.c - the mark of a major collection that records retaining
// paths: for each of a set of target blocks (memprof's sampled blocks), the
// path by which the mark first reached it from a root, with runs of the same
// hop collapsed. Contract in gc.h ("Snapshots"); what it is for:
// docs/design.md ("Snapshots").
//
// 1. Depth first, with the path on the stack. Each frame is a block being
//    scanned and where its scan stands (`cursor`); the frames from the
//    bottom up are the path from the root's block to the top frame's block.
//    A frame is pushed for a white block that holds values, and scanned to
//    its end before the frame below goes on, so that the stack is always the
//    path the mark took. Roots are taken one at a time in the order of
//    gc_scan_roots_named (globals, the frames innermost first, C roots, the
//    exception, memprof's states), each scanned to the end before the next:
//    a block's path is the first by which the mark reached it. A block that
//    holds no values is marked where it is met and gets no frame.
// 2. Runs on the stack. A frame is one *run*: a hop from the block of the
//    frame below through `field`, then as many hops of the same key (the
//    parent's tag, the field, a record's shape) as its block was replaced
//    by its last child (`hops` counts them from the root's block): when the
//    child met at field i is the block's last unmarked field (nothing but
//    non-pointers and marked blocks after it, a target not yet reached
//    counting as unmarked, looked at for the last
//    LOOKAHEAD fields only) and its hop has the frame's key, the child takes
//    the frame's place instead of a new frame. A list of a million cells is
//    one frame; the stack is as deep as the paths have runs (and as blocks
//    whose last field is not the way on).
// 3. A path is read in O(runs kept). Adjacent frames of equal keys make one
//    run; for frames [0, valid), `run_start` (where its run begins) and
//    `runs` (runs from the root's block down to it) are computed, lazily,
//    only when a target is reached, and `run_first[r]` holds the frame where
//    run r begins for the first RUN_FIRST runs: all of it stays true while
//    those frames stay on the stack (a frame's key never changes; a pop
//    lowers `valid`). A path of more than GC_RETAIN_MAX_RUNS runs keeps its
//    first and last GC_RETAIN_MAX_RUNS / 2, with the hops between elided.
//    The work over all targets is the frames pushed below them plus a
//    constant per target, whatever the paths' lengths.
// 4. Targets. Before the mark, each target's header takes COLOR_TARGET
//    (value.h): the mark's test for a white block is then the whole cost
//    for the blocks that are no target, and a block met that is not white
//    is a target iff it has that colour. A table (open addressing) finds a
//    target's id when it is reached; the targets not reached (dead) are
//    WHITE again after the mark, before memprof and the sweep look.
// 5. Memory. The frames are reserved once (mmap, NORESERVE: every frame
//    holds a distinct block of at least 2 words, so heap_words / 2 of them
//    suffice) and touched as the stack grows: 40 bytes a frame of the
//    deepest stack; the targets cost 24 bytes each.
//    If the reservation fails, or a target table cannot be made, the
//    collection falls back to the plain mark and no path is recorded
//    (req->failed).
// 6. The debug build checks every hop of every path given out: the parent's
//    field holds the next block, the root's slot the first.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gc_internal.h"
#include "../base/hash.h"

enum {
  MAX_ROOT_RUNS = GC_RETAIN_MAX_RUNS / 2,
  RUN_FIRST = MAX_ROOT_RUNS + 2,   // run_first[1 .. MAX_ROOT_RUNS + 1]
  LOOKAHEAD = 4,
};

// A hop's key: the parent's tag, the field, a record parent's shape.
typedef struct HopKey {
  Value shape;         // the record's field 0, else 0
  uint32_t field;
  uint32_t tag;
} HopKey;

static inline bool same_key(HopKey a, HopKey b) { return a.field == b.field && a.tag == b.tag && a.shape == b.shape; }

typedef struct Frame {
  Value block;         // being scanned
  uint64_t cursor;     // its next field to look at
  uint64_t hops;       // hops from the root's block to `block`
  HopKey key;          // of the hops of its run (from the frame below's block)
  uint32_t run_start;  // part 3, for frames below `valid`
  uint32_t runs;
} Frame;

typedef struct PathMark {
  Vm *vm;
  GcPathRequest *req;
  Frame *frames;
  uint64_t depth, cap;     // cap: frames reserved, one more than may be pushed
  size_t reserved_bytes;
  uint64_t valid;
  uint32_t run_first[RUN_FIRST];
  GcRootInfo root;         // the root the stack grows from
  bool overflow;           // a block could not get a frame (part 5)
  // targets (part 4)
  const Value *blocks;
  const uint64_t *ids;
  uint64_t n_targets;
  uint32_t *slots;
  uint64_t mask;
  GcRetainPath path;       // scratch for the path given out
} PathMark;

// --- targets (part 4) ----------------------------------------------------------

struct GcPathTargets {
  Value *blocks;
  uint64_t *ids;
  uint64_t count, cap;
  bool failed;
};

bool gc_path_target(GcPathRequest *req, Value block, uint64_t id) {
  GcPathTargets *t = req->targets;
  if (t->failed) return false;
  if (t->count == t->cap) {
    uint64_t cap = t->cap ? 2 * t->cap : 1024;
    Value *b = cap < UINT32_MAX ? realloc(t->blocks, cap * sizeof *b) : NULL;
    if (b) t->blocks = b;
    uint64_t *i = b ? realloc(t->ids, cap * sizeof *i) : NULL;
    if (i) t->ids = i;
    if (!b || !i) {
      t->failed = true;
      return false;
    }
    t->cap = cap;
  }
  t->blocks[t->count] = block;
  t->ids[t->count++] = id;
  return true;
}

static bool setup_targets(PathMark *m, const GcPathTargets *t) {
  m->blocks = t->blocks;
  m->ids = t->ids;
  m->n_targets = t->count;
  uint64_t cap = 16;
  while (cap < 2 * t->count) cap *= 2;
  m->slots = calloc(cap, sizeof *m->slots);
  m->mask = cap - 1;
  if (!m->slots) return false;
  for (uint64_t i = 0; i < t->count; i++) {
    uint64_t h = hash_mix(t->blocks[i]) & m->mask;
    while (m->slots[h]) h = (h + 1) & m->mask;
    m->slots[h] = (uint32_t)(i + 1);
  }
  return true;
}

// Gives each target colour c (part 4) if it has colour `from`.
static void color_targets(const PathMark *m, unsigned from, unsigned c) {
  for (uint64_t i = 0; i < m->n_targets; i++) {
    Header *hd = val_hd_ptr(m->blocks[i]);
    if (hd_color(*hd) == from) *hd = hd_with_color(*hd, c);
  }
}

// The target whose block is v: its index + 1, or 0.
static uint64_t target_of(const PathMark *m, Value v) {
  for (uint64_t h = hash_mix(v) & m->mask;; h = (h + 1) & m->mask) {
    uint32_t s = m->slots[h];
    if (!s || m->blocks[s - 1] == v) return s;
  }
}

// --- runs (parts 2 and 3) ------------------------------------------------------

// The key of the hop from `parent` through field i.
static inline HopKey key_of(Value parent, uint32_t i) {
  unsigned tag = val_tag(parent);
  return (HopKey){tag == TAG_RECORD ? val_field(parent, 0) : 0, i, tag};
}

// Computes run_start and runs of frame k (k >= 1), those of k - 1 known.
static void compute_run(PathMark *m, uint64_t k) {
  Frame *f = &m->frames[k], *below = &m->frames[k - 1];
  if (k >= 2 && same_key(below->key, f->key)) {
    f->run_start = below->run_start;
    f->runs = below->runs;
  } else {
    f->run_start = (uint32_t)k;
    f->runs = below->runs + 1;
    if (f->runs < RUN_FIRST) m->run_first[f->runs] = (uint32_t)k;
  }
}

// Frames [0, upto] get their runs (frame upto may be the scratch frame above
// the top: it is never counted valid).
static void compute_runs(PathMark *m, uint64_t upto) {
  if (m->valid == 0) {
    m->frames[0].run_start = 0;
    m->frames[0].runs = 0;
    m->valid = 1;
  }
  for (uint64_t k = m->valid; k <= upto; k++) compute_run(m, k);
  uint64_t computed = upto < m->depth ? upto + 1 : m->depth;
  if (computed > m->valid) m->valid = computed;
}

// The run whose last frame is e (its first is frames[e].run_start).
static GcPathRun run_ending_at(const PathMark *m, uint64_t e) {
  uint32_t s = m->frames[e].run_start;
  return (GcPathRun){m->frames[s - 1].block, m->frames[s].key.field, m->frames[e].hops - m->frames[s - 1].hops};
}

#if MINNOW_DEBUG
// Part 6.
static void check_path(const GcRetainPath *p, Value target) {
  Value b = p->root_block;
  ASSERT(*p->root.slot == b, "a retaining path's root slot holds its first block");
  for (uint32_t r = 0; r < p->run_count; r++) {
    if (p->elided_hops && r == p->elided_at) return;   // the elided hops are not at hand
    const GcPathRun *run = &p->runs[r];
    ASSERT(run->parent == b, "a run starts at the block the path has reached");
    for (uint64_t k = 0; k < run->count; k++) {
      ASSERT(run->field < val_wosize(b), "a hop's field lies inside its block");
      b = val_field(b, run->field);
    }
  }
  ASSERT(b == target, "a retaining path ends at its target");
}
#endif

// Gives target (index + 1) `t`, block v, reached through field `field` of
// the top frame's block (or, with no frame, as the root's block), its path.
static void give_path(PathMark *m, uint64_t t, Value v, uint32_t field) {
  GcRetainPath *p = &m->path;
  p->root = m->root;
  p->root_block = *m->root.slot;
  p->run_count = 0;
  p->elided_at = p->elided_runs = 0;
  p->elided_hops = 0;
  p->hops = 0;
  if (m->depth > 0) {
    // The hop to v as a scratch frame above the top (room: cap > depth).
    uint64_t d = m->depth;
    m->frames[d] = (Frame){.block = v, .hops = m->frames[d - 1].hops + 1, .key = key_of(m->frames[d - 1].block, field)};
    compute_runs(m, d);
    uint32_t total = m->frames[d].runs;
    p->hops = m->frames[d].hops;
    GcPathRun tail[GC_RETAIN_MAX_RUNS];
    uint32_t nt = 0, keep = total <= GC_RETAIN_MAX_RUNS ? total : MAX_ROOT_RUNS;
    uint64_t e = d;
    for (; nt < keep; nt++) {
      tail[nt] = run_ending_at(m, e);
      e = m->frames[e].run_start - 1;
    }
    if (total > GC_RETAIN_MAX_RUNS) {
      for (uint32_t r = 1; r <= MAX_ROOT_RUNS; r++) p->runs[p->run_count++] = run_ending_at(m, m->run_first[r + 1] - 1);
      p->elided_at = p->run_count;
      p->elided_runs = total - 2 * MAX_ROOT_RUNS;
      // e: the last frame before the kept tail; run MAX_ROOT_RUNS ends below run_first[MAX_ROOT_RUNS + 1].
      p->elided_hops = m->frames[e].hops - m->frames[m->run_first[MAX_ROOT_RUNS + 1] - 1].hops;
    }
    for (uint32_t k = nt; k > 0; k--) p->runs[p->run_count++] = tail[k - 1];
  }
#if MINNOW_DEBUG
  check_path(p, v);
#endif
  m->req->reached_count++;
  m->req->reached(m->vm, m->req, m->ids[t - 1], p);
}

// --- the walk (parts 1 and 2) -----------------------------------------------------

// Whether fields [from, n) of f hold no unmarked block: none WHITE, none a
// target not reached yet.
static inline bool none_unmarked(const Value *f, uint64_t from, uint64_t n) {
  for (uint64_t k = from; k < n; k++) {
    if (!val_is_ptr(f[k])) continue;
    unsigned c = hd_color(val_hd(f[k]));
    if (c == COLOR_WHITE || c == COLOR_TARGET) return false;
  }
  return true;
}

// Whether fields (i, n) of f hold no unmarked block (looked at only when
// they are few: part 2).
static inline bool last_white(const Value *f, uint64_t i, uint64_t n) {
  return n - i - 1 <= LOOKAHEAD && none_unmarked(f, i + 1, n);
}

// Reaches target v (COLOR_TARGET) through field i of the top frame's block:
// marks it and gives its path.
static __attribute__((noinline)) void reach_target(PathMark *m, Value v, uint32_t i) {
  Header *hd = val_hd_ptr(v);
  *hd = hd_with_color(*hd, COLOR_BLACK);
  m->req->marked_blocks++;
  uint64_t t = target_of(m, v);
  ASSERT(t, "a block of COLOR_TARGET is a target");
  give_path(m, t, v, i);
}

// Scans from the top frame until the stack is empty. The top frame's block,
// fields and key live in locals; the frame is written when the scan leaves
// it (a push) and read when it comes back (a pop).
static void scan(PathMark *m) {
  uint64_t marked = 0;
  Frame *frames = m->frames;
  uint64_t top = m->depth - 1, valid = m->valid, room = m->cap - 2;
  for (;;) {
    Frame *f = &frames[top];
    Value b = f->block;
    const Value *fields = val_fields(b);
    Header bh = val_hd(b);
    uint64_t n = hd_wosize(bh);
    uint32_t btag = hd_tag(bh);
    uint64_t i = f->cursor;
    // The frame's key in locals (the root's frame has none: no field is
    // UINT32_MAX); a child continues the frame's run only with it.
    const uint32_t kfield = top > 0 ? f->key.field : UINT32_MAX, ktag = f->key.tag;
    const Value kshape = f->key.shape;
  fields:
    for (; i < n; i++) {
      Value v = fields[i];
      if (!val_is_ptr(v)) continue;
      Header *hp = val_hd_ptr(v), h = *hp;
      if (hd_color(h) != COLOR_WHITE) {
        if (__builtin_expect(hd_color(h) != COLOR_TARGET, 1)) continue;
        m->depth = top + 1;
        m->valid = valid;
        reach_target(m, v, (uint32_t)i);
        valid = m->valid;
      } else {
        *hp = hd_with_color(h, COLOR_BLACK);
        marked++;
      }
      if (hd_tag(h) >= TAG_NO_SCAN) continue;
      if (i == kfield && btag == ktag && (btag != TAG_RECORD || fields[0] == kshape) &&
          (i + 1 == n || last_white(fields, i, n))) {
        // The run goes on in this frame (part 2); its key, run_start and runs stay true.
        f->block = b = v;
        f->hops++;
        fields = val_fields(b);
        n = hd_wosize(h);
        btag = hd_tag(h);
        i = 0;
        goto fields;
      }
      // A small block whose fields hold nothing unmarked needs no frame: its
      // scan would find nothing (a tree's leaves, a list's last cell).
      if (hd_wosize(h) <= LOOKAHEAD && none_unmarked(val_fields(v), 0, hd_wosize(h))) continue;
      if (__builtin_expect(top >= room, 0)) {
        m->overflow = true;   // v stays BLACK unscanned; the plain rescan finishes it
        continue;
      }
      f->cursor = i + 1;
      Frame *up = f + 1;
      up->block = v;
      up->cursor = 0;
      up->hops = f->hops + 1;
      up->key = (HopKey){btag == TAG_RECORD ? fields[0] : 0, (uint32_t)i, btag};
      top++;
      goto next;
    }
    // Done with this frame: pop.
    if (valid > top) valid = top;
    if (top == 0) break;
    top--;
  next:;
  }
  m->depth = 0;
  m->valid = valid;
  m->req->marked_blocks += marked;
}

static void visit_root(Vm *vm, Value *slot, const GcRootInfo *info, void *data) {
  (void)vm;
  PathMark *m = data;
  Value v = *slot;
  if (!val_is_ptr(v)) return;
  unsigned color = hd_color(val_hd(v));
  if (color != COLOR_WHITE && color != COLOR_TARGET) return;
  m->root = *info;
  m->root.slot = slot;
  m->depth = 0;
  m->valid = 0;
  if (color == COLOR_TARGET) {
    reach_target(m, v, 0);
  } else {
    *val_hd_ptr(v) = hd_with_color(val_hd(v), COLOR_BLACK);
    m->req->marked_blocks++;
  }
  if (val_tag(v) >= TAG_NO_SCAN) return;
  m->frames[0] = (Frame){.block = v};
  m->depth = 1;
  scan(m);
}

void major_mark_paths(Vm *vm, GcPathRequest *req) {
  PathMark m = {.vm = vm, .req = req};
  req->marked_blocks = 0;
  req->reached_count = 0;
  uint64_t most = vm->gc.stats.heap_words / 2 + 2;
  m.reserved_bytes = (size_t)most * sizeof(Frame);
  void *frames = mmap(NULL, m.reserved_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (frames == MAP_FAILED || req->targets->failed || !setup_targets(&m, req->targets)) {
    if (frames != MAP_FAILED) munmap(frames, m.reserved_bytes);
    free(m.slots);
    req->failed = true;
    major_mark(vm);
    return;
  }
  m.frames = frames;
  m.cap = most;
  color_targets(&m, COLOR_WHITE, COLOR_TARGET);
  gc_scan_roots_named(vm, visit_root, &m);
  color_targets(&m, COLOR_TARGET, COLOR_WHITE);   // not reached: dead, or see below
  // Blocks left unscanned for want of a frame: the plain mark's rescan
  // (the targets it reaches get no path).
  if (m.overflow) major_mark_rescan(vm);
  munmap(frames, m.reserved_bytes);
  free(m.slots);
}

void gc_major_paths(Vm *vm, GcPathRequest *req) {
  GcPathTargets targets = {0};
  req->targets = &targets;
  req->reached_count = req->marked_blocks = 0;
  req->ran = req->failed = false;
  if (GC_IS_BOEHM || vm->gc.collecting) {
    req->failed = true;
    return;
  }
  vm->gc.path_request = req;
  gc_minor(vm);   // a major cycle it runs takes the request
  if (vm->gc.path_request) {
    vm->gc.collecting = true;
    major_collect(vm);
    vm->gc.collecting = false;
  }
  ASSERT(!vm->gc.path_request && req->ran, "the request was taken by a major cycle");
  free(targets.blocks);
  free(targets.ids);
  req->target_count = targets.count;
  req->targets = NULL;
  if (vm->options.gc_verify && !gc_verify(vm)) {
    fprintf(stderr, "minnow: heap verification failed after a major collection\n");
    abort();
  }
}
