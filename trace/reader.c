// reader.c - the streaming trace reader (contract in reader.h): the read
// buffer, packet headers, events and the backtrace codec's decoding side.
// The location codec is in locations.c.
//
// 1. Buffer. The file is read with read(2)s as large as the buffer:
//    READ_BUFFER bytes, or for a file smaller than that when opened its size
//    + SMALL_BUFFER (the buffer grows once more than that has been read).
//    buf[pos .. len) is unread, buf[pos] the start of the next packet. A
//    packet is decoded only once it is wholly in the buffer (it is at most
//    TRACE_MAX_PACKET bytes, so it always fits); when it is not, the unread
//    tail moves to the front and the reader reads on. The buffer only moves
//    between packets, so pointers into the current packet hold.
// 2. Bounds. Past `len` the buffer has READ_SLACK more bytes. The decoders
//    read a group of fields (an event's fixed part, a codeword and its
//    payload: at most MAX_GROUP bytes) from a position not past the packet's
//    end, then check the new position against the end. Reads can thus pass
//    the end by less than MAX_GROUP bytes, into the next packet or the slack:
//    never out of the allocation, and one compare per group.
// 3. Domains. Each v3 domain has its own codec state (backtrace cache, name
//    tables, current backtrace, last time, next allocation id); v1 and v2
//    traces have domain 0 only. The location table is the trace's.
// 4. Backtrace codec (trace/format.h, docs/trace-format.md): each codeword
//    names a bucket; the bucket that preceded it in this backtrace (0 at the
//    start) records it as its successor; a hit then follows successors for
//    the predicted frames. An empty bucket holds CACHE_EMPTY (2^64 - 1, a
//    code no writer uses: frame codes are below 2^62), so that frame code 0
//    is a code like any other (our writer misses it and caches it; memtrace's
//    writer would take it for a hit on an empty bucket, which is an error
//    here). The cache check reports an empty bucket as 0, as writers do.
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "locations.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the reader loads little-endian fields directly");

enum {
  READ_BUFFER = 1 << 20,
  SMALL_BUFFER = 2 * TRACE_MAX_PACKET,
  MAX_GROUP = 48,
  MAX_CODEWORD = 2 + 8,  // a miss: the codeword and its code
  READ_SLACK = 64,
  TIME_MASK = (1 << TRACE_TIME_BITS) - 1,
  // A backtrace whose codewords take at least this many bytes may have been
  // cut by the writer (at TRACE_BACKTRACE_MAX_BYTES - 10): only after one
  // may the next common prefix exceed it.
  CUT_BACKTRACE_BYTES = TRACE_BACKTRACE_MAX_BYTES - 16,
};
static const uint64_t CACHE_EMPTY = UINT64_MAX;
// The largest span (last time - first time) of a packet whose events' times
// can be rebuilt from their low TRACE_TIME_BITS bits.
static const uint64_t PACKET_MAX_SPAN = ((uint64_t)1 << TRACE_TIME_BITS) - 1;
_Static_assert(READ_SLACK >= MAX_GROUP, "slack covers a group of reads past the end");
_Static_assert((int)SMALL_BUFFER >= (int)TRACE_MAX_PACKET, "a packet fits the buffer");

typedef struct Domain {
  uint16_t id;
  uint8_t index;                // in TraceReader.domains
  bool has_packets;             // next_alloc_id is known
  // v3: the allocation ids this domain's packets declared, as disjoint
  // ranges [begin, end) in increasing order, adjacent ones merged (a
  // domain's ids only grow: packets follow each other inside a block of
  // ids, then jump to the next block). One range per packet at most.
  struct IdRange { uint64_t begin, end; } *ids;
  uint32_t n_ids, cap_ids;
  bool last_maybe_cut;          // the last backtrace may have been cut (by the writer or by us)
  bool last_cut;                // the last backtrace was cut by us (TraceEvent.cut)
  uint64_t next_alloc_id;       // end id of this domain's last packet
  uint64_t last_time_us;        // time of its last event
  uint64_t *frames;             // current backtrace, outermost first
  uint32_t n_frames, cap_frames;
  LocNames names;
  uint64_t cache_code[TRACE_CACHE_BUCKETS];  // CACHE_EMPTY: empty
  uint16_t cache_next[TRACE_CACHE_BUCKETS];  // successor bucket
} Domain;

// Two domains' shared frames (shared_frames): how many, and the first
// frame either changed since (UINT32_MAX: none).
typedef struct PairFrames {
  uint32_t lcp, low;
  bool known;
} PairFrames;

typedef struct PacketHeader {
  uint32_t size, header_size;   // bytes
  uint16_t version, domain;
  uint64_t time_begin, time_end, pid;
  uint16_t check_bucket, check_next;
  uint64_t check_code;
  uint64_t id_begin, id_end;
} PacketHeader;

struct TraceReader {
  int fd;
  bool follow;
  bool done;                    // trace_reader_done: no event is decoded any more
  uint8_t *buf;                 // cap + READ_SLACK bytes
  size_t pos, len, cap;
  uint64_t buf_offset;          // file offset of buf[0]

  // The packet being decoded (in_packet): buf[pos] is its header.
  bool in_packet;
  const uint8_t *p, *end, *content;
  PacketHeader pkt;
  uint64_t time_base;           // time_begin with the low TIME_BITS cleared
  uint32_t start_low;           // time_begin's low TIME_BITS
  uint64_t next_id;
  Domain *dom;

  TraceReaderInfo info;
  char *info_strings;
  Domain *domains[TRACE_READER_MAX_DOMAINS];
  unsigned n_domains;
  const Domain *last_alloc_domain;
  uint64_t frames_held;         // sum of the domains' cap_frames
  PairFrames *pairs;            // once there are two domains: MAX_DOMAINS^2, see shared_frames
  LocTable *locs;
  TraceReaderStats stats;       // some fields are derived in trace_reader_stats, from:
  uint64_t content_bytes;       // content of finished packets, info excluded
  uint64_t allocs_done;         // allocations of finished packets
  uint64_t extra_samples;       // sum of n_samples - 1 over allocations
  uint64_t references[2];       // promotions, collections
  // Versions 1 and 2: the state of each allocation so far, by id (ids are
  // dense from 0 there), 2 bits each (BLOCK_*): 4 ids a byte, so memory
  // follows the allocation events read (6 bytes or more each).
  uint8_t *blocks;
  uint64_t blocks_cap;          // ids the array holds
  TraceReaderError error;
};

// Internal results of the steps below; the first three are the API's.
typedef enum Step {
  STEP_EVENT = TRACE_READER_EVENT,
  STEP_END = TRACE_READER_END,
  STEP_ERROR = TRACE_READER_ERROR,
  STEP_AGAIN = 2,  // a packet is ready, or a location event was absorbed
  STEP_SLOW = 3,   // the fast path leaves this event to the general one
} Step;

// ================================================================ helpers

static inline uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

// acc + length * samples, saturating at UINT64_MAX (stats.sampled_words).
static inline uint64_t add_words(uint64_t acc, uint64_t length, uint64_t samples) {
  uint64_t w;
  if (__builtin_mul_overflow(length, samples, &w) || __builtin_add_overflow(acc, w, &w)) return UINT64_MAX;
  return w;
}

