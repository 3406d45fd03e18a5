// flame_tree.c - a call tree as an SVG flame graph (flame_tree.h).
#include "flame_tree.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct Svg {
  FlameSvg *svg;
  bool by_function;
  char where[4096];
} Svg;

static bool visit(void *ctx, const CallTreeNode *node, const CallTreeNode *const *path) {
  (void)path;
  Svg *s = ctx;
  if (!*node->file) s->where[0] = 0;
  else if (s->by_function) snprintf(s->where, sizeof s->where, "%s", node->file);
  else snprintf(s->where, sizeof s->where, "%s:%u", node->file, node->line);
  if (node->repeat == 1 && !node->composed) return flame_svg_frame(s->svg, node->depth, node->function, s->where, node->total);
  // Folded recursion: one frame labelled with its count.
  char *label = NULL;
  int n = node->repeat == node->repeat_max
              ? asprintf(&label, node->composed ? "(%s) \u00d7%u" : "%s \u00d7%u", node->function, node->repeat)
              : asprintf(&label, node->composed ? "(%s) \u00d7%u-%u" : "%s \u00d7%u-%u", node->function, node->repeat,
                         node->repeat_max);
  if (n < 0) return false;
  bool drawn = flame_svg_frame(s->svg, node->depth, label, s->where, node->total);
  free(label);
  return drawn;
}

int flame_tree_svg(const CallTree *t, const FlameSvgOptions *opt, bool by_function, FILE *out) {
  Svg s = {flame_svg_new(opt), by_function, ""};
  bool ok = calltree_walk(t, visit, &s);
  int status = ok && flame_svg_write(s.svg, out) == 0 ? 0 : -1;
  flame_svg_free(s.svg);
  return status;
}
