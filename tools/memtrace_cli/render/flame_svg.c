// flame_svg.c - SVG flame graphs (flame_svg.h). Layout: level 0 (the root,
// "all") is the bottom row, a frame of depth d is on level d + 1; x and
// width are kept as fractions of the total, the page's script scales them to
// pixels when it zooms. The document: style, title lines, "Reset zoom",
// the frames (one <g class="f"> each, with data-x, data-w, data-l and a
// <title> "function\nwhere\nvalue"), the details line, then the script,
// last, so that it runs once the frames exist.
#include "flame_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/text.h"
#include "../base/xalloc.h"

enum {
  FRAME_HEIGHT = 16,     // px per level, 1 px of it a gap
  TOP_MARGIN = 60,       // title, subtitle and "Reset zoom" above the frames
  BOTTOM_MARGIN = 32,    // the details line below them
  SIDE_MARGIN = 10,
};
static const double CHAR_WIDTH = 7.2;  // px of a 12 px monospace character (0.6 em)

typedef struct Frame {
  uint32_t level;
  double x, value;          // x: sum of the values left of it on its level, so x / total is its place
  size_t function, where;   // offsets of NUL-terminated strings in the pool
} Frame;

struct FlameSvg {
  FlameSvgOptions opt;      // strings point into `pool` (title, subtitle, unit)
  size_t title, subtitle, unit;
  double *cursor;           // cursor[l]: where the next frame of level l starts
  uint32_t n_cursor;        // levels the cursor array holds
  uint32_t last_level;      // the previous frame's level (0 before any)
  uint32_t max_level;
  Frame *frames;
  size_t n_frames, cap_frames;
  char *pool;
  size_t pool_len, pool_cap;
};

static size_t pool_add(FlameSvg *f, const char *s) {
  size_t n = strlen(s) + 1, at = f->pool_len;
  if (f->pool_cap - f->pool_len < n) {
    f->pool_cap = 2 * f->pool_cap + n + 4096;
    f->pool = xrealloc(f->pool, f->pool_cap);
  }
  memcpy(f->pool + at, s, n);
  f->pool_len += n;
  return at;
}

static const char *pool_str(const FlameSvg *f, size_t at) { return f->pool + at; }

// ---------------------------------------------------------------- building

FlameSvg *flame_svg_new(const FlameSvgOptions *opt) {
  FlameSvg *f = xrealloc(NULL, sizeof *f);
  memset(f, 0, sizeof *f);
  f->opt = *opt;
  if (!f->opt.width_px) f->opt.width_px = 1200;
  if (f->opt.width_px < 4 * SIDE_MARGIN) f->opt.width_px = 4 * SIDE_MARGIN;
  if (!(f->opt.min_width_px > 0)) f->opt.min_width_px = 0.1;
  f->title = pool_add(f, opt->title ? opt->title : "");
  f->subtitle = pool_add(f, opt->subtitle ? opt->subtitle : "");
  f->unit = pool_add(f, opt->unit ? opt->unit : "");
  f->n_cursor = 64;
  f->cursor = xrealloc(NULL, f->n_cursor * sizeof *f->cursor);
  memset(f->cursor, 0, f->n_cursor * sizeof *f->cursor);
  return f;
}

static double frames_width(const FlameSvg *f) { return f->opt.width_px - 2.0 * SIDE_MARGIN; }

bool flame_svg_frame(FlameSvg *f, uint32_t depth, const char *function, const char *where, double value) {
  uint32_t level = depth + 1;
  if (level > f->last_level + 1) level = f->last_level + 1;  // out of preorder: hang it on the last frame
  if (level + 1 >= f->n_cursor) {
    uint32_t n = 2 * (level + 1);
    f->cursor = xrealloc(f->cursor, n * sizeof *f->cursor);
    memset(f->cursor + f->n_cursor, 0, (n - f->n_cursor) * sizeof *f->cursor);
    f->n_cursor = n;
  }
  double x = f->cursor[level];
  f->cursor[level] = x + value;
  f->cursor[level + 1] = x;
  f->last_level = level;
  double total = f->opt.total > 0 ? f->opt.total : 1;
  if (!(value / total * frames_width(f) >= f->opt.min_width_px)) return false;
  if (f->n_frames == f->cap_frames) {
    f->cap_frames = 2 * f->cap_frames + 1024;
    f->frames = xrealloc(f->frames, f->cap_frames * sizeof *f->frames);
  }
  size_t fn = pool_add(f, function), wh = pool_add(f, where);
  f->frames[f->n_frames++] = (Frame){level, x, value, fn, wh};
  if (level > f->max_level) f->max_level = level;
  return true;
}

void flame_svg_free(FlameSvg *f) {
  if (!f) return;
  free(f->cursor);
  free(f->frames);
  free(f->pool);
  free(f);
}

// ---------------------------------------------------------------- text

