// frames.c - the frame-descriptor table and the one stack walker (frames.h).
// Invariants (checked by gc_verify through the walker):
//  * every key is unique: CALL descriptors are keyed by a CALL's last word,
//    which is never the first word of an instruction;
//  * desc->live lists slots of its function's frame, slot 0 first.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "namemap.h"
#include "vm_state.h"
#include "../base/hash.h"

// An interned live list: count slots, ascending.
typedef struct LiveList {
  uint64_t hash;
  uint32_t count;
  uint32_t slots[];
} LiveList;

struct FrameTable {
  FrameDesc **slots;        // open addressing, capacity a power of two
  uint32_t cap, count;
  DebugInfo **debug;        // by id
  const FrameDesc **debug_desc;   // by id: the descriptor holding the entry, NULL until added
  uint32_t debug_count, debug_cap;
  // Live lists, interned (frames_live_list): descriptors with the same live
  // slots share one list, so that many safe points in a function with many
  // locals cost memory for the distinct lists only.
  LiveList **lists;         // open addressing, capacity a power of two
  uint32_t list_cap, list_count;
  NameMap strings;          // function and file names of debug entries, stored once
  char **string_list;       // the same, to free them
  uint32_t string_count, string_cap;
};

static void *xcalloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) vm_out_of_memory(NULL, "frame table");
  return memset(vm_realloc_or_die(NULL, n * size, "frame table"), 0, n * size);
}

static char *dup_str(const char *s) {
  char *d = xcalloc(strlen(s) + 1, 1);
  memcpy(d, s, strlen(s));
  return d;
}

FrameTable *frames_new(void) {
  FrameTable *t = xcalloc(1, sizeof *t);
  t->cap = 1024;
  t->slots = xcalloc(t->cap, sizeof *t->slots);
  return t;
}

void frames_free(FrameTable *t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->cap; i++)
    if (t->slots[i]) {
      free((void *)t->slots[i]->debug);
      free(t->slots[i]);
    }
  for (uint32_t i = 0; i < t->list_cap; i++) free(t->lists[i]);
  free(t->lists);
  for (uint32_t i = 0; i < t->debug_count; i++) free(t->debug[i]);
  for (uint32_t i = 0; i < t->string_count; i++) free(t->string_list[i]);
  free(t->string_list);
  namemap_free(&t->strings);
  free(t->debug);
  free(t->debug_desc);
  free(t->slots);
  free(t);
}

// The table's copy of s, one per distinct string.
static const char *intern(FrameTable *t, const char *s) {
  uint32_t found = namemap_get(&t->strings, s);
  if (found != NAMEMAP_NONE) return t->string_list[found];
  if (t->string_count == t->string_cap) {
    t->string_cap = t->string_cap ? t->string_cap * 2 : 64;
    t->string_list = realloc(t->string_list, t->string_cap * sizeof *t->string_list);
    if (!t->string_list) vm_out_of_memory(NULL, "frame table");
  }
  char *copy = dup_str(s);
  t->string_list[t->string_count] = copy;
  *namemap_slot(&t->strings, copy) = t->string_count;
  return t->string_list[t->string_count++];
}

const DebugInfo *frames_debug_new(FrameTable *t, const char *function, const char *file,
                                  uint32_t line, uint32_t start_col, uint32_t end_col) {
  if (t->debug_count == t->debug_cap) {
    t->debug_cap = t->debug_cap ? t->debug_cap * 2 : 256;
    t->debug = realloc(t->debug, t->debug_cap * sizeof *t->debug);
    t->debug_desc = realloc(t->debug_desc, t->debug_cap * sizeof *t->debug_desc);
    if (!t->debug || !t->debug_desc) vm_out_of_memory(NULL, "frame table");
  }
  t->debug_desc[t->debug_count] = NULL;
  DebugInfo *d = xcalloc(1, sizeof *d);
  d->function = intern(t, function);
  d->file = intern(t, file);
  d->line = line;
  d->start_col = start_col;
  d->end_col = end_col;
  d->id = t->debug_count;
  t->debug[t->debug_count++] = d;
  return d;
}

uint32_t frames_debug_count(const FrameTable *t) { return t->debug_count; }

const DebugInfo *frames_debug_by_id(const FrameTable *t, uint32_t id) {
  return id < t->debug_count ? t->debug[id] : NULL;
}

const FrameDesc *frames_debug_desc(const FrameTable *t, uint32_t id, uint32_t *sub) {
  const FrameDesc *d = id < t->debug_count ? t->debug_desc[id] : NULL;
  if (!d) return NULL;
  uint32_t i = 0;
  while (d->debug[i]->id != id) i++;
  if (sub) *sub = i;
  return d;
}

static uint32_t hash_key(const uint32_t *key, uint32_t mask) { return (uint32_t)hash_mix((uint64_t)(uintptr_t)key) & mask; }

static void insert(FrameTable *t, FrameDesc *d) {
  uint32_t mask = t->cap - 1;
  uint32_t i = hash_key(d->key, mask);
  while (t->slots[i]) i = (i + 1) & mask;
  t->slots[i] = d;
}

static void grow(FrameTable *t) {
  FrameDesc **old = t->slots;
  uint32_t old_cap = t->cap;
  t->cap *= 2;
  t->slots = xcalloc(t->cap, sizeof *t->slots);
  for (uint32_t i = 0; i < old_cap; i++)
    if (old[i]) insert(t, old[i]);
  free(old);
}

