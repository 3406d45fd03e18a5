// writer.h - the memtrace trace encoder: turns allocation, promotion and
// collection events into the memtrace CTF format (trace/format.h,
// docs/trace-format.md), byte for byte what memtrace's own writer emits for
// the same events. It knows nothing of the VM: frame codes are opaque u64s
// (below 2^62) that a callback resolves to source locations on first use.
//
// Not thread-safe: one writer, one thread. No call allocates per event: the
// writer's buffers grow by doubling and are kept.
#ifndef MINNOW_TRACE_WRITER_H
#define MINNOW_TRACE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

// A source location. The strings are only read during the TraceLocate call
// that returned them (the writer copies what it keeps). Numbers too large
// for the format's fields are clamped (line 20 bits, start 8, end 10).
typedef struct TraceLocation {
  const char *function, *file;  // NUL-terminated
  uint32_t line, start_col, end_col;
} TraceLocation;

// What the first packet records about the run. The strings are read during
// trace_writer_new only; each is cut to TRACE_WRITER_MAX_INFO_STRING bytes
// (TRACE_MAX_INFO_STRING: format.h's table of limits).
typedef struct TraceInfo {
  double sample_rate;
  uint32_t word_size;            // 64
  const char *executable;        // e.g. "/path/to/vm script.mn"
  const char *host;
  const char *runtime_params;    // the VM's parameters as text
  const char *context;           // free text ("" allowed); written for version >= 2
  uint64_t pid;
  uint64_t start_time_us;        // trace info time (us since the epoch)
  uint16_t version;              // 1, 2 or 3 (TRACE_VERSION_DEFAULT = 2)
} TraceInfo;

enum { TRACE_WRITER_MAX_INFO_STRING = TRACE_MAX_INFO_STRING };

// Resolves a frame code to its locations, an inlined chain written caller
// first (the order memtrace writes them). Writes at most `max` entries to
// `out` and returns how many (0: a code with no location). Called at most
// once per distinct code, the first time the code is written to the trace.
// A chain longer than 255 entries (the writer asks for 256 to tell) is
// written as one "??@<unknown>:1:1-1" location, as memtrace does.
typedef uint32_t (*TraceLocate)(void *data, uint64_t code, TraceLocation *out, uint32_t max);

typedef struct TraceWriter TraceWriter;

// Starts a trace on `fd` and writes the trace-info packet at once. The fd is
// closed by trace_writer_close only if close_fd. Returns NULL on failure
// (bad version, out of memory, the first write failed), with a message in
// `err`; the fd is then left open whatever close_fd says.
TraceWriter *trace_writer_new(int fd, bool close_fd, const TraceInfo *info,
                              TraceLocate locate, void *locate_data,
                              char *err, size_t err_len);

// Callstacks deeper than TRACE_MAX_FRAMES (format.h) are written cut to
// their outermost TRACE_MAX_FRAMES frames, in the three calls below, and
// counted (TraceWriterStats.cut_deep).
//
// One allocation event: `wosize` words (header excluded), `n_samples` >= 1.
// `stack` holds the whole callstack, outermost first: stack[0] is the
// outermost frame, stack[depth-1] the allocation site. Its first
// `known_common` entries are those of the previous call's stack (the writer
// compares onwards from there only, and copies only the frames past the
// common part: the cost follows the frames that changed, not the depth).
// `time_us` earlier than the previous event's is taken as equal to it.
// Returns the allocation's id: 0, 1, 2... in call order (also after an error).
uint64_t trace_writer_alloc(TraceWriter *w, uint64_t time_us, uint64_t wosize,
                            uint32_t n_samples, TraceSource source,
                            const uint64_t *stack, uint32_t depth, uint32_t known_common);

