// arena.c - bump allocator for AST nodes and strings (declared in ast.h).
// Memory comes in zeroed chunks of at least 64 KiB; everything is freed at once
// by arena_free_all. Allocation failure is fatal (prints and exits 1).
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"

enum { CHUNK_MIN_BYTES = 64 * 1024, ARENA_ALIGN = 8 };

// Invariant: used <= size; data[0..used) is handed out, data[used..size) is
// still zero (calloc'd), so arena_alloc never has to clear memory itself.
struct ArenaChunk {
  ArenaChunk *next;
  size_t size;
  size_t used;
  alignas(max_align_t) unsigned char data[];
};

static ArenaChunk *new_chunk(size_t at_least) {
  size_t size = at_least < CHUNK_MIN_BYTES ? CHUNK_MIN_BYTES : at_least;
  ArenaChunk *chunk = calloc(1, sizeof(ArenaChunk) + size);
  if (chunk == NULL) vm_out_of_memory(NULL, "parsing");
  chunk->size = size;
  return chunk;
}

// Returns `bytes` zeroed bytes aligned to 8, valid until arena_free_all.
// Never returns NULL (exits on out of memory).
void *arena_alloc(Arena *arena, size_t bytes) {
  if (bytes > SIZE_MAX / 2) vm_out_of_memory(NULL, "parsing");
  size_t rounded = (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (rounded == 0) rounded = ARENA_ALIGN;
  ArenaChunk *chunk = arena->chunks;
  if (chunk == NULL || chunk->size - chunk->used < rounded) {
    chunk = new_chunk(rounded);
    chunk->next = arena->chunks;
    arena->chunks = chunk;
  }
  void *result = chunk->data + chunk->used;
  chunk->used += rounded;
  return result;
}

// Copies s[0..len) into the arena and appends a NUL.
char *arena_strndup(Arena *arena, const char *s, size_t len) {
  char *copy = arena_alloc(arena, len + 1);
  if (len > 0) memcpy(copy, s, len);
  return copy;
}

// Frees every chunk; the arena is empty and reusable afterwards.
void arena_free_all(Arena *arena) {
  ArenaChunk *chunk = arena->chunks;
  while (chunk != NULL) {
    ArenaChunk *next = chunk->next;
    free(chunk);
    chunk = next;
  }
  arena->chunks = NULL;
}