// memtrace's variable-length int: 0..252 itself; 253, 254, 255 announce a
// u16, an i32 (sign-extended) or an i64. Reads at most 9 bytes.
static inline const uint8_t *rd_vint(const uint8_t *p, int64_t *out) {
  uint8_t b = *p;
  if (__builtin_expect(b < 253, 1)) {
    *out = b;
    return p + 1;
  }
  if (b == 253) *out = rd16(p + 1);
  else if (b == 254) *out = (int32_t)rd32(p + 1);
  else *out = (int64_t)rd64(p + 1);
  return p + 1 + (b == 253 ? 2 : b == 254 ? 4 : 8);
}

static uint64_t offset_of(const TraceReader *r, const uint8_t *at) {
  return r->buf_offset + (uint64_t)(at - r->buf);
}

static Step fail_at_offset(TraceReader *r, TraceErrorKind kind, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static Step fail_at_offset(TraceReader *r, TraceErrorKind kind, uint64_t offset, const char *fmt, ...) {
  r->error.kind = kind;
  r->error.offset = offset;
  r->end = r->p;  // the fast path stops here
  int n = snprintf(r->error.message, sizeof r->error.message, "byte %" PRIu64 ": ", offset);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->error.message + n, sizeof r->error.message - (size_t)n, fmt, ap);
  va_end(ap);
  return STEP_ERROR;
}

#define FAIL(r, at, ...) fail_at_offset((r), TRACE_ERROR_CORRUPT, offset_of((r), (at)), __VA_ARGS__)

const char *trace_event_kind_name(TraceEventKind kind) {
  switch (kind) {
  case TRACE_EVENT_ALLOC: return "alloc";
  case TRACE_EVENT_PROMOTE: return "promote";
  case TRACE_EVENT_COLLECT: return "collect";
  }
  return "?";
}

const char *trace_source_name(TraceSource source) {
  switch (source) {
  case TRACE_SOURCE_MINOR: return "minor";
  case TRACE_SOURCE_MAJOR: return "major";
  case TRACE_SOURCE_EXTERNAL: return "external";
  }
  return "?";
}

// ================================================================ buffer

// A file that has outgrown the buffer it was opened with (more bytes read
// than it holds) gets a large one.
static bool grow_buffer(TraceReader *r) {
  uint8_t *buf = realloc(r->buf, READ_BUFFER + READ_SLACK);
  if (!buf) {
    fail_at_offset(r, TRACE_ERROR_MEMORY, r->buf_offset + r->len, "out of memory for the read buffer");
    return false;
  }
  memset(buf + r->cap, 0, READ_BUFFER + READ_SLACK - r->cap);
  r->buf = buf;
  r->cap = READ_BUFFER;
  return true;
}

// Makes at least `need` unread bytes available if the file has them; returns
// how many are (possibly fewer), or -1 after a read error (error set).
static int64_t fill(TraceReader *r, size_t need) {
  if (r->len - r->pos >= need) return (int64_t)(r->len - r->pos);
  if (r->pos > 0) {
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->buf_offset += r->pos;
    r->len -= r->pos;
    r->pos = 0;
  }
  if (r->cap < READ_BUFFER && r->buf_offset + r->len >= r->cap && !grow_buffer(r)) return -1;
  while (r->len < need) {
    ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
    if (n > 0) r->len += (size_t)n;
    else if (n == 0) break;
    else if (errno != EINTR) {
      fail_at_offset(r, TRACE_ERROR_IO, r->buf_offset + r->len, "read failed: %s", strerror(errno));
      return -1;
    }
  }
  return (int64_t)r->len;
}

// The file ends `have` bytes into a packet (or its header) that needs `need`.
static Step cut_short(TraceReader *r, int64_t have, uint64_t need, const char *what) {
  if (have < 0) return STEP_ERROR;
  if (r->follow) return STEP_END;
  return fail_at_offset(r, TRACE_ERROR_TRUNCATED, r->buf_offset + r->pos,
                        "the trace is truncated: the file ends %" PRId64 " bytes into a %" PRIu64 "-byte %s",
                        have, need, what);
}

// ================================================================ packet headers

// Decodes and checks the header at buf[pos] (all of it is there).
static Step parse_header(TraceReader *r, PacketHeader *h) {
  const uint8_t *b = r->buf + r->pos;
  uint32_t bits = rd32(b + 4);
  unsigned v3 = h->version >= 3 ? 2 : 0;  // fields after pid shift by the domain's 2 bytes
  h->header_size = v3 ? TRACE_HEADER_V3 : TRACE_HEADER_V2;
  h->size = bits / 8;
  h->time_begin = rd64(b + 8);
  h->time_end = rd64(b + 16);
  h->pid = rd64(b + 30);
  h->domain = v3 ? rd16(b + 38) : 0;
  h->check_bucket = rd16(b + 38 + v3);
  h->check_next = rd16(b + 40 + v3);
  h->check_code = rd64(b + 42 + v3);
  h->id_begin = rd64(b + 50 + v3);
  h->id_end = rd64(b + 58 + v3);
  if (bits % 8 != 0) return FAIL(r, b + 4, "packet size %" PRIu32 " bits is not a whole number of bytes", bits);
  if (h->size < h->header_size)
    return FAIL(r, b + 4, "packet size %" PRIu32 " smaller than its %" PRIu32 "-byte header", h->size, h->header_size);
  if (h->size > TRACE_MAX_PACKET)
    return FAIL(r, b + 4, "packet size %" PRIu32 " larger than the format's %d-byte maximum", h->size, TRACE_MAX_PACKET);
  if (h->time_begin > h->time_end)
    return FAIL(r, b + 8, "packet's first time %" PRIu64 " is after its last time %" PRIu64, h->time_begin, h->time_end);
  // An event carries its time's low 25 bits only: the rest comes from the
  // packet's first time, which is unambiguous only while the packet spans
  // less than 2^25 us (writers stop at 30 s).
  if (h->time_end - h->time_begin > PACKET_MAX_SPAN)
    return FAIL(r, b + 16, "packet spans %" PRIu64 " us (%" PRIu64 " to %" PRIu64 "), more than the %" PRIu64
                " us its events' 25-bit times can tell apart", h->time_end - h->time_begin, h->time_begin,
                h->time_end, (uint64_t)PACKET_MAX_SPAN);
  if (h->id_begin > h->id_end)
    return FAIL(r, b + 50 + v3, "packet's allocation ids run backwards (%" PRIu64 " to %" PRIu64 ")", h->id_begin,
                h->id_end);
  if (h->check_bucket != TRACE_CACHE_CHECK_NONE && h->check_bucket >= TRACE_CACHE_BUCKETS)
    return FAIL(r, b + 38 + v3, "cache check names bucket %u, past the cache's %d", h->check_bucket,
                TRACE_CACHE_BUCKETS);
  return STEP_AGAIN;
}

