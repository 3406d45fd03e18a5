// verify.c - the heap verifier (--gc-verify, Gc.verify(), unit tests).
// Checks: every block of the major heap has a sane header; every value field
// of a live block points to a live block (major, static) or, when young, is
// recorded in the remembered set; the minor heap's blocks are well formed;
// every root points to a live block; the pages obey gc_internal.h (ownership,
// carving, nblocks) and heap_words is exactly what they and the large blocks hold.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_internal.h"

typedef struct Check {
  Value *blocks;       // sorted addresses of the major heap's live blocks
  uint64_t count, cap;
  uint64_t errors;
} Check;

static void collect(Vm *vm, Value v, void *data) {
  Check *c = data;
  if (c->count == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 4096;
    c->blocks = realloc(c->blocks, c->cap * sizeof(Value));
    if (!c->blocks) vm_out_of_memory(vm, "heap verifier");
  }
  c->blocks[c->count++] = v;
}

static int cmp_value(const void *a, const void *b) {
  Value x = *(const Value *)a, y = *(const Value *)b;
  return x < y ? -1 : x > y;
}

static bool is_major_block(const Check *c, Value v) {
  return c->count > 0 && bsearch(&v, c->blocks, c->count, sizeof(Value), cmp_value) != NULL;
}

static bool is_remembered(const Vm *vm, const Value *field) {
  for (uint64_t i = 0; i < vm->gc.remembered_count; i++)
    if (vm->gc.remembered[i] == field) return true;
  return false;
}

static void fail(Check *c, const char *what, Value where, Value v) {
  if (c->errors++ < 10)
    fprintf(stderr, "gc_verify: %s (block %p, value %#llx)\n", what, (void *)(uintptr_t)where,
            (unsigned long long)v);
}

static bool valid_pointer(Vm *vm, const Check *c, Value v) {
  if (vm_is_young(vm, v)) return val_hd(v) != 0;
  if (hd_color(val_hd(v)) == COLOR_STATIC) return true;
  return is_major_block(c, v);
}

static void check_fields(Vm *vm, Check *c, Value b, bool old) {
  Header hd = val_hd(b);
  if (hd_color(hd) == COLOR_BLACK) fail(c, "black block outside a major GC", b, hd);
  if (hd_tag(hd) >= TAG_NO_SCAN) return;
  for (uint64_t i = 0; i < hd_wosize(hd); i++) {
    Value v = val_field(b, i);
    if (!val_is_ptr(v)) continue;
    if (!valid_pointer(vm, c, v)) fail(c, "field points outside the heap", b, v);
    else if (old && vm_is_young(vm, v) && !is_remembered(vm, &val_fields(b)[i]))
      fail(c, "old-to-young pointer missing from the remembered set", b, v);
  }
}

static void check_major_block(Vm *vm, Value b, void *data) { check_fields(vm, data, b, true); }

static void check_root(Vm *vm, Value *slot, void *data) {
  Check *c = data;
  Value v = *slot;
  if (val_is_ptr(v) && !valid_pointer(vm, c, v)) fail(c, "root points outside the heap", 0, v);
}

static void check_minor(Vm *vm, Check *c) {
  for (Value *p = vm->young_ptr; p < vm->young_end;) {
    Header hd = *p;
    uint64_t wosize = hd_wosize(hd);
    if (hd == 0 || p + 1 + wosize > vm->young_end) {
      fail(c, "malformed minor heap block", val_of_ptr(p + 1), hd);
      return;
    }
    check_fields(vm, c, val_of_ptr(p + 1), false);
    p += wosize + 1;
  }
}

static void check_pages(Vm *vm, Check *c) {
  const MajorHeap *h = vm->gc.major;
  uint64_t words = 0;
  for (uint32_t k = 0; k < SIZE_CLASSES; k++) {
    if (h->carving[k] && (h->carving[k]->whsize != k || h->carving[k]->nblocks >= h->carving[k]->capacity))
      fail(c, "carving page of the wrong class or full", val_of_ptr(h->carving[k]), k);
    for (const Page *p = h->pages[k]; p; p = p->next) {
      if (p->whsize != k || p->capacity != page_capacity(k) || p->nblocks == 0 || p->nblocks > p->capacity)
        fail(c, "page with a bad class, capacity or block count", val_of_ptr(p), p->nblocks);
      else if (p->nblocks < p->capacity && p != h->carving[k])
        fail(c, "partly carved page that is not its class's carving page", val_of_ptr(p), p->nblocks);
      words += (uint64_t)p->capacity * k;
    }
  }
  uint64_t pooled = 0, in_classes = 0;
  for (const Page *p = h->pool; p; p = p->next) pooled++;
  if (pooled != h->pool_pages) fail(c, "pool length differs from pool_pages", 0, pooled);
  for (uint32_t k = 0; k < SIZE_CLASSES; k++)
    for (const Page *p = h->pages[k]; p; p = p->next) in_classes++;
  uint64_t unused = (uint64_t)(h->chunk_end - h->chunk_next) / PAGE_BYTES;
  if (in_classes + pooled + h->released_pages + unused != h->chunk_count * (CHUNK_BYTES / PAGE_BYTES))
    fail(c, "pages in classes, pool, released and unused differ from the chunks'", 0, in_classes);
  for (const LargeBlock *b = h->large; b; b = b->next) words += b->whsize;
  if (words != vm->gc.stats.heap_words) fail(c, "heap_words differs from the pages and large blocks", 0, words);
}

bool gc_verify(Vm *vm) {
  Check c = {0};
  check_pages(vm, &c);
  major_each_block(vm, collect, &c);
  if (c.count > 0) qsort(c.blocks, c.count, sizeof(Value), cmp_value);  // blocks is NULL when empty
  major_each_block(vm, check_major_block, &c);
  check_minor(vm, &c);
  gc_scan_roots(vm, check_root, &c);
  free(c.blocks);
  return c.errors == 0;
}
