// retain_stats.c - prints the header of an end-state file (trace/retain.h) as
// one line of numbers for bench/retention_bench.sh: live samples, paths,
// reachable blocks and words, the final collection's and the walk's
// microseconds, and the flags. Exit status 1 if the file does not read.
#include <inttypes.h>
#include <stdio.h>

#include "../trace/retain.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: retain_stats FILE.retain\n");
    return 2;
  }
  RetainFile f;
  char err[512];
  if (!retain_read(argv[1], &f, err, sizeof err)) {
    fprintf(stderr, "retain_stats: %s\n", err);
    return 1;
  }
  const RetainHeader *h = &f.header;
  printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n", h->live_samples, f.path_count,
         h->reachable_blocks, h->reachable_words, h->gc_us, h->walk_us, h->flags);
  retain_file_free(&f);
  return 0;
}
