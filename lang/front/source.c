// source.c - reading source files (source.h).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"

static void cannot_read(SourceError *err, int errnum) {
  err->cannot_read = true;
  snprintf(err->message, sizeof err->message, "%s", strerror(errnum));
}

// Reads fd to its end, or to one byte past SOURCE_MAX_BYTES, into a growing
// buffer; false (err set) on a read error or when out of memory.
static bool read_all(int fd, char **out, size_t *len, SourceError *err) {
  const size_t limit = (size_t)SOURCE_MAX_BYTES + 2;   // one byte too many, and the NUL
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 == cap) {
      if (cap == limit) break;   // too long: the caller reports it
      size_t bigger = cap * 2 < limit ? cap * 2 : limit;
      char *grown = realloc(buf, bigger);
      if (!grown) break;
      buf = grown;
      cap = bigger;
    }
    ssize_t got = read(fd, buf + n, cap - n - 1);
    if (got == 0) break;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      cannot_read(err, errno);
      free(buf);
      return false;
    }
    n += (size_t)got;
  }
  if (!buf || (n + 1 == cap && cap < limit)) {
    cannot_read(err, ENOMEM);
    free(buf);
    return false;
  }
  buf[n] = 0;
  *out = buf;
  *len = n;
  return true;
}

// The position of the first NUL of text[0..len) into err, if there is one.
static bool check_no_nul(const char *text, size_t len, SourceError *err) {
  const char *nul = memchr(text, 0, len);
  if (!nul) return true;
  uint32_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < (size_t)(nul - text); i++)
    if (text[i] == '\n') {
      line++;
      line_start = i + 1;
    }
  err->line = line;
  err->col = (uint32_t)((size_t)(nul - text) - line_start + 1);
  snprintf(err->message, sizeof err->message, "file contains a NUL byte");
  return false;
}

bool source_check(const char *text, size_t len, SourceError *err) {
  memset(err, 0, sizeof *err);
  if (len > SOURCE_MAX_BYTES) {
    snprintf(err->message, sizeof err->message, "file too large (more than %u bytes)", (unsigned)SOURCE_MAX_BYTES);
    return false;
  }
  return check_no_nul(text, len, err);
}

bool source_read(const char *path, char **text, size_t *len, SourceError *err) {
  *text = NULL;
  memset(err, 0, sizeof *err);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    cannot_read(err, errno);
    return false;
  }
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  if (!ok) cannot_read(err, errno);
  else if (S_ISDIR(st.st_mode)) ok = false, cannot_read(err, EISDIR);
  char *buf = NULL;
  if (ok) ok = read_all(fd, &buf, len, err);
  close(fd);
  if (ok) ok = source_check(buf, *len, err);
  if (!ok) {
    free(buf);
    return false;
  }
  *text = buf;
  return true;
}