// Reads the next packet's header and makes the whole packet available.
static Step read_packet(TraceReader *r, PacketHeader *h) {
  int64_t have = fill(r, 4);
  if (have <= 0) return have < 0 ? STEP_ERROR : STEP_END;
  const uint8_t *b = r->buf + r->pos;
  uint32_t magic = TRACE_MAGIC;
  if (memcmp(b, &magic, have < 4 ? (size_t)have : 4) != 0)  // a short file too, when its bytes say so
    return FAIL(r, b, "bad magic 0x%08" PRIx32 " (not a memtrace packet header)", rd32(b));
  if ((have = fill(r, 30)) < 30) return cut_short(r, have, TRACE_HEADER_V2, "packet header");
  b = r->buf + r->pos;
  h->version = rd16(b + 28);
  if (h->version < TRACE_VERSION_MIN || h->version > TRACE_VERSION_MAX)
    return fail_at_offset(r, TRACE_ERROR_VERSION, offset_of(r, b + 28),
                          "trace format version %u, this reader knows versions %d to %d", h->version,
                          TRACE_VERSION_MIN, TRACE_VERSION_MAX);
  if (r->info.version && h->version != r->info.version)
    return FAIL(r, b + 28, "packet of format version %u in a version %u trace", h->version, r->info.version);
  uint32_t header_size = h->version >= 3 ? TRACE_HEADER_V3 : TRACE_HEADER_V2;
  if ((have = fill(r, header_size)) < header_size) return cut_short(r, have, header_size, "packet header");
  if (parse_header(r, h) == STEP_ERROR) return STEP_ERROR;
  if ((have = fill(r, h->size)) < h->size) return cut_short(r, have, h->size, "packet");
  return STEP_AGAIN;
}

// ================================================================ domains and packets

static Domain *find_domain(TraceReader *r, uint16_t id) {
  for (unsigned i = 0; i < r->n_domains; i++)
    if (r->domains[i]->id == id) return r->domains[i];
  return NULL;
}

static Domain *new_domain(TraceReader *r, uint16_t id, const uint8_t *at) {
  if (r->n_domains == TRACE_READER_MAX_DOMAINS) {
    fail_at_offset(r, TRACE_ERROR_LIMIT, offset_of(r, at), "more than %d domains", TRACE_READER_MAX_DOMAINS);
    return NULL;
  }
  Domain *d = calloc(1, sizeof *d);
  if (!d) {
    fail_at_offset(r, TRACE_ERROR_MEMORY, offset_of(r, at), "out of memory");
    return NULL;
  }
  d->id = id;
  d->index = (uint8_t)r->n_domains;
  if (r->n_domains == 1 && !(r->pairs = calloc(TRACE_READER_MAX_DOMAINS * TRACE_READER_MAX_DOMAINS,
                                               sizeof *r->pairs))) {
    free(d);
    fail_at_offset(r, TRACE_ERROR_MEMORY, offset_of(r, at), "out of memory");
    return NULL;
  }
  d->last_time_us = r->info.start_time_us;
  memset(d->cache_code, 0xFF, sizeof d->cache_code);  // CACHE_EMPTY
  loc_names_init(&d->names);
  r->domains[r->n_domains++] = d;
  return d;
}

// Allocation ids continue from the domain's last packet (v3 domains draw
// ids in chunks, so there they may jump forward).
static Step check_ids(TraceReader *r, const Domain *d, const PacketHeader *h, const uint8_t *at) {
  uint64_t expected = d->has_packets ? d->next_alloc_id : 0;
  if (h->version >= 3 ? h->id_begin >= expected || !d->has_packets : h->id_begin == expected) return STEP_AGAIN;
  return FAIL(r, at, "packet's first allocation id %" PRIu64 " does not follow the previous packet's last (%" PRIu64
              " expected)", h->id_begin, expected);
}

// v3: the domains draw their ids from one counter, so no two domains'
// packets declare the same id (tools key their blocks by id: an id twice
// would make them count one block where the reader counts two). Checks the
// packet's range against the other domains' and records it in d's: work
// O(domains x log packets) per packet, memory one range per packet.
static Step claim_ids(TraceReader *r, Domain *d, const PacketHeader *h, const uint8_t *at) {
  if (h->id_begin == h->id_end) return STEP_AGAIN;
  for (unsigned i = 0; i < r->n_domains; i++) {
    const Domain *o = r->domains[i];
    if (o == d || !o->n_ids) continue;
    uint32_t lo = 0, hi = o->n_ids;  // the first range ending after id_begin
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (o->ids[mid].end <= h->id_begin) lo = mid + 1;
      else hi = mid;
    }
    if (lo < o->n_ids && o->ids[lo].begin < h->id_end)
      return FAIL(r, at, "packet of domain %u declares allocations %" PRIu64 " to %" PRIu64
                  ", which domain %u's packets already numbered", d->id, h->id_begin, h->id_end, o->id);
  }
  if (d->n_ids && d->ids[d->n_ids - 1].end == h->id_begin) {
    d->ids[d->n_ids - 1].end = h->id_end;
    return STEP_AGAIN;
  }
  if (d->n_ids == d->cap_ids) {
    uint32_t cap = d->cap_ids ? 2 * d->cap_ids : 16;
    struct IdRange *ids = realloc(d->ids, cap * sizeof *ids);
    if (!ids) return fail_at_offset(r, TRACE_ERROR_MEMORY, offset_of(r, at), "out of memory");
    d->ids = ids;
    d->cap_ids = cap;
  }
  d->ids[d->n_ids++] = (struct IdRange){h->id_begin, h->id_end};
  return STEP_AGAIN;
}

// The writer's view of one bucket, carried in the header, against ours.
static Step check_cache(TraceReader *r, const Domain *d, const PacketHeader *h, const uint8_t *at) {
  if (h->check_bucket == TRACE_CACHE_CHECK_NONE) return STEP_AGAIN;
  uint64_t code = d->cache_code[h->check_bucket] == CACHE_EMPTY ? 0 : d->cache_code[h->check_bucket];
  uint16_t next = d->cache_next[h->check_bucket];
  if (code == h->check_code && next == h->check_next) return STEP_AGAIN;
  return FAIL(r, at, "cache check failed: bucket %u holds code %" PRIu64 " and successor %u, the writer's held %" PRIu64
              " and %u", h->check_bucket, code, next, h->check_code, h->check_next);
}

// Sets up the packet at buf[pos] (read_packet done) for its events.
static Step begin_packet(TraceReader *r) {
  const PacketHeader *h = &r->pkt;
  const uint8_t *b = r->buf + r->pos;
  unsigned v3 = h->version >= 3 ? 2 : 0;
  Domain *d = find_domain(r, h->domain);
  if (!d && !(d = new_domain(r, h->domain, b + 38))) return STEP_ERROR;
  if (check_ids(r, d, h, b + 50 + v3) == STEP_ERROR || check_cache(r, d, h, b + 38 + v3) == STEP_ERROR ||
      (h->version >= 3 && claim_ids(r, d, h, b + 50 + v3) == STEP_ERROR))
    return STEP_ERROR;
  r->dom = d;
  r->in_packet = true;
  r->content = b + h->header_size;
  r->p = r->content;
  r->end = b + h->size;
  r->time_base = h->time_begin & ~(uint64_t)TIME_MASK;
  r->start_low = (uint32_t)(h->time_begin & TIME_MASK);
  r->next_id = h->id_begin;
  r->stats.packets++;
  r->stats.header_bytes += h->header_size;
  return STEP_AGAIN;
}

// The next packet of the trace's pid, ready for its events.
static Step start_packet(TraceReader *r) {
  for (;;) {
    Step s = read_packet(r, &r->pkt);
    if (s != STEP_AGAIN) return s;
    if (r->pkt.pid == r->info.pid) return begin_packet(r);
    r->stats.skipped_packets++;
    r->stats.skipped_bytes += r->pkt.size;
    r->pos += r->pkt.size;
  }
}

