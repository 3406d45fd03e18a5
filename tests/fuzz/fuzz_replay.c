// fuzz_replay.c - runs files through the fuzz target, one after the other in
// one process, as the fuzzer does (build/fuzzreplay/fuzz_replay FILE...):
// to reproduce a finding under gdb, and for tests/suites/fuzz_corpus.sh,
// which replays the corpus and every past finding under ASan and UBSan.
// Prints "FILE: ran in N us" per file; a sanitizer report or a signal ends it.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf) return 1;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  LLVMFuzzerTestOneInput(buf, n);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  free(buf);
  long us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
  fprintf(stderr, "%s: ran in %ld us\n", path, us);
  return 0;
}

int main(int argc, char **argv) {
  int failed = 0;
  for (int i = 1; i < argc; i++) failed |= replay(argv[i]);
  return failed;
}
