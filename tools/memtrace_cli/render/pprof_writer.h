// pprof_writer.h - writes a gzipped pprof profile (google/pprof's
// proto/profile.proto, package perftools.profiles) as it is built, with its
// own protobuf encoder; knows nothing of traces.
//
// Contract
// 1. Streaming. Every call appends its message to the gzip stream at once:
//    protobuf lets a message's fields come in any order and repeated fields
//    accumulate, so samples, locations, functions and strings are written as
//    they come. The writer keeps only what deduplication needs: the strings
//    and the (name, file) pairs of functions written so far.
// 2. Ids and indexes. String index 0 is "" (written at open). Function ids
//    count from 1 and are shared by equal (name, file, start_line); mapping
//    and location ids count from 1, one per call.
// 3. A sample names locations leaf first (innermost frame first), as pprof
//    wants, and carries one value per sample type declared before it; its
//    locations may be written before or after it.
// 4. Errors. Out of memory exits (status 1, message on stderr). Write errors
//    are remembered; pprof_writer_close reports the first one.
#ifndef MINNOW_PPROF_WRITER_H
#define MINNOW_PPROF_WRITER_H

#include <stddef.h>
#include <stdint.h>

typedef struct PprofWriter PprofWriter;

// One line of a location: a function (id from pprof_writer_function) and a
// line number in its file (0: unknown).
typedef struct PprofLine {
  uint64_t function_id;
  int64_t line;
} PprofLine;

// Creates `path` ("-": stdout) and starts the gzip stream. NULL on failure,
// with the reason in err[0 .. err_size).
PprofWriter *pprof_writer_open(const char *path, char *err, size_t err_size);
// The same on an open descriptor, which the writer owns from then on (also
// on failure: closed); `name` is for messages.
PprofWriter *pprof_writer_open_fd(int fd, const char *name, char *err, size_t err_size);

// The string table index of `s`: equal strings get the same index. Bytes
// are written as given (pprof expects UTF-8: the caller sanitizes).
int64_t pprof_writer_string(PprofWriter *w, const char *s);

// Profile fields: a sample type (one per value of every sample, in order),
// the period type and period, the time of collection and duration (ns), a
// comment line, and the type pprof shows by default.
void pprof_writer_sample_type(PprofWriter *w, const char *type, const char *unit);
void pprof_writer_period(PprofWriter *w, const char *type, const char *unit, int64_t period);
void pprof_writer_times(PprofWriter *w, int64_t time_nanos, int64_t duration_nanos);
void pprof_writer_comment(PprofWriter *w, const char *text);
void pprof_writer_default_sample_type(PprofWriter *w, const char *type);

// A mapping for `file` (the program), saying that functions, file names,
// line numbers and inlined frames are already resolved (no symbolization).
uint64_t pprof_writer_mapping(PprofWriter *w, const char *file);

// The id of function (name, file, start_line), written on first use, with
// no system name (so pprof takes the name as it is, without demangling).
uint64_t pprof_writer_function(PprofWriter *w, const char *name, const char *file, int64_t start_line);

// A new location of `mapping_id` (0: none) with lines[0 .. n): the first is
// the innermost, each later one the caller into which the ones before it
// were inlined (pprof's order). Returns its id.
uint64_t pprof_writer_location(PprofWriter *w, uint64_t mapping_id, const PprofLine *lines, size_t n);

// A sample: locations leaf first, one value per declared sample type.
void pprof_writer_sample(PprofWriter *w, const uint64_t *location_ids, size_t n_locations, const int64_t *values,
                         size_t n_values);

// Ends the gzip stream and frees `w`. Returns 0, or -1 with the first error
// met (writing or closing) in err[0 .. err_size).
int pprof_writer_close(PprofWriter *w, char *err, size_t err_size);

#endif
