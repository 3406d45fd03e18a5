// ops.c - structural equality, ordering, hashing, printing and ++ (ops.h).
// Recursion follows the heads of lists and the fields of tuples, records and
// arrays, but walks list tails in a loop, so million-element lists are fine;
// nesting deeper than MAX_DEPTH is cut off (printed as "...").
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/image.h"
#include "ops.h"
#include "shapes.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"

enum { MAX_DEPTH = 10000 };

const char *ops_type_name(Value v) {
  if (val_is_int(v)) return "int";
  if (v == VAL_NIL) return "nil";
  if (v == VAL_TRUE || v == VAL_FALSE) return "bool";
  if (v == VAL_EMPTY) return "list";
  if (!val_is_ptr(v)) return "value";
  switch (val_tag(v)) {
    case TAG_CONS: return "list";
    case TAG_TUPLE: return "tuple";
    case TAG_ARRAY: return "array";
    case TAG_RECORD: return "record";
    case TAG_CLOSURE: return "function";
    case TAG_BUFFER: return "buffer";
    case TAG_STRING: return "string";
    case TAG_FLOAT: return "float";
    case TAG_CALLSTACK: return "callstack";
    case TAG_PROFILE: return "profile";
    default: return "value";
  }
}

static bool is_list(Value v) { return v == VAL_EMPTY || val_has_tag(v, TAG_CONS); }


// =====================================================================
// Equality and ordering
// =====================================================================

// Pairs still to compare, on an explicit stack: no recursion, however deep
// the values are nested.
//
// Cycles (an array or record that contains itself, directly or not): after
// MEMO_AFTER steps the walk starts remembering every pair of mutable blocks
// it compares and skips a pair it has seen, taking it as equal. Only arrays
// and records can close a cycle, so the walk then ends on every value; ==
// is then bisimilarity (two cyclic values are equal when no finite path
// tells them apart), and compare orders by the first difference found in
// that same walk. Below MEMO_AFTER steps nothing is recorded: acyclic
// values cost what they did.
enum { MEMO_AFTER = 1 << 12 };

typedef struct PairSet {
  Value (*keys)[2];   // open addressing; {0, 0} is empty (0 is never a Value)
  size_t cap, count;
} PairSet;

typedef struct PairStack {
  Value (*pairs)[2];
  size_t count, cap;
  Value (*inline_pairs)[2];
  Vm *vm;
  uint64_t steps;
  PairSet seen;       // used once steps > MEMO_AFTER
} PairStack;

static void pair_free(PairStack *st) {
  if (st->pairs != st->inline_pairs) free(st->pairs);
  free(st->seen.keys);
}

static _Noreturn void compare_out_of_memory(PairStack *st) {
  pair_free(st);
  vm_raise_out_of_memory(st->vm);
}

static void pair_push(PairStack *st, Value a, Value b) {
  if (st->count == st->cap) {
    size_t cap = st->cap * 2;
    Value(*p)[2] = st->pairs == st->inline_pairs ? malloc(cap * sizeof *p) : realloc(st->pairs, cap * sizeof *p);
    if (!p) compare_out_of_memory(st);
    if (st->pairs == st->inline_pairs) memcpy(p, st->pairs, st->count * sizeof *p);
    st->pairs = p;
    st->cap = cap;
  }
  st->pairs[st->count][0] = a;
  st->pairs[st->count][1] = b;
  st->count++;
}

static size_t pair_slot(const PairSet *set, Value a, Value b) {
  uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full);
  size_t mask = set->cap - 1;
  size_t i = (size_t)(h ^ (h >> 29)) & mask;
  while (set->keys[i][0] && (set->keys[i][0] != a || set->keys[i][1] != b)) i = (i + 1) & mask;
  return i;
}

// Whether the pair (a, b) of mutable blocks was met before in this walk
// (always false until MEMO_AFTER steps); records it.
static bool seen_before(PairStack *st, Value a, Value b) {
  if (st->steps < MEMO_AFTER) return false;
  PairSet *set = &st->seen;
  if ((set->count + 1) * 2 > set->cap) {
    PairSet bigger = {calloc(set->cap ? set->cap * 2 : 1024, sizeof *set->keys), set->cap ? set->cap * 2 : 1024, set->count};
    if (!bigger.keys) compare_out_of_memory(st);
    for (size_t i = 0; i < set->cap; i++)
      if (set->keys[i][0]) memcpy(bigger.keys[pair_slot(&bigger, set->keys[i][0], set->keys[i][1])], set->keys[i], sizeof *set->keys);
    free(set->keys);
    *set = bigger;
  }
  size_t i = pair_slot(set, a, b);
  if (set->keys[i][0]) return true;
  set->keys[i][0] = a;
  set->keys[i][1] = b;
  set->count++;
  return false;
}

