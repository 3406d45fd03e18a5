// pprof_writer.h - writes a pprof profile (google/pprof's
// proto/profile.proto, package perftools.profiles) as it is built, with its
// own protobuf encoder, to a sink the caller gives (a file, a gzip stream,
// memory): the bytes are the uncompressed protobuf, which pprof reads as it
// reads gzipped ones. Knows nothing of traces or of the VM, needs no zlib
// (the VM writes profiles with it too; the trace tool gzips them).
//
// Contract
// 1. Streaming. Every call hands its message to the sink at once:
//    protobuf lets a message's fields come in any order and repeated fields
//    accumulate, so samples, locations, functions and strings are written as
//    they come. The writer keeps only what deduplication needs: the strings
//    and the (name, file) pairs of functions written so far.
// 2. Ids and indexes. String index 0 is "" (written at creation). Function ids
//    count from 1 and are shared by equal (name, file, start_line); mapping
//    and location ids count from 1, one per call.
// 3. A sample names locations leaf first (innermost frame first), as pprof
//    wants, and carries one value per sample type declared before it; its
//    locations may be written before or after it.
// 4. Errors. The first failure (the sink refusing bytes, memory) is kept:
//    later calls write nothing and return 0; pprof_writer_error says what.
//    Nothing aborts.
// 5. Labels. A sample may carry labels (key and string value, or key and
//    number with its unit): how Pyroscope and Parca tag a profile's samples
//    (here, what holds the blocks).
#ifndef MINNOW_TRACE_PPROF_WRITER_H
#define MINNOW_TRACE_PPROF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct PprofWriter PprofWriter;

// Takes n bytes of the profile; false on failure (errno says why, or 0).
typedef bool (*PprofSink)(void *ctx, const void *bytes, size_t n);

// One line of a location: a function (id from pprof_writer_function) and a
// line number in its file (0: unknown).
typedef struct PprofLine {
  uint64_t function_id;
  int64_t line;
} PprofLine;

// A writer handing its bytes to sink(ctx, ...). NULL when memory is short.
PprofWriter *pprof_writer_new(PprofSink sink, void *ctx);
// The first failure ("" if none): "write failed: REASON", "out of memory".
const char *pprof_writer_error(const PprofWriter *w);
// Frees w (the sink is the caller's to close). Returns 0, or -1 if a
// failure was met.
int pprof_writer_free(PprofWriter *w);

// A sink writing to a file descriptor (ctx: a pointer to the int), retried
// on short writes and EINTR.
bool pprof_sink_fd(void *ctx, const void *bytes, size_t n);

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

// A mapping for `file`, saying that functions, file names, line numbers and
// inlined frames are already resolved (no symbolization). Its address range
// is empty and locations carry no address: `file` should name no object
// file pprof could open (a virtual name such as "[vm]"), or pprof's source
// and disassembly views take the object's code at addresses that are not
// its own (go tool pprof 1.19 panics on -weblist).
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

// A label of a sample: key = str, or key = num (num_unit: its unit, or NULL).
typedef struct PprofLabel {
  const char *key;
  const char *str;           // NULL: a numeric label
  int64_t num;
  const char *num_unit;
} PprofLabel;

enum { PPROF_MAX_LABELS = 16 };

// A sample with labels (at most PPROF_MAX_LABELS: more is a failure).
void pprof_writer_sample_labels(PprofWriter *w, const uint64_t *location_ids, size_t n_locations,
                                const int64_t *values, size_t n_values, const PprofLabel *labels, size_t n_labels);

#endif
