// shapes.h - record shapes: the ordered field names of a record literal,
// interned so that a record's field 0 (its shape id) says where each field is.
// Field names are interned as symbols; GETFIELD caches (shape, index) pairs.
//
// Record equality ignores field order (docs/language.md, "Equality"): two
// shapes with the same field names share a *field set* (the shape of those
// names sorted bytewise), and each shape lists its fields in that sorted
// order (`canon`), so that ==, compare and hash walk both records alike.
// Lookups by name and by symbol list are hashed: interning is O(length).
#ifndef MINNOW_SHAPES_H
#define MINNOW_SHAPES_H

#include <stdint.h>

typedef struct Shapes Shapes;

Shapes *shapes_new(void);
void shapes_free(Shapes *shapes);

// The symbol id of a field name (interned).
uint32_t shapes_symbol(Shapes *shapes, const char *name);
const char *shapes_symbol_name(const Shapes *shapes, uint32_t symbol);

// The shape id of this ordered list of field symbols (interned).
uint32_t shapes_intern(Shapes *shapes, const uint32_t *symbols, uint32_t count);
// A new shape of these fields that no record literal gets (shapes_intern
// never returns it): a block of it was made by whoever holds its id (the
// stdlib's Hashtbl: Vm.hashtbl_shape). Its field set is the interned one, so
// ==, compare and hash treat it as any record of the same names.
uint32_t shapes_make_private(Shapes *shapes, const uint32_t *symbols, uint32_t count);
uint32_t shapes_count(const Shapes *shapes);
uint32_t shapes_field_count(const Shapes *shapes, uint32_t shape);
uint32_t shapes_field_symbol(const Shapes *shapes, uint32_t shape, uint32_t i);
// Index (0-based, shape field excluded) of `symbol` in `shape`, or -1.
int shapes_find(const Shapes *shapes, uint32_t shape, uint32_t symbol);

// The field set of `shape`: equal for two shapes iff they have the same names.
uint32_t shapes_field_set(const Shapes *shapes, uint32_t shape);
// canon[k] = the index in `shape` of its k-th field in bytewise name order.
const uint32_t *shapes_canon(const Shapes *shapes, uint32_t shape);
// A hash of the field set's names (equal for equal sets, stable across runs).
uint64_t shapes_set_hash(const Shapes *shapes, uint32_t set);
// Orders two field sets: their sorted name lists, lexicographically.
int shapes_compare_sets(const Shapes *shapes, uint32_t set_a, uint32_t set_b);

#endif