#define PAIR_STACK(name, the_vm)  \
  Value name##_inline[64][2];     \
  PairStack name = {name##_inline, 0, 64, name##_inline, the_vm, 0, {NULL, 0, 0}}

// Two headers agree on wosize and tag (colors may differ: one block may be
// marked, or static).
static inline bool same_shape(Header ha, Header hb) { return ((ha ^ hb) & ~(Header)0x300) == 0; }

// Equality of two string blocks of the same wosize n, a word at a time. Exact
// because the padding is a function of the length (value.h: zero bytes, then
// the count in the last byte): equal lengths give equal padding words, and
// different lengths in the same wosize give different last bytes.
static inline bool string_words_equal(Value a, Value b, uint64_t n) {
  const Value *fa = val_fields(a), *fb = val_fields(b);
  if (n > 8) return memcmp(fa, fb, n * 8) == 0;
  for (uint64_t i = 0; i < n; i++)
    if (fa[i] != fb[i]) return false;
  return true;
}

static uint32_t record_shape(Value r) { return (uint32_t)val_to_int(val_field(r, 0)); }

// Records a and b (same number of fields): pushes their fields pairwise in
// bytewise field-name order (docs/language.md, "Equality, ordering and
// hashing"); false when their field names differ. Same shape: the written
// order serves.
static bool push_record_fields(PairStack *st, Value a, Value b, uint64_t n) {
  const Shapes *shapes = st->vm->shapes;
  uint32_t sa = record_shape(a), sb = record_shape(b);
  if (sa == sb) {
    for (uint64_t i = n; i > 1; i--) pair_push(st, val_field(a, i - 1), val_field(b, i - 1));
    return true;
  }
  if (shapes_field_set(shapes, sa) != shapes_field_set(shapes, sb)) return false;
  const uint32_t *ca = shapes_canon(shapes, sa), *cb = shapes_canon(shapes, sb);
  for (uint64_t k = n - 1; k > 0; k--) pair_push(st, val_field(a, 1 + ca[k - 1]), val_field(b, 1 + cb[k - 1]));
  return true;
}

// One step of ==: false if a and b differ at the top; pushes their fields.
static bool equal_step(PairStack *st, Value a, Value b) {
  if (a == b) return true;
  if (!val_is_ptr(a) || !val_is_ptr(b)) return false;
  Header ha = val_hd(a), hb = val_hd(b);
  unsigned tag = hd_tag(ha);
  uint64_t n = hd_wosize(ha);
  if (!same_shape(ha, hb)) return false;
  if (tag == TAG_FLOAT) return float_of_val(a) == float_of_val(b);
  if (tag == TAG_STRING) return string_words_equal(a, b, n);
  if (tag == TAG_CLOSURE || tag == TAG_BUFFER || tag == TAG_CALLSTACK || tag == TAG_CALLERS || tag >= TAG_NO_SCAN)
    return false;   // compared by identity
  if ((tag == TAG_ARRAY || tag == TAG_RECORD) && seen_before(st, a, b)) return true;
  if (tag == TAG_RECORD) return push_record_fields(st, a, b, n);
  for (uint64_t i = n; i > 0; i--) pair_push(st, val_field(a, i - 1), val_field(b, i - 1));
  return true;
}

// The walk over nested values; out of line so that the string test of
// ops_equal needs no stack frame.
static __attribute__((noinline)) bool equal_walk(Vm *vm, Value a, Value b) {
  PAIR_STACK(st, vm);
  bool eq = equal_step(&st, a, b);
  while (eq && st.count > 0) {
    st.count--;
    st.steps++;
    eq = equal_step(&st, st.pairs[st.count][0], st.pairs[st.count][1]);
  }
  pair_free(&st);
  return eq;
}

// Whether two tuples or cons cells of the same header differ at the top: a
// pair of fields, one of them immediate, that are not the same word (an
// immediate equals only itself). The walk would find that pair too; this
// answers the common unequal keys of a Hashtbl bucket without starting it.
static inline bool fields_differ_at_top(Value a, Value b, uint64_t n) {
  const Value *fa = val_fields(a), *fb = val_fields(b);
  for (uint64_t i = 0; i < n; i++)
    if (fa[i] != fb[i] && (!val_is_ptr(fa[i]) || !val_is_ptr(fb[i]))) return true;
  return false;
}

bool ops_equal(Vm *vm, Value a, Value b) {
  if (a == b) return true;
  if (!val_is_ptr(a) || !val_is_ptr(b)) return false;
  Header ha = val_hd(a), hb = val_hd(b);
  unsigned tag = hd_tag(ha);
  if (tag == TAG_STRING) return same_shape(ha, hb) && string_words_equal(a, b, hd_wosize(ha));
  if (tag == TAG_FLOAT) return same_shape(ha, hb) && float_of_val(a) == float_of_val(b);
  if ((tag == TAG_TUPLE || tag == TAG_CONS) && (!same_shape(ha, hb) || fields_differ_at_top(a, b, hd_wosize(ha))))
    return false;
  return equal_walk(vm, a, b);
}

static _Noreturn void incomparable(PairStack *st, Value a, Value b) {
  pair_free(st);
  gc_raise_error(st->vm, "type error: cannot compare %s and %s", ops_type_name(a), ops_type_name(b));
}

// As OCaml's compare: nan equals itself and is below every other float.
static int cmp_num(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) ? (isnan(y) ? 0 : -1) : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

static int compare_strings(Value a, Value b) {
  size_t la = str_len(a), lb = str_len(b);
  int c = memcmp(str_bytes(a), str_bytes(b), la < lb ? la : lb);
  if (c) return c < 0 ? -1 : 1;
  return la < lb ? -1 : la > lb;
}

// Records: by their sorted field names first, then field by field in that
// order (so that compare is 0 exactly when == holds).
static int compare_records(PairStack *st, Value a, Value b) {
  const Shapes *shapes = st->vm->shapes;
  uint32_t sa = record_shape(a), sb = record_shape(b);
  int c = shapes_compare_sets(shapes, shapes_field_set(shapes, sa), shapes_field_set(shapes, sb));
  if (c) return c;
  push_record_fields(st, a, b, val_wosize(a));
  return 0;
}

// One step of the ordering: the order of a and b if their tops decide it,
// else 0 after pushing what remains to compare, first pair on top. Tuples and
// arrays: fields in order, then the lengths (pushed as two ints).
static int compare_step(PairStack *st, Value a, Value b) {
  Vm *vm = st->vm;
  if (val_is_int(a) && val_is_int(b)) return val_to_int(a) < val_to_int(b) ? -1 : val_to_int(a) > val_to_int(b);
  if (val_is_bool(a) && val_is_bool(b)) return (a == VAL_TRUE) - (b == VAL_TRUE);
  if (a == b) return 0;
  bool la = a == VAL_EMPTY || val_has_tag(a, TAG_CONS), lb = b == VAL_EMPTY || val_has_tag(b, TAG_CONS);
  if (la && lb) {
    if (a == VAL_EMPTY || b == VAL_EMPTY) return a == VAL_EMPTY ? -1 : 1;
    pair_push(st, val_field(a, 1), val_field(b, 1));
    pair_push(st, val_field(a, 0), val_field(b, 0));
    return 0;
  }
  if (a == vm->empty_array || b == vm->empty_array) {
    bool aa = a == vm->empty_array || val_has_tag(a, TAG_ARRAY), ab = b == vm->empty_array || val_has_tag(b, TAG_ARRAY);
    if (!aa || !ab) incomparable(st, a, b);
    return a == vm->empty_array ? (b == vm->empty_array ? 0 : -1) : 1;
  }
  if (!val_is_ptr(a) || !val_is_ptr(b) || val_tag(a) != val_tag(b)) incomparable(st, a, b);
  switch (val_tag(a)) {
    case TAG_FLOAT: return cmp_num(float_of_val(a), float_of_val(b));
    case TAG_STRING: return compare_strings(a, b);
    case TAG_RECORD: return seen_before(st, a, b) ? 0 : compare_records(st, a, b);
    case TAG_ARRAY:
      if (seen_before(st, a, b)) return 0;
      __attribute__((fallthrough));
    case TAG_TUPLE: {
      uint64_t na = val_wosize(a), nb = val_wosize(b), n = na < nb ? na : nb;
      pair_push(st, val_of_int((int64_t)na), val_of_int((int64_t)nb));
      for (uint64_t i = n; i > 0; i--) pair_push(st, val_field(a, i - 1), val_field(b, i - 1));
      return 0;
    }
    default: incomparable(st, a, b);
  }
}

static __attribute__((noinline)) int compare_walk(Vm *vm, Value a, Value b) {
  PAIR_STACK(st, vm);
  int c = compare_step(&st, a, b);
  while (c == 0 && st.count > 0) {
    st.count--;
    st.steps++;
    c = compare_step(&st, st.pairs[st.count][0], st.pairs[st.count][1]);
  }
  pair_free(&st);
  return c;
}

int ops_compare(Vm *vm, Value a, Value b) {
  if (val_has_tag(a, TAG_STRING) && val_has_tag(b, TAG_STRING)) return compare_strings(a, b);
  return compare_walk(vm, a, b);
}

// =====================================================================
// Hashing
// =====================================================================
//
// ops_hash folds 64-bit words into a state with hash_step, then spreads
// every bit of the state over the result with hash_finish, so that keys
// differing only in high bits (integral floats, ints above bit 32) differ in
// the low bits Hashtbl's `hash % buckets` keeps. hash_step is a bijection of
// the state for a fixed word and of the word for a fixed state: two values
// whose words differ in one place never collide before the mask to 62 bits.
//
// Consistency with ==: a value contributes only what == looks at. A string
// its words (the padding is a function of the length, value.h, so equal
// strings have equal words); a float its value with -0.0 as 0.0 and every
// nan as one nan; a record the hash of its set of field names, then its
// fields in name order (shapes.h), never its shape; functions, buffers and
// the profiler's blocks (equal only to themselves) their header alone.
// Blocks are visited breadth first, at most HASH_VISITS of them, so a large
// or cyclic value costs O(1) beyond its strings, and the items near the
// top of a list or tuple all count.

enum { HASH_VISITS = 48, HASH_QUEUE = 64 };

static const uint64_t HASH_SEED = 0x9e3779b97f4a7c15ull;

static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t hash_step(uint64_t h, uint64_t w) {
  return rotl64(h ^ (w * 0xa0761d6478bd642full), 29) * 0xe7037ed1a0b428dbull;
}

static inline uint64_t hash_finish(uint64_t h) {
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 32;
  return h & (((uint64_t)1 << 62) - 1);
}

// The words of string v (its padding included), folded into h.
static inline uint64_t hash_string_words(uint64_t h, Value v) {
  const Value *w = val_fields(v);
  for (uint64_t i = 0, n = val_wosize(v); i < n; i++) h = hash_step(h, w[i]);
  return h;
}

static inline uint64_t float_key(double d) {
  if (d == 0) d = 0;            // -0.0 == 0.0
  if (isnan(d)) d = NAN;        // one nan (nan equals nothing: any choice is consistent)
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  return bits;
}

static __attribute__((noinline)) uint64_t hash_walk(const Vm *vm, Value v) {
  Value queue[HASH_QUEUE];
  unsigned head = 0, tail = 0;
  uint64_t h = HASH_SEED;
  queue[tail++] = v;
  for (int visits = 0; head < tail && visits < HASH_VISITS; visits++) {
    Value x = queue[head++];
    if (!val_is_ptr(x)) {
      h = hash_step(h, x);
      continue;
    }
    unsigned tag = val_tag(x);
    uint64_t n = val_wosize(x);
    h = hash_step(h, n << 8 | tag);
    if (tag == TAG_STRING) {
      h = hash_string_words(h, x);
    } else if (tag == TAG_FLOAT) {
      h = hash_step(h, float_key(float_of_val(x)));
    } else if (tag == TAG_RECORD) {
      uint32_t shape = record_shape(x);
      const uint32_t *canon = shapes_canon(vm->shapes, shape);
      h = hash_step(h, shapes_set_hash(vm->shapes, shapes_field_set(vm->shapes, shape)));
      for (uint64_t k = 0; k + 1 < n && tail < HASH_QUEUE; k++) queue[tail++] = val_field(x, 1 + canon[k]);
    } else if (tag == TAG_CONS || tag == TAG_TUPLE || tag == TAG_ARRAY) {
      for (uint64_t i = 0; i < n && tail < HASH_QUEUE; i++) queue[tail++] = val_field(x, i);
    }
  }
  return hash_finish(h);
}

uint64_t ops_hash(const Vm *vm, Value v) {
  if (!val_is_ptr(v)) return hash_finish(hash_step(HASH_SEED, v));
  if (val_has_tag(v, TAG_STRING)) return hash_finish(hash_string_words(hash_step(HASH_SEED, val_wosize(v) << 8 | TAG_STRING), v));
  return hash_walk(vm, v);
}

// =====================================================================
// Printing
// =====================================================================

// Inlined into this file's string makers (++, str, of_int), which call it
// for every string they build.
static inline __attribute__((always_inline)) Value string_uninit(Vm *vm, size_t len) {
  Value s = gc_alloc(vm, str_wosize_for(len), TAG_STRING);
  str_set_padding(s, len);
  return s;
}

// "00" "01" ... "99": two digits per division.
static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Powers of ten below 2^62 (MINNOW_INT_MAX has 19 digits).
static const uint64_t POW10[19] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull};

