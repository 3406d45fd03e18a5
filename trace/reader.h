// reader.h - streaming reader of memtrace CTF traces (format versions 1, 2
// and 3, written by memtrace or by ./vm --memtrace): packets, the backtrace
// and location codecs, one event at a time. Layouts: trace/format.h and
// docs/trace-format.md. Knows nothing of the VM.
//
// Contract
// 1. Ownership. A TraceReader owns its file descriptor (also one passed to
//    trace_reader_open_fd), its buffers and its tables; trace_reader_close
//    frees them all. Nothing the reader returns is to be freed by the caller.
// 2. Lifetimes of returned pointers:
//      TraceEvent.backtrace         until the next trace_reader_next or close
//      TraceReaderInfo strings      until close
//      locations (and their names)  until close: a code's list never changes
//      trace_reader_error's result  until close
// 3. Memory is bounded by the codec's state, not by the trace's length: a
//    read buffer of at most 1 MiB (less for a small file); per domain (at
//    most TRACE_READER_MAX_DOMAINS) the backtrace cache (16,384 buckets,
//    160 KiB), the move-to-front name tables and the current backtrace (at
//    most TRACE_READER_MAX_FRAMES frames, TRACE_READER_MAX_TOTAL_FRAMES over
//    all domains: 64 and 128 MiB; deeper backtraces are cut, see the enum);
//    the table of distinct location codes and the distinct names they use
//    (a few times the location bytes read); in
//    version 3, one id range per event packet; in versions 1 and 2, 2 bits
//    per allocation (whether it was collected). Work: each byte read decodes
//    at most 86 frames (a 3-byte codeword predicts 255); when the domain
//    changes, `common` compares only frames decoded since the last time
//    those two domains met (kept per pair: 64 x 64 entries once a second
//    domain appears); the rest is constant per byte or per packet
//    (O(domains x log packets) in version 3).
// 4. Bad input never aborts and is never read out of bounds. Every event
//    decoded before the damage is returned; then trace_reader_next returns
//    TRACE_READER_ERROR, and keeps returning it. The error names the byte
//    offset in the file and what was wrong, and its kind tells a trace cut
//    short at the end of the file (TRACE_ERROR_TRUNCATED: the last packet
//    is incomplete) from a damaged one (TRACE_ERROR_CORRUPT).
//    "The events before the damage": a packet is decoded only once it is
//    wholly in memory, so a truncated trace yields the events of its complete
//    packets; inside a complete but damaged packet, events are returned up to
//    the first one whose decoding fails (as memtrace's own reader does). The
//    events returned are thus a prefix of those of the undamaged trace, as
//    long as the damage is detected where it is; damage that still decodes
//    (a flipped length or time bit) cannot be told from data.
// 5. End of file: TRACE_READER_END at a packet boundary. Calling
//    trace_reader_next again after TRACE_READER_END reads on if the file has
//    grown (a writer appending whole packets). With trace_reader_follow(r,
//    true), an incomplete last packet is not an error either: next returns
//    TRACE_READER_END and decodes the packet on a later call, once whole.
// 6. Compatibility with memtrace's reader (v0.2.3 and later): packets of
//    another pid than the trace info's are skipped (and counted); a new file
//    name in the location codec reuses the function table of the entry it
//    evicts (the v1 encoder relied on it; later encoders are unaffected); a
//    common prefix longer than the previous backtrace (the writer cut that
//    one at 4,086 bytes) gives the previous backtrace again. Stricter than
//    memtrace, as errors: such a prefix after a backtrace too short to have
//    been cut; a codeword naming an empty cache bucket (memtrace's writer
//    codes frame code 0 so; ours caches code 0 like any code, and a reader
//    decodes it); a frame whose code no location event defined; a packet
//    whose first allocation id does not follow the previous packet's; mixed
//    format versions; packet sizes over 32 KiB; negative lengths, counts and
//    references; a packet spanning 2^25 us or more (its events' times would
//    be rebuilt wrongly); a trace-info packet with two times, allocation
//    ids, a cache check or another pid than its event's; a word size other
//    than 32 or 64; an allocation with no sample; a frame code of 2^62 or
//    more (memtrace reads 63 bits of it); in version 3, allocation ids that
//    two domains' packets both declare; in versions 1 and 2, a promotion
//    or collection of a block already collected. docs/trace-format.md section 10
//    lists every check.
// 7. Not thread-safe; distinct readers are independent.
#ifndef MINNOW_TRACE_READER_H
#define MINNOW_TRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

