// builtins_buffer.c - the C part of the Buffer module (stdlib/buffer.mn).
// A buffer is the array [| storage, len |]. The storage is a string block
// that only these primitives write, in place: its first len bytes are the
// contents, the rest is spare room (zeroed). It never escapes:
// Buffer.contents copies. Writing into a string needs no write barrier (it
// holds no values); installing a bigger storage goes through gc_write.
// Invariant (checked at every add): 0 <= len <= String.length(storage).
#include <string.h>

#include "builtins.h"
#include "ops.h"
#include "vm.h"
#include "../gc/gc.h"

// Smallest storage of a buffer, in bytes, and the largest initial storage
// Buffer.create's size hint asks for.
enum { BUFFER_MIN_BYTES = 16, BUFFER_MAX_HINT = 1 << 20 };

// New zeroed storage of `cap` bytes holding the first `len` bytes of
// *old (re-read after the allocation, which may collect).
static Value new_storage(Vm *vm, const Value *old, size_t len, size_t cap) {
  Value s = ops_string_uninit(vm, cap);
  char *p = (char *)val_fields(s);
  if (len) memcpy(p, str_bytes(*old), len);
  memset(p + len, 0, cap - len);
  return s;
}

Value prim_buffer_create(Vm *vm, Value *args) {
  int64_t hint = builtins_int(vm, args[0], "Buffer.create");
  size_t cap = hint < BUFFER_MIN_BYTES ? BUFFER_MIN_BYTES : hint > BUFFER_MAX_HINT ? BUFFER_MAX_HINT : (size_t)hint;
  Value storage = new_storage(vm, NULL, 0, cap);
  vm_push_root(vm, &storage);
  Value b = gc_alloc(vm, 2, TAG_ARRAY);
  val_fields(b)[0] = storage;
  val_fields(b)[1] = val_of_int(0);
  vm_pop_roots(vm, 1);
  return b;
}

// The buffer's length, or a type error naming `what`.
static size_t buffer_len(Vm *vm, Value b, const char *what) {
  if (!val_has_tag(b, TAG_ARRAY) || val_wosize(b) != 2 || !val_has_tag(val_field(b, 0), TAG_STRING) ||
      !val_is_int(val_field(b, 1)))
    vm_raise_error(vm, "type error: %s expects a buffer, got %s", what, vm_type_name(b));
  int64_t len = val_to_int(val_field(b, 1));
  if (len < 0 || (uint64_t)len > str_len(val_field(b, 0))) vm_raise_error(vm, "%s: corrupt buffer", what);
  return (size_t)len;
}

// buffer_add(b, s): appends the bytes of s; the storage at least doubles
// when s does not fit, so that n adds copy O(n) bytes in all.
Value prim_buffer_add(Vm *vm, Value *args) {
  size_t len = buffer_len(vm, args[0], "Buffer.add");
  size_t n = str_len(builtins_string(vm, args[1], "Buffer.add"));
  size_t cap = str_len(val_field(args[0], 0));
  if (n > cap - len) {
    if (n > ((size_t)1 << 40)) vm_raise_error(vm, "out of memory");
    size_t want = cap * 2 > len + n ? cap * 2 : len + n;
    Value old = val_field(args[0], 0);
    vm_push_root(vm, &old);
    Value s = new_storage(vm, &old, len, want);
    vm_pop_roots(vm, 1);
    gc_write(vm, args[0], 0, s);
  }
  // memmove: s may be the storage itself (a program can read b[0]).
  memmove((char *)val_fields(val_field(args[0], 0)) + len, str_bytes(args[1]), n);
  val_fields(args[0])[1] = val_of_int((int64_t)(len + n));   // an int: no barrier
  return VAL_NIL;
}

Value prim_buffer_length(Vm *vm, Value *args) {
  return val_of_int((int64_t)buffer_len(vm, args[0], "Buffer.length"));
}

Value prim_buffer_contents(Vm *vm, Value *args) {
  size_t len = buffer_len(vm, args[0], "Buffer.contents");
  Value s = ops_string_uninit(vm, len);
  memcpy((char *)val_fields(s), str_bytes(val_field(args[0], 0)), len);
  return s;
}

// buffer_clear(b, keep): length 0; keep = false also drops the storage.
Value prim_buffer_clear(Vm *vm, Value *args) {
  buffer_len(vm, args[0], "Buffer.clear");
  if (args[1] == VAL_FALSE) {
    Value s = new_storage(vm, NULL, 0, BUFFER_MIN_BYTES);
    gc_write(vm, args[0], 0, s);
  }
  val_fields(args[0])[1] = val_of_int(0);
  return VAL_NIL;
}
