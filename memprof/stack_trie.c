// stack_trie.c - callstacks as a trie of runs (contract in stack_trie.h).
//
// 1. Nodes live in one array (ids are indices); a table with open
//    addressing (load at most one half) finds a node by (parent, code,
//    count). Both grow by doubling; nothing is ever removed: the trie holds
//    the distinct callstacks a run sampled, as runs, which the trace writes
//    once each too.
#include <stdlib.h>

#include "stack_trie.h"
#include "../base/hash.h"

struct StackTrie {
  StackTrieNode *nodes;
  uint32_t count, cap;
  uint32_t *slots;   // node id + 1, 0: empty
  uint64_t mask;
};

static uint64_t key_hash(uint32_t parent, uint64_t code, uint32_t count) {
  return hash_combine(hash_mix(code), (uint64_t)parent << 32 | count);
}

static bool grow_slots(StackTrie *t) {
  uint64_t cap = t->slots ? 2 * (t->mask + 1) : 1024;
  uint32_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (uint32_t id = 1; id < t->count; id++) {
    const StackTrieNode *n = &t->nodes[id];
    uint64_t h = key_hash(n->parent, n->code, n->count) & (cap - 1);
    while (slots[h]) h = (h + 1) & (cap - 1);
    slots[h] = id + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->mask = cap - 1;
  return true;
}

StackTrie *stack_trie_new(void) {
  StackTrie *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->cap = 1024;
  t->nodes = malloc(t->cap * sizeof *t->nodes);
  if (!t->nodes || !grow_slots(t)) {
    stack_trie_free(t);
    return NULL;
  }
  t->nodes[0] = (StackTrieNode){0, 0, 0};
  t->count = 1;
  return t;
}

void stack_trie_free(StackTrie *t) {
  if (!t) return;
  free(t->nodes);
  free(t->slots);
  free(t);
}

uint32_t stack_trie_child(StackTrie *t, uint32_t parent, uint64_t code, uint32_t count) {
  uint64_t h = key_hash(parent, code, count) & t->mask;
  for (; t->slots[h]; h = (h + 1) & t->mask) {
    const StackTrieNode *n = &t->nodes[t->slots[h] - 1];
    if (n->parent == parent && n->code == code && n->count == count) return t->slots[h] - 1;
  }
  if (t->count == UINT32_MAX - 1) return UINT32_MAX;
  if (t->count == t->cap) {
    StackTrieNode *nodes = realloc(t->nodes, 2 * (size_t)t->cap * sizeof *nodes);
    if (!nodes) return UINT32_MAX;
    t->nodes = nodes;
    t->cap *= 2;
  }
  if ((uint64_t)(t->count + 1) * 2 > t->mask + 1) {
    if (!grow_slots(t)) return UINT32_MAX;
    h = key_hash(parent, code, count) & t->mask;
    while (t->slots[h]) h = (h + 1) & t->mask;
  }
  uint32_t id = t->count++;
  t->nodes[id] = (StackTrieNode){parent, count, code};
  t->slots[h] = id + 1;
  return id;
}

const StackTrieNode *stack_trie_node(const StackTrie *t, uint32_t id) { return &t->nodes[id]; }

uint32_t stack_trie_count(const StackTrie *t) { return t->count; }