// Decimal digits of u (u < 10^19).
static inline size_t digit_count(uint64_t u) {
  size_t d = 1;
  while (d < 19 && u >= POW10[d]) d++;
  return d;
}

// Writes the digits of u so that the last one is at end[-1].
static inline void write_digits(char *end, uint64_t u) {
  while (u >= 100) {
    unsigned r = (unsigned)(u % 100);
    u /= 100;
    end -= 2;
    memcpy(end, DIGIT_PAIRS + 2 * r, 2);
  }
  if (u >= 10) memcpy(end - 2, DIGIT_PAIRS + 2 * u, 2);
  else end[-1] = (char)('0' + u);
}

// |n| as unsigned: exact for MINNOW_INT_MIN too.
static inline uint64_t magnitude(int64_t n) { return n < 0 ? 0 - (uint64_t)n : (uint64_t)n; }

// Characters of n in decimal, sign included.
static inline size_t int_length(int64_t n) { return digit_count(magnitude(n)) + (n < 0); }

// Writes n's int_length(n) characters at p.
static inline void write_int(char *p, size_t len, int64_t n) {
  write_digits(p + len, magnitude(n));
  if (n < 0) p[0] = '-';
}

size_t ops_format_int(int64_t n, char *buf) {
  size_t len = int_length(n);
  write_int(buf, len, n);
  buf[len] = 0;
  return len;
}

