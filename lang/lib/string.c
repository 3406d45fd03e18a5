// string.c - the C half of the String module (stdlib/string.mn).
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"



Value lib_string_length(Vm *vm, Value *args) {
  return val_of_int((int64_t)str_len(args_string(vm, args[0], "String.length")));
}

Value lib_string_sub(Vm *vm, Value *args) {
  size_t len = str_len(args_string(vm, args[0], "String.sub"));
  int64_t start = args_int(vm, args[1], "String.sub"), n = args_int(vm, args[2], "String.sub");
  if (start < 0 || n < 0 || (uint64_t)start + (uint64_t)n > len)
    gc_raise_error(vm, "String.sub: range %lld+%lld out of bounds (length %zu)", (long long)start, (long long)n, len);
  Value s = ops_string_uninit(vm, (size_t)n);
  memcpy(val_fields(s), str_bytes(args[0]) + start, (size_t)n);
  return s;
}

Value lib_string_concat(Vm *vm, Value *args) {
  size_t sep = str_len(args_string(vm, args[0], "String.concat"));
  uint64_t total = 0, count = 0, seps;
  bool fits = true;
  for (Value l = args[1]; l != VAL_EMPTY; l = val_field(l, 1), count++) {
    if (!val_has_tag(l, TAG_CONS)) gc_raise_error(vm, "type error: String.concat expects a list, got %s", ops_type_name(l));
    fits &= checked_add(total, str_len(args_string(vm, val_field(l, 0), "String.concat")), &total);
  }
  if (count > 1) fits &= checked_mul(sep, count - 1, &seps) && checked_add(total, seps, &total);
  if (!fits) vm_raise_out_of_memory(vm);
  Value s = ops_string_uninit(vm, total);
  char *out = (char *)val_fields(s);
  const char *sep_bytes = str_bytes(args[0]);
  size_t at = 0;
  for (Value l = args[1]; l != VAL_EMPTY; l = val_field(l, 1)) {
    if (l != args[1]) {
      ops_copy_bytes(out + at, sep_bytes, sep);
      at += sep;
    }
    Value piece = val_field(l, 0);
    size_t n = str_len(piece);
    ops_copy_bytes(out + at, str_bytes(piece), n);
    at += n;
  }
  return s;
}

// Start of the last occurrence of sep (m >= 1 bytes) that ends at or before
// i in s, or SIZE_MAX: candidates are found by memrchr on sep's first byte.
// Linear for a one-byte separator; O(i * m) at worst otherwise, so that
// split_long handles long strings.
static size_t find_last(const char *s, size_t i, const char *sep, size_t m) {
  if (i < m) return SIZE_MAX;
  size_t count = i - m + 1;   // candidate starts [0, count)
  for (;;) {
    const char *p = memrchr(s, sep[0], count);
    if (!p) return SIZE_MAX;
    if (memcmp(p + 1, sep + 1, m - 1) == 0) return (size_t)(p - s);
    count = (size_t)(p - s);
  }
}

// Prepends the piece s[from, to) to *list (both roots; s re-read after the
// allocations, which may move it).
static inline __attribute__((always_inline)) void prepend_piece(Vm *vm, const Value *s, size_t from, size_t to,
                                                              Value *piece, Value *list) {
  *piece = ops_string_uninit(vm, to - from);
  ops_copy_bytes((char *)val_fields(*piece), str_bytes(*s) + from, to - from);
  Value cell = gc_alloc(vm, 2, TAG_CONS);
  val_fields(cell)[0] = *piece;
  val_fields(cell)[1] = *list;
  *list = cell;
}

