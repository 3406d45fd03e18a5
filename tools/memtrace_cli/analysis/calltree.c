// calltree.c - the flame graph's tree from a profile's trie (calltree.h).
// Nodes are numbered in creation order, node 0 the root, so a parent's
// number is below its children's: totals are summed in one backward sweep.
// The merge table is keyed by (parent, function, file, line), names
// compared as pointers (the reader interns them); a code with no location
// is keyed by (parent, NULL, NULL, code).
// Only the nodes of stacks with a value are made (a trie past the tools'
// node limit holds millions of runs no sampled stack ends under: the
// deepest recursion's 2.7 M runs had 0.57 M valued stacks, and the nodes
// of the rest were 60 % of flamegraph's memory). The tree is the one the
// walk would show had every run been made: a node's key fixes its
// function, file, line and label, and what depends on every run merged
// into a node is replayed over the runs left out, as lookups that make
// nothing: merge_counts' smallest and largest count (order-free), and by
// function the file and line of the first run or stack met (the smallest
// `order`: run r is r, stack s is runs + s).
#include "calltree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../base/hash.h"
#include "../base/ocaml_int.h"
#include "collapse.h"

// The function of a folded run's node while building (its label is in the
// pool): a pointer no location name can equal.
static const char composed_marker[1] = "";

// 80 bytes on LP64 (a tree past the node limit has millions): the file merged on
// is pub.file by line and NULL by function (key_file), a node's children
// are child_ids[end of the node before .. children_end) (link_children).
typedef struct Node {
  CallTreeNode pub;
  uint64_t key_line;          // line, or the code when unlocated
  uint32_t parent;
  uint32_t key_repeat;        // the count merged on: the run's, or 2 for any run (merge_counts)
  uint32_t code_name;         // unlocated or composed: offset of its name in the pool (under 4 GiB)
  uint32_t children_end;      // end of its children's range of `child_ids` (after build)
} Node;

struct CallTree {
  bool by_line;               // CALLTREE_BY_LINE: a node's file is in its key
  Node *nodes;
  uint32_t *first_order;      // by function: the order of the run or stack that set the node's file
  uint32_t n_nodes, cap_nodes;
  uint32_t *slots;            // merge table: node id + 1, 0 empty; at most half full
  uint32_t mask;
  uint32_t *child_ids;        // children of each node, sorted, node by node
  uint32_t max_level;         // deepest node's depth + 1
  char *pool;
  size_t pool_len, pool_cap;
};

static const char *key_file(const CallTree *t, const Node *n) { return t->by_line ? n->pub.file : NULL; }

static uint64_t key_hash(uint32_t parent, const char *function, const char *file, uint64_t line, uint32_t repeat) {
  uint64_t h = hash_mix((uint64_t)parent * 0x9e3779b97f4a7c15ull + (uint64_t)(uintptr_t)function);
  h = hash_mix(h ^ ((uint64_t)(uintptr_t)file * 0xc2b2ae3d27d4eb4full) ^ (line + 0x165667b19e3779f9ull));
  return repeat == 1 ? h : hash_combine(h, repeat);
}

// ---------------------------------------------------------------- building