static Step finish_packet(TraceReader *r) {
  const PacketHeader *h = &r->pkt;
  if (r->next_id != h->id_end) {
    unsigned v3 = h->version >= 3 ? 2 : 0;
    return FAIL(r, r->buf + r->pos + 58 + v3, "packet declares allocations %" PRIu64 " to %" PRIu64
                " but holds %" PRIu64, h->id_begin, h->id_end, r->next_id - h->id_begin);
  }
  r->dom->next_alloc_id = h->id_end;
  r->dom->has_packets = true;
  r->allocs_done += h->id_end - h->id_begin;
  r->content_bytes += h->size - h->header_size;
  r->pos += h->size;
  r->in_packet = false;
  return STEP_AGAIN;
}

// ================================================================ backtraces

// Room for one more codeword's frames at `pos`: 1 when there is, 0 when a
// limit leaves none (the backtrace is then cut: the frames already decoded
// are kept, the rest decoded for the cache only), -1 when out of memory
// (error set). Invariants: a domain's cap_frames <= MAX_FRAMES + 256 (so
// that one codeword never needs a second check), and the caps of all
// domains add up to r->frames_held <= MAX_TOTAL_FRAMES + 256 * MAX_DOMAINS.
static int grow_frames(TraceReader *r, Domain *d, uint32_t pos, const uint8_t *at) {
  if (pos > TRACE_READER_MAX_FRAMES) return 0;
  uint64_t need = pos + TRACE_MAX_PREDICTED + 1u, cap = d->cap_frames ? 2 * (uint64_t)d->cap_frames : 4096;
  if (cap < need) cap = need;
  if (cap > TRACE_READER_MAX_FRAMES + TRACE_MAX_PREDICTED + 1u) cap = TRACE_READER_MAX_FRAMES + TRACE_MAX_PREDICTED + 1u;
  uint64_t others = r->frames_held - d->cap_frames;
  if (others + cap > TRACE_READER_MAX_TOTAL_FRAMES + (TRACE_MAX_PREDICTED + 1u) * TRACE_READER_MAX_DOMAINS) {
    if (others + need > TRACE_READER_MAX_TOTAL_FRAMES + (TRACE_MAX_PREDICTED + 1u) * TRACE_READER_MAX_DOMAINS)
      return 0;
    cap = need;
  }
  uint64_t *frames = realloc(d->frames, cap * sizeof *frames);
  if (!frames) {
    fail_at_offset(r, TRACE_ERROR_MEMORY, offset_of(r, at), "out of memory for a backtrace of %" PRIu32 " frames", pos);
    return -1;
  }
  r->frames_held = others + cap;
  d->frames = frames;
  d->cap_frames = (uint32_t)cap;
  return 1;
}

// A cache miss brought `code`: it must be a code a location event defined.
static bool check_new_code(TraceReader *r, uint64_t code, const uint8_t *at) {
  const TraceReaderLocation *unused;
  if (code != CACHE_EMPTY && loc_table_find(r->locs, code, &unused) >= 0) return true;
  if (code == CACHE_EMPTY) FAIL(r, at, "backtrace brings frame code 0x%" PRIx64 ", which no writer uses", code);
  else FAIL(r, at, "backtrace brings frame code %" PRIu64 ", which no location event defined", code);
  return false;
}

static const uint8_t *__attribute__((noinline, cold)) bad_bucket(TraceReader *r, const uint8_t *at, bool predicted,
                                                                uint32_t bucket) {
  return FAIL(r, at, "backtrace codeword %s an empty bucket (%" PRIu32 ")", predicted ? "predicts" : "names", bucket),
         NULL;
}

// The codewords of a backtrace past the frames a limit lets us keep
// (grow_frames returned 0): decoded for the cache alone, the frames counted
// into *len, not stored. As decode_backtrace's checked form otherwise.
static const uint8_t *__attribute__((noinline, cold)) skip_codewords(TraceReader *r, Domain *d, const uint8_t *p,
                                                                    uint32_t n_coded, uint32_t pred, uint64_t *len) {
  const uint8_t *end = r->end, *at = p;
  uint64_t *codes = d->cache_code;
  uint16_t *next = d->cache_next;
  for (uint32_t i = 0; i < n_coded; i++) {
    at = p;
    uint32_t word = rd16(p), bucket = word >> 2, tag = word & 3;
    p += 2;
    next[pred] = (uint16_t)bucket;
    pred = bucket;
    if (tag == 3) {
      uint64_t code = rd64(p);
      p += 8;
      if (p > end) break;
      if (!check_new_code(r, code, at)) return NULL;
      codes[bucket] = code;
      ++*len;
      continue;
    }
    uint32_t n_predicted = tag;
    if (codes[bucket] == CACHE_EMPTY) return bad_bucket(r, at, false, bucket);
    ++*len;
    if (tag == 2) n_predicted = *p++;
    if (tag == 2 && next[pred] == pred) {
      *len += n_predicted;
      n_predicted = 0;
    }
    for (; n_predicted; n_predicted--) {
      pred = next[pred];
      if (codes[pred] == CACHE_EMPTY) return bad_bucket(r, at, true, pred);
      ++*len;
    }
    if (p > end) break;
  }
  if (p > end) return FAIL(r, at, "backtrace codeword runs past the end of its packet"), NULL;
  return p;
}

// Decodes n_coded codewords at p into d->frames from `pos` on (design note
// 4 at the top). Returns the position after them, with the new length in
// *len and the frames stored in *kept (= *len unless a limit cut the
// backtrace: checked form only); NULL on error. Unless `checked`, the
// caller has made sure that the codewords cannot run past the packet
// (n_coded * MAX_CODEWORD bytes left) and that their frames fit (n_coded *
// 256 free).
static inline __attribute__((always_inline)) const uint8_t *
decode_backtrace(TraceReader *r, Domain *d, const uint8_t *p, uint32_t n_coded, uint32_t pos, uint64_t *len,
                 uint32_t *kept, bool checked) {
  const uint8_t *end = r->end;
  uint64_t *restrict codes = d->cache_code;
  uint16_t *restrict next = d->cache_next;
  uint64_t *restrict out = d->frames;
  uint32_t cap = d->cap_frames, pred = 0;
  const uint8_t *at = p;
  for (uint32_t i = 0; i < n_coded; i++) {
    at = p;
    if (checked && __builtin_expect(cap - pos < TRACE_MAX_PREDICTED + 1u, 0)) {
      int room = grow_frames(r, d, pos, at);
      if (room < 0) return NULL;
      if (room == 0) {  // cut: the frames so far kept, the rest counted
        *kept = pos;
        *len = pos;
        return skip_codewords(r, d, p, n_coded - i, pred, len);
      }
      out = d->frames;
      cap = d->cap_frames;
    }
    uint32_t word = rd16(p), bucket = word >> 2, tag = word & 3;
    p += 2;
    next[pred] = (uint16_t)bucket;
    pred = bucket;
    if (tag == 3) {  // a miss: the code follows
      uint64_t code = rd64(p);
      p += 8;
      if (checked && p > end) break;
      if (__builtin_expect(!check_new_code(r, code, at), 0)) return NULL;
      codes[bucket] = code;
      out[pos++] = code;
      continue;
    }
    uint32_t n_predicted = tag;
    uint64_t code = codes[bucket];
    if (__builtin_expect(code == CACHE_EMPTY, 0)) return bad_bucket(r, at, false, bucket);
    out[pos++] = code;
    if (tag == 2) {
      n_predicted = *p++;
      if (next[pred] == pred) {  // a bucket that predicts itself: its run repeats one code
        for (; n_predicted >= 4; n_predicted -= 4, pos += 4) out[pos] = out[pos + 1] = out[pos + 2] = out[pos + 3] = code;
        for (; n_predicted; n_predicted--) out[pos++] = code;
      }
    }
    for (; n_predicted; n_predicted--) {
      pred = next[pred];
      code = codes[pred];
      if (__builtin_expect(code == CACHE_EMPTY, 0)) return bad_bucket(r, at, true, pred);
      out[pos++] = code;
    }
    if (checked && __builtin_expect(p > end, 0)) break;
  }
  if (checked && p > end) return FAIL(r, at, "backtrace codeword runs past the end of its packet"), NULL;
  *len = *kept = pos;
  return p;
}

