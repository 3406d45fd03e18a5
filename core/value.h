// value.h - the representation of Minnow values and heap blocks.
// Everything that touches a Value includes this file; layouts are drawn here
// and nowhere else. Design: docs/design.md ("The path of one allocation").
//
// Glossary (abbreviations used across core/, lang/, gc/, memprof/):
//   wosize   size of a block in words, header excluded (OCaml's Wosize)
//   whsize   size of a block in words, header included (wosize + 1)
//   hd       block header word
//   young    in the minor heap; old: in the major heap
//   promote  copy a young block into the major heap (minor GC)
//   ret      a return address saved on the VM stack
//   desc     frame descriptor (core/frames.h)
//   pc       pointer to the current bytecode word
//   fsize    frame size in slots (a frame's slots, return address excluded)
#ifndef MINNOW_VALUE_H
#define MINNOW_VALUE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// ---------------------------------------------------------------------------
// Values. One 64-bit word:
//
//   63                               3 2 1 0
//  +----------------------------------+-----+
//  |        63-bit integer n             | 1 |   int:     (n << 1) | 1
//  +----------------------------------+-+---+
//  |   address of field 0 of a block     |000|   pointer: 8-byte aligned, never 0
//  +-------------------------------------+---+
//  |   constant number k                 |010|   nil=0x02 false=0x06 true=0x0a []=0x0e
//  +-------------------------------------+---+
typedef uint64_t Value;

#define VAL_NIL ((Value)0x02)
#define VAL_FALSE ((Value)0x06)
#define VAL_TRUE ((Value)0x0a)
#define VAL_EMPTY ((Value)0x0e)

static inline bool val_is_int(Value v) { return (v & 1) != 0; }
static inline bool val_is_ptr(Value v) { return (v & 7) == 0; }
static inline int64_t val_to_int(Value v) { return (int64_t)v >> 1; }
// Wraps on overflow: the top bit of n is dropped (63-bit arithmetic).
static inline Value val_of_int(int64_t n) { return ((uint64_t)n << 1) | 1; }
static inline Value val_of_bool(bool b) { return b ? VAL_TRUE : VAL_FALSE; }
static inline bool val_is_bool(Value v) { return v == VAL_TRUE || v == VAL_FALSE; }

#define MINNOW_INT_MAX (((int64_t)1 << 62) - 1)
#define MINNOW_INT_MIN (-((int64_t)1 << 62))

// ---------------------------------------------------------------------------
// Blocks. A pointer Value addresses field 0; the header is the word before it.
//
//   header word:
//   63                                   10 9   8 7        0
//  +---------------------------------------+-----+----------+
//  |              wosize (54 bits)          |color|   tag    |
//  +---------------------------------------+-----+----------+
//
//   [ header ][ field 0 ][ field 1 ] ... [ field wosize-1 ]
//              ^ Value
//
// A header equal to 0 in the minor heap marks a block already promoted by the
// running minor GC; its field 0 then holds the new address (gc/minor.c).
typedef uint64_t Header;

enum {
  TAG_CONS = 0,     // 2 fields: head, tail
  TAG_TUPLE = 1,    // n >= 2 fields
  TAG_ARRAY = 2,    // n fields, mutable
  TAG_RECORD = 3,   // field 0: shape id (int); fields 1..n: values, mutable
  TAG_CLOSURE = 4,  // field 0: function id (int); fields 1..: captured values
  TAG_BUFFER = 5,   // Buffer.t: field 0 the storage (TAG_BYTES), field 1 the length (int)
  TAG_CALLSTACK = 6, // a sample's callstack, the Memprof module's (lang/lib/memprof_module.c):
                     // 4 fields, its callers' innermost TAG_CALLERS node or nil, its
                     // site's debug-entry id (int), the frames Memprof.frames shows
                     // (int, 0: all), the profile's records (array)
  TAG_CALLERS = 7,   // a run of callers of memprof callstacks (memprof_module.c): 7 fields,
                     // the node of the run below or nil, the return address (int), the
                     // callers up to and including the run (int), its frames (list) or nil,
                     // the node below its whole run or nil, its run's cells (array) or nil,
                     // the cells of a run above it (array) or nil
  TAG_NO_SCAN = 250,  // tags >= this hold no Values; the GC does not look inside
  TAG_BYTES = 250,  // mutable bytes owned by one C structure (a buffer's storage);
                    // never handed to Minnow code, never read as a string
  TAG_RAW = 251,    // opaque C data
  TAG_STRING = 252, // bytes; last byte of the last word = padding count (see below)
  TAG_FLOAT = 253,  // 1 field: an IEEE double
  TAG_PROFILE = 255,   // Memprof.start's handle: 1 field, the profile id
};
// Every kind of block C code trusts has its own tag, tested before any field
// is read (never inferred from a block's size or contents): a Minnow program
// can build any array, tuple or record, but no block of these tags.