Value ops_string_of_int(Vm *vm, int64_t n) {
  size_t len = int_length(n);
  Value s = string_uninit(vm, len);
  write_int((char *)val_fields(s), len, n);
  return s;
}

// Shortest digits that read back (%.*e with the least precision that
// round-trips), printed in fixed notation when the exponent is in [-4, 16)
// as Python and JavaScript do (100.0, 0.0001, 1e-05, 1e+16), always with a
// '.' or an exponent so that the text reads back as a float.
void ops_format_float(double d, char *buf, size_t size) {
  if (isnan(d)) { snprintf(buf, size, "nan"); return; }
  if (isinf(d)) { snprintf(buf, size, d < 0 ? "-inf" : "inf"); return; }
  char sci[40];
  int prec = 0;
  for (; prec <= 16; prec++) {
    snprintf(sci, sizeof sci, "%.*e", prec, d);
    if (strtod(sci, NULL) == d) break;
  }
  int exp = atoi(strchr(sci, 'e') + 1);
  if (exp >= -4 && exp < 16) {
    int decimals = prec - exp > 0 ? prec - exp : 0;
    snprintf(buf, size, "%.*f", decimals, d);
  } else {
    snprintf(buf, size, "%.*g", prec + 1, d);
  }
  if (!strpbrk(buf, ".e")) {
    size_t len = strlen(buf);
    if (len + 3 <= size) memcpy(buf + len, ".0", 3);
  }
}