// ---------------------------------------------------------------- shared frames of two domains

// Frames shared by two domains' backtraces, needed when the domain of the
// allocations changes. Comparing the backtraces from frame 0 each time would
// cost up to TRACE_READER_MAX_FRAMES per switch, which tiny packets of two
// domains taking turns can ask for with every 80 bytes. So the result is
// kept per pair of domains, with `low`: the first frame either domain
// changed since (UINT32_MAX: none). Invariant: both backtraces still agree
// on their first min(lcp, low) frames, so comparing starts there; what it
// then passes over are frames decoded since, which the bytes read paid for.
static PairFrames *pair_of(TraceReader *r, const Domain *a, const Domain *b) {
  unsigned i = a->index < b->index ? a->index : b->index, j = a->index ^ b->index ^ i;
  return &r->pairs[i * TRACE_READER_MAX_DOMAINS + j];
}

// Domain d's frames from `from` on may have changed.
static inline void note_change(TraceReader *r, const Domain *d, uint32_t from) {
  for (unsigned k = 0; k < r->n_domains; k++) {
    if (r->domains[k] == d) continue;
    PairFrames *pf = pair_of(r, d, r->domains[k]);
    if (from < pf->low) pf->low = from;
  }
}

static uint32_t shared_frames(TraceReader *r, const Domain *a, const Domain *b) {
  PairFrames *pf = pair_of(r, a, b);
  uint32_t n = a->n_frames < b->n_frames ? a->n_frames : b->n_frames, i = 0;
  if (pf->known) i = pf->lcp < pf->low ? pf->lcp : pf->low;
  if (i > n) i = n;
  while (i < n && a->frames[i] == b->frames[i]) i++;
  *pf = (PairFrames){i, UINT32_MAX, true};
  return i;
}

// ================================================================ events

// The first event of a trace is an allocation (a promotion or collection
// would name one before it) and takes the slow path: only that path needs
// to set first_time_us.
static inline void set_times(TraceReader *r, TraceEvent *ev, uint64_t time, const uint8_t *at, bool slow) {
  ev->time_us = time;
  ev->dtime_us = time - r->info.start_time_us;
  ev->offset = offset_of(r, at);
  ev->domain = r->dom->id;
  if (slow && !r->stats.first_time_us) r->stats.first_time_us = time;
  r->stats.last_time_us = time;
}

// An allocation's backtrace decoded to `len` frames, of which `kept` are
// stored: the backtrace is cut to the outermost min(kept, MAX_FRAMES) when
// that is fewer (reader.h, TRACE_READER_MAX_FRAMES). Returns the frames kept.
static inline uint32_t keep_frames(TraceReader *r, Domain *d, TraceEvent *ev, uint64_t len, uint32_t kept) {
  if (kept > TRACE_READER_MAX_FRAMES) kept = TRACE_READER_MAX_FRAMES;
  ev->cut = d->last_cut = kept < len;
  if (__builtin_expect(ev->cut, 0)) {
    r->stats.cut_backtraces++;
    if (len > r->stats.deepest_cut) r->stats.deepest_cut = len;
  }
  return kept;
}

// The backtrace of an allocation whose fixed fields are read; fills ev's
// backtrace fields. Returns the position after the codewords, NULL on error.
static const uint8_t *read_backtrace(TraceReader *r, TraceEvent *ev, const uint8_t *ev_at, const uint8_t *p,
                                     int64_t prefix, uint32_t n_coded) {
  (void)ev_at;
  Domain *d = r->dom;
  if ((uint64_t)(r->end - p) < 2 * (uint64_t)n_coded)
    return FAIL(r, p, "backtrace of %" PRIu32 " codewords runs past the end of its packet", n_coded), NULL;
  const uint8_t *codewords = p;
  uint64_t len = 0;
  uint32_t kept = 0;
  if ((uint64_t)prefix <= d->n_frames) {
    if (!(p = decode_backtrace(r, d, p, n_coded, (uint32_t)prefix, &len, &kept, true))) return NULL;
    d->n_frames = keep_frames(r, d, ev, len, kept);
    d->last_maybe_cut = p - codewords >= CUT_BACKTRACE_BYTES || ev->cut;
    if (r->pairs) note_change(r, d, (uint32_t)prefix);
    ev->common = (uint32_t)prefix;
    r->stats.new_frames += d->n_frames - (uint32_t)prefix;
  } else {
    // The previous backtrace was cut, by its writer or by us: memtrace keeps
    // it for this one and decodes the codewords only for the cache. (Cut by
    // us, the frames it keeps are this one's first ones too: prefix is past
    // them.)
    if (!d->last_maybe_cut)
      return FAIL(r, codewords, "common prefix %" PRId64 " is longer than the previous backtrace (%" PRIu32 " frames)",
                  prefix, d->n_frames), NULL;
    if (!(p = decode_backtrace(r, d, p, n_coded, d->n_frames, &len, &kept, true))) return NULL;
    bool was_cut = d->last_cut;
    ev->cut = d->last_cut = was_cut;
    if (was_cut) {
      r->stats.cut_backtraces++;
      uint64_t depth = (uint64_t)prefix + (len - d->n_frames);
      if (depth > r->stats.deepest_cut) r->stats.deepest_cut = depth;
    }
    ev->common = d->n_frames;
  }
  if (__builtin_expect(r->last_alloc_domain != d, 0)) {
    if (r->last_alloc_domain) ev->common = shared_frames(r, r->last_alloc_domain, d);
    r->last_alloc_domain = d;
  }
  ev->backtrace = d->frames;
  ev->backtrace_len = d->n_frames;
  ev->coded_prefix = (uint64_t)prefix;
  r->stats.backtrace_bytes += (uint64_t)(p - codewords);
  if (d->n_frames > r->stats.max_backtrace) r->stats.max_backtrace = d->n_frames;
  return p;
}

// ================================================================ block states

// A block's state: young (allocated in the minor heap), old (promoted, or
// allocated in the major heap or outside it), collected. A collected block
// has no more events: a promotion or collection of it is damage (tools
// keyed by id would skip it where `info` counts it). Writers do not promote
// old blocks either, but the test encoders do and tools take it as a no-op:
// not checked.
enum { BLOCK_YOUNG = 0, BLOCK_OLD = 1, BLOCK_COLLECTED = 2 };

static inline bool tracks_blocks(const TraceReader *r) { return r->info.version < 3; }

static inline unsigned block_state(const TraceReader *r, uint64_t id) {
  return (r->blocks[id >> 2] >> ((id & 3) * 2)) & 3;
}

