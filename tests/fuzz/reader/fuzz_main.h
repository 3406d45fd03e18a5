// fuzz_main.h - the main of the reader targets (fuzz_reader.c, fuzz_pair.c):
// FUZZ_MAIN(setup, run) at the end of the target's file. Under
// afl-clang-fast, afl++'s persistent loop: `setup()` once, then `run` on
// each input from shared memory. Built with a plain compiler, the replay:
// `setup()`, then each file named on the command line (its first
// FUZZ_REPLAY_MAX_BYTES bytes) through `run`, in one process, so that
// state carried from one input to the next shows too; status 1 if a file
// cannot be opened, else 0.
#ifndef MINNOW_FUZZ_MAIN_H
#define MINNOW_FUZZ_MAIN_H

#include <stddef.h>
#include <stdio.h>

enum { FUZZ_REPLAY_MAX_BYTES = 1 << 22 };

#ifdef __AFL_FUZZ_TESTCASE_LEN
#define FUZZ_MAIN(setup, run)                                                  \
  __AFL_FUZZ_INIT();                                                           \
  int main(void) {                                                             \
    setup();                                                                   \
    __AFL_INIT();                                                              \
    unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;                              \
    while (__AFL_LOOP(10000)) run(buf, (size_t)__AFL_FUZZ_TESTCASE_LEN);       \
    return 0;                                                                  \
  }
#else
#define FUZZ_MAIN(setup, run)                                                  \
  int main(int argc, char **argv) {                                            \
    static unsigned char buf[FUZZ_REPLAY_MAX_BYTES];                           \
    setup();                                                                   \
    for (int i = 1; i < argc; i++) {                                           \
      FILE *f = fopen(argv[i], "rb");                                          \
      if (!f) {                                                                \
        perror(argv[i]);                                                       \
        return 1;                                                              \
      }                                                                        \
      size_t n = fread(buf, 1, sizeof buf, f);                                 \
      fclose(f);                                                               \
      run(buf, n);                                                             \
    }                                                                          \
    return 0;                                                                  \
  }
#endif

#endif
