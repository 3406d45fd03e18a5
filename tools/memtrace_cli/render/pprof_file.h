// pprof_file.h - a pprof profile (trace/pprof_writer.h) written gzipped to a
// file or to stdout, the form go tool pprof and profile stores take; zlib
// does the compressing.
#ifndef MINNOW_MEMTRACE_PPROF_FILE_H
#define MINNOW_MEMTRACE_PPROF_FILE_H

#include <stddef.h>

#include "../../../trace/pprof_writer.h"

// Creates `path` ("-": stdout) and starts the gzip stream; a writer into
// it. NULL on failure, with the reason in err[0 .. err_size). Out of
// memory exits (xalloc_fail).
PprofWriter *pprof_file_open(const char *path, char *err, size_t err_size);
// The same on an open descriptor, which the writer owns from then on (also
// on failure: closed); `name` is for messages.
PprofWriter *pprof_file_open_fd(int fd, const char *name, char *err, size_t err_size);

// Ends the gzip stream, closes the file and frees `w`. Returns 0, or -1
// with the first failure met (encoding, writing, closing) in err.
int pprof_file_close(PprofWriter *w, char *err, size_t err_size);

#endif
