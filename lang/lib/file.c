// file.c - the C half of stdlib/file.mn: a file read whole. Contract for
// every primitive: primitives.h.
//   1. The bytes go into a malloc'd buffer first, then into one new string
//      (ops_string copies them): nothing points into the heap across an
//      allocation.
//   2. A file longer than FILE_MAX_READ_BYTES is refused with an error
//      rather than read until memory runs out (/dev/zero ends after 256 MiB
//      with "file too large"); a directory, a missing or unreadable file
//      raises an error naming the path and the reason.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "native.h"

enum { FILE_MAX_READ_BYTES = 256u << 20 };

// The path in v as a C string (a copy: the string may move), or an error
// naming `what` when it holds a NUL byte.
static char *path_of(Vm *vm, Value v, const char *what) {
  args_string(vm, v, what);
  size_t n = str_len(v);
  if (strlen(str_bytes(v)) != n) gc_raise_error(vm, "%s: the file name contains a NUL byte", what);
  char *copy = malloc(n + 1);
  if (!copy) vm_raise_out_of_memory(vm);
  memcpy(copy, str_bytes(v), n + 1);
  return copy;
}

// Reads fd to its end into *out (malloc'd); 0, or an errno value (EFBIG
// past FILE_MAX_READ_BYTES).
static int read_to_end(int fd, char **out, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  if (!buf) return ENOMEM;
  for (;;) {
    if (n == cap) {
      if (cap > FILE_MAX_READ_BYTES) {
        free(buf);
        return EFBIG;
      }
      char *grown = realloc(buf, cap * 2);
      if (!grown) {
        free(buf);
        return ENOMEM;
      }
      buf = grown;
      cap *= 2;
    }
    ssize_t got = read(fd, buf + n, cap - n);
    if (got == 0) break;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int e = errno;
      free(buf);
      return e;
    }
    n += (size_t)got;
  }
  if (n > FILE_MAX_READ_BYTES) {
    free(buf);
    return EFBIG;
  }
  *out = buf;
  *len = n;
  return 0;
}

Value lib_file_read(Vm *vm, Value *args) {
  char *path = path_of(vm, args[0], "File.read");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  int e = fd < 0 ? errno : fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
  char *buf = NULL;
  size_t n = 0;
  if (e == 0) e = read_to_end(fd, &buf, &n);
  if (fd >= 0) close(fd);
  if (e != 0) {
    char message[512];
    snprintf(message, sizeof message, "File.read: %s: %s", path, e == EFBIG ? "file too large (more than 268435456 bytes)" : strerror(e));
    free(path);
    gc_raise_error(vm, "%s", message);
  }
  free(path);
  Value s = ops_string(vm, buf, n);   // buf is not in the heap: no GC moves it
  free(buf);
  return s;
}