// Where printing goes: a stream, or a growing byte buffer that starts in
// `small` (buf == small until it outgrows it, then malloc'ed).
typedef struct Out {
  FILE *file;        // when printing to a stream
  char *buf;         // when building a string
  size_t len, cap;
  bool failed;       // the string outgrew memory or OPS_MAX_STRING_BYTES: stop
  size_t limit;      // a string keeps its first `limit` bytes (SIZE_MAX: all)
  // The arrays and records being printed, outermost first: one met again is
  // a cycle, printed <cycle> (printing ends on every value).
  Value *path;
  uint32_t path_len, path_cap;
  Value path_inline[16];
  char small[256];
} Out;

static void out_init(Out *o, FILE *file) {
  o->file = file;
  o->buf = o->small;
  o->len = 0;
  o->cap = sizeof o->small;
  o->failed = false;
  o->limit = SIZE_MAX;
  o->path = o->path_inline;
  o->path_len = 0;
  o->path_cap = sizeof o->path_inline / sizeof o->path_inline[0];
}

static void out_free(Out *o) {
  if (o->buf != o->small) free(o->buf);
  if (o->path != o->path_inline) free(o->path);
}

static void out_grow(Out *o, size_t need) {
  size_t cap = o->cap;
  while (need > cap) cap *= 2;
  char *p = need > OPS_MAX_STRING_BYTES ? NULL : o->buf == o->small ? malloc(cap) : realloc(o->buf, cap);
  if (!p) {
    o->failed = true;
    return;
  }
  if (o->buf == o->small) memcpy(p, o->small, o->len);
  o->buf = p;
  o->cap = cap;
}

