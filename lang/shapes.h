// shapes.h - record shapes: the ordered field names of a record literal,
// interned so that a record's field 0 (its shape id) says where each field is.
// Field names are interned as symbols; GETFIELD caches (shape, index) pairs.
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
uint32_t shapes_field_count(const Shapes *shapes, uint32_t shape);
uint32_t shapes_field_symbol(const Shapes *shapes, uint32_t shape, uint32_t i);
// Index (0-based, shape field excluded) of `symbol` in `shape`, or -1.
int shapes_find(const Shapes *shapes, uint32_t shape, uint32_t symbol);

#endif
