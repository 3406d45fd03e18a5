// namemap.c - open-addressing string map (namemap.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namemap.h"
#include "vm_state.h"
#include "../base/hash.h"

// The slot holding key, or the empty slot where it belongs (cap > 0).
static uint32_t find(const NameMap *map, const char *key) {
  uint32_t mask = map->cap - 1;
  uint32_t i = (uint32_t)hash_fnv_string(key) & mask;
  while (map->keys[i] && strcmp(map->keys[i], key) != 0) i = (i + 1) & mask;
  return i;
}

uint32_t namemap_get(const NameMap *map, const char *key) {
  if (map->cap == 0) return NAMEMAP_NONE;
  uint32_t i = find(map, key);
  return map->keys[i] ? map->values[i] : NAMEMAP_NONE;
}

static void grow(NameMap *map) {
  NameMap bigger = {0};
  bigger.cap = map->cap ? map->cap * 2 : 16;
  bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
  bigger.values = malloc(bigger.cap * sizeof *bigger.values);
  if (!bigger.keys || !bigger.values) vm_out_of_memory(NULL, "name table");
  for (uint32_t i = 0; i < map->cap; i++)
    if (map->keys[i]) {
      uint32_t j = find(&bigger, map->keys[i]);
      bigger.keys[j] = map->keys[i];
      bigger.values[j] = map->values[i];
    }
  bigger.count = map->count;
  namemap_free(map);
  *map = bigger;
}

uint32_t *namemap_slot(NameMap *map, const char *key) {
  if ((map->count + 1) * 2 > map->cap) grow(map);
  uint32_t i = find(map, key);
  if (!map->keys[i]) {
    map->keys[i] = key;
    map->values[i] = NAMEMAP_NONE;
    map->count++;
  }
  return &map->values[i];
}

void namemap_free(NameMap *map) {
  free(map->keys);
  free(map->values);
  *map = (NameMap){0};
}
