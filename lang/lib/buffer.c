// buffer.c - the C half of the Buffer module (stdlib/buffer.mn).
// A buffer is a TAG_BUFFER block { storage, len }: the storage is a
// TAG_BYTES block that only these primitives see and write, in place; its
// first len bytes are the contents, the rest is spare room. No Minnow code
// can reach the storage (no operator indexes a buffer) or make a block of
// either tag, so a buffer is always one these primitives built, and strings
// stay immutable: Buffer.add copies from its string, Buffer.contents copies
// into a new one. Installing a bigger storage goes through gc_write.
// Invariant (checked at every call): 0 <= len <= bytes of the storage.
#include <string.h>

#include "native.h"

// Smallest storage of a buffer, in bytes, and the largest initial storage
// Buffer.create's size hint asks for.
enum { BUFFER_MIN_BYTES = 16, BUFFER_MAX_HINT = 1 << 20 };

static size_t storage_bytes(Value storage) { return (size_t)val_wosize(storage) * 8; }

// New storage of at least `cap` bytes holding the first `len` bytes of
// *old (re-read after the allocation, which may collect); the rest zeroed.
static Value new_storage(Vm *vm, const Value *old, size_t len, size_t cap) {
  Value s = gc_alloc(vm, (cap + 7) / 8, TAG_BYTES);
  char *p = (char *)val_fields(s);
  if (len) memcpy(p, val_fields(*old), len);
  memset(p + len, 0, storage_bytes(s) - len);
  return s;
}

Value lib_buffer_create(Vm *vm, Value *args) {
  int64_t hint = args_int(vm, args[0], "Buffer.create");
  size_t cap = hint < BUFFER_MIN_BYTES ? BUFFER_MIN_BYTES : hint > BUFFER_MAX_HINT ? BUFFER_MAX_HINT : (size_t)hint;
  Value storage = new_storage(vm, NULL, 0, cap);
  vm_push_root(vm, &storage);
  Value b = gc_alloc(vm, 2, TAG_BUFFER);
  val_fields(b)[0] = storage;
  val_fields(b)[1] = val_of_int(0);
  vm_pop_roots(vm, 1);
  return b;
}

// The buffer's length, or a type error naming `what`.
static size_t buffer_len(Vm *vm, Value b, const char *what) {
  if (!val_has_tag(b, TAG_BUFFER))
    gc_raise_error(vm, "type error: %s expects a buffer, got %s", what, ops_type_name(b));
  Value storage = val_field(b, 0), len = val_field(b, 1);
  if (!val_has_tag(storage, TAG_BYTES) || !val_is_int(len) || val_to_int(len) < 0 ||
      (uint64_t)val_to_int(len) > storage_bytes(storage))
    gc_raise_error(vm, "%s: corrupt buffer", what);
  return (size_t)val_to_int(len);
}

// buffer_add(b, s): appends the bytes of s; the storage at least doubles
// when s does not fit, so that n adds copy O(n) bytes in all.
Value lib_buffer_add(Vm *vm, Value *args) {
  size_t len = buffer_len(vm, args[0], "Buffer.add");
  size_t n = str_len(args_string(vm, args[1], "Buffer.add"));
  size_t cap = storage_bytes(val_field(args[0], 0));
  if (n > cap - len) {
    uint64_t need, doubled;
    if (!checked_add(len, n, &need) || need > OPS_MAX_STRING_BYTES) vm_raise_out_of_memory(vm);
    if (!checked_mul(cap, 2, &doubled)) doubled = need;
    Value old = val_field(args[0], 0);
    vm_push_root(vm, &old);
    Value s = new_storage(vm, &old, len, doubled > need ? doubled : need);
    vm_pop_roots(vm, 1);
    gc_write(vm, args[0], 0, s);
  }
  memcpy((char *)val_fields(val_field(args[0], 0)) + len, str_bytes(args[1]), n);
  val_fields(args[0])[1] = val_of_int((int64_t)(len + n));   // an int: no barrier
  return VAL_NIL;
}

Value lib_buffer_length(Vm *vm, Value *args) {
  return val_of_int((int64_t)buffer_len(vm, args[0], "Buffer.length"));
}

Value lib_buffer_contents(Vm *vm, Value *args) {
  size_t len = buffer_len(vm, args[0], "Buffer.contents");
  Value s = ops_string_uninit(vm, len);
  memcpy((char *)val_fields(s), val_fields(val_field(args[0], 0)), len);
  return s;
}

// buffer_clear(b, keep): length 0; keep = false also drops the storage.
Value lib_buffer_clear(Vm *vm, Value *args) {
  buffer_len(vm, args[0], "Buffer.clear");
  if (!val_is_bool(args[1]))
    gc_raise_error(vm, "type error: Buffer.clear expects a bool, got %s", ops_type_name(args[1]));
  if (args[1] == VAL_FALSE) {
    Value s = new_storage(vm, NULL, 0, BUFFER_MIN_BYTES);
    gc_write(vm, args[0], 0, s);
  }
  val_fields(args[0])[1] = val_of_int(0);
  return VAL_NIL;
}