static inline void set_block_state(TraceReader *r, uint64_t id, unsigned state) {
  uint8_t *b = &r->blocks[id >> 2];
  *b = (uint8_t)((*b & ~(3u << ((id & 3) * 2))) | state << ((id & 3) * 2));
}

// Room for the state of allocation `id`; false (error set) when out of memory.
static bool room_for_block(TraceReader *r, uint64_t id, const uint8_t *at) {
  if (id < r->blocks_cap) return true;
  uint64_t cap = r->blocks_cap ? 2 * r->blocks_cap : 4096;
  while (cap <= id) cap *= 2;
  uint8_t *blocks = realloc(r->blocks, cap / 4);
  if (!blocks) {
    fail_at_offset(r, TRACE_ERROR_MEMORY, offset_of(r, at), "out of memory for the states of %" PRIu64 " blocks", id);
    return false;
  }
  memset(blocks + r->blocks_cap / 4, 0, (cap - r->blocks_cap) / 4);
  r->blocks = blocks;
  r->blocks_cap = cap;
  return true;
}

// An allocation event, long (code 2) or short (101..116); p follows its
// event header at `at`.
static Step read_alloc(TraceReader *r, TraceEvent *ev, const uint8_t *at, const uint8_t *p, unsigned code) {
  int64_t length, n_samples, prefix;
  unsigned source = TRACE_SOURCE_MINOR;
  uint32_t n_coded;
  if (code == TRACE_EV_ALLOC) {
    p = rd_vint(p, &length);
    p = rd_vint(p, &n_samples);
    source = *p++;
    p = rd_vint(p, &prefix);
    n_coded = rd16(p);
    p += 2;
  } else {
    length = code - TRACE_EV_SHORT_ALLOC;
    n_samples = 1;
    p = rd_vint(p, &prefix);
    n_coded = *p++;
  }
  if (p > r->end) return FAIL(r, at, "event runs past the end of its packet");
  if (source > TRACE_SOURCE_EXTERNAL) return FAIL(r, at, "allocation source %u is not 0, 1 or 2", source);
  if (length < 0 || n_samples < 0 || prefix < 0)
    return FAIL(r, at, "negative allocation field (length %" PRId64 ", samples %" PRId64 ", prefix %" PRId64 ")",
                length, n_samples, prefix);
  // A block is in the trace because at least one of its words was sampled.
  if (n_samples == 0) return FAIL(r, at, "allocation of %" PRId64 " words with no sample", length);
  if (tracks_blocks(r) && !room_for_block(r, r->next_id, at)) return STEP_ERROR;
  if (!(p = read_backtrace(r, ev, at, p, prefix, n_coded))) return STEP_ERROR;
  if (tracks_blocks(r)) set_block_state(r, r->next_id, source == TRACE_SOURCE_MINOR ? BLOCK_YOUNG : BLOCK_OLD);
  ev->kind = TRACE_EVENT_ALLOC;
  ev->id = r->next_id++;
  ev->source = (TraceSource)source;
  ev->length = (uint64_t)length;
  ev->n_samples = (uint64_t)n_samples;
  r->extra_samples += (uint64_t)n_samples - 1;
  r->stats.sampled_words = add_words(r->stats.sampled_words, (uint64_t)length, (uint64_t)n_samples);
  r->p = p;
  return STEP_EVENT;
}

// A promotion or collection: the allocation `distance` before the last one.
// v1/v2 writers only refer back; memtrace's v3 reader lets a collection
// refer forward (a domain's late collections).
static Step read_reference(TraceReader *r, TraceEvent *ev, const uint8_t *at, const uint8_t *p, unsigned code) {
  int64_t distance;
  p = rd_vint(p, &distance);
  if (p > r->end) return FAIL(r, at, "event runs past the end of its packet");
  bool forward_ok = code == TRACE_EV_COLLECT && r->pkt.version >= 3;
  if (distance < 0 ? !forward_ok : (uint64_t)distance >= r->next_id)
    return FAIL(r, at, "%s of allocation %" PRId64 " back from the last one (%" PRIu64 " allocations so far)",
                code == TRACE_EV_PROMOTE ? "promotion" : "collection", distance, r->next_id);
  ev->kind = code == TRACE_EV_PROMOTE ? TRACE_EVENT_PROMOTE : TRACE_EVENT_COLLECT;
  ev->id = r->next_id - 1 - (uint64_t)distance;
  if (tracks_blocks(r)) {
    unsigned state = block_state(r, ev->id);
    if (state == BLOCK_COLLECTED)
      return FAIL(r, at, "%s of allocation %" PRIu64 ", which was already collected",
                  code == TRACE_EV_PROMOTE ? "promotion" : "collection", ev->id);
    set_block_state(r, ev->id, code == TRACE_EV_PROMOTE ? BLOCK_OLD : BLOCK_COLLECTED);
  }
  ev->source = TRACE_SOURCE_MINOR;
  ev->length = ev->n_samples = ev->coded_prefix = 0;
  ev->backtrace = NULL;
  ev->backtrace_len = ev->common = 0;
  ev->cut = false;
  r->references[code - TRACE_EV_PROMOTE]++;
  r->p = p;
  return STEP_EVENT;
}

static Step read_location(TraceReader *r, const uint8_t *at, const uint8_t *p) {
  LocError err = {0};
  p = loc_table_read_event(r->locs, &r->dom->names, p, r->end, &err);
  if (!p)
    return fail_at_offset(r, err.out_of_memory ? TRACE_ERROR_MEMORY : TRACE_ERROR_CORRUPT, offset_of(r, err.at), "%s",
                          err.text);
  r->stats.location_events++;
  r->stats.location_bytes += (uint64_t)(p - at);
  r->p = p;
  return STEP_AGAIN;
}

// The event at r->p (before the packet's end).
static Step read_event(TraceReader *r, TraceEvent *ev) {
  const uint8_t *at = r->p;
  if (r->end - at < 4) return FAIL(r, at, "event header runs past the end of its packet");
  uint32_t head = rd32(at);
  unsigned code = head >> TRACE_TIME_BITS;
  uint32_t low = head & TIME_MASK;
  uint64_t time = r->time_base + low + (low < r->start_low ? (uint64_t)1 << TRACE_TIME_BITS : 0);
  Domain *d = r->dom;
  if (time > r->pkt.time_end)
    return FAIL(r, at, "event time %" PRIu64 " is past its packet's last time %" PRIu64, time, r->pkt.time_end);
  if (time < d->last_time_us)
    return FAIL(r, at, "event time %" PRIu64 " is before the previous event's %" PRIu64, time, d->last_time_us);
  d->last_time_us = time;
  const uint8_t *p = at + 4;
  Step s;
  if (code == TRACE_EV_ALLOC || (code > TRACE_EV_SHORT_ALLOC && code <= TRACE_EV_SHORT_ALLOC + TRACE_SHORT_ALLOC_MAX))
    s = read_alloc(r, ev, at, p, code);
  else if (code == TRACE_EV_PROMOTE || code == TRACE_EV_COLLECT)
    s = read_reference(r, ev, at, p, code);
  else if (code == TRACE_EV_LOCATION)
    return read_location(r, at, p);
  else if (code == TRACE_EV_INFO)
    return FAIL(r, at, "a second trace-info event");
  else
    return FAIL(r, at, "unknown event code %u", code);
  if (s == STEP_EVENT) set_times(r, ev, time, at, true);
  return s;
}

