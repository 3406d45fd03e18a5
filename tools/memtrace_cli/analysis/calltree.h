// calltree.h - a profile's callstack trie (profile.h) seen as the tree a
// flame graph draws: each frame code expanded into its locations (inlined
// frames, caller first), sibling frames at the same place merged, and each
// node valued in estimated bytes. Used by `memtrace flamegraph`.
//
// Contract
// 1. A node is a frame: its location (function, file, line), or, for a code
//    with no location, the function "$CODE" (the code as memtrace prints it)
//    and file "". Siblings are merged when their function, file and line are
//    equal (CALLTREE_BY_LINE) or their function alone is (BY_FUNCTION; the
//    node keeps the first file and line met).
// 2. Values: a stack's samples × bytes per sample (word bytes / λ, headers
//    included), all of them (CALLTREE_ALLOCATED) or those of blocks still
//    live at the end of the trace (CALLTREE_LIVE). self is the value of the
//    stacks ending at the node, total that plus its children's totals.
// 3. Folded recursion (calltree_build's max_period): a run "frame ×n" is
//    one node of repeat n (siblings merge only with equal repeat), a run of a
//    cycle or of an inlined frame one composed node; both stand for all the
//    frames they fold, so depth and size follow the distinct frames.
// 4. Memory: a node (80 bytes) per merged frame of the stacks with a value
//    (the others' runs are looked up, never made: what the walk shows is the
//    same), at most the trie's nodes times the locations per code. Strings
//    point into the profile's reader (valid while it is open) or into the
//    tree.
#ifndef MINNOW_CALLTREE_H
#define MINNOW_CALLTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"

typedef enum CallTreeKey { CALLTREE_BY_LINE, CALLTREE_BY_FUNCTION } CallTreeKey;
typedef enum CallTreeValue { CALLTREE_ALLOCATED, CALLTREE_LIVE } CallTreeValue;

typedef struct CallTreeNode {
  const char *function, *file;
  uint32_t line;
  uint32_t depth;       // 0 for the outermost frames (the root, not a frame, has no node)
  double self, total;   // bytes (contract 2)
  uint32_t repeat;      // times the frame (or composed run) repeats: 1 for a plain frame
  uint32_t repeat_max;  // with merge_counts, the largest count merged (repeat the smallest); else repeat
  bool composed;        // `function` is a folded run's label "f (file:line) → g (file:line)"
                        // (file "", line 0); else a frame (repeat > 1: "f" recursing)
} CallTreeNode;

typedef struct CallTree CallTree;

// Builds the tree of `p` (after profile_finish). NULL when out of memory.
// Callers' recursion is folded (collapse.h, cycles up to max_period frames;
// 0: stacks whole, one node per frame); the allocating frame is always a
// node of its own, repeat 1. merge_counts: runs of one unit under one parent
// are one node whatever their counts (repeat .. repeat_max), as a flame
// graph wants them (one wide frame, not a sliver per depth reached).
CallTree *calltree_build(const Profile *p, CallTreeKey key, CallTreeValue value, uint32_t max_period,
                         bool merge_counts);
void calltree_free(CallTree *t);

// The sum of every stack's value (the root's total).
double calltree_total(const CallTree *t);

// The root: function "all", its self the value of allocations with an
// empty callstack.
const CallTreeNode *calltree_root(const CallTree *t);

// Called for each node of total > 0 in preorder, siblings in the order of
// their function names (then file, line). path[0 .. node->depth] are the
// node's ancestors and the node, outermost first. Returning false skips the
// node's descendants.
typedef bool (*CallTreeVisit)(void *ctx, const CallTreeNode *node, const CallTreeNode *const *path);

// Walks the tree (iteratively: depth is not limited by the C stack).
// Returns false when out of memory (the walk stopped).
bool calltree_walk(const CallTree *t, CallTreeVisit visit, void *ctx);

#endif
