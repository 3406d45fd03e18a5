// stdin.c - the C half of stdlib/stdin.mn: standard input a line at a time
// or to its end. Contract for every primitive: primitives.h.
//   1. Both read through stdio, so a read_all after read_line gets what the
//      first one buffered; standard output is flushed first, so that a
//      prompt shows before the program waits.
//   2. A line or an input longer than STDIN_MAX_READ_BYTES is refused with
//      an error rather than read until memory runs out.
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

enum { STDIN_MAX_READ_BYTES = 256u << 20 };

Value lib_stdin_read_line(Vm *vm, Value *args) {
  (void)args;
  fflush(stdout);
  size_t cap = 128, n = 0;
  char *line = malloc(cap);
  if (!line) vm_raise_out_of_memory(vm);
  int c = EOF;
  while ((c = getc(stdin)) != EOF && c != '\n') {
    if (n == cap) {
      char *grown = cap > STDIN_MAX_READ_BYTES ? NULL : realloc(line, cap * 2);
      if (!grown) {
        free(line);
        if (cap > STDIN_MAX_READ_BYTES)
          gc_raise_error(vm, "Stdin.read_line: standard input: a line longer than 268435456 bytes");
        vm_raise_out_of_memory(vm);
      }
      line = grown;
      cap *= 2;
    }
    line[n++] = (char)c;
  }
  if (c == EOF && (n == 0 || ferror(stdin))) {
    bool failed = ferror(stdin);
    int e = errno;  // getc's, read before free can change it
    free(line);
    if (failed) gc_raise_error(vm, "Stdin.read_line: standard input: %s", strerror(e));
    return VAL_NIL;   // the end of the input
  }
  if (n > 0 && line[n - 1] == '\r') n--;
  Value s = ops_string(vm, line, n);   // line is not in the heap: no GC moves it
  free(line);
  return s;
}

Value lib_stdin_read_all(Vm *vm, Value *args) {
  (void)args;
  fflush(stdout);
  // Through stdio: what a read_line before buffered already comes first.
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  int e = buf ? 0 : ENOMEM;
  while (e == 0) {
    if (n == cap) {
      char *grown = cap > STDIN_MAX_READ_BYTES ? NULL : realloc(buf, cap * 2);
      if (!grown) {
        e = cap > STDIN_MAX_READ_BYTES ? EFBIG : ENOMEM;
        break;
      }
      buf = grown;
      cap *= 2;
    }
    errno = 0;
    size_t got = fread(buf + n, 1, cap - n, stdin);
    n += got;
    if (got == 0) e = ferror(stdin) ? (errno ? errno : EIO) : -1;
  }
  if (e == -1 && n > STDIN_MAX_READ_BYTES) e = EFBIG;
  if (e != -1) {
    free(buf);
    if (e == ENOMEM) vm_raise_out_of_memory(vm);
    gc_raise_error(vm, "Stdin.read_all: standard input: %s",
                   e == EFBIG ? "more than 268435456 bytes" : strerror(e));
  }
  Value s = ops_string(vm, buf, n);
  free(buf);
  return s;
}
