// stack_trie.h - callstacks as the nodes of a trie of runs: a node is its
// parent's callstack followed by `count` frames of one code, and equal
// (parent, code, count) are one node. The trace writer keeps one node per
// live sampled block (memprof/memtrace.c part 8), so that a snapshot can say
// each block's callstack without the trace (--memtrace-pprof-dir). Codes are
// the trace's (memtrace.c part 1); node 0 is the empty callstack.
#ifndef MINNOW_STACK_TRIE_H
#define MINNOW_STACK_TRIE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct StackTrie StackTrie;

typedef struct StackTrieNode {
  uint32_t parent;   // node id (0: the root)
  uint32_t count;    // >= 1 frames of `code`
  uint64_t code;
} StackTrieNode;

StackTrie *stack_trie_new(void);
void stack_trie_free(StackTrie *t);
// The node `parent` then `count` frames of `code`, made on first use;
// UINT32_MAX if memory is short.
uint32_t stack_trie_child(StackTrie *t, uint32_t parent, uint64_t code, uint32_t count);
// Node `id` (id < stack_trie_count; node 0 is the root, count 0).
const StackTrieNode *stack_trie_node(const StackTrie *t, uint32_t id);
uint32_t stack_trie_count(const StackTrie *t);

#endif
