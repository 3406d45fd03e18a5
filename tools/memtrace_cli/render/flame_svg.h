// flame_svg.h - renders a weighted call tree as a self-contained SVG flame
// graph (inline CSS and JavaScript, no external resource): the root at the
// bottom, callees above their callers, each frame as wide as its value.
// Hovering a frame shows its function, file:line, value and share of the
// total; clicking zooms into it; "Reset zoom" (or clicking the root) zooms
// out. Knows nothing of traces.
//
// Contract
// 1. Frames come in preorder: a frame after its parent, siblings left to
//    right, depth 0 for the outermost frames (the renderer draws the root,
//    "all", below them). A frame's value includes its descendants'; the
//    children of a frame sum to at most its value.
// 2. Frames narrower than min_width_px are left out (and so, by 1, are their
//    descendants); the frames kept are buffered until flame_svg_write, so
//    memory is bounded by the frames drawn, at most a few per pixel column
//    and depth.
// 3. Strings are copied; bytes that are not valid UTF-8 or are control
//    characters are drawn as '?', and XML's special characters escaped.
#ifndef MINNOW_FLAME_SVG_H
#define MINNOW_FLAME_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct FlameSvgOptions {
  const char *title;     // the top line ("Allocated bytes (estimated)")
  const char *subtitle;  // a second line (the trace, its rate), or NULL
  const char *unit;      // what a value counts, shown on hover ("bytes")
  double total;          // the root's value: a frame's width is value / total
  unsigned width_px;     // the image's width; 0 means 1200
  double min_width_px;   // narrower frames are left out; 0 means 0.1
  bool inline_html;      // for an HTML page: no XML declaration (the page's own
                         // ids must not be frames, reset, details, title, subtitle)
} FlameSvgOptions;

typedef struct FlameSvg FlameSvg;

// A renderer with a copy of `opt` (its strings copied too). Exits on out
// of memory (status 1, message on stderr), as every function here.
FlameSvg *flame_svg_new(const FlameSvgOptions *opt);

// Adds a frame (contract 1): `function` drawn on it, `where` ("file:line",
// or "" if unknown) shown on hover with the value. Returns whether it is
// drawn (false: narrower than min_width_px, so its descendants need not be
// passed, though they may be).
bool flame_svg_frame(FlameSvg *f, uint32_t depth, const char *function, const char *where, double value);

// Writes the whole SVG document to `out`. Returns 0, or -1 if writing
// failed (errno set by stdio).
int flame_svg_write(FlameSvg *f, FILE *out);

void flame_svg_free(FlameSvg *f);

#endif
