// retain_dump.c - prints the last whole snapshot of a snapshot file (the end
// state; trace/snapshot_reader.h) as text for tests/suites/end_state.sh: one
// header line of fields "name=value", then a
// line a path, "ID ROOT -> HOP -> HOP ...", with a root as
// "global NAME", "stack FUNCTION FILE:LINE local=NAME slot=N", "C N",
// "exception" or "profiler", and a hop as its kind ("field NAME",
// "tuple[I]", "array[I]", "list cell", "capture NAME[I]", ...) followed by
// " xN" when it repeats. Exit status 1 (with the reader's message) if the
// file does not read.
#include <inttypes.h>
#include <stdio.h>

#include "../../trace/snapshot_reader.h"

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
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *r = snapshot_reader_open(argv[1], err, sizeof err);
  if (!r) {
    fprintf(stderr, "retain_dump: %s\n", err);
    return 1;
  }
  uint32_t n = snapshot_count(r);
  if (!n) {
    fprintf(stderr, "retain_dump: %s: no whole snapshot\n", argv[1]);
    snapshot_reader_close(r);
    return 1;
  }
  const Snapshot *s = snapshot_get(r, n - 1);
  const RetainSnapshotEnd *e = &s->end;
  printf("pid=%" PRIu64 " allocs=%" PRIu64 " final_gc=%d paths=%d live=%" PRIu64 " written=%" PRIu64
         " reachable=%" PRIu64 " reason=%s\n",
         snapshot_reader_pid(r), s->alloc_count, (e->flags & RETAIN_COLLECTED) != 0, (e->flags & RETAIN_PATHS) != 0,
         e->live_samples, s->paths, e->marked_blocks, e->reason[0] ? e->reason : "-");
  for (uint64_t i = 0; i < s->paths; i++) {
    const RetainPath *p = snapshot_path(r, n - 1, i);
    const RetainRoot *rt = &p->root;
    printf("%" PRIu64 " %s", p->alloc_id, retain_root_kind_name(rt->kind));
    if (rt->kind == RETAIN_ROOT_GLOBAL) printf(" %s", rt->name);
    if (rt->kind == RETAIN_ROOT_STACK)
      printf(" %s %s:%u local=%s slot=%" PRIu64, rt->name, rt->file, rt->line, rt->local[0] ? rt->local : "-",
             rt->index);
    if (rt->kind == RETAIN_ROOT_C) printf(" %" PRIu64, rt->index);
    for (uint32_t k = 0; k < p->hop_count; k++) print_hop(&p->hops[k]);
    putchar('\n');
  }
  snapshot_reader_close(r);
  return 0;
}
