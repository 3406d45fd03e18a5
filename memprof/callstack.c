// callstack.c - callstacks whose cost does not grow with the depth of the stack.
//
// 1. A capture walks the VM stack from the sampling frame outwards with the
//    frame-descriptor walker, but stops at the first frame whose saved return
//    address it has already seen: every frame it walks gets its return
//    address (base[-1]) redirected to a stub of its own, and the call site's
//    debug entry is recorded beside the stub. Stubs form a stack, outermost
//    first, mirroring the bottom of the VM stack: stubs[0 .. depth) are
//    exactly the walked frames still alive, and debug[0 .. depth) is their
//    part of the callstack, shared by every later capture.
// 2. A stub is three bytecode words laid out like the end of a CALL:
//        code = { result register, caller frame size, MEMPROF_RETURN }
//    and the redirected return address is &code[1], so RET needs no change:
//    it reads the frame size and register from the stub, then executes
//    MEMPROF_RETURN, which pops the stub and resumes at the original return
//    address. The saved return address stays the single source of truth for
//    a frame; the GC and backtraces map stubs back (memprof_original_ret).
// 3. Exceptions discard frames without returning: memprof_unwind pops the
//    stubs of frames above the handler's frame.
// 4. low_water is the smallest depth since the last capture: the first
//    low_water entries are unchanged, which trace writers use to encode a
//    callstack as a difference from the previous one.
// Invariant: stubs[i].frame < stubs[i+1].frame, and stubs[depth-1] is the
// innermost redirected frame; every frame above it has a plain return address.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof_internal.h"
#include "../lang/bytecode.h"
#include "../lang/compiler.h"
#include "../lang/vm.h"

bool callstacks_init(Callstacks *cs, uint64_t stack_words) {
  cs->capacity = (uint32_t)(stack_words / 2 + 1);
  cs->stubs = calloc(cs->capacity, sizeof(StubFrame));
  cs->debug = calloc(cs->capacity, sizeof(DebugInfo *));
  return cs->stubs && cs->debug;
}

void callstacks_free(Callstacks *cs) {
  free(cs->stubs);
  free(cs->debug);
  free(cs->scratch_base);
  free(cs->scratch_ret);
  free(cs->scratch_debug);
}

static bool is_stub(const Callstacks *cs, const uint32_t *ret) {
  return cs->stubs && (const char *)ret >= (const char *)cs->stubs &&
         (const char *)ret < (const char *)(cs->stubs + cs->capacity);
}

static StubFrame *stub_of(const Callstacks *cs, const uint32_t *code_word, int index) {
  (void)cs;
  return (StubFrame *)(uintptr_t)((const char *)code_word - offsetof(StubFrame, code) - (size_t)index * sizeof(uint32_t));
}

bool memprof_has_stubs(const Memprof *mp) { return mp->stacks.stubs != NULL; }

const uint32_t *memprof_original_ret(const Memprof *mp, const uint32_t *ret) {
  if (!is_stub(&mp->stacks, ret)) return ret;
  return stub_of(&mp->stacks, ret, 1)->orig_ret;
}

static void pop_to(Callstacks *cs, uint32_t depth) {
  cs->depth = depth;
  if (depth < cs->low_water) cs->low_water = depth;
}

const uint32_t *memprof_stub_return(Vm *vm, const uint32_t *stub_pc) {
  Callstacks *cs = &vm->memprof->stacks;
  StubFrame *s = stub_of(cs, stub_pc, 2);
  if (cs->depth == 0 || s != &cs->stubs[cs->depth - 1]) {
    fprintf(stderr, "minnow: internal error: memprof stub returned out of order\n");
    abort();
  }
  pop_to(cs, cs->depth - 1);
  return s->orig_ret;
}

// Queued alloc events whose callers reach above `depth` get their own copy
// of them: only a capture overwrites stub slots, and those slots above the
// current depth were freed by returns or unwinding since the event's sample.
static void preserve_queued(Memprof *mp, uint32_t depth) {
  Callstacks *cs = &mp->stacks;
  for (uint32_t k = mp->event_head; k < mp->event_count; k++) {
    Event *ev = &mp->events[k];
    if (ev->kind != EV_ALLOC || ev->depth <= depth || ev->own) continue;
    ev->own = malloc(ev->depth * sizeof *ev->own);
    if (!ev->own) {
      ev->depth = depth;   // out of memory: keep what is still valid
      continue;
    }
    memcpy(ev->own, cs->debug, ev->depth * sizeof *ev->own);
  }
}

void memprof_unwind(Vm *vm, const Value *base) {
  Memprof *mp = vm->memprof;
  Callstacks *cs = &mp->stacks;
  uint32_t d = cs->depth;
  while (d > 0 && cs->stubs[d - 1].frame > base) d--;
  preserve_queued(mp, d);
  pop_to(cs, d);
}

static bool grow_scratch(Callstacks *cs) {
  uint32_t cap = cs->scratch_cap ? cs->scratch_cap * 2 : 256;
  const Value **b = realloc(cs->scratch_base, cap * sizeof *b);
  if (b) cs->scratch_base = b;
  const uint32_t **r = realloc(cs->scratch_ret, cap * sizeof *r);
  if (r) cs->scratch_ret = r;
  const DebugInfo **d = realloc(cs->scratch_debug, cap * sizeof *d);
  if (d) cs->scratch_debug = d;
  if (!b || !r || !d) return false;
  cs->scratch_cap = cap;
  return true;
}

static void push_stub(Callstacks *cs, const Value *frame, const uint32_t *ret, const DebugInfo *debug) {
  StubFrame *s = &cs->stubs[cs->depth];
  s->code[0] = ret[-1];
  s->code[1] = ret[0];
  s->code[2] = BC_MEMPROF_RETURN;
  s->orig_ret = ret;
  s->frame = frame;
  cs->debug[cs->depth] = debug;
  ((Value *)frame)[-1] = (Value)(uintptr_t)&s->code[1];
  cs->depth++;
}

bool callstacks_capture(Vm *vm, Callstacks *cs, uint32_t *depth, uint32_t *unchanged) {
  preserve_queued(vm->memprof, cs->depth);
  uint32_t n = 0;
  const Value *base = vm->base;
  while (base) {
    const uint32_t *ret = (const uint32_t *)(uintptr_t)base[-1];
    if (ret == vm->trampoline_ret || is_stub(cs, ret)) break;
    const FrameDesc *d = frames_find(vm->frames, ret);
    if (!d || d->proto == vm->entry_proto) break;
    if (n == cs->scratch_cap && !grow_scratch(cs)) return false;
    cs->scratch_base[n] = base;
    cs->scratch_ret[n] = ret;
    cs->scratch_debug[n] = d->debug[0];
    n++;
    base = base - 1 - d->fsize;
  }
  if (cs->depth + n > cs->capacity) return false;
  for (uint32_t i = n; i > 0; i--) push_stub(cs, cs->scratch_base[i - 1], cs->scratch_ret[i - 1], cs->scratch_debug[i - 1]);
  *unchanged = cs->low_water;
  *depth = cs->depth;
  cs->low_water = cs->depth;
  return true;
}
