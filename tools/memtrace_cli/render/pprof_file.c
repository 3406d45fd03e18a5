// pprof_file.c - gzipped pprof profiles (pprof_file.h): a gzip stream as
// the sink of trace/pprof_writer.c. The stream is kept in a table of open
// files by writer (a profile at a time in practice), so that closing finds
// it from the writer alone.
#include "pprof_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../base/xalloc.h"

typedef struct GzSink {
  gzFile gz;
  PprofWriter *w;
  char error[256];
} GzSink;

enum { OPEN_FILES = 4 };
static GzSink open_files[OPEN_FILES];

static bool gz_sink(void *ctx, const void *bytes, size_t n) {
  GzSink *s = ctx;
  while (n > 0) {
    unsigned part = n > (1u << 30) ? 1u << 30 : (unsigned)n;
    if (gzwrite(s->gz, bytes, part) != (int)part) {
      int errnum;
      const char *text = gzerror(s->gz, &errnum);
      if (!s->error[0]) snprintf(s->error, sizeof s->error, "%s", errnum == Z_ERRNO ? strerror(errno) : text);
      return false;
    }
    bytes = (const char *)bytes + part;
    n -= part;
  }
  return true;
}

PprofWriter *pprof_file_open(const char *path, char *err, size_t err_size) {
  bool is_stdout = strcmp(path, "-") == 0;
  int fd = is_stdout ? dup(1) : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    snprintf(err, err_size, "cannot create %s: %s", path, strerror(errno));
    return NULL;
  }
  return pprof_file_open_fd(fd, path, err, err_size);
}

PprofWriter *pprof_file_open_fd(int fd, const char *name, char *err, size_t err_size) {
  GzSink *s = NULL;
  for (int i = 0; i < OPEN_FILES && !s; i++)
    if (!open_files[i].gz) s = &open_files[i];
  if (!s) {
    snprintf(err, err_size, "cannot create %s: too many profiles open", name);
    close(fd);
    return NULL;
  }
  errno = 0;
  gzFile gz = gzdopen(fd, "wb");
  if (!gz) {
    snprintf(err, err_size, "cannot write %s: %s", name, errno ? strerror(errno) : "out of memory");
    close(fd);
    return NULL;
  }
  *s = (GzSink){.gz = gz};
  if (!(s->w = pprof_writer_new(gz_sink, s))) xalloc_fail();
  return s->w;
}

int pprof_file_close(PprofWriter *w, char *err, size_t err_size) {
  GzSink *s = NULL;
  for (int i = 0; i < OPEN_FILES && !s; i++)
    if (open_files[i].w == w) s = &open_files[i];
  if (!s) {
    snprintf(err, err_size, "closing a profile that was not opened");
    return -1;
  }
  char what[512] = "";
  if (pprof_writer_error(w)[0])
    snprintf(what, sizeof what, "%s%s%s", pprof_writer_error(w), s->error[0] ? ": " : "", s->error);
  int failed = pprof_writer_free(w);
  int status = gzclose(s->gz);
  if (status != Z_OK && !what[0])
    snprintf(what, sizeof what, "closing failed: %s", status == Z_ERRNO ? strerror(errno) : "zlib error");
  *s = (GzSink){0};
  if (!failed && !what[0]) return 0;
  snprintf(err, err_size, "%s", what[0] ? what : "failed");
  return -1;
}