// split of a short string, or with a one-byte separator: find_last from
// the end, a piece at a time.
static Value split_short(Vm *vm, Value *args, size_t m) {
  Value list = VAL_EMPTY, piece = VAL_NIL;
  vm_push_root(vm, &list);
  vm_push_root(vm, &piece);
  for (size_t i = str_len(args[0]);;) {
    size_t found = find_last(str_bytes(args[0]), i, str_bytes(args[1]), m);
    size_t from = found == SIZE_MAX ? 0 : found + m;
    prepend_piece(vm, &args[0], from, i, &piece, &list);
    if (found == SIZE_MAX) break;
    i = found;
  }
  vm_pop_roots(vm, 2);
  return list;
}

// A block of at least `bytes` bytes no Minnow code sees (scratch for split):
// made without sampling (memprof reports what the program allocates, the
// pieces and cells, not this) and without collecting.
static Value scratch_bytes(Vm *vm, size_t bytes) { return gc_alloc_no_collect(vm, bytes / 8 + 1, TAG_BYTES); }

// `src` reversed into the scratch block *dst.
static void reverse_into(Value dst, const char *src, size_t n) {
  char *d = (char *)val_fields(dst);
  for (size_t i = 0; i < n; i++) d[i] = src[n - 1 - i];
}

// split of a long string by a longer separator, in linear time: memmem
// (glibc's two-way search) runs left to right over reversed copies of both
// strings, which finds the same occurrences as find_last. The copies and the
// list of occurrences are heap blocks (TAG_BYTES) held as roots, so that an
// allocation that raises leaks nothing.
static Value split_long(Vm *vm, Value *args, size_t m) {
  size_t n = str_len(args[0]);
  Value rs = VAL_NIL, rsep = VAL_NIL, at = VAL_NIL, list = VAL_EMPTY, piece = VAL_NIL;
  vm_push_root(vm, &rs);
  vm_push_root(vm, &rsep);
  vm_push_root(vm, &at);
  vm_push_root(vm, &list);
  vm_push_root(vm, &piece);
  rs = scratch_bytes(vm, n);
  reverse_into(rs, str_bytes(args[0]), n);
  rsep = scratch_bytes(vm, m);
  reverse_into(rsep, str_bytes(args[1]), m);
  size_t count = 0, cap = 15;
  at = scratch_bytes(vm, cap * sizeof(size_t));
  for (size_t from = 0;;) {
    const char *r0 = (const char *)val_fields(rs);
    const char *hit = memmem(r0 + from, n - from, val_fields(rsep), m);
    if (!hit) break;
    size_t r = (size_t)(hit - r0);   // the match ends at n - r in s
    if (count == cap) {
      Value bigger = scratch_bytes(vm, (cap *= 2) * sizeof(size_t));
      memcpy(val_fields(bigger), val_fields(at), count * sizeof(size_t));
      at = bigger;
    }
    ((size_t *)val_fields(at))[count++] = n - r - m;   // descending
    from = r + m;
  }
  // Piece k (0-based, from the left) runs from the end of occurrence k-1 (or
  // 0) to occurrence k (or n); occurrence k is at[count - 1 - k].
  for (size_t k = count + 1; k-- > 0;) {
    const size_t *occ = (const size_t *)val_fields(at);
    size_t from = k == 0 ? 0 : occ[count - k] + m, to = k == count ? n : occ[count - 1 - k];
    prepend_piece(vm, &args[0], from, to, &piece, &list);
  }
  vm_pop_roots(vm, 5);
  return list;
}

// Pieces between the occurrences of sep in s (non-overlapping, found from
// the right), built from the end into a list.
Value lib_string_split(Vm *vm, Value *args) {
  args_string(vm, args[0], "String.split");
  size_t m = str_len(args_string(vm, args[1], "String.split"));
  if (m == 0) gc_raise_error(vm, "String.split: empty separator");
  return m == 1 || str_len(args[0]) <= 256 ? split_short(vm, args, m) : split_long(vm, args, m);
}

Value lib_string_of_int(Vm *vm, Value *args) {
  return ops_string_of_int(vm, args_int(vm, args[0], "String.of_int"));
}