// ================================================================ the fast path

// The common events decoded with the fewest checks: allocations whose
// codewords cannot run past the packet, promotions and collections, whose
// variable-length fields take at most 5 bytes, times in order, in the
// domain of the previous allocation. Anything else is left (STEP_SLOW) to
// read_event, which decodes it from its start again and says what is wrong:
// nothing changes before the decision.
enum { FAST_MIN = 4 + 5 + 5 + 1 + 5 + 2 };  // the longest fixed part taken here

// A vint of 1, 3 or 5 bytes at p, not negative (else false: the slow path
// takes it).
static inline bool fast_vint(const uint8_t **p, uint64_t *out) {
  uint8_t b = **p;
  if (__builtin_expect(b < 253, 1)) {
    *out = b;
    *p += 1;
    return true;
  }
  if (b == 253) {
    *out = rd16(*p + 1);
    *p += 3;
    return true;
  }
  int32_t v = (int32_t)rd32(*p + 1);
  *out = (uint64_t)v;
  *p += 5;
  return b == 254 && v >= 0;
}

static inline __attribute__((always_inline)) Step fast_alloc(TraceReader *r, TraceEvent *ev, Domain *d,
                                                             const uint8_t *at, unsigned code, uint64_t time) {
  const uint8_t *p = at + 4;
  uint64_t length, n_samples = 1, prefix;
  unsigned source = TRACE_SOURCE_MINOR;
  uint32_t n_coded;
  if (code == TRACE_EV_ALLOC) {
    if (!fast_vint(&p, &length) || !fast_vint(&p, &n_samples) || n_samples == 0) return STEP_SLOW;
    source = *p++;
    if (!fast_vint(&p, &prefix) || source > TRACE_SOURCE_EXTERNAL) return STEP_SLOW;
    n_coded = rd16(p);
    p += 2;
  } else {
    length = code - TRACE_EV_SHORT_ALLOC;
    if (!fast_vint(&p, &prefix)) return STEP_SLOW;
    n_coded = *p++;
  }
  if (prefix > d->n_frames || (uint64_t)(r->end - p) < (uint64_t)n_coded * MAX_CODEWORD ||
      d->cap_frames - prefix < (uint64_t)n_coded * (TRACE_MAX_PREDICTED + 1) ||
      prefix + (uint64_t)n_coded * (TRACE_MAX_PREDICTED + 1) > TRACE_READER_MAX_FRAMES || r->last_alloc_domain != d ||
      (r->next_id >= r->blocks_cap && tracks_blocks(r)))
    return STEP_SLOW;
  d->last_time_us = time;
  uint64_t len64 = 0;
  uint32_t kept = 0;
  const uint8_t *after = decode_backtrace(r, d, p, n_coded, (uint32_t)prefix, &len64, &kept, false);
  if (!after) return STEP_ERROR;
  uint32_t len = kept;  // = len64: the frames fit (checked above)
  d->n_frames = len;
  d->last_cut = false;
  ev->cut = false;
  d->last_maybe_cut = after - p >= CUT_BACKTRACE_BYTES;
  if (__builtin_expect(r->pairs != NULL, 0)) note_change(r, d, (uint32_t)prefix);
  if (tracks_blocks(r)) set_block_state(r, r->next_id, source == TRACE_SOURCE_MINOR ? BLOCK_YOUNG : BLOCK_OLD);
  ev->kind = TRACE_EVENT_ALLOC;
  ev->id = r->next_id++;
  ev->source = (TraceSource)source;
  ev->length = length;
  ev->n_samples = n_samples;
  ev->backtrace = d->frames;
  ev->backtrace_len = len;
  ev->common = (uint32_t)prefix;
  ev->coded_prefix = prefix;
  set_times(r, ev, time, at, false);
  TraceReaderStats *st = &r->stats;
  r->extra_samples += n_samples - 1;
  st->sampled_words = add_words(st->sampled_words, length, n_samples);
  st->new_frames += len - prefix;
  st->backtrace_bytes += (uint64_t)(after - p);
  if (len > st->max_backtrace) st->max_backtrace = len;
  r->p = after;
  return STEP_EVENT;
}

static inline __attribute__((always_inline)) Step fast_reference(TraceReader *r, TraceEvent *ev, Domain *d,
                                                                 const uint8_t *at, unsigned code, uint64_t time) {
  const uint8_t *p = at + 4;
  uint64_t distance;
  if (!fast_vint(&p, &distance) || distance >= r->next_id) return STEP_SLOW;
  bool promote = code == TRACE_EV_PROMOTE;
  uint64_t id = r->next_id - 1 - distance;
  if (tracks_blocks(r)) {
    unsigned state = block_state(r, id);
    if (state == BLOCK_COLLECTED) return STEP_SLOW;
    set_block_state(r, id, promote ? BLOCK_OLD : BLOCK_COLLECTED);
  }
  d->last_time_us = time;
  ev->kind = promote ? TRACE_EVENT_PROMOTE : TRACE_EVENT_COLLECT;
  ev->id = r->next_id - 1 - distance;
  ev->source = TRACE_SOURCE_MINOR;
  ev->length = ev->n_samples = ev->coded_prefix = 0;
  ev->backtrace = NULL;
  ev->backtrace_len = ev->common = 0;
  ev->cut = false;
  set_times(r, ev, time, at, false);
  r->references[code - TRACE_EV_PROMOTE]++;
  r->p = p;
  return STEP_EVENT;
}

static inline __attribute__((always_inline)) Step fast_event(TraceReader *r, TraceEvent *ev) {
  const uint8_t *at = r->p;
  if (__builtin_expect(r->end - at < FAST_MIN, 0)) return STEP_SLOW;
  uint32_t head = rd32(at);
  unsigned code = head >> TRACE_TIME_BITS;
  uint32_t low = head & TIME_MASK;
  uint64_t time = r->time_base + low + ((uint64_t)(low < r->start_low) << TRACE_TIME_BITS);
  Domain *d = r->dom;
  if (time > r->pkt.time_end || time < d->last_time_us) return STEP_SLOW;
  if (code - (TRACE_EV_SHORT_ALLOC + 1) < TRACE_SHORT_ALLOC_MAX || code == TRACE_EV_ALLOC)
    return fast_alloc(r, ev, d, at, code, time);
  if (code == TRACE_EV_PROMOTE || code == TRACE_EV_COLLECT) return fast_reference(r, ev, d, at, code, time);
  return STEP_SLOW;
}

// Everything else: packet boundaries, locations, rare forms, errors.
static TraceReaderStatus __attribute__((noinline)) next_slow(TraceReader *r, TraceEvent *event) {
  if (r->error.kind != TRACE_ERROR_NONE) return TRACE_READER_ERROR;
  if (r->done) return TRACE_READER_END;
  for (;;) {
    Step s;
    if (r->in_packet) {
      if (r->p < r->end) s = read_event(r, event);
      else s = finish_packet(r);
    } else {
      s = start_packet(r);
    }
    if (s != STEP_AGAIN) return (TraceReaderStatus)s;
  }
}

TraceReaderStatus trace_reader_next(TraceReader *r, TraceEvent *event) {
  Step s = fast_event(r, event);
  if (__builtin_expect(s != STEP_SLOW, 1)) return (TraceReaderStatus)s;
  return next_slow(r, event);
}

// ================================================================ trace info

