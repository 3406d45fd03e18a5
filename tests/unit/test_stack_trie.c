// test_stack_trie.c - cmocka tests for memprof/stack_trie.c, the trie of
// callstack runs the trace writer keeps for --memtrace-pprof-dir: equal
// (parent, code, count) are one node, different ones are not, ancestors
// are reachable from every node, and ids stay valid while the trie grows
// past its first table (1024 nodes) many times.
#include "test_support.h"
#include "../../memprof/stack_trie.h"

static void test_equal_runs_are_one_node(void **state) {
  (void)state;
  StackTrie *t = stack_trie_new();
  assert_non_null(t);
  assert_int_equal(stack_trie_count(t), 1);   // the root
  uint32_t a = stack_trie_child(t, 0, 11, 1);
  uint32_t b = stack_trie_child(t, a, 22, 3);
  assert_int_equal(stack_trie_child(t, 0, 11, 1), a);
  assert_int_equal(stack_trie_child(t, a, 22, 3), b);
  assert_int_not_equal(stack_trie_child(t, a, 22, 4), b);   // another count
  assert_int_not_equal(stack_trie_child(t, 0, 22, 3), b);   // another parent
  assert_int_not_equal(stack_trie_child(t, a, 23, 3), b);   // another code
  assert_int_equal(stack_trie_count(t), 6);
  const StackTrieNode *n = stack_trie_node(t, b);
  assert_int_equal(n->parent, a);
  assert_int_equal(n->code, 22);
  assert_int_equal(n->count, 3);
  assert_int_equal(stack_trie_node(t, n->parent)->parent, 0);
  stack_trie_free(t);
}

// A chain of 100,000 nodes and a fan of 100,000 children: found again, each
// with its own parent, after the tables grew.
static void test_growth_keeps_ids(void **state) {
  (void)state;
  enum { N = 100000 };
  StackTrie *t = stack_trie_new();
  assert_non_null(t);
  static uint32_t chain[N], fan[N];
  uint32_t parent = 0;
  for (uint32_t i = 0; i < N; i++) parent = chain[i] = stack_trie_child(t, parent, 1000 + i, 1 + i % 7);
  for (uint32_t i = 0; i < N; i++) fan[i] = stack_trie_child(t, chain[N / 2], 7 * (uint64_t)i, 2);
  assert_int_equal(stack_trie_count(t), 1 + 2 * N);
  for (uint32_t i = 0; i < N; i++) {
    assert_int_equal(stack_trie_child(t, i ? chain[i - 1] : 0, 1000 + i, 1 + i % 7), chain[i]);
    assert_int_equal(stack_trie_node(t, chain[i])->parent, i ? chain[i - 1] : 0);
    assert_int_equal(stack_trie_child(t, chain[N / 2], 7 * (uint64_t)i, 2), fan[i]);
  }
  assert_int_equal(stack_trie_count(t), 1 + 2 * N);
  stack_trie_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equal_runs_are_one_node),
      cmocka_unit_test(test_growth_keeps_ids),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
