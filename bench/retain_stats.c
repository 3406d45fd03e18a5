// retain_stats.c - prints the last whole snapshot of a snapshot file (the
// end state; trace/snapshot_reader.h) as one line of numbers for
// bench/retention_bench.sh: live samples, paths, marked blocks and words,
// the collection's and the paths' microseconds (the pause without the
// paths, then the paths), and the flags. Exit status 1 if the file does not
// read or holds no whole snapshot.
#include <inttypes.h>
#include <stdio.h>

#include "../trace/snapshot_reader.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: retain_stats FILE.retain\n");
    return 2;
  }
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *r = snapshot_reader_open(argv[1], err, sizeof err);
  if (!r) {
    fprintf(stderr, "retain_stats: %s\n", err);
    return 1;
  }
  uint32_t n = snapshot_count(r);
  if (!n) {
    fprintf(stderr, "retain_stats: %s: no whole snapshot\n", argv[1]);
    snapshot_reader_close(r);
    return 1;
  }
  const Snapshot *s = snapshot_get(r, n - 1);
  const RetainSnapshotEnd *e = &s->end;
  uint64_t gc_us = e->pause_us > e->paths_us ? e->pause_us - e->paths_us : 0;
  printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n", e->live_samples, s->paths,
         e->marked_blocks, e->marked_words, gc_us, e->paths_us, e->flags);
  snapshot_reader_close(r);
  return 0;
}
