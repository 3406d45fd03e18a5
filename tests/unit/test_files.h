// test_files.h - a file's bytes for the trace tests' cmocka unit tests
// (test_trace_reader.c, test_snapshot_reader.c). Header-only, as
// test_support.h: the Makefile links each tests/unit/test_*.c alone with the
// objects it tests (a tests/unit/*.h is a dependency of every unit test).
//
// Contract: test_slurp(path) reads the whole file (fails the test when it
// cannot be opened or read); the bytes are followed by a NUL not counted in
// n (so an empty file still gets a buffer); the caller frees b.
#ifndef MINNOW_TEST_FILES_H
#define MINNOW_TEST_FILES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct TestBytes {
  uint8_t *b;
  size_t n;
} TestBytes;

static inline TestBytes test_slurp(const char *path) {
  TestBytes out = {0};
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  assert_true(n >= 0);
  out.n = (size_t)n;
  assert_int_equal(fseek(f, 0, SEEK_SET), 0);
  out.b = malloc(out.n + 1);
  assert_non_null(out.b);
  assert_int_equal(fread(out.b, 1, out.n, f), out.n);
  out.b[out.n] = 0;
  fclose(f);
  return out;
}

#endif