enum {
  // Frames of one backtrace kept, at most: format.h's TRACE_MAX_FRAMES, what
  // a writer writes at most (twice the deepest recursion of ./vm's default
  // stack). A deeper one (a crafted trace) is cut to its outermost frames,
  // never refused: the event says so (TraceEvent.cut) and the stats count
  // it. The cap bounds the reader's memory and the work a consumer does per
  // event, which a few bytes can otherwise multiply (a common prefix repeats
  // the whole previous backtrace).
  TRACE_READER_MAX_FRAMES = TRACE_MAX_FRAMES,
  // Frames held by all domains together, at most: past it, a domain's
  // backtraces are cut likewise where its room ends.
  TRACE_READER_MAX_TOTAL_FRAMES = 2 * TRACE_MAX_FRAMES,
  TRACE_READER_MAX_DOMAINS = 64,      // distinct v3 domains, at most
  TRACE_READER_ERROR_MAX = 256,       // bytes of an error message, NUL included
};

typedef struct TraceReader TraceReader;

typedef enum TraceReaderStatus {
  TRACE_READER_EVENT = 1,   // *event holds the next event
  TRACE_READER_END = 0,     // no more events (for now: see contract 5)
  TRACE_READER_ERROR = -1,  // trace_reader_error says what and where
} TraceReaderStatus;

typedef enum TraceErrorKind {
  TRACE_ERROR_NONE = 0,
  TRACE_ERROR_IO,         // open or read failed (errno's text in the message)
  TRACE_ERROR_TRUNCATED,  // the file ends inside a packet
  TRACE_ERROR_CORRUPT,    // bytes that no writer produces
  TRACE_ERROR_VERSION,    // a format version this reader does not know
  TRACE_ERROR_LIMIT,      // beyond one of this reader's limits (frames, domains)
  TRACE_ERROR_MEMORY,     // out of memory
} TraceErrorKind;

// What went wrong. `message` starts with the byte offset ("byte 1234: bad
// magic 0x00000000 in the packet header"), except for IO errors of open.
typedef struct TraceReaderError {
  TraceErrorKind kind;
  uint64_t offset;  // byte offset in the file where the damage was seen
  char message[TRACE_READER_ERROR_MAX];
} TraceReaderError;

typedef enum TraceEventKind {
  TRACE_EVENT_ALLOC = 0,
  TRACE_EVENT_PROMOTE = 1,
  TRACE_EVENT_COLLECT = 2,
} TraceEventKind;

// One event. Allocation ids count from 0 in allocation order; a promotion
// or collection names the id of the allocation it is about.
typedef struct TraceEvent {
  TraceEventKind kind;
  uint64_t id;
  uint64_t time_us;      // microseconds since the Unix epoch
  uint64_t dtime_us;     // microseconds since the trace's start time
  uint64_t offset;       // byte offset of the event in the file
  uint16_t domain;       // v3 domain (0 for v1 and v2)
  // Allocations only (zero for the others):
  TraceSource source;    // minor, major or external
  uint64_t length;       // words, header excluded
  uint64_t n_samples;
  // The callstack, outermost frame first: backtrace[0 .. backtrace_len).
  // backtrace[0 .. common) equal the previous allocation's frames (any
  // domain's), so a consumer keeping state per prefix only looks at the
  // frames from `common` on. `backtrace` points into the reader: valid until
  // the next trace_reader_next. coded_prefix is the prefix length as coded in
  // the file (what memtrace's dump_trace prints); it equals `common` but
  // where the writer cut the previous backtrace or the domain changed.
  const uint64_t *backtrace;
  uint32_t backtrace_len;
  uint32_t common;
  uint64_t coded_prefix;
  // The backtrace is the outermost backtrace_len frames of a deeper one
  // (TRACE_READER_MAX_FRAMES, or the domains' room): the rest left out.
  bool cut;
} TraceEvent;