// The same event for a caller that keeps the previous callstack itself (the
// trace writer of ./vm --memtrace): stack[0 .. common) must equal the
// previous allocation's callstack. The writer then neither compares nor
// copies frames: the cost is that of the frames past `common`. For the
// bytes memtrace writes, `common` is the longest such prefix; a shorter one
// codes more frames, still correctly. After it, a trace_writer_alloc call
// compares with no previous stack (its known_common counts as 0).
uint64_t trace_writer_alloc_common(TraceWriter *w, uint64_t time_us, uint64_t wosize,
                                   uint32_t n_samples, TraceSource source,
                                   const uint64_t *stack, uint32_t depth, uint32_t common);

// The same event with the callstack given as runs of equal codes: frames
// [runs[i-1].end, runs[i].end) are runs[i].code (runs[-1].end taken as 0),
// outermost first, the allocation site last; consecutive runs have
// different codes, and runs[run_count-1].end is the depth. As for
// trace_writer_alloc_common, the first `common` frames equal the previous
// allocation's. A recursion's run then costs the writer a codeword per 256
// frames, not a step per frame; the bytes are those of the other two calls.
// The id goes to *id; returns false iff the writer has failed (this event or
// earlier), as trace_writer_promote does, so that the caller of every
// sample need not ask trace_writer_error.
typedef struct TraceRun {
  uint64_t code;
  uint32_t end;
} TraceRun;
bool trace_writer_alloc_runs(TraceWriter *w, uint64_t time_us, uint64_t wosize,
                             uint32_t n_samples, TraceSource source,
                             const TraceRun *runs, uint32_t run_count, uint32_t common, uint64_t *id);

// Makes `w` write a code's location event each time the code misses the
// backtrace cache (memtrace's own writer does), not once per run; locate is
// then called each time too. Used by tests to compare with memtrace's
// writer byte for byte.
void trace_writer_relog_locations(TraceWriter *w);

// The frames of the last allocation's callstack that its event carries:
// its depth, or fewer when the TRACE_BACKTRACE_MAX_BYTES cap dropped the
// innermost ones. A reader shows those frames for it (used by tests).
uint32_t trace_writer_backtrace_depth(const TraceWriter *w);

// The allocation `id` (an id trace_writer_alloc returned) was promoted /
// collected. An id never returned is a caller bug: it stops the writer with
// an error naming the id. Returns false iff the writer has failed (this
// event or earlier; trace_writer_error says why), so that a caller need not
// ask after every event.
bool trace_writer_promote(TraceWriter *w, uint64_t time_us, uint64_t id);
bool trace_writer_collect(TraceWriter *w, uint64_t time_us, uint64_t id);

// Writes the packet in progress now, preceded by the location packets it
// needs; the next event starts a new packet. False if the writer has failed.
bool trace_writer_flush(TraceWriter *w);

// Flushes and frees `w` (closes the fd if close_fd). Returns false if any
// write (or the close) failed. trace_writer_finish does the same and copies
// the first error's text into `err` ("" if none).
bool trace_writer_close(TraceWriter *w);
bool trace_writer_finish(TraceWriter *w, char *err, size_t err_len);

// After a write error (EIO, ENOSPC, EPIPE...) or a caller bug, the writer
// stops: every later call is a no-op (trace_writer_alloc still numbers its
// allocations). Returns the first error's text, NULL if none. The text
// belongs to `w`.
const char *trace_writer_error(const TraceWriter *w);

// What the writer has done so far. The byte counts are of bytes written to
// the fd (a packet counts once written): bytes = header_bytes (packet
// headers) + location_bytes (location events) + backtrace_bytes (backtrace
// codewords) + event_bytes (the rest: trace info, event headers and fields).
// allocs/promotes/collects count the events accepted; packets those written.
// cut_deep: allocations whose callstack was deeper than TRACE_MAX_FRAMES
// (written cut to it).
typedef struct TraceWriterStats {
  uint64_t bytes, header_bytes, location_bytes, backtrace_bytes, event_bytes;
  uint64_t allocs, promotes, collects, packets;
  uint64_t cut_deep;
} TraceWriterStats;
void trace_writer_stats(const TraceWriter *w, TraceWriterStats *out);

#endif
