// array.c - the C half of stdlib/array.mn. Contract for every primitive:
// primitives.h.
#include <stdint.h>

#include "native.h"



// Longer arrays are refused with `out of memory` before any allocation.
static const int64_t ARRAY_MAX_LENGTH = (int64_t)1 << 40;

// Array.make(n, v): young when small, else in the major heap (every field
// initialised through the barrier there).
Value lib_array_make(Vm *vm, Value *args) {
  int64_t n = args_int(vm, args[0], "Array.make");
  if (n < 0) gc_raise_error(vm, "Array.make: negative length %lld", (long long)n);
  if (n > ARRAY_MAX_LENGTH) vm_raise_out_of_memory(vm);
  if (n == 0) return native_empty_array(vm);
  Value a = gc_alloc(vm, (uint64_t)n, TAG_ARRAY);
  Value v = args[1];
  if (vm_is_young(vm, a)) {
    for (int64_t i = 0; i < n; i++) val_fields(a)[i] = v;
  } else {
    for (int64_t i = 0; i < n; i++) gc_init_field(vm, a, (uint64_t)i, v);
  }
  return a;
}

// The length of v, an array (the empty array included), or a type error.
static uint64_t array_len(Vm *vm, Value v, const char *what) {
  if (v == native_empty_array(vm)) return 0;
  if (!val_has_tag(v, TAG_ARRAY)) gc_raise_error(vm, "type error: %s expects an array, got %s", what, ops_type_name(v));
  return val_wosize(v);
}

Value lib_array_length(Vm *vm, Value *args) {
  return val_of_int((int64_t)array_len(vm, args[0], "Array.length"));
}

Value lib_array_blit(Vm *vm, Value *args) {
  uint64_t sl = array_len(vm, args[0], "Array.blit"), dl = array_len(vm, args[2], "Array.blit");
  int64_t si = args_int(vm, args[1], "Array.blit"), di = args_int(vm, args[3], "Array.blit");
  int64_t n = args_int(vm, args[4], "Array.blit");
  if (!checked_range(si, n, sl))
    gc_raise_error(vm, "Array.blit: source range %lld+%lld out of bounds (length %llu)", (long long)si, (long long)n,
                   (unsigned long long)sl);
  if (!checked_range(di, n, dl))
    gc_raise_error(vm, "Array.blit: destination range %lld+%lld out of bounds (length %llu)", (long long)di,
                   (long long)n, (unsigned long long)dl);
  Value src = args[0], dst = args[2];
  if (src == dst && si < di) {
    for (int64_t i = n - 1; i >= 0; i--) gc_write(vm, dst, (uint64_t)(di + i), val_field(src, (uint64_t)(si + i)));
  } else {
    for (int64_t i = 0; i < n; i++) gc_write(vm, dst, (uint64_t)(di + i), val_field(src, (uint64_t)(si + i)));
  }
  return VAL_NIL;
}

// The items of array a as a list, built from the end (the compiler's wide
// list literals end here: lang/front/compiler.c, compile_wide_ctor).
Value lib_array_to_list(Vm *vm, Value *args) {
  uint64_t n = array_len(vm, args[0], "Array.to_list");
  Value list = VAL_EMPTY;
  vm_push_root(vm, &list);
  for (uint64_t i = n; i > 0; i--) {
    Value cell = gc_alloc(vm, 2, TAG_CONS);
    val_fields(cell)[0] = val_field(args[0], i - 1);
    val_fields(cell)[1] = list;
    list = cell;
  }
  vm_pop_roots(vm, 1);
  return list;
}

// The items of array a (at least two) as a tuple (wide tuple literals).
Value lib_array_to_tuple(Vm *vm, Value *args) {
  uint64_t n = array_len(vm, args[0], "array_to_tuple");
  if (n < 2) gc_raise_error(vm, "array_to_tuple: a tuple has at least two items, got %llu", (unsigned long long)n);
  Value t = gc_alloc(vm, n, TAG_TUPLE);
  bool young = vm_is_young(vm, t);
  for (uint64_t i = 0; i < n; i++) {
    if (young) val_fields(t)[i] = val_field(args[0], i);
    else gc_init_field(vm, t, i, val_field(args[0], i));
  }
  return t;
}
