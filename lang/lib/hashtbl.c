// hashtbl.c - the C half of stdlib/hashtbl.mn: the bucket work of find_opt,
// add and replace. Contract for every primitive: primitives.h.
//
// A table is hashtbl.mn's record {size, data}, made by hashtbl_make with a
// shape of its own (native_hashtbl_shape); the other primitives take its
// `data`, an array of buckets, each a list of (key, value) pairs, newest
// first. Key k lives in bucket hash(k) % length(data) and is found by == (the
// prelude's hash and ==: ops_hash, ops_equal), exactly as the Minnow
// functions of hashtbl.mn find it, so that both kinds of operation work on
// one table. Minnow code can reach `data` and store anything in it: every
// bucket is checked as it is walked, and one that is not a list of pairs is a
// "corrupt table" error, never a crash. Lists are immutable, so a walk ends.
#include <stdint.h>

#include "native.h"

// The bucket index of key k in `data`, or a corrupt-table error naming `what`.
static uint64_t bucket_index(Vm *vm, Value data, Value k, const char *what) {
  if (!val_has_tag(data, TAG_ARRAY) || val_wosize(data) == 0) gc_raise_error(vm, "%s: corrupt table", what);
  return ops_hash(vm, k) % val_wosize(data);
}

// The pair held by list cell c, or a corrupt-table error.
static inline Value cell_pair(Vm *vm, Value c, const char *what) {
  if (!val_has_tag(c, TAG_CONS)) gc_raise_error(vm, "%s: corrupt table", what);
  Value pair = val_field(c, 0);
  if (!val_has_tag(pair, TAG_TUPLE) || val_wosize(pair) != 2) gc_raise_error(vm, "%s: corrupt table", what);
  return pair;
}

static inline bool same_key(Vm *vm, Value key, Value k) {
  return key == k || (val_is_ptr(key) && val_is_ptr(k) && ops_equal(vm, key, k));
}

// The first cell of `bucket` whose pair's key is k, or VAL_EMPTY.
static Value find_cell(Vm *vm, Value bucket, Value k, const char *what) {
  for (Value c = bucket; c != VAL_EMPTY; c = val_field(c, 1))
    if (same_key(vm, val_field(cell_pair(vm, c, what), 0), k)) return c;
  return VAL_EMPTY;
}

// hashtbl_make(data): a new table {size: 0, data}, of the private shape
// native_hashtbl_shape (native.h): what makes a record a Hashtbl in the end
// state's names (lang/runtime/path_names.c).
Value lib_hashtbl_make(Vm *vm, Value *args) {
  Value table = gc_alloc(vm, 3, TAG_RECORD);
  val_fields(table)[0] = val_of_int(native_hashtbl_shape(vm));
  val_fields(table)[1] = val_of_int(0);
  val_fields(table)[2] = args[0];
  return table;
}

// hashtbl_find_opt(data, k): the value of k's newest binding, or nil.
Value lib_hashtbl_find_opt(Vm *vm, Value *args) {
  Value data = args[0];
  Value c = find_cell(vm, val_field(data, bucket_index(vm, data, args[1], "Hashtbl.find_opt")), args[1],
                      "Hashtbl.find_opt");
  return c == VAL_EMPTY ? VAL_NIL : val_field(val_field(c, 0), 1);
}

// A new cell (k, v) :: tail, with args[1] = k and args[2] = v (roots, being
// a frame's registers); *tail is a root the caller pushed.
static Value binding_cell(Vm *vm, Value *args, Value *tail) {
  Value pair = gc_alloc(vm, 2, TAG_TUPLE);
  val_fields(pair)[0] = args[1];
  val_fields(pair)[1] = args[2];
  vm_push_root(vm, &pair);
  Value cell = gc_alloc(vm, 2, TAG_CONS);
  val_fields(cell)[0] = pair;
  val_fields(cell)[1] = *tail;
  vm_pop_roots(vm, 1);
  return cell;
}

// hashtbl_add(data, k, v): (k, v) :: the bucket of k.
Value lib_hashtbl_add(Vm *vm, Value *args) {
  uint64_t i = bucket_index(vm, args[0], args[1], "Hashtbl.add");
  Value bucket = val_field(args[0], i);
  vm_push_root(vm, &bucket);
  Value cell = binding_cell(vm, args, &bucket);
  vm_pop_roots(vm, 1);
  gc_write(vm, args[0], i, cell);
  return VAL_NIL;
}

// hashtbl_replace(data, k, v): the bucket of k becomes (k, v) :: the bucket
// without k's newest binding (the bindings before it copied in order, those
// after it shared), or (k, v) :: the bucket if k is not bound. True iff k was
// not bound (the caller counts a new binding).
Value lib_hashtbl_replace(Vm *vm, Value *args) {
  const char *what = "Hashtbl.replace";
  uint64_t i = bucket_index(vm, args[0], args[1], what);
  Value bucket = val_field(args[0], i);
  Value found = find_cell(vm, bucket, args[1], what);
  // cursor walks the old bucket's cells before `found`; last is the newest
  // cell of the new list, whose tail is set when the next one is made.
  Value rest = found == VAL_EMPTY ? bucket : val_field(found, 1);
  Value cursor = bucket, head = VAL_EMPTY, last = VAL_EMPTY;
  vm_push_root(vm, &found);
  vm_push_root(vm, &rest);
  vm_push_root(vm, &cursor);
  vm_push_root(vm, &head);
  vm_push_root(vm, &last);
  head = last = binding_cell(vm, args, &rest);
  if (found != VAL_EMPTY) {
    for (; cursor != found; cursor = val_field(cursor, 1)) {
      Value cell = gc_alloc(vm, 2, TAG_CONS);
      val_fields(cell)[0] = val_field(cursor, 0);
      val_fields(cell)[1] = rest;
      gc_write(vm, last, 1, cell);
      last = cell;
    }
  }
  vm_pop_roots(vm, 5);
  gc_write(vm, args[0], i, head);
  return val_of_bool(found == VAL_EMPTY);
}