enum {
  COLOR_WHITE = 0,  // major heap: not (yet) marked
  COLOR_BLACK = 1,  // major heap: marked live
  COLOR_FREE = 2,   // major heap: on a free list
  COLOR_STATIC = 3, // never collected (constants); the marker skips it
  // During a snapshot's mark only (gc/mark_paths.c part 4): a sampled block
  // not reached yet. No free block is reachable, so the mark never mistakes
  // one for the other; the targets it does not reach are WHITE again
  // before anything else looks at colours.
  COLOR_TARGET = COLOR_FREE,
};

// Blocks of more than this many fields are born in the major heap.
enum { MAX_YOUNG_WOSIZE = 256 };

static inline Header hd_make(uint64_t wosize, unsigned tag, unsigned color) {
  return (wosize << 10) | ((Header)color << 8) | tag;
}
static inline uint64_t hd_wosize(Header h) { return h >> 10; }
static inline unsigned hd_tag(Header h) { return (unsigned)(h & 0xff); }
static inline unsigned hd_color(Header h) { return (unsigned)((h >> 8) & 3); }
static inline Header hd_with_color(Header h, unsigned color) {
  return (h & ~(Header)0x300) | ((Header)color << 8);
}

static inline Value *val_fields(Value v) { return (Value *)(uintptr_t)v; }
static inline Header *val_hd_ptr(Value v) { return (Header *)(uintptr_t)v - 1; }
static inline Header val_hd(Value v) { return *val_hd_ptr(v); }
static inline unsigned val_tag(Value v) { return hd_tag(val_hd(v)); }
static inline uint64_t val_wosize(Value v) { return hd_wosize(val_hd(v)); }
static inline Value val_field(Value v, uint64_t i) { return val_fields(v)[i]; }
static inline Value val_of_ptr(const void *field0) { return (Value)(uintptr_t)field0; }

static inline bool val_has_tag(Value v, unsigned tag) {
  return val_is_ptr(v) && val_tag(v) == tag;
}

// ---------------------------------------------------------------------------
// Strings: wosize = ceil((len + 1) / 8). The last byte of the block holds
// (wosize * 8 - 1 - len), so the length is recovered without a length field
// and the bytes are always NUL-terminated (as in OCaml).
//
//   [ 'h' 'e' 'l' 'l' 'o' 00 00 02 ]   len 5, wosize 1
static inline uint64_t str_wosize_for(size_t len) { return (len + 8) / 8; }
static inline const char *str_bytes(Value s) { return (const char *)val_fields(s); }
static inline size_t str_len(Value s) {
  size_t bytes = val_wosize(s) * 8;
  return bytes - 1 - (unsigned char)str_bytes(s)[bytes - 1];
}
// Writes padding and the length byte of a string block of `len` bytes.
static inline void str_finish(Value s, size_t len) {
  size_t bytes = val_wosize(s) * 8;
  char *p = (char *)val_fields(s);
  memset(p + len, 0, bytes - len);
  p[bytes - 1] = (char)(bytes - 1 - len);
}
// The same before the bytes are written: the padding lies in the last word
// (len >= 8 * (wosize - 1)), so that word is zeroed and its last byte set;
// the bytes [0, len) are the caller's to write afterwards.
static inline void str_set_padding(Value s, size_t len) {
  uint64_t n = val_wosize(s);
  val_fields(s)[n - 1] = 0;
  ((unsigned char *)val_fields(s))[n * 8 - 1] = (unsigned char)(n * 8 - 1 - len);
}

static inline double float_of_val(Value v) {
  double d;
  memcpy(&d, val_fields(v), sizeof d);
  return d;
}

static_assert(sizeof(Value) == 8, "Value is one 64-bit word");
static_assert(sizeof(double) == 8, "a float fits one field");

#endif
