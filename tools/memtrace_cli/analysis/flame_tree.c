// flame_tree.c - a call tree as an SVG flame graph (flame_tree.h).
#include "flame_tree.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct Svg {
  FlameSvg *svg;
  bool by_function;
  uint64_t drawn, cut_deep, cut_many;  // cut_*: subtrees left out by a limit (flame_tree.h)
  char where[4096];
} Svg;

static bool visit(void *ctx, const CallTreeNode *node, const CallTreeNode *const *path) {
  (void)path;
  Svg *s = ctx;
  if (node->depth >= FLAME_TREE_MAX_DEPTH) return s->cut_deep++, false;
  if (s->drawn >= FLAME_TREE_MAX_FRAMES) return s->cut_many++, false;
  if (!*node->file) s->where[0] = 0;
  else if (s->by_function) snprintf(s->where, sizeof s->where, "%s", node->file);
  else snprintf(s->where, sizeof s->where, "%s:%u", node->file, node->line);
  if (node->repeat == 1 && !node->composed) {
    bool drawn = flame_svg_frame(s->svg, node->depth, node->function, s->where, node->total);
    s->drawn += drawn;
    return drawn;
  }
  // Folded recursion: one frame labelled with its count.
  char *label = NULL;
  int n = node->repeat == node->repeat_max
              ? asprintf(&label, node->composed ? "(%s) \u00d7%u" : "%s \u00d7%u", node->function, node->repeat)
              : asprintf(&label, node->composed ? "(%s) \u00d7%u-%u" : "%s \u00d7%u-%u", node->function, node->repeat,
                         node->repeat_max);
  if (n < 0) return false;
  bool drawn = flame_svg_frame(s->svg, node->depth, label, s->where, node->total);
  s->drawn += drawn;
  free(label);
  return drawn;
}

int flame_tree_svg(const CallTree *t, const FlameSvgOptions *opt, bool by_function, FILE *out) {
  Svg s = {flame_svg_new(opt), by_function, 0, 0, 0, ""};
  bool ok = calltree_walk(t, visit, &s);
  if (s.cut_deep || s.cut_many)
    fprintf(stderr, "memtrace: the flame graph leaves out %llu subtrees deeper than %u levels and %llu past its "
            "%u frames\n", (unsigned long long)s.cut_deep, (unsigned)FLAME_TREE_MAX_DEPTH,
            (unsigned long long)s.cut_many, (unsigned)FLAME_TREE_MAX_FRAMES);
  int status = ok && flame_svg_write(s.svg, out) == 0 ? 0 : -1;
  flame_svg_free(s.svg);
  return status;
}
