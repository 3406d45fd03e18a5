// calltree.c - the flame graph's tree from a profile's trie (calltree.h).
// Nodes are numbered in creation order, node 0 the root, so a parent's
// number is below its children's: totals are summed in one backward sweep.
// The merge table is keyed by (parent, function, file, line), names
// compared as pointers (the reader interns them); a code with no location
// is keyed by (parent, NULL, NULL, code).
#include "calltree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/hash.h"
#include "../base/ocaml_int.h"

typedef struct Node {
  CallTreeNode pub;
  uint32_t parent;
  uint64_t key_line;          // line, or the code when unlocated
  size_t code_name;           // unlocated: offset of "$CODE" in the pool
  uint32_t children, n_children;  // range of `child_ids` (after build)
} Node;

struct CallTree {
  Node *nodes;
  uint32_t n_nodes, cap_nodes;
  uint32_t *slots;            // merge table: node id + 1, 0 empty; at most half full
  uint32_t mask;
  uint32_t *child_ids;        // children of each node, sorted, node by node
  uint32_t max_level;         // deepest node's depth + 1
  char *pool;
  size_t pool_len, pool_cap;
};

static uint64_t key_hash(uint32_t parent, const char *function, const char *file, uint64_t line) {
  uint64_t h = hash_mix((uint64_t)parent * 0x9e3779b97f4a7c15ull + (uint64_t)(uintptr_t)function);
  return hash_mix(h ^ ((uint64_t)(uintptr_t)file * 0xc2b2ae3d27d4eb4full) ^ (line + 0x165667b19e3779f9ull));
}

// ---------------------------------------------------------------- building