// Characters in s, counting each invalid byte as one (as put_xml draws it).
static size_t xml_chars(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s), chars = 0;
  while (left) {
    size_t len = text_utf8_char(p, left);
    if (!len) len = 1;
    p += len;
    left -= len;
    chars++;
  }
  return chars;
}

// The function name as it fits in width_px: whole, cut with "..", or none.
static void put_fitted(FILE *out, const char *name, double width_px) {
  double room = floor((width_px - 6) / CHAR_WIDTH);
  if (room < 3) return;
  size_t chars = xml_chars(name);
  if ((double)chars <= room) {
    text_put_xml(out, name, SIZE_MAX);
    return;
  }
  text_put_xml(out, name, (size_t)room - 2);
  fputs("..", out);
}

// A value and its share: "1.50 MiB (1,572,864 bytes), 12.50%" when the
// unit is bytes, else "1572864 UNIT, 12.50%".
static void put_value(FILE *out, const FlameSvg *f, double value) {
  double share = f->opt.total > 0 ? 100 * value / f->opt.total : 0;
  const char *unit = pool_str(f, f->unit);
  if (strcmp(unit, "bytes") != 0) {
    fprintf(out, "%.0f ", value);
    text_put_xml(out, unit, SIZE_MAX);
    fprintf(out, ", %.2f%%", share);
    return;
  }
  static const char *const prefixes[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double scaled = value;
  size_t p = 0;
  while (scaled >= 1024 && p + 1 < sizeof prefixes / sizeof prefixes[0]) scaled /= 1024, p++;
  char digits[64], grouped[96];
  int n = snprintf(digits, sizeof digits, "%.0f", value), g = 0;
  for (int i = 0; i < n; i++) {
    if (i > 0 && (n - i) % 3 == 0) grouped[g++] = ',';
    grouped[g++] = digits[i];
  }
  grouped[g] = 0;
  if (p == 0) fprintf(out, "%s bytes, %.2f%%", grouped, share);
  else fprintf(out, "%.2f %s (%s bytes), %.2f%%", scaled, prefixes[p], grouped, share);
}

// ---------------------------------------------------------------- writing

// A warm colour from the function's name: the same name, the same colour.
static void put_fill(FILE *out, const char *name) {
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
  unsigned r = 200 + (h & 0x37), g = 70 + ((h >> 8) % 150), b = 30 + ((h >> 16) % 40);
  fprintf(out, "rgb(%u,%u,%u)", r, g, b);
}

static const char STYLE[] =
    "<style>\n"
    "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
    "#title { font-size: 17px; }\n"
    "#subtitle, #details { fill: #333; }\n"
    ".f { cursor: pointer; }\n"
    ".f text { pointer-events: none; }\n"
    ".f:hover rect { stroke: #000; stroke-width: 0.8; }\n"
    ".anc rect { opacity: 0.55; }\n"
    "#reset { cursor: pointer; fill: #1a4fb5; visibility: hidden; }\n"
    "</style>\n";

// The page's script (no "]]>" inside). fg_zoom(null) shows everything;
// fg_zoom(frame) stretches `frame` to the full width, draws its descendants
// in proportion, its ancestors full width and faded, and hides the rest.
static const char SCRIPT[] =
    "<script><![CDATA[\n"
    "'use strict';\n"
    "var fg_frames = [], fg_width = 0, fg_zoomed = null;\n"
    "function fg_fit(name, px) {\n"
    "  var room = Math.floor((px - 6) / 7.2);\n"
    "  if (room < 3) return '';\n"
    "  var chars = Array.from(name);\n"
    "  return chars.length <= room ? name : chars.slice(0, room - 2).join('') + '..';\n"
    "}\n"
    "function fg_zoom(f) {\n"
    "  var x0 = f ? f.x : 0, w0 = f ? f.w : 1, l0 = f ? f.l : 0, eps = 1e-9 * w0;\n"
    "  for (var i = 0; i < fg_frames.length; i++) {\n"
    "    var fr = fg_frames[i];\n"
    "    var anc = fr.l < l0 && fr.x <= x0 + eps && fr.x + fr.w >= x0 + w0 - eps;\n"
    "    var inside = fr.l >= l0 && fr.x >= x0 - eps && fr.x + fr.w <= x0 + w0 + eps;\n"
    "    if (!anc && !inside) { fr.g.style.display = 'none'; continue; }\n"
    "    fr.g.style.display = '';\n"
    "    var px = anc ? 0 : (fr.x - x0) / w0 * fg_width, pw = anc ? fg_width : fr.w / w0 * fg_width;\n"
    "    fr.rect.setAttribute('x', px.toFixed(2));\n"
    "    fr.rect.setAttribute('width', Math.max(pw - 0.5, 0.1).toFixed(2));\n"
    "    fr.text.setAttribute('x', (px + 3).toFixed(2));\n"
    "    fr.text.textContent = fg_fit(fr.name, pw);\n"
    "    fr.g.setAttribute('class', anc ? 'f anc' : 'f');\n"
    "  }\n"
    "  fg_zoomed = f && f.l > 0 ? f : null;\n"
    "  document.getElementById('reset').style.visibility = fg_zoomed ? 'visible' : 'hidden';\n"
    "}\n"
    "function fg_details(text) { document.getElementById('details').textContent = text; }\n"
    "function fg_add(g) {\n"
    "  var lines = g.getElementsByTagName('title')[0].textContent.split('\\n');\n"
    "  var f = { g: g, x: +g.getAttribute('data-x'), w: +g.getAttribute('data-w'), l: +g.getAttribute('data-l'),\n"
    "            name: lines[0], info: lines.filter(function (s) { return s; }).join('   '),\n"
    "            rect: g.getElementsByTagName('rect')[0], text: g.getElementsByTagName('text')[0] };\n"
    "  g.addEventListener('click', function () { fg_zoom(f.l > 0 ? f : null); });\n"
    "  g.addEventListener('mouseover', function () { fg_details(f.info); });\n"
    "  g.addEventListener('mouseout', function () { fg_details(' '); });\n"
    "  fg_frames.push(f);\n"
    "}\n"
    "function fg_init() {\n"
    "  var area = document.getElementById('frames');\n"
    "  fg_width = +area.getAttribute('data-width');\n"
    "  var gs = area.getElementsByTagName('g');\n"
    "  for (var i = 0; i < gs.length; i++) fg_add(gs[i]);\n"
    "  document.getElementById('reset').addEventListener('click', function () { fg_zoom(null); });\n"
    "}\n"
    "fg_init();\n"
    "]]></script>\n";

static void put_frame(FILE *out, const FlameSvg *f, const Frame *fr, double bottom_y) {
  double total = f->opt.total > 0 ? f->opt.total : 1, width = frames_width(f);
  double px = fr->x / total * width, pw = fr->value / total * width;
  double y = bottom_y - (double)fr->level * FRAME_HEIGHT;
  const char *name = pool_str(f, fr->function), *where = pool_str(f, fr->where);
  fprintf(out, "<g class=\"f\" data-x=\"%.12g\" data-w=\"%.12g\" data-l=\"%u\"><title>", fr->x / total,
          fr->value / total, fr->level);
  text_put_xml(out, name, SIZE_MAX);
  fputs("\n", out);
  text_put_xml(out, where, SIZE_MAX);
  fputs("\n", out);
  put_value(out, f, fr->value);
  fprintf(out, "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"", px, y,
          pw - 0.5 > 0.1 ? pw - 0.5 : 0.1, FRAME_HEIGHT - 1);
  put_fill(out, name);
  fprintf(out, "\"/><text x=\"%.2f\" y=\"%.0f\">", px + 3, y + FRAME_HEIGHT - 4);
  put_fitted(out, name, pw);
  fputs("</text></g>\n", out);
}

static void put_header(FILE *out, const FlameSvg *f, unsigned height) {
  unsigned width = f->opt.width_px;
  if (!f->opt.inline_html) fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
  fprintf(out,
          "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
          "viewBox=\"0 0 %u %u\">\n",
          width, height, width, height);
  fputs(STYLE, out);
  fprintf(out, "<rect width=\"%u\" height=\"%u\" fill=\"#f6f6f2\"/>\n", width, height);
  fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\" text-anchor=\"middle\">", width / 2);
  text_put_xml(out, pool_str(f, f->title), SIZE_MAX);
  fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"42\" text-anchor=\"middle\">", width / 2);
  text_put_xml(out, pool_str(f, f->subtitle), SIZE_MAX);
  fprintf(out, "</text>\n<text id=\"reset\" x=\"%d\" y=\"24\">Reset zoom</text>\n", SIDE_MARGIN);
}

int flame_svg_write(FlameSvg *f, FILE *out) {
  unsigned levels = f->max_level + 1;
  unsigned height = TOP_MARGIN + levels * FRAME_HEIGHT + BOTTOM_MARGIN;
  double bottom_y = (double)(TOP_MARGIN + (levels - 1) * FRAME_HEIGHT);
  put_header(out, f, height);
  fprintf(out, "<g id=\"frames\" transform=\"translate(%d,0)\" data-width=\"%.2f\">\n", SIDE_MARGIN, frames_width(f));
  size_t root_fn = pool_add(f, "all"), root_where = pool_add(f, "");
  Frame root = {0, 0, f->opt.total, root_fn, root_where};
  put_frame(out, f, &root, bottom_y);
  for (size_t i = 0; i < f->n_frames; i++) put_frame(out, f, &f->frames[i], bottom_y);
  fprintf(out, "</g>\n<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", SIDE_MARGIN, height - 12);
  fputs(SCRIPT, out);
  fputs("</svg>\n", out);
  return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
