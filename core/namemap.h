// namemap.h - a hash map from NUL-terminated names to uint32_t, for the
// compiler's and the shapes table's lookups by name (locals, captures,
// module members, field symbols), so that compile time stays linear in the
// program however many names it declares. Keys are not copied: each must
// outlive the map. Entries are never removed (a value may be set back to
// NAMEMAP_NONE).
#ifndef MINNOW_NAMEMAP_H
#define MINNOW_NAMEMAP_H

#include <stdint.h>

enum { NAMEMAP_NONE = UINT32_MAX };

typedef struct NameMap {
  const char **keys;   // open addressing, capacity a power of two (or 0)
  uint32_t *values;
  uint32_t cap, count;
} NameMap;

// The value of `key`, or NAMEMAP_NONE.
uint32_t namemap_get(const NameMap *map, const char *key);
// The value slot of `key`, inserted holding NAMEMAP_NONE if absent; valid
// until the next insertion. Out of memory: vm_out_of_memory.
uint32_t *namemap_slot(NameMap *map, const char *key);
void namemap_free(NameMap *map);

#endif
