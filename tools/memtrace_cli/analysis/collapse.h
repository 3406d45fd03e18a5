// collapse.h - callstacks with their recursion folded: a stack, outermost
// frame first, becomes a sequence of runs, each a unit of 1 to
// COLLAPSE_MAX_PERIOD frames repeated `count` times ("f ×99998", "(f → g)
// ×500"). Every place the tools show a stack (flame graphs folded, SVG and
// JSON, pprof and merge, top --by stack, leaks, the report) goes through it,
// so the size of what they print follows the distinct frames, not the depth.
//
// The rule (deterministic, applied frame by frame from the outermost, so a
// stack's form depends only on its frames and a prefix's form is computed
// once and shared by every stack extending it):
//   push frame k onto runs R:
//   1. the last run is the unit [k]: its count grows by one; else append the
//      run [k]x1;
//   2. then, for p = 2 .. max_period, the first that applies to the last
//      runs that hold exactly p (or 2p) frames, whatever their units and
//      counts (so a cycle in which a frame repeats, f g g f g g, folds as one):
//      a. those p frames are the unit of the run before them: that run's
//         count grows by one and the runs go;
//      b. those 2p frames read x x, x primitive (not itself a repetition:
//         g g is g x2): they become the run (x)x2.
// Each push looks at the last 2 * max_period frames at most: work per push
// is bounded, whatever the depth (tests/unit/test_tool_collapse.c). The
// default max_period, 64, folds the cycles recursion makes in practice: a
// function calling itself, mutual recursion of up to 64 functions, an outer
// cycle with inner repetitions (f g g h g g, period 6); a cycle of 65 frames
// or more stays whole.
// max_period 0 folds nothing: every run is one frame counted once, the
// stack whole (the tools' --whole-stacks).
//
// Frames are compared by a 64-bit key the caller computes (a flame graph by
// line compares function, file and line; by function the function alone);
// each frame also carries a `rep` (e.g. the profile trie node it came from),
// which a unit keeps from its first occurrence: equal keys must display alike.
//
// Contract
// 1. Runs are hash-consed: a CollapseId names one sequence of runs (id 0 the
//    empty one), and a run's parent (the sequence without its last run) has a
//    smaller id. Units are interned: equal key sequences, one unit id.
// 2. Work per push: O(max_period) (collapse_steps counts it): the last runs
//    holding at most 2 * max_period frames are read once and hashed; each
//    candidate fold (one per period: a for the boundary p frames from the
//    end, b for the one 2p) is then tested in O(1) by comparing polynomial
//    hashes, and confirmed by comparing its keys (O(p), once: a collision
//    costs a comparison, never a wrong fold); at most 3 hash lookups;
//    memory: O(runs made + frames of the units).
// 3. Out of memory exits (xalloc.h).
#ifndef MINNOW_MEMTRACE_COLLAPSE_H
#define MINNOW_MEMTRACE_COLLAPSE_H

#include <stdbool.h>
#include <stdint.h>

enum { COLLAPSE_MAX_PERIOD = 64 };  // the longest cycle folded by default

typedef uint32_t CollapseId;       // 0: the empty stack

typedef struct CollapseRun {
  CollapseId parent;    // the runs before this one
  uint32_t unit;        // collapse_unit's argument
  uint32_t count;       // times the unit repeats (>= 1)
  uint32_t runs;        // runs from the outermost through this one
} CollapseRun;

typedef struct Collapse Collapse;

// max_period: 0 (fold nothing) to COLLAPSE_MAX_PERIOD.
Collapse *collapse_new(uint32_t max_period);
void collapse_free(Collapse *c);

// The runs of `at`'s frames then frame (key, rep).
CollapseId collapse_push(Collapse *c, CollapseId at, uint64_t key, uint32_t rep);

// No more pushes: the interning tables go (a run table slot is 8 bytes a
// run: 34 MB for the deepest recursion's 2.7 M runs); runs and units stay
// readable. collapse_push after it is a programming error (it aborts).
void collapse_seal(Collapse *c);

// The last run of `id` (not 0).
const CollapseRun *collapse_run(const Collapse *c, CollapseId id);
// Runs made so far: ids are 1 .. collapse_size - 1.
uint32_t collapse_size(const Collapse *c);
// Work done so far: frames read from the tails and keys compared (contract
// 2 bounds it per push; tests check it).
uint64_t collapse_steps(const Collapse *c);

// The frames of a unit, outermost first: their reps in *reps; returns how
// many (the period, 1 .. max_period).
uint32_t collapse_unit(const Collapse *c, uint32_t unit, const uint32_t **reps);

// Whether a run is a plain frame (a unit of one frame, counted once).
bool collapse_plain(const Collapse *c, CollapseId id);

#endif
