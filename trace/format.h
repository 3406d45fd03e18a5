// format.h - the memtrace trace format (CTF): constants and layouts shared by
// the writer (trace/writer.c) and the reader (trace/reader.c). The format is
// Jane Street memtrace's, byte for byte, so that its tools read our traces and
// ours read theirs; docs/trace-format.md describes it in full.
//
// 1. A trace is a sequence of packets, each written with one write(2), at
//    most TRACE_MAX_PACKET bytes, little-endian, unaligned:
//
//      off  v2/v1   v3
//        0  u32     u32     magic TRACE_MAGIC
//        4  u32     u32     packet size in bits, header included
//        8  u64     u64     time of the first event (us since the epoch)
//       16  u64     u64     time of the last event
//       24  u32     u32     flush duration (0)
//       28  u16     u16     format version (1, 2 or 3)
//       30  u64     u64     pid of the writer
//       38   -      u16     domain (v3 only; 0)
//       38  u16     u16 @40 cache check: bucket, 0xFFFF = none
//       40  u16     u16 @42 cache check: that bucket's successor
//       42  u64     u64 @44 cache check: that bucket's code
//       50  u64     u64 @52 id of the packet's first allocation
//       58  u64     u64 @60 one past its last allocation's id
//       66 (end)    68 (end)
//
// 2. Each event starts with a u32 `code << 25 | (time_us & 0x1FFFFFF)`; the full
//    time is rebuilt from the packet's first time (no packet spans more than
//    TRACE_PACKET_MAX_SPAN_US). Event codes are TraceEventCode below.
#ifndef MINNOW_TRACE_FORMAT_H
#define MINNOW_TRACE_FORMAT_H

#include <stdint.h>

enum {
  TRACE_MAGIC = 0xC1FC1FC1u,
  TRACE_MAX_PACKET = 1 << 15,          // bytes, header included
  TRACE_HEADER_V2 = 66,                // header bytes, versions 1 and 2
  TRACE_HEADER_V3 = 68,                // version 3 adds the u16 domain
  TRACE_VERSION_MIN = 1,
  TRACE_VERSION_MAX = 3,
  TRACE_VERSION_DEFAULT = 2,           // what every published memtrace reads
  TRACE_TIME_BITS = 25,                // low bits of the time in an event header
  TRACE_CACHE_BUCKETS = 1 << 14,       // backtrace cache (skewed two-way)
  TRACE_CACHE_CHECK_START = 4242,      // first bucket the writer checks
  TRACE_CACHE_CHECK_STEP = 5413,       // next = (ix + STEP) mod CACHE_BUCKETS
  TRACE_CACHE_CHECK_NONE = 0xFFFF,
  TRACE_MTF_ENTRIES = 31,              // move-to-front table of names; code 31 = new
  TRACE_SHORT_ALLOC_MAX = 16,          // short allocation events: 1..16 words
  TRACE_MAX_PREDICTED = 255,           // predicted frames one codeword may carry
  TRACE_BACKTRACE_MAX_BYTES = 4096,    // codewords of one backtrace, at most
};

static const uint64_t TRACE_PACKET_MAX_SPAN_US = 30ull * 1000 * 1000;

// 3. Limits: one table for the writer (trace/writer.c) and the reader
//    (trace/reader.c), so that whatever the writer can write the reader
//    reads whole, and what a reader must bound (a crafted trace) degrades to
//    what it says it left out, never to a refusal of the rest of the trace.
//    docs/trace-format.md section 10 lists them side by side;
//    tests/unit/test_trace_limits.c writes each to its edge and past it
//    through the writer and reads the bytes back.
//
//    what                        writer                        reader
//    frames of one backtrace     the outermost TRACE_MAX_      the outermost TRACE_MAX_FRAMES
//                                FRAMES written, the           kept (TraceEvent.cut, stats.
//                                innermost cut (counted)       cut_backtraces): never refused
//    codeword bytes of an event  TRACE_BACKTRACE_MAX_BYTES:    any that fit the packet; a prefix
//                                frames past them not written  past a cut backtrace reuses it
//    bytes of a packet           TRACE_MAX_PACKET              larger: refused (damage)
//    locations of one code       TRACE_MAX_LOCATIONS; more:    a u8 count: all
//                                one "??" location
//    bytes of a location event   TRACE_MAX_LOCATION_BYTES;     any that fit the packet
//                                more: one "??" location
//    bytes of a trace-info       TRACE_MAX_INFO_STRING (cut)   any that fit the packet
//    string
//    frame code                  below 2^62 (the caller's)     2^62 or more: refused (damage)
//    line, columns               clamped to 20, 8, 10 bits     as coded
//    domains (version 3)         one (./vm)                    TRACE_READER_MAX_DOMAINS (reader.h)
//
//    TRACE_MAX_FRAMES is twice the deepest recursion ./vm's default stack
//    allows (16 Mi words, 4-word frames at least: 4,194,304 frames, its
//    allocation site one more); a larger --stack-words can go deeper, and
//    its traces then carry the outermost TRACE_MAX_FRAMES frames. A reader
//    holds 8 bytes a frame: 64 MiB at the limit.
enum {
  TRACE_MAX_FRAMES = 1 << 23,
  TRACE_MAX_LOCATIONS = 255,
  TRACE_MAX_LOCATION_BYTES = 4096,
  TRACE_MAX_INFO_STRING = 8000,
};

// Event codes (the top 7 bits of an event header).
typedef enum TraceEventCode {
  TRACE_EV_INFO = 0,          // trace info: only event of the first packet
  TRACE_EV_LOCATION = 1,      // u64 code, u8 count, count x location
  TRACE_EV_ALLOC = 2,         // vint len, vint samples, u8 source, vint prefix, u16 n, codewords
  TRACE_EV_PROMOTE = 3,       // vint distance back from the packet's last id
  TRACE_EV_COLLECT = 4,       // vint distance back
  TRACE_EV_SHORT_ALLOC = 100, // 101..116: len = code - 100; vint prefix, u8 n, codewords
} TraceEventCode;

typedef enum TraceSource { TRACE_SOURCE_MINOR = 0, TRACE_SOURCE_MAJOR = 1, TRACE_SOURCE_EXTERNAL = 2 } TraceSource;

// The two buckets a frame code may live in (63-bit OCaml int arithmetic:
// the products wrap at 2^63 and the shifts are logical on 63 bits).
static inline uint32_t trace_bucket1(uint64_t code) {
  return (uint32_t)((((code * 0x4983723u) & ((1ull << 63) - 1)) >> 11) & (TRACE_CACHE_BUCKETS - 1));
}
static inline uint32_t trace_bucket2(uint64_t code) {
  return (uint32_t)((((code * 0xfdea731u) & ((1ull << 63) - 1)) >> 21) & (TRACE_CACHE_BUCKETS - 1));
}

// A location: 48 bits, a u32 then a u16.
//   bits  0..19 line   20..27 start column   28..37 end column
//        38..42 file code   43..47 function code (31: a new name follows)
enum {
  TRACE_LOC_LINE_MAX = 0xFFFFF,
  TRACE_LOC_START_MAX = 0xFF,
  TRACE_LOC_END_MAX = 0x3FF,
};

// A location as the reader returns it (trace/reader.h,
// trace_reader_locations) and the location codec decodes it
// (trace/locations.h): names interned by the reader.
typedef struct TraceReaderLocation {
  const char *function;
  const char *file;
  uint32_t line, start_col, end_col;
} TraceReaderLocation;

#endif
