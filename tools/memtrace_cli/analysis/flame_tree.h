// flame_tree.h - a profile's call tree (calltree.h) drawn as an SVG flame
// graph (flame_svg.h): each node a frame of its total value, on hover its
// "file:line" (or the file alone when the tree merges by function). Used by
// `memtrace flamegraph -o X.svg` and `memtrace report`.
#ifndef MINNOW_MEMTRACE_FLAME_TREE_H
#define MINNOW_MEMTRACE_FLAME_TREE_H

#include <stdbool.h>
#include <stdio.h>

#include "../render/flame_svg.h"
#include "calltree.h"

// The SVG's size follows the frames drawn, which a trace of 1 MB can make
// millions (deep stacks sharing no prefix): frames deeper than
// FLAME_TREE_MAX_DEPTH levels, and past the first FLAME_TREE_MAX_FRAMES drawn
// (preorder), are left out, and a line on stderr says how many.
enum { FLAME_TREE_MAX_DEPTH = 1024, FLAME_TREE_MAX_FRAMES = 1u << 18 };

// Writes the SVG to `out`: 0, or -1 when out of memory or writing failed.
// by_function: the tree was built with CALLTREE_BY_FUNCTION.
int flame_tree_svg(const CallTree *t, const FlameSvgOptions *opt, bool by_function, FILE *out);

#endif
