// retain_dump.c - prints an end-state file (trace/retain.h) as text for
// tests/suites/end_state.sh: one header line of fields "name=value", then a
// line a path, "ID ROOT -> HOP -> HOP ...", with a root as
// "global NAME", "stack FUNCTION FILE:LINE local=NAME slot=N", "C N",
// "exception" or "profiler", and a hop as its kind ("field NAME",
// "tuple[I]", "array[I]", "list cell", "capture NAME[I]", ...) followed by
// " xN" when it repeats. Exit status 1 (with the reader's message) if the
// file does not read.
#include <inttypes.h>
#include <stdio.h>

#include "../../trace/retain.h"

static void print_hop(const RetainHop *h) {
  printf(" -> %s", retain_hop_kind_name(h->kind));
  switch (h->kind) {
  case RETAIN_HOP_FIELD: printf(" %s", h->name); break;
  case RETAIN_HOP_CAPTURE: printf(" %s[%" PRIu64 "]", h->name, h->index); break;
  case RETAIN_HOP_TUPLE:
  case RETAIN_HOP_ARRAY:
  case RETAIN_HOP_OTHER: printf("[%" PRIu64 "]", h->index); break;
  default: break;
  }
  if (h->count > 1) printf(" x%" PRIu64, h->count);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: retain_dump FILE.retain\n");
    return 2;
  }
  RetainFile f;
  char err[512];
  if (!retain_read(argv[1], &f, err, sizeof err)) {
    fprintf(stderr, "retain_dump: %s\n", err);
    return 1;
  }
  const RetainHeader *h = &f.header;
  printf("pid=%" PRIu64 " allocs=%" PRIu64 " final_gc=%d paths=%d live=%" PRIu64 " written=%" PRIu64
         " reachable=%" PRIu64 " reason=%s\n",
         h->pid, h->alloc_count, (h->flags & RETAIN_FINAL_GC) != 0, (h->flags & RETAIN_PATHS) != 0, h->live_samples,
         f.path_count, h->reachable_blocks, h->reason[0] ? h->reason : "-");
  for (uint64_t i = 0; i < f.path_count; i++) {
    const RetainPath *p = &f.paths[i];
    const RetainRoot *r = &p->root;
    printf("%" PRIu64 " %s", p->alloc_id, retain_root_kind_name(r->kind));
    if (r->kind == RETAIN_ROOT_GLOBAL) printf(" %s", r->name);
    if (r->kind == RETAIN_ROOT_STACK)
      printf(" %s %s:%u local=%s slot=%" PRIu64, r->name, r->file, r->line, r->local[0] ? r->local : "-", r->index);
    if (r->kind == RETAIN_ROOT_C) printf(" %" PRIu64, r->index);
    for (uint32_t k = 0; k < p->hop_count; k++) print_hop(&p->hops[k]);
    putchar('\n');
  }
  retain_file_free(&f);
  return 0;
}