static bool grow_table(CallTree *t) {
  uint32_t n_slots = t->slots ? 2 * (t->mask + 1) : 1024;
  uint32_t *slots = calloc(n_slots, sizeof *slots);
  if (!slots) return false;
  for (uint32_t id = 1; id < t->n_nodes; id++) {
    const Node *n = &t->nodes[id];
    uint64_t j = key_hash(n->parent, n->pub.function, n->pub.file, n->key_line) & (n_slots - 1);
    while (slots[j]) j = (j + 1) & (n_slots - 1);
    slots[j] = id + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->mask = n_slots - 1;
  return true;
}

// The child of `parent` at (function, file, line), made if new; UINT32_MAX
// when out of memory. function NULL: unlocated, `line` is the code.
static uint32_t child(CallTree *t, uint32_t parent, const char *function, const char *file, uint64_t line) {
  uint64_t j = key_hash(parent, function, file, line) & t->mask;
  for (uint32_t v; (v = t->slots[j]); j = (j + 1) & t->mask) {
    const Node *n = &t->nodes[v - 1];
    if (n->parent == parent && n->pub.function == function && n->pub.file == file && n->key_line == line)
      return v - 1;
  }
  if (t->n_nodes == t->cap_nodes) {
    uint32_t cap = t->cap_nodes ? 2 * t->cap_nodes : 1024;
    Node *nodes = realloc(t->nodes, (size_t)cap * sizeof *nodes);
    if (!nodes) return UINT32_MAX;
    t->nodes = nodes;
    t->cap_nodes = cap;
  }
  uint32_t id = t->n_nodes++, level = t->nodes[parent].pub.depth + 1;  // the root's depth field holds level 0
  t->nodes[id] = (Node){{function, file, function ? (uint32_t)line : 0, level, 0, 0}, parent, line, 0, 0, 0};
  if (level > t->max_level) t->max_level = level;
  t->slots[j] = id + 1;
  if (2 * (t->n_nodes - 1) > t->mask && !grow_table(t)) return UINT32_MAX;
  return id;
}

static bool pool_add_code(CallTree *t, Node *n) {
  char text[32];
  size_t len = (size_t)snprintf(text, sizeof text, "$%lld", (long long)ocaml_int(n->key_line)) + 1;
  if (t->pool_len + len > t->pool_cap) {
    size_t cap = 2 * t->pool_cap + len + 256;
    char *pool = realloc(t->pool, cap);
    if (!pool) return false;
    t->pool = pool;
    t->pool_cap = cap;
  }
  n->code_name = t->pool_len;
  memcpy(t->pool + t->pool_len, text, len);
  t->pool_len += len;
  return true;
}

// The tree node of trie node `id`, given its parent's: one level per location.
static uint32_t expand(CallTree *t, const Profile *p, ProfileNodeId id, uint32_t at, CallTreeKey key) {
  const TraceReaderLocation *locs;
  int n = profile_node_locations(p, id, &locs);
  if (n <= 0) {
    uint32_t c = child(t, at, NULL, NULL, profile_node(p, id)->code);
    if (c != UINT32_MAX && t->nodes[c].code_name == 0 && !pool_add_code(t, &t->nodes[c])) return UINT32_MAX;
    return c;
  }
  for (int i = 0; i < n && at != UINT32_MAX; i++) {
    bool by_line = key == CALLTREE_BY_LINE;
    at = child(t, at, locs[i].function, by_line ? locs[i].file : NULL, by_line ? locs[i].line : 0);
  }
  return at;
}

// BY_FUNCTION keys leave file NULL: give each node the first file and line
// met (in trie order).
static void fill_files(CallTree *t, const Profile *p, const uint32_t *tree_of) {
  for (ProfileNodeId id = 1; id < profile_n_nodes(p); id++) {
    const TraceReaderLocation *locs;
    int n = profile_node_locations(p, id, &locs);
    uint32_t at = tree_of[id];
    for (int i = n - 1; i >= 0 && at; i--, at = t->nodes[at].parent) {
      Node *node = &t->nodes[at];
      if (node->pub.function && !node->pub.file) node->pub.file = locs[i].file, node->pub.line = locs[i].line;
    }
  }
}

static void add_values(CallTree *t, const Profile *p, const uint32_t *tree_of, CallTreeValue value) {
  double bytes = profile_sample_bytes(p);
  for (ProfileStackId s = 0; s < profile_n_stacks(p); s++) {
    const ProfileStack *st = profile_stack(p, s);
    uint64_t samples = value == CALLTREE_LIVE ? st->counts.live_samples : st->counts.samples;
    t->nodes[tree_of[st->leaf]].pub.self += (double)samples * bytes;
  }
  for (uint32_t id = t->n_nodes; id-- > 1;) {
    Node *n = &t->nodes[id];
    n->pub.total += n->pub.self;
    t->nodes[n->parent].pub.total += n->pub.total;
  }
  t->nodes[0].pub.total += t->nodes[0].pub.self;
}

static int compare_nodes(const void *a, const void *b, void *ctx) {
  const Node *nodes = ctx;
  const CallTreeNode *x = &nodes[*(const uint32_t *)a].pub, *y = &nodes[*(const uint32_t *)b].pub;
  int c = strcmp(x->function, y->function);
  if (c == 0) c = strcmp(x->file, y->file);
  if (c == 0) c = (x->line > y->line) - (x->line < y->line);
  return c;
}

// child_ids: each node's children, contiguous and sorted.
static bool link_children(CallTree *t) {
  t->child_ids = malloc(((size_t)t->n_nodes + 1) * sizeof *t->child_ids);
  if (!t->child_ids) return false;
  for (uint32_t id = 1; id < t->n_nodes; id++) t->nodes[t->nodes[id].parent].n_children++;
  uint32_t next = 0;
  for (uint32_t id = 0; id < t->n_nodes; id++) {
    t->nodes[id].children = next;
    next += t->nodes[id].n_children;
    t->nodes[id].n_children = 0;
  }
  for (uint32_t id = 1; id < t->n_nodes; id++) {
    Node *parent = &t->nodes[t->nodes[id].parent];
    t->child_ids[parent->children + parent->n_children++] = id;
  }
  for (uint32_t id = 0; id < t->n_nodes; id++)
    qsort_r(t->child_ids + t->nodes[id].children, t->nodes[id].n_children, sizeof *t->child_ids, compare_nodes,
            t->nodes);
  return true;
}

static bool build(CallTree *t, const Profile *p, CallTreeKey key, CallTreeValue value) {
  uint32_t n = profile_n_nodes(p);
  uint32_t *tree_of = malloc((size_t)(n ? n : 1) * sizeof *tree_of);  // trie node -> tree node
  if (!tree_of || !grow_table(t)) {
    free(tree_of);
    return false;
  }
  t->nodes = malloc(1024 * sizeof *t->nodes);
  if (!t->nodes) return free(tree_of), false;
  t->cap_nodes = 1024;
  t->n_nodes = 1;
  t->nodes[0] = (Node){{"all", "", 0, 0, 0, 0}, UINT32_MAX, 0, 0, 0, 0};
  t->pool_len = 1;  // offset 0 means "no name"
  tree_of[0] = 0;
  bool ok = true;
  for (ProfileNodeId id = 1; id < n && ok; id++) {
    tree_of[id] = expand(t, p, id, tree_of[profile_node(p, id)->parent], key);
    ok = tree_of[id] != UINT32_MAX;
  }
  if (ok) {
    if (key == CALLTREE_BY_FUNCTION) fill_files(t, p, tree_of);
    add_values(t, p, tree_of, value);
  }
  free(tree_of);
  return ok;
}

// Public depths count from the outermost frame; names of unlocated codes
// point into the finished pool.
static void finish_nodes(CallTree *t) {
  for (uint32_t id = 1; id < t->n_nodes; id++) {
    Node *n = &t->nodes[id];
    n->pub.depth--;
    if (!n->pub.function) n->pub.function = t->pool + n->code_name, n->pub.file = "";
    if (!n->pub.file) n->pub.file = "";
  }
}

CallTree *calltree_build(const Profile *p, CallTreeKey key, CallTreeValue value) {
  CallTree *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  bool ok = build(t, p, key, value);
  if (ok) finish_nodes(t);
  if (!ok || !link_children(t)) {
    calltree_free(t);
    return NULL;
  }
  return t;
}

void calltree_free(CallTree *t) {
  if (!t) return;
  free(t->nodes);
  free(t->slots);
  free(t->child_ids);
  free(t->pool);
  free(t);
}

double calltree_total(const CallTree *t) { return t->nodes[0].pub.total; }

const CallTreeNode *calltree_root(const CallTree *t) { return &t->nodes[0].pub; }

// ---------------------------------------------------------------- walking

bool calltree_walk(const CallTree *t, CallTreeVisit visit, void *ctx) {
  size_t cap = (size_t)t->max_level + 1;
  const CallTreeNode **path = malloc(cap * sizeof *path);
  uint32_t *node_at = malloc(cap * sizeof *node_at), *next_at = malloc(cap * sizeof *next_at);
  bool ok = path && node_at && next_at;
  size_t level = 0;  // node_at[0 .. level] is the current path from the root
  if (ok) node_at[0] = 0, next_at[0] = 0;
  while (ok) {
    const Node *n = &t->nodes[node_at[level]];
    if (next_at[level] == n->n_children) {
      if (level-- == 0) break;
      continue;
    }
    uint32_t c = t->child_ids[n->children + next_at[level]++];
    const Node *cn = &t->nodes[c];
    if (!(cn->pub.total > 0)) continue;
    path[level] = &cn->pub;
    if (!visit(ctx, &cn->pub, path)) continue;
    level++;
    node_at[level] = c, next_at[level] = 0;
  }
  free(path);
  free(node_at);
  free(next_at);
  return ok;
}