static bool grow_table(CallTree *t) {
  uint32_t n_slots = t->slots ? 2 * (t->mask + 1) : 1024;
  uint32_t *slots = calloc(n_slots, sizeof *slots);
  if (!slots) return false;
  for (uint32_t id = 1; id < t->n_nodes; id++) {
    const Node *n = &t->nodes[id];
    uint64_t j = key_hash(n->parent, n->pub.function, key_file(t, n), n->key_line, n->key_repeat) & (n_slots - 1);
    while (slots[j]) j = (j + 1) & (n_slots - 1);
    slots[j] = id + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->mask = n_slots - 1;
  return true;
}

enum { NO_MEMORY = UINT32_MAX, NO_NODE = UINT32_MAX - 1 };  // what child returns instead of a node

// The child of `parent` at (function, file, line) repeated `repeat` times,
// made if new and `make`; NO_NODE when absent and not made (or parent is
// NO_NODE), NO_MEMORY when out of memory. function NULL: unlocated, `line`
// is the code; composed_marker: a folded run, `line` is its unit.
static uint32_t child(CallTree *t, uint32_t parent, const char *function, const char *file, uint64_t line,
                      uint32_t repeat, bool make) {
  if (parent == NO_NODE) return NO_NODE;
  uint64_t j = key_hash(parent, function, file, line, repeat) & t->mask;
  for (uint32_t v; (v = t->slots[j]); j = (j + 1) & t->mask) {
    const Node *n = &t->nodes[v - 1];
    if (n->parent == parent && n->pub.function == function && key_file(t, n) == file && n->key_line == line &&
        n->key_repeat == repeat)
      return v - 1;
  }
  if (!make) return NO_NODE;
  if (t->n_nodes == t->cap_nodes) {
    uint32_t cap = t->cap_nodes ? 2 * t->cap_nodes : 1024;
    Node *nodes = realloc(t->nodes, (size_t)cap * sizeof *nodes);
    if (!nodes) return NO_MEMORY;
    t->nodes = nodes;
    if (t->first_order) {
      uint32_t *first = realloc(t->first_order, (size_t)cap * sizeof *first);
      if (!first) return NO_MEMORY;
      t->first_order = first;
    }
    t->cap_nodes = cap;
  }
  uint32_t id = t->n_nodes++, level = t->nodes[parent].pub.depth + 1;  // the root's depth field holds level 0
  bool located = function && function != composed_marker;
  t->nodes[id] = (Node){{function, file, located ? (uint32_t)line : 0, level, 0, 0, repeat, repeat, !located && function},
                        line, parent, repeat, 0, 0};
  if (level > t->max_level) t->max_level = level;
  t->slots[j] = id + 1;
  if (2 * (t->n_nodes - 1) > t->mask && !grow_table(t)) return NO_MEMORY;
  return id;
}

// A node met at (file, line) by the run or stack `order`: by function, the
// first met (the smallest order) gives the node its file and line.
static void touch(CallTree *t, uint32_t id, const char *file, uint32_t line, uint32_t order) {
  CallTreeNode *pub = &t->nodes[id].pub;
  if (pub->file && !(t->first_order && order < t->first_order[id])) return;
  pub->file = file, pub->line = line;
  if (t->first_order) t->first_order[id] = order;
}

// Appends text[0 .. len) to the pool; returns its offset, 0 when out of memory.
static size_t pool_add(CallTree *t, const char *text, size_t len) {
  if (len >= UINT32_MAX - t->pool_len) return 0;  // offsets are 32 bits
  if (t->pool_len + len > t->pool_cap) {
    size_t cap = 2 * t->pool_cap + len + 256;
    char *pool = realloc(t->pool, cap);
    if (!pool) return 0;
    t->pool = pool;
    t->pool_cap = cap;
  }
  memcpy(t->pool + t->pool_len, text, len);
  t->pool_len += len;
  return t->pool_len - len;
}

static bool pool_add_code(CallTree *t, Node *n) {
  char text[32];
  size_t len = (size_t)snprintf(text, sizeof text, "$%lld", (long long)ocaml_int(n->key_line)) + 1;
  return (n->code_name = pool_add(t, text, len)) != 0;
}

// The tree node of trie node `id` under tree node `at`: one level per
// location, made if new and `make` (else NO_NODE when absent). BY_FUNCTION
// leaves the key's file NULL: the node takes the first file and line met
// (touch; `order` the run's or stack's).
static uint32_t expand(CallTree *t, const Profile *p, ProfileNodeId id, uint32_t at, CallTreeKey key, bool make,
                       uint32_t order) {
  const TraceReaderLocation *locs;
  int n = profile_node_locations(p, id, &locs);
  if (n <= 0) {
    uint32_t c = child(t, at, NULL, NULL, profile_node_code(p, id), 1, make);
    if (c < NO_NODE && t->nodes[c].code_name == 0 && !pool_add_code(t, &t->nodes[c])) return NO_MEMORY;
    return c;
  }
  for (int i = 0; i < n && at < NO_NODE; i++) {
    bool by_line = key == CALLTREE_BY_LINE;
    at = child(t, at, locs[i].function, by_line ? locs[i].file : NULL, by_line ? locs[i].line : 0, 1, make);
    if (at < NO_NODE) touch(t, at, locs[i].file, locs[i].line, order);
  }
  return at;
}

// A frame's identity for the collapse: what expand merges on.
static uint64_t frame_key(const Profile *p, ProfileNodeId id, CallTreeKey key) {
  const TraceReaderLocation *locs;
  int n = profile_node_locations(p, id, &locs);
  if (n <= 0) return hash_combine(0xc0de, profile_node_code(p, id));
  uint64_t h = 0xf4a3;
  for (int i = 0; i < n; i++) {
    h = hash_combine(h, (uint64_t)(uintptr_t)locs[i].function);
    if (key == CALLTREE_BY_LINE) h = hash_combine(hash_combine(h, (uint64_t)(uintptr_t)locs[i].file), locs[i].line);
  }
  return h;
}

// The label of a folded unit: its frames' locations outermost first, "f
// (file:line)" (by function "f"; "$CODE" without location), joined by " → ".
// Returns its offset in the pool, 0 when out of memory.
static size_t unit_label(CallTree *t, const Profile *p, const Collapse *c, uint32_t unit, CallTreeKey key) {
  const uint32_t *reps;
  uint32_t len = collapse_unit(c, unit, &reps);
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (!f) return 0;
  const char *sep = "";
  for (uint32_t k = 0; k < len; k++) {
    const TraceReaderLocation *locs;
    int n = profile_node_locations(p, reps[k], &locs);
    if (n <= 0) fprintf(f, "%s$%lld", sep, (long long)ocaml_int(profile_node_code(p, reps[k]))), sep = " \u2192 ";
    for (int i = 0; i < n; i++, sep = " \u2192 ") {
      fprintf(f, "%s%s", sep, locs[i].function);
      if (key == CALLTREE_BY_LINE && (*locs[i].file || locs[i].line)) fprintf(f, " (%s:%u)", locs[i].file, locs[i].line);
    }
  }
  if (fclose(f) != 0) return free(text), 0;
  size_t at = pool_add(t, text, size + 1);
  free(text);
  return at;
}

// The tree node of a run under tree node `at`: a plain frame expands as
// `first`, the first trie node whose path ends with it (so that by
// function a node takes the file and line first met in trie order); a
// folded run is one node, a single location keeping its function, file and
// line, anything else a composed label.
static uint32_t expand_run(CallTree *t, const Profile *p, const Collapse *c, CollapseId r, ProfileNodeId first,
                           uint32_t at, CallTreeKey key, bool merge_counts, bool make) {
  const CollapseRun *run = collapse_run(c, r);
  const uint32_t *reps;
  uint32_t len = collapse_unit(c, run->unit, &reps);
  if (collapse_plain(c, r)) return expand(t, p, first, at, key, make, r);
  const TraceReaderLocation *locs;
  uint32_t n, key_repeat = merge_counts ? 2 : run->count;  // a folded run repeats at least twice
  uint32_t made = t->n_nodes;  // nodes from `made` on are new
  if (len == 1 && profile_node_locations(p, reps[0], &locs) == 1) {
    bool by_line = key == CALLTREE_BY_LINE;
    n = child(t, at, locs[0].function, by_line ? locs[0].file : NULL, by_line ? locs[0].line : 0, key_repeat, make);
    if (n < NO_NODE) touch(t, n, locs[0].file, locs[0].line, r);
  } else {
    n = child(t, at, composed_marker, NULL, run->unit, key_repeat, make);
    if (n < NO_NODE && t->nodes[n].code_name == 0 && !(t->nodes[n].code_name = unit_label(t, p, c, run->unit, key)))
      return NO_MEMORY;
  }
  if (n < NO_NODE && merge_counts) {
    CallTreeNode *pub = &t->nodes[n].pub;
    if (n >= made) pub->repeat = pub->repeat_max = run->count;
    if (run->count < pub->repeat) pub->repeat = run->count;
    if (run->count > pub->repeat_max) pub->repeat_max = run->count;
  }
  return n;
}

// A stack's value (contract 2).
static double stack_value(const Profile *p, ProfileStackId s, CallTreeValue value) {
  ProfileCounts c = profile_stack_counts(p, s);
  return (double)(value == CALLTREE_LIVE ? c.live_samples : c.samples) * profile_sample_bytes(p);
}

// Values go to each stack's leaf: its callers' runs, then its own frame
// plain (the allocating frame is never folded into its callers). A stack
// without value makes nothing (`make_all` aside); by function its leaf is
// still met (touch).
static void add_values(CallTree *t, const Profile *p, const uint32_t *run_of, const uint32_t *tree_of_run,
                       uint32_t n_runs, CallTreeValue value, CallTreeKey key, bool make_all, bool *ok) {
  for (ProfileStackId s = 0; s < profile_n_stacks(p) && *ok; s++) {
    double v = stack_value(p, s, value);
    bool make = make_all || v > 0;
    if (!make && !t->first_order) continue;
    ProfileNodeId stack_leaf = profile_stack_leaf(p, s);
    uint32_t leaf = 0;
    if (stack_leaf != 0) {
      leaf = expand(t, p, stack_leaf, tree_of_run[run_of[profile_node_parent(p, stack_leaf)]], key, make, n_runs + s);
      if (leaf == NO_MEMORY) {
        *ok = false;
        break;
      }
    }
    if (leaf != NO_NODE) t->nodes[leaf].pub.self += v;
  }
  for (uint32_t id = t->n_nodes; id-- > 1;) {
    Node *n = &t->nodes[id];
    n->pub.total += n->pub.self;
    t->nodes[n->parent].pub.total += n->pub.total;
  }
  t->nodes[0].pub.total += t->nodes[0].pub.self;
}

// needed[r]: run r is on the callers of a stack with a value (runs come
// after their parents: one backward sweep). Every run is, when a value is
// not finite (0 x inf is NaN: a stack without samples counts then).
static bool *needed_runs(const Profile *p, const Collapse *c, const uint32_t *run_of, uint32_t n_runs,
                         CallTreeValue value) {
  bool *needed = calloc(n_runs ? n_runs : 1, sizeof *needed);
  if (!needed) return NULL;
  bool all = !isfinite(profile_sample_bytes(p));
  for (ProfileStackId s = 0; s < profile_n_stacks(p); s++) {
    ProfileNodeId leaf = profile_stack_leaf(p, s);
    if (leaf != 0 && (all || stack_value(p, s, value) > 0)) needed[run_of[profile_node_parent(p, leaf)]] = true;
  }
  for (CollapseId r = n_runs; r-- > 1;)
    if (needed[r] || all) needed[r] = true, needed[collapse_run(c, r)->parent] = true;
  return needed;
}

static int compare_nodes(const void *a, const void *b, void *ctx) {
  const Node *nodes = ctx;
  const CallTreeNode *x = &nodes[*(const uint32_t *)a].pub, *y = &nodes[*(const uint32_t *)b].pub;
  int c = strcmp(x->function, y->function);
  if (c == 0) c = strcmp(x->file, y->file);
  if (c == 0) c = (x->line > y->line) - (x->line < y->line);
  if (c == 0) c = (x->repeat > y->repeat) - (x->repeat < y->repeat);
  return c;
}

// child_ids: each node's children, contiguous (node by node, in id order)
// and sorted; children_end first counts them, then their start, then (once
// filled) their end, which is the start of the next node's.
static uint32_t children_start(const CallTree *t, uint32_t id) { return id ? t->nodes[id - 1].children_end : 0; }

static bool link_children(CallTree *t) {
  t->child_ids = malloc(((size_t)t->n_nodes + 1) * sizeof *t->child_ids);
  if (!t->child_ids) return false;
  for (uint32_t id = 1; id < t->n_nodes; id++) t->nodes[t->nodes[id].parent].children_end++;
  uint32_t next = 0;
  for (uint32_t id = 0; id < t->n_nodes; id++) {
    uint32_t count = t->nodes[id].children_end;
    t->nodes[id].children_end = next;
    next += count;
  }
  for (uint32_t id = 1; id < t->n_nodes; id++) t->child_ids[t->nodes[t->nodes[id].parent].children_end++] = id;
  for (uint32_t id = 0; id < t->n_nodes; id++) {
    uint32_t start = children_start(t, id);
    qsort_r(t->child_ids + start, t->nodes[id].children_end - start, sizeof *t->child_ids, compare_nodes, t->nodes);
  }
  return true;
}

// Each trie node's path folded (run_of), each run's tree node (runs come
// after their parents), then the stacks' values.
static bool build(CallTree *t, const Profile *p, CallTreeKey key, CallTreeValue value, uint32_t max_period,
                  bool merge_counts) {
  uint32_t n = profile_n_nodes(p);
  uint32_t *run_of = malloc((size_t)(n ? n : 1) * sizeof *run_of);
  t->nodes = malloc(1024 * sizeof *t->nodes);
  if (!run_of || !t->nodes || !grow_table(t)) return free(run_of), false;
  t->cap_nodes = 1024;
  if (key == CALLTREE_BY_FUNCTION && !(t->first_order = malloc(1024 * sizeof *t->first_order)))
    return free(run_of), false;
  t->n_nodes = 1;
  t->nodes[0] = (Node){{"all", "", 0, 0, 0, 0, 1, 1, false}, 0, UINT32_MAX, 1, 0, 0};
  t->pool_len = 1;  // offset 0 means "no name"
  Collapse *c = collapse_new(max_period);
  run_of[0] = 0;
  for (ProfileNodeId id = 1; id < n; id++)
    run_of[id] = collapse_push(c, run_of[profile_node_parent(p, id)], frame_key(p, id, key), id);
  collapse_seal(c);
  uint32_t n_runs = collapse_size(c);
  uint32_t *tree_of_run = malloc((size_t)n_runs * sizeof *tree_of_run);
  bool ok = tree_of_run != NULL;
  if (ok) {
    // first trie node of each run (every run is some node's: collapse_push made it)
    for (CollapseId r = 0; r < n_runs; r++) tree_of_run[r] = UINT32_MAX;
    for (ProfileNodeId id = n; id-- > 1;) tree_of_run[run_of[id]] = id;
    tree_of_run[0] = 0;
  }
  // The needed runs' nodes made, then (when what a node shows depends on
  // every run merged into it) the others met without making any.
  bool *needed = ok ? needed_runs(p, c, run_of, n_runs, value) : NULL;
  ok = needed != NULL;
  bool replay = merge_counts || key == CALLTREE_BY_FUNCTION, all = !isfinite(profile_sample_bytes(p));
  for (CollapseId r = 1; r < n_runs && ok; r++) {
    if (!needed[r]) continue;
    tree_of_run[r] = expand_run(t, p, c, r, tree_of_run[r], tree_of_run[collapse_run(c, r)->parent], key, merge_counts, true);
    ok = tree_of_run[r] != NO_MEMORY;
  }
  for (CollapseId r = 1; r < n_runs && ok; r++) {
    if (needed[r]) continue;
    tree_of_run[r] = replay ? expand_run(t, p, c, r, tree_of_run[r], tree_of_run[collapse_run(c, r)->parent], key,
                                         merge_counts, false)
                            : NO_NODE;
    ok = tree_of_run[r] != NO_MEMORY;
  }
  free(needed);
  collapse_free(c);  // the stacks' leaves need only run_of and tree_of_run: its memory goes first
  if (ok) add_values(t, p, run_of, tree_of_run, n_runs, value, key, all, &ok);
  free(tree_of_run);
  free(run_of);
  return ok;
}

// Public depths count from the outermost frame; names of unlocated codes
// point into the finished pool.
static void finish_nodes(CallTree *t) {
  for (uint32_t id = 1; id < t->n_nodes; id++) {
    Node *n = &t->nodes[id];
    n->pub.depth--;
    if (!n->pub.function || n->pub.function == composed_marker) n->pub.function = t->pool + n->code_name, n->pub.file = "";
    if (!n->pub.file) n->pub.file = "";
  }
}

CallTree *calltree_build(const Profile *p, CallTreeKey key, CallTreeValue value, uint32_t max_period,
                         bool merge_counts) {
  CallTree *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->by_line = key == CALLTREE_BY_LINE;
  bool ok = build(t, p, key, value, max_period, merge_counts);
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
  free(t->first_order);
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
    uint32_t start = children_start(t, node_at[level]);
    if (next_at[level] == n->children_end - start) {
      if (level-- == 0) break;
      continue;
    }
    uint32_t c = t->child_ids[start + next_at[level]++];
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