// Nothing more is kept: printing can stop.
static bool out_done(const Out *o) { return o->failed || o->len >= o->limit; }

static void put_bytes(Out *o, const char *s, size_t n) {
  if (o->file) {
    fwrite(s, 1, n, o->file);
    return;
  }
  if (n > o->limit - o->len) n = o->limit - o->len; // len <= limit always
  if (o->len + n > o->cap) out_grow(o, o->len + n);
  if (o->failed) return;
  memcpy(o->buf + o->len, s, n);
  o->len += n;
}

// Enters the array or record v: false (and <cycle> printed) if it is
// already being printed further out.
static bool path_enter(Out *o, Value v) {
  for (uint32_t i = 0; i < o->path_len; i++)
    if (o->path[i] == v) {
      put_bytes(o, "<cycle>", 7);
      return false;
    }
  if (o->path_len == o->path_cap) {
    Value *p = malloc(2 * o->path_cap * sizeof *p);
    if (!p) {
      o->failed = true;
      return false;
    }
    memcpy(p, o->path, o->path_len * sizeof *p);
    if (o->path != o->path_inline) free(o->path);
    o->path = p;
    o->path_cap *= 2;
  }
  o->path[o->path_len++] = v;
  return true;
}

static void put_str(Out *o, const char *s) { put_bytes(o, s, strlen(s)); }

static void print_quoted(Out *o, Value s) {
  const unsigned char *p = (const unsigned char *)str_bytes(s);
  size_t n = str_len(s);
  put_str(o, "\"");
  for (size_t i = 0; i < n && !out_done(o); i++) {
    char esc[8];
    switch (p[i]) {
      case '"': put_str(o, "\\\""); break;
      case '\\': put_str(o, "\\\\"); break;
      case '\n': put_str(o, "\\n"); break;
      case '\t': put_str(o, "\\t"); break;
      case '\r': put_str(o, "\\r"); break;
      default:
        if (p[i] < 32 || p[i] == 127) {
          snprintf(esc, sizeof esc, "\\x%02x", p[i]);
          put_str(o, esc);
        } else {
          put_bytes(o, (const char *)p + i, 1);
        }
    }
  }
  put_str(o, "\"");
}

static void print_rec(Vm *vm, Out *o, Value v, bool quoted, int depth);

static void print_seq(Vm *vm, Out *o, Value v, uint64_t from, const char *open, const char *close, int depth) {
  put_str(o, open);
  for (uint64_t i = from; i < val_wosize(v) && !out_done(o); i++) {
    if (i > from) put_str(o, ", ");
    print_rec(vm, o, val_field(v, i), true, depth + 1);
  }
  put_str(o, close);
}

// A list whose last tail is not [] (`5 :: 6`) prints as its conses, so that
// what is printed reads back.
static void print_list(Vm *vm, Out *o, Value v, int depth) {
  Value end = v;
  while (val_has_tag(end, TAG_CONS)) end = val_field(end, 1);
  if (end != VAL_EMPTY) {
    for (; val_has_tag(v, TAG_CONS) && !out_done(o); v = val_field(v, 1)) {
      print_rec(vm, o, val_field(v, 0), true, depth + 1);
      put_str(o, " :: ");
    }
    print_rec(vm, o, v, true, depth + 1);
    return;
  }
  put_str(o, "[");
  for (bool first = true; v != VAL_EMPTY && !out_done(o); v = val_field(v, 1), first = false) {
    if (!first) put_str(o, ", ");
    print_rec(vm, o, val_field(v, 0), true, depth + 1);
  }
  put_str(o, "]");
}

static void print_record(Vm *vm, Out *o, Value v, int depth) {
  uint32_t shape = (uint32_t)val_to_int(val_field(v, 0));
  put_str(o, "{");
  for (uint64_t i = 1; i < val_wosize(v) && !out_done(o); i++) {
    if (i > 1) put_str(o, ", ");
    put_str(o, shapes_symbol_name(vm->shapes, shapes_field_symbol(vm->shapes, shape, (uint32_t)i - 1)));
    put_str(o, ": ");
    print_rec(vm, o, val_field(v, i), true, depth + 1);
  }
  put_str(o, "}");
}