// A NUL-terminated string at *p before `end`, copied to *dst.
static bool read_info_string(TraceReader *r, const uint8_t **p, const uint8_t *end, char **dst) {
  const uint8_t *nul = memchr(*p, 0, (size_t)(end - *p));
  if (!nul) {
    FAIL(r, *p, "a trace-info string runs past the end of its packet");
    return false;
  }
  size_t n = (size_t)(nul - *p) + 1;
  memcpy(*dst, *p, n);
  *p += n;
  *dst += n;
  return true;
}

// The trace-info event: the first packet's only event.
static Step read_info(TraceReader *r) {
  const PacketHeader *h = &r->pkt;
  const uint8_t *b = r->buf + r->pos, *p = b + h->header_size, *end = b + h->size;
  TraceReaderInfo *info = &r->info;
  if (end - p < 4 + 8 + 1) return FAIL(r, p, "trace-info event runs past the end of its packet");
  uint32_t head = rd32(p);
  if (head >> TRACE_TIME_BITS != TRACE_EV_INFO)
    return FAIL(r, p, "the first packet's event has code %" PRIu32 ", not trace info", head >> TRACE_TIME_BITS);
  if ((head & TIME_MASK) != (h->time_begin & TIME_MASK))
    return FAIL(r, p, "the trace-info event's time differs from its packet's");
  // The first packet's header: both times the start time, no allocation,
  // no cache check (every writer writes it so; the numbering and the times
  // of the whole trace start from it).
  unsigned v3 = h->version >= 3 ? 2 : 0;
  if (h->time_end != h->time_begin)
    return FAIL(r, b + 16, "the trace-info packet's last time %" PRIu64 " differs from its first %" PRIu64,
                h->time_end, h->time_begin);
  if (h->id_begin != 0 || h->id_end != 0)
    return FAIL(r, b + 50 + v3, "the trace-info packet declares allocations %" PRIu64 " to %" PRIu64 ", not none",
                h->id_begin, h->id_end);
  if (h->check_bucket != TRACE_CACHE_CHECK_NONE)
    return FAIL(r, b + 38 + v3, "the trace-info packet carries a cache check (bucket %u)", h->check_bucket);
  memcpy(&info->sample_rate, p + 4, 8);
  info->word_size = p[12];
  p += 13;
  if (!(info->sample_rate > 0 && info->sample_rate <= 1))
    return FAIL(r, p - 9, "sampling rate %g is not in (0, 1]", info->sample_rate);
  if (info->word_size != 32 && info->word_size != 64)
    return FAIL(r, p - 1, "word size %u bits, not 32 or 64", info->word_size);
  char *dst = r->info_strings = malloc(h->size);
  if (!dst) return fail_at_offset(r, TRACE_ERROR_MEMORY, offset_of(r, p), "out of memory");
  const char **fields[] = {&info->executable, &info->host, &info->runtime_params};
  for (unsigned i = 0; i < 3; i++) {
    *fields[i] = dst;
    if (!read_info_string(r, &p, end, &dst)) return STEP_ERROR;
  }
  if (end - p < 8) return FAIL(r, p, "trace-info event runs past the end of its packet");
  info->pid = rd64(p);
  if (info->pid != h->pid)
    return FAIL(r, p, "the trace-info event's pid %" PRIu64 " differs from its packet's %" PRIu64, info->pid, h->pid);
  p += 8;
  info->context = dst;
  *dst = '\0';
  if (h->version >= 2 && !read_info_string(r, &p, end, &dst)) return STEP_ERROR;
  if (p != end) return FAIL(r, p, "%td bytes after the trace-info event in its packet", end - p);
  info->start_time_us = h->time_begin;
  info->domain = h->domain;
  info->version = h->version;
  r->stats.packets++;
  r->stats.header_bytes += h->header_size;
  r->stats.info_bytes += h->size - h->header_size;
  r->pos += h->size;
  return STEP_AGAIN;
}

// ================================================================ open, close, queries

TraceReader *trace_reader_open_fd(int fd, TraceReaderError *err) {
  // A small file gets a small buffer (opening thousands of them stays cheap).
  struct stat st;
  size_t cap = READ_BUFFER;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < READ_BUFFER - SMALL_BUFFER)
    cap = (size_t)st.st_size + SMALL_BUFFER;
  TraceReader *r = calloc(1, sizeof *r);
  uint8_t *buf = calloc(1, cap + READ_SLACK);
  LocTable *locs = loc_table_new();
  if (!r || !buf || !locs) {
    if (err) *err = (TraceReaderError){.kind = TRACE_ERROR_MEMORY, .message = "out of memory"};
    free(r);
    free(buf);
    loc_table_free(locs);
    close(fd);
    return NULL;
  }
  r->fd = fd;
  r->buf = buf;
  r->cap = cap;
  r->locs = locs;
  Step s = read_packet(r, &r->pkt);
  if (s == STEP_END) fail_at_offset(r, TRACE_ERROR_TRUNCATED, 0, "the file is empty");
  else if (s == STEP_AGAIN) read_info(r);
  if (r->error.kind != TRACE_ERROR_NONE) {
    if (err) *err = r->error;
    trace_reader_close(r);
    return NULL;
  }
  return r;
}

TraceReader *trace_reader_open(const char *path, TraceReaderError *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (err) {
      *err = (TraceReaderError){.kind = TRACE_ERROR_IO};
      snprintf(err->message, sizeof err->message, "cannot open: %s", strerror(errno));
    }
    return NULL;
  }
  return trace_reader_open_fd(fd, err);
}

void trace_reader_done(TraceReader *r) {
  for (unsigned i = 0; i < r->n_domains; i++) {
    Domain *d = r->domains[i];
    free(d->frames);
    d->frames = NULL;
    d->cap_frames = d->n_frames = 0;
  }
  r->frames_held = 0;
  r->done = true;
  r->end = r->p;  // fast_event finds no bytes: next_slow says the end (r->p stays: stats count from it)
}

void trace_reader_close(TraceReader *r) {
  if (!r) return;
  for (unsigned i = 0; i < r->n_domains; i++) {
    free(r->domains[i]->frames);
    free(r->domains[i]->ids);
    free(r->domains[i]);
  }
  loc_table_free(r->locs);
  free(r->pairs);
  free(r->blocks);
  free(r->info_strings);
  free(r->buf);
  close(r->fd);
  free(r);
}

void trace_reader_follow(TraceReader *r, bool follow) { r->follow = follow; }

const TraceReaderError *trace_reader_error(const TraceReader *r) { return &r->error; }

const TraceReaderInfo *trace_reader_info(const TraceReader *r) { return &r->info; }

int trace_reader_locations(const TraceReader *r, uint64_t code, const TraceReaderLocation **locs) {
  return loc_table_find(r->locs, code, locs);
}

void trace_reader_stats(const TraceReader *r, TraceReaderStats *out) {
  *out = r->stats;
  uint64_t content = r->content_bytes + (r->in_packet ? (uint64_t)(r->p - r->content) : 0);
  out->event_bytes = content - out->location_bytes - out->backtrace_bytes;
  out->location_codes = loc_table_codes(r->locs);
  out->allocs = r->allocs_done + (r->in_packet ? r->next_id - r->pkt.id_begin : 0);
  out->samples = out->allocs + r->extra_samples;
  out->promotes = r->references[0];
  out->collects = r->references[1];
  out->bytes = out->header_bytes + out->info_bytes + content + out->skipped_bytes;
}