// The trace-info event, from the first packet.
typedef struct TraceReaderInfo {
  uint16_t version;          // 1, 2 or 3
  double sample_rate;        // probability that a word is sampled
  uint32_t word_size;        // bits (64)
  const char *executable;
  const char *host;
  const char *runtime_params;
  const char *context;       // "" when absent (always absent in version 1)
  uint64_t pid;
  uint64_t start_time_us;    // us since the epoch; event times count from it
  uint16_t domain;           // the writer's initial domain (v3)
} TraceReaderInfo;

// A source location (TraceReaderLocation, in format.h: the location codec
// decodes into it): a frame code maps to zero or more (inlined frames,
// caller first). Strings belong to the reader, interned: equal names are
// the same pointer.

// Counts and byte shares of what has been read so far. Bytes of packets
// read = header_bytes + info_bytes + location_bytes + backtrace_bytes +
// event_bytes (the rest of the events: headers, fields, codeword counts).
// skipped_* are packets of another pid, not decoded.
typedef struct TraceReaderStats {
  uint64_t bytes;             // bytes of the file consumed
  uint64_t header_bytes, info_bytes, location_bytes, backtrace_bytes, event_bytes;
  uint64_t packets, skipped_packets, skipped_bytes;
  uint64_t allocs, promotes, collects;
  uint64_t location_events, location_codes;   // events, distinct codes
  uint64_t samples;           // sum of n_samples over allocations
  uint64_t sampled_words;     // sum of length * n_samples, saturating at UINT64_MAX (lengths and
                              // samples a trace declares can pass 2^64 words)
  uint64_t new_frames;        // frames decoded past the common prefix
  uint32_t max_backtrace;     // deepest backtrace (as kept: at most TRACE_READER_MAX_FRAMES)
  uint64_t cut_backtraces;    // allocations whose backtrace was cut (TraceEvent.cut)
  uint64_t deepest_cut;       // the deepest such backtrace, in frames (0: none)
  uint64_t first_time_us, last_time_us;  // of the events returned; 0 if none
} TraceReaderStats;

// Opens the trace at `path` and reads its trace-info packet. On failure
// returns NULL and fills *err (which may be NULL). A file still empty or
// shorter than its first packet fails with TRACE_ERROR_TRUNCATED.
TraceReader *trace_reader_open(const char *path, TraceReaderError *err);

// The same on an open descriptor (a pipe works: the reader only reads
// forward). The reader owns `fd` from then on, also on failure (closed).
TraceReader *trace_reader_open_fd(int fd, TraceReaderError *err);

// Frees everything; `r` may be NULL.
void trace_reader_close(TraceReader *r);

// Frees what decoding alone needs (each domain's current backtrace: 33 MB
// on the deepest recursion of ./vm's default stack) once no more events are
// wanted: from then on trace_reader_next returns TRACE_READER_END (or
// TRACE_READER_ERROR when an error stopped the reader); info, locations,
// the error and stats stay valid until close.
void trace_reader_done(TraceReader *r);

// Decodes the next event into *event (contract 4 and 5).
TraceReaderStatus trace_reader_next(TraceReader *r, TraceEvent *event);

// Contract 5: whether an incomplete last packet means "wait" (true) or
// "truncated" (false, the default).
void trace_reader_follow(TraceReader *r, bool follow);

// The error that stopped `r`; kind TRACE_ERROR_NONE if none.
const TraceReaderError *trace_reader_error(const TraceReader *r);

const TraceReaderInfo *trace_reader_info(const TraceReader *r);

// The locations of frame `code`: stores the list in *locs (NULL when empty)
// and returns its length, 0 for a code defined with no location, or -1 for
// a code no location event (read so far) defined.
int trace_reader_locations(const TraceReader *r, uint64_t code, const TraceReaderLocation **locs);

void trace_reader_stats(const TraceReader *r, TraceReaderStats *out);

// "alloc", "promote", "collect"; "minor", "major", "external".
const char *trace_event_kind_name(TraceEventKind kind);
const char *trace_source_name(TraceSource source);

#endif