static void print_rec(Vm *vm, Out *o, Value v, bool quoted, int depth) {
  char buf[64];
  if (out_done(o)) return;
  if (depth > 1000) { put_str(o, "..."); return; }
  if (val_is_int(v)) { put_bytes(o, buf, ops_format_int(val_to_int(v), buf)); return; }
  if (v == VAL_NIL) { put_str(o, "nil"); return; }
  if (v == VAL_TRUE) { put_str(o, "true"); return; }
  if (v == VAL_FALSE) { put_str(o, "false"); return; }
  if (v == VAL_EMPTY) { put_str(o, "[]"); return; }
  switch (val_tag(v)) {
    case TAG_STRING:
      if (quoted) print_quoted(o, v);
      else put_bytes(o, str_bytes(v), str_len(v));
      return;
    case TAG_FLOAT: ops_format_float(float_of_val(v), buf, sizeof buf); put_str(o, buf); return;
    case TAG_CONS: print_list(vm, o, v, depth); return;
    case TAG_TUPLE: print_seq(vm, o, v, 0, "(", ")", depth); return;
    case TAG_ARRAY: case TAG_RECORD:
      if (!path_enter(o, v)) return;
      if (val_tag(v) == TAG_ARRAY) print_seq(vm, o, v, 0, "[|", "|]", depth);
      else print_record(vm, o, v, depth);
      o->path_len--;
      return;
    case TAG_CLOSURE:
      put_str(o, "<fn ");
      put_str(o, vm->protos[val_to_int(val_field(v, 0))]->name);
      put_str(o, ">");
      return;
    default:
      put_str(o, "<");
      put_str(o, ops_type_name(v));
      put_str(o, ">");
      return;
  }
}

void ops_print(Vm *vm, FILE *out, Value v, bool quoted) {
  if (v == vm->empty_array) { fputs("[||]", out); return; }
  if (val_is_int(v)) {
    char buf[OPS_INT_CHARS];
    fwrite(buf, 1, ops_format_int(val_to_int(v), buf), out);
    return;
  }
  Out o;
  out_init(&o, out);
  print_rec(vm, &o, v, quoted, 0);
  out_free(&o);
}

Value ops_string_uninit(Vm *vm, size_t len) {
  if (len > OPS_MAX_STRING_BYTES) vm_raise_out_of_memory(vm);
  return string_uninit(vm, len);
}


Value ops_string(Vm *vm, const char *bytes, size_t len) {
  Value s = string_uninit(vm, len);
  ops_copy_bytes((char *)val_fields(s), bytes, len);
  return s;
}

static Value to_string(Vm *vm, Value v, bool quoted) {
  Out o;
  out_init(&o, NULL);
  print_rec(vm, &o, v, quoted, 0);
  if (o.failed) {
    out_free(&o);
    vm_raise_out_of_memory(vm);
  }
  Value s = ops_string(vm, o.buf, o.len);
  out_free(&o);
  return s;
}

Value ops_to_string(Vm *vm, Value v) {
  if (val_has_tag(v, TAG_STRING)) return v;
  if (val_is_int(v)) return ops_string_of_int(vm, val_to_int(v));
  if (v == vm->empty_array) return ops_string(vm, "[||]", 4);
  return to_string(vm, v, false);
}

Value ops_to_repr(Vm *vm, Value v) {
  if (val_is_int(v)) return ops_string_of_int(vm, val_to_int(v));
  if (v == vm->empty_array) return ops_string(vm, "[||]", 4);
  return to_string(vm, v, true);
}

// Printing stops one byte past max_bytes: that byte says whether the whole
// repr fits. A cut one steps back over UTF-8 continuation bytes, so that
// the kept part ends on a whole character before the "...".
Value ops_to_repr_cut(Vm *vm, Value v, size_t max_bytes) {
  Out o;
  out_init(&o, NULL);
  o.limit = max_bytes + 1;
  if (v == vm->empty_array) put_str(&o, "[||]");
  else print_rec(vm, &o, v, true, 0);
  if (o.failed) {
    out_free(&o);
    vm_raise_out_of_memory(vm);
  }
  size_t len = o.len;
  if (len > max_bytes) {
    len = max_bytes - 3;
    while (len > 0 && ((unsigned char)o.buf[len] & 0xC0) == 0x80) len--;
    memcpy(o.buf + len, "...", 3);
    len += 3;
  }
  Value s = ops_string(vm, o.buf, len);
  out_free(&o);
  return s;
}

// =====================================================================
// ++
// =====================================================================

// Writes the la bytes of a, then the lb bytes of b, into the new string s.
static inline void concat_fill(Value s, Value a, size_t la, Value b, size_t lb) {
  char *p = (char *)val_fields(s);
  ops_copy_bytes(p, str_bytes(a), la);
  ops_copy_bytes(p + la, str_bytes(b), lb);
}

// a ++ b on strings of la and lb bytes, through the allocation that may
// collect (*a and *b are read after it).
static __attribute__((noinline)) Value concat_strings(Vm *vm, Value *a, Value *b, size_t la, size_t lb) {
  Value s = string_uninit(vm, la + lb);
  concat_fill(s, *a, la, *b, lb);
  return s;
}