// Fletcher-style: two running sums, one add each per slot (no multiply in
// the chain), mixed at the end; collisions only cost a memcmp.
static uint64_t hash_list(const uint32_t *live, uint32_t count) {
  uint64_t a = count, b = 0;
  for (uint32_t i = 0; i < count; i++) {
    a += live[i];
    b += a;
  }
  uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ b;
  return h ^ (h >> 31);
}

// The slot of the interned list equal to live[0..count), or the empty slot for it.
static LiveList **list_slot(const FrameTable *t, const uint32_t *live, uint32_t count, uint64_t h) {
  uint32_t mask = t->list_cap - 1;
  for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
    LiveList *l = t->lists[i];
    if (!l || (l->hash == h && l->count == count && memcmp(l->slots, live, count * sizeof *live) == 0))
      return &t->lists[i];
  }
}

static void grow_lists(FrameTable *t) {
  LiveList **old = t->lists;
  uint32_t old_cap = t->list_cap;
  t->list_cap = old_cap ? old_cap * 2 : 256;
  t->lists = xcalloc(t->list_cap, sizeof *t->lists);
  for (uint32_t i = 0; i < old_cap; i++)
    if (old[i]) *list_slot(t, old[i]->slots, old[i]->count, old[i]->hash) = old[i];
  free(old);
}

const uint32_t *frames_live_list(FrameTable *t, const uint32_t *live, uint32_t count) {
  if ((t->list_count + 1) * 2 > t->list_cap) grow_lists(t);
  uint64_t h = hash_list(live, count);
  LiveList **slot = list_slot(t, live, count, h);
  if (!*slot) {
    LiveList *l = xcalloc(1, sizeof *l + (size_t)count * sizeof *live);
    l->hash = h;
    l->count = count;
    memcpy(l->slots, live, count * sizeof *live);
    *slot = l;
    t->list_count++;
  }
  return (*slot)->slots;
}

void frames_add(FrameTable *t, const FrameDesc *desc) {
  ASSERT(frames_find(t, desc->key) == NULL, "one descriptor per key");
  ASSERT(desc->live_count >= 1 && desc->live[0] == 0, "slot 0, the closure, is live at every safe point");
  for (uint32_t i = 1; i < desc->live_count; i++) ASSERT(desc->live[i] > desc->live[i - 1], "live slots ascending");
  ASSERT(desc->debug_count >= 1 && desc->debug_count <= ALLOCN_MAX_SUBBLOCKS, "a debug entry per sub-block");
  if ((t->count + 1) * 2 > t->cap) grow(t);
  FrameDesc *d = xcalloc(1, sizeof *d);
  *d = *desc;
  d->live = desc->live;   // interned by the caller (frames_live_list)
  const DebugInfo **debug = xcalloc(desc->debug_count, sizeof *debug);
  memcpy(debug, desc->debug, desc->debug_count * sizeof *debug);
  d->debug = debug;
  for (uint32_t i = 0; i < desc->debug_count; i++) {
    ASSERT(desc->debug[i]->id < t->debug_count && !t->debug_desc[desc->debug[i]->id],
           "a debug entry belongs to one descriptor");
    t->debug_desc[desc->debug[i]->id] = d;
  }
  insert(t, d);
  t->count++;
}

const FrameDesc *frames_find(const FrameTable *t, const uint32_t *key) {
  uint32_t mask = t->cap - 1;
  for (uint32_t i = hash_key(key, mask);; i = (i + 1) & mask) {
    FrameDesc *d = t->slots[i];
    if (!d) return NULL;
    if (d->key == key) return d;
  }
}

// ---------------------------------------------------------------------------
// Walker

static void stand_at_instruction(FrameCursor *c, const uint32_t *pc, Value *base, uint32_t level) {
  c->pc = pc;
  c->base = base;
  c->level = level;
  c->is_top = true;
  c->desc = pc ? frames_find(c->vm->frames, pc) : NULL;
}

void frames_top(Vm *vm, FrameCursor *c) {
  memset(c, 0, sizeof *c);
  c->vm = vm;
  c->bounds = frames_bounds(vm->trampoline_ret, vm->entry_code, vm->entry_code_end);
  stand_at_instruction(c, vm->pc, vm->base, vm->level);
  c->ret_sp = vm->ret_sp;
}

bool frames_next(FrameCursor *c) {
  Vm *vm = c->vm;
  const uint32_t *ret = *--c->ret_sp;
  if (frames_from_c(&c->bounds, ret)) {
    // Called from C: continue with the frame interp_call interrupted.
    if (c->level <= 1) return false;
    const Boundary *b = &vm->levels[c->level];
    stand_at_instruction(c, b->pc, b->base, c->level - 1);
    return c->base != NULL;
  }
  const uint32_t *real = frames_is_stub(ret) ? frames_stub_ret(ret) : ret;
  const FrameDesc *d = frames_find(vm->frames, real);
  if (!d) {
    fprintf(stderr, "minnow: internal error: no frame descriptor for return address %p\n", (const void *)real);
    abort();
  }
  c->base = frames_caller(c->base, ret);
  c->desc = d;
  c->pc = real;
  c->is_top = false;
  return true;
}