Value lib_string_of_float(Vm *vm, Value *args) {
  char buf[64];
  ops_format_float(args_number(vm, args[0], "String.of_float"), buf, sizeof buf);
  return ops_string(vm, buf, strlen(buf));
}

// The int written in s[0..len): an optional sign, then decimal digits or 0x
// and hex digits, nothing else (no space; "010" is ten, not octal eight);
// false when s is anything else or the value is outside the 63-bit range.
static bool parse_int(const char *s, size_t len, int64_t *out) {
  size_t i = 0;
  bool negative = len > 0 && s[0] == '-';
  if (len > 0 && (s[0] == '-' || s[0] == '+')) i++;
  unsigned base = len - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') ? 16 : 10;
  if (base == 16) i += 2;
  if (i == len) return false;
  uint64_t limit = negative ? (uint64_t)1 << 62 : ((uint64_t)1 << 62) - 1, n = 0;
  for (; i < len; i++) {
    int c = (unsigned char)s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
          : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0 || n > (limit - (uint64_t)d) / base) return false;
    n = n * base + (uint64_t)d;
  }
  *out = negative ? (int64_t)(0 - n) : (int64_t)n;
  return true;
}

Value lib_string_to_int(Vm *vm, Value *args) {
  Value s = args_string(vm, args[0], "String.to_int");
  int64_t n;
  return parse_int(str_bytes(s), str_len(s), &n) ? val_of_int(n) : VAL_NIL;
}

// The float in s: strtod's syntax, but the whole string and no leading space.
Value lib_string_to_float(Vm *vm, Value *args) {
  const char *s = str_bytes(args_string(vm, args[0], "String.to_float"));
  if (str_len(args[0]) == 0 || strlen(s) != str_len(args[0]) || isspace((unsigned char)s[0])) return VAL_NIL;
  char *end;
  double d = strtod(s, &end);
  if (*end) return VAL_NIL;
  return args_float(vm, d);
}

Value lib_string_repeat(Vm *vm, Value *args) {
  size_t len = str_len(args_string(vm, args[0], "String.repeat"));
  int64_t n = args_int(vm, args[1], "String.repeat");
  if (n < 0) gc_raise_error(vm, "String.repeat: negative count %lld", (long long)n);
  if (len && (uint64_t)n > OPS_MAX_STRING_BYTES / len) vm_raise_out_of_memory(vm);
  size_t total = len * (size_t)n;
  Value s = ops_string_uninit(vm, total);
  char *p = (char *)val_fields(s);
  if (total == 0) return s;
  memcpy(p, str_bytes(args[0]), len);
  // [0, done) holds done / len copies; each step doubles it.
  for (size_t done = len; done < total; ) {
    size_t chunk = done < total - done ? done : total - done;
    memcpy(p + done, p, chunk);
    done += chunk;
  }
  return s;
}

Value lib_string_get(Vm *vm, Value *args) {
  size_t len = str_len(args_string(vm, args[0], "String.get"));
  int64_t i = args_int(vm, args[1], "String.get");
  if (i < 0 || (uint64_t)i >= len) gc_raise_error(vm, "index out of bounds: %lld (length %zu)", (long long)i, len);
  return val_of_int((unsigned char)str_bytes(args[0])[i]);
}

Value lib_string_of_byte(Vm *vm, Value *args) {
  int64_t b = args_int(vm, args[0], "String.of_byte");
  if (b < 0 || b > 255) gc_raise_error(vm, "String.of_byte: %lld is not a byte", (long long)b);
  char c = (char)b;
  return ops_string(vm, &c, 1);
}

Value lib_string_index_of(Vm *vm, Value *args) {
  size_t len = str_len(args_string(vm, args[0], "String.index_of"));
  size_t n = str_len(args_string(vm, args[1], "String.index_of"));
  const char *s = str_bytes(args[0]);
  const char *hit = memmem(s, len, str_bytes(args[1]), n);
  return val_of_int(hit ? (int64_t)(hit - s) : -1);
}