// Copies the list *a in front of *b: the copy is built front to back, each
// new cell linked from the previous one (all of them young or initialised
// through the barrier). Out of line: its roots would cost the string path a
// stack frame.
static __attribute__((noinline)) Value concat_lists(Vm *vm, Value *a, Value *b) {
  if (*a == VAL_EMPTY) return *b;
  Value end = *a;
  while (val_has_tag(end, TAG_CONS)) end = val_field(end, 1);
  if (end != VAL_EMPTY) gc_raise_error(vm, "type error: cannot apply ++ to an improper list");
  Value head = VAL_EMPTY, last = VAL_EMPTY, cur = *a;
  vm_push_root(vm, &head);
  vm_push_root(vm, &last);
  vm_push_root(vm, &cur);
  while (val_has_tag(cur, TAG_CONS)) {
    Value cell = gc_alloc(vm, 2, TAG_CONS);
    val_fields(cell)[0] = val_field(cur, 0);
    val_fields(cell)[1] = *b;
    if (last == VAL_EMPTY) head = cell;
    else gc_write(vm, last, 1, cell);
    last = cell;
    cur = val_field(cur, 1);
  }
  vm_pop_roots(vm, 3);
  return head;
}

static _Noreturn __attribute__((noinline)) void concat_error(Vm *vm, Value a, Value b) {
  gc_raise_error(vm, "type error: cannot apply ++ to %s and %s", ops_type_name(a), ops_type_name(b));
}

Value ops_concat(Vm *vm, Value *a, Value *b) {
  if (val_has_tag(*a, TAG_STRING) && val_has_tag(*b, TAG_STRING)) {
    // Two operands of at most 16 bytes, when the minor heap has room: no
    // call at all (the copies are register moves), so the compiler saves no
    // register on the way, as it must around concat_strings' allocation.
    // Most `++` in string-building code joins short pieces.
    size_t la = str_len(*a), lb = str_len(*b);
    Value s = la <= 16 && lb <= 16 ? gc_alloc_young_try(vm, str_wosize_for(la + lb), TAG_STRING) : 0;
    if (!s) return concat_strings(vm, a, b, la, lb);
    str_set_padding(s, la + lb);
    concat_fill(s, *a, la, *b, lb);
    return s;
  }
  if (is_list(*a) && is_list(*b)) return concat_lists(vm, a, b);
  concat_error(vm, *a, *b);
}

// =====================================================================
// Records made by C code
// =====================================================================

Value ops_record(Vm *vm, const char *const *names, Value *vals, uint32_t n) {
  uint32_t syms[64] = {0};
  for (uint32_t i = 0; i < n; i++) syms[i] = shapes_symbol(vm->shapes, names[i]);
  uint32_t shape = shapes_intern(vm->shapes, syms, n);
  for (uint32_t i = 0; i < n; i++) vm_push_root(vm, &vals[i]);
  Value r = gc_alloc(vm, n + 1, TAG_RECORD);
  vm_pop_roots(vm, n);
  val_fields(r)[0] = val_of_int(shape);
  for (uint32_t i = 0; i < n; i++) val_fields(r)[1 + i] = vals[i];
  return r;
}

bool ops_record_get(Vm *vm, Value r, const char *name, Value *out) {
  if (!val_has_tag(r, TAG_RECORD)) return false;
  int i = shapes_find(vm->shapes, (uint32_t)val_to_int(val_field(r, 0)), shapes_symbol(vm->shapes, name));
  if (i < 0) return false;
  *out = val_field(r, (uint64_t)i + 1);
  return true;
}

void ops_check_options(Vm *vm, Value r, const char *const *names, uint32_t n, const char *what) {
  if (!val_has_tag(r, TAG_RECORD)) gc_raise_error(vm, "type error: %s expects a record, got %s", what, ops_type_name(r));
  uint32_t shape = (uint32_t)val_to_int(val_field(r, 0));
  for (uint32_t i = 0; i < shapes_field_count(vm->shapes, shape); i++) {
    const char *field = shapes_symbol_name(vm->shapes, shapes_field_symbol(vm->shapes, shape, i));
    uint32_t k = 0;
    while (k < n && strcmp(names[k], field) != 0) k++;
    if (k < n) continue;
    char known[256];
    size_t at = 0;
    for (k = 0; k < n && at < sizeof known; k++)
      at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", k ? ", " : "", names[k]);
    gc_raise_error(vm, "%s: unknown field %s (known: %s)", what, field, known);
  }
}
