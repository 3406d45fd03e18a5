// flamegraph.c - `memtrace flamegraph FILE`: the trace's callstacks as
// folded stacks ("a;b;c BYTES", flamegraph.pl's input) or, with -o X.svg, a
// self-contained SVG flame graph (flame_svg.h), of the bytes allocated or
// still live at the end, estimated (calltree.h).
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/collapse.h"
#include "../analysis/flame_tree.h"
#include "../analysis/output.h"
#include "../analysis/stack_budget.h"
#include "../base/text.h"
#include "../base/xalloc.h"
#include "../cli/load.h"
#include "../cli/options.h"
#include "../cli/outfile.h"
#include "commands.h"

static const ToolUsage usage = {
    "flamegraph",
    "usage: memtrace flamegraph [OPTIONS] FILE\n"
    "Prints the callstacks of the trace FILE (\"-\": stdin) as folded stacks, one line\n"
    "per distinct callstack: its frames outermost first, separated by ';', each\n"
    "\"function (file:line)\", then a space and the estimated bytes allocated there\n"
    "(samples x word bytes / sampling rate, block headers included). Inlined frames\n"
    "are frames of their own; frames at the same place are merged. Allocations with\n"
    "no callstack are on a line \"(no backtrace) N\". Recursion is folded: callers\n"
    "repeating one frame show as one frame \"f (file:line) \u00d7N\", a repeated cycle of\n"
    "up to 4 frames as \"(f (file:line) \u2192 g (file:line)) \u00d7N\".\n"
    "  -o OUT          write to OUT instead of stdout; OUT ending in .svg gets an\n"
    "                  SVG flame graph (self-contained: hover for function, file,\n"
    "                  line and bytes; click a frame to zoom, \"Reset zoom\" to go back)\n"
    "  --live          bytes still live at the end of the trace instead of allocated\n"
    "  --functions     frames are functions: call sites in one function merged\n"
    "  --whole-stacks  callstacks whole: recursion not folded\n"
    "  --title TEXT    the SVG's title (--title, --width, --min-width: with -o X.svg)\n"
    "  --width PX      the SVG's width (default 1200; 100 to 100000)\n"
    "  --min-width PX  frames narrower than PX are left out of the SVG (default 0.1;\n"
    "                  0.001 to 1000)\n"
    "  --json          the stacks as JSON (schema: tools/memtrace_cli/README.md)\n"
    "  --max-frames N  folded and JSON stacks: at most N frames written in all\n"
    "                  (default 4194304; 0: no limit); the stacks past it are left\n"
    "                  out, summed on a last line \"(N stacks left out: --max-frames)\n"
    "                  BYTES\" (JSON: \"left_out\"), and said on stderr\n"
    "On a damaged or truncated trace: the stacks of the events before the damage\n"
    "(the SVG's subtitle says PARTIAL), then the error on stderr; exit status 1.\n",
};

typedef struct Options {
  const char *file, *out, *title;
  bool live, functions, json, whole_stacks;
  double width, min_width;
  uint32_t max_frames;
} Options;

// ---------------------------------------------------------------- options

static bool wants_svg(const Options *o) {
  size_t n = o->out ? strlen(o->out) : 0;
  return n > 4 && strcmp(o->out + n - 4, ".svg") == 0;
}

static int parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.width = -1, .min_width = -1, .max_frames = TOOL_MAX_FRAMES_UNSET};  // -1: not given
  const ToolOption options[] = {
      TOOL_OPTION_OUTPUT(&o->out),
      {"--live", NULL, &o->live, NULL, NULL, 0, 0},
      {"--functions", NULL, &o->functions, NULL, NULL, 0, 0},
      TOOL_OPTION_WHOLE_STACKS(&o->whole_stacks),
      TOOL_OPTION_JSON(&o->json),
      TOOL_OPTION_MAX_FRAMES(&o->max_frames),
      {"--title", "TEXT", &o->title, NULL, NULL, 0, 0},
      {"--width", "PX", &o->width, tool_parse_number, "a number from 100 to 100000", 100, 100000},
      {"--min-width", "PX", &o->min_width, tool_parse_number, "a number from 0.001 to 1000", 0.001, 1000},
  };
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 1, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  o->file = args.files[0];
  status = tool_max_frames(&usage, o->max_frames, !wants_svg(o), "folded stacks or --json, not -o X.svg");
  if (status != TOOL_CONTINUE) return status;
  const char *svg_only = o->title ? "--title" : o->width >= 0 ? "--width" : o->min_width >= 0 ? "--min-width" : NULL;
  if (svg_only && !wants_svg(o)) return tool_usage_error(&usage, "%s goes with -o X.svg", svg_only);
  if (o->json && wants_svg(o)) return tool_usage_error(&usage, "--json and -o X.svg exclude each other");
  if (o->width < 0) o->width = 1200;
  if (o->min_width < 0) o->min_width = 0.1;
  return TOOL_CONTINUE;
}

// ---------------------------------------------------------------- folded stacks

// Folded lines are built in one buffer: the text of the current path, with
// end_of[d] the length through its frame of depth d (a preorder walk only
// ever cuts it back to a parent's end), so a line costs one fwrite however
// deep (stacks of 10,000 frames make gigabytes of folded text).
typedef struct Folded {
  FILE *out;
  bool functions;
  char *line;
  size_t len, cap;
  size_t *end_of;
  uint32_t n_end;
} Folded;

static void append(Folded *f, const void *s, size_t n) {
  if (f->cap - f->len < n) f->line = xrealloc(f->line, f->cap = 2 * f->cap + n + 4096);
  memcpy(f->line + f->len, s, n);
  f->len += n;
}

// A name, cleaned (text.h) and without the ';' that separates frames; an
// empty one is '?' (a folded frame is never empty).
static void append_name(Folded *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s);
  if (!left) append(f, "?", 1);
  while (left) {
    size_t len = text_utf8_char(p, left);
    if (!len) append(f, "?", 1), len = 1;
    else if (*p == ';') append(f, ",", 1);
    else append(f, p, len);
    p += len;
    left -= len;
  }
}

// A frame "function (file:line)"; folded recursion: "function (file:line)
// ×N", or a composed run "(f (file:line) → g (file:line)) ×N".
static void append_frame(Folded *f, const CallTreeNode *n) {
  char text[32];
  if (n->composed) append(f, "(", 1);
  append_name(f, n->function);
  if (n->composed) append(f, ")", 1);
  else if (!f->functions && (*n->file || n->line)) {
    append(f, " (", 2);
    append_name(f, n->file);
    append(f, text, (size_t)snprintf(text, sizeof text, ":%u)", n->line));
  }
  if (n->repeat > 1 || n->composed) append(f, text, (size_t)snprintf(text, sizeof text, " \u00d7%u", n->repeat));
}

static bool visit_folded(void *ctx, const CallTreeNode *node, const CallTreeNode *const *path) {
  (void)path;
  Folded *f = ctx;
  f->len = node->depth ? f->end_of[node->depth - 1] : 0;
  if (node->depth) append(f, ";", 1);
  append_frame(f, node);
  if (node->depth >= f->n_end) f->end_of = xrealloc(f->end_of, (f->n_end = 2 * node->depth + 64) * sizeof *f->end_of);
  f->end_of[node->depth] = f->len;
  if (node->self > 0 && stack_budget_take(node->depth + 1, node->self)) {
    fwrite(f->line, 1, f->len, f->out);
    fprintf(f->out, " %.0f\n", node->self);
  }
  return true;
}

// ---------------------------------------------------------------- JSON

static bool visit_json(void *ctx, const CallTreeNode *node, const CallTreeNode *const *path) {
  Json *j = ctx;
  if (!(node->self > 0) || !stack_budget_take(node->depth + 1, node->self)) return true;
  json_object(j, NULL);
  json_array(j, "frames");
  for (uint32_t d = 0; d <= node->depth; d++) {
    json_object(j, NULL);
    json_string(j, "function", path[d]->function);
    json_string(j, "file", path[d]->file);
    json_uint(j, "line", path[d]->line);
    if (path[d]->repeat > 1 || path[d]->composed) json_uint(j, "repeat", path[d]->repeat);
    json_end_object(j);
  }
  json_end_array(j);
  json_number(j, "bytes", node->self);
  json_end_object(j);
  return true;
}

// The stacks of the folded text as one document: "stacks": [{"frames":
// [outermost first], "bytes"}], an empty callstack as "frames": []; then
// "left_out": null, or the stacks past --max-frames {"stacks", "frames",
// "bytes"} (stack_budget.h).
static int write_json(const Options *o, const Loaded *l, const CallTree *t, FILE *out) {
  Json j;
  load_json_begin(&j, out, "flamegraph", l);
  json_string(&j, "metric", o->live ? "live" : "allocated");
  json_string(&j, "frames_by", o->functions ? "function" : "line");
  json_number(&j, "total_bytes", calltree_total(t));
  json_array(&j, "stacks");
  if (calltree_root(t)->self > 0) {
    json_object(&j, NULL);
    json_array(&j, "frames");
    json_end_array(&j);
    json_number(&j, "bytes", calltree_root(t)->self);
    json_end_object(&j);
  }
  bool ok = calltree_walk(t, visit_json, &j);
  json_end_array(&j);
  StackBudgetLeft left = stack_budget_left();
  if (left.stacks) {
    json_object(&j, "left_out");
    json_uint(&j, "stacks", left.stacks);
    json_uint(&j, "frames", left.entries);
    json_number(&j, "bytes", left.value);
    json_end_object(&j);
  } else {
    json_null(&j, "left_out");
  }
  json_end_object(&j);
  json_finish(&j);
  return ok ? 0 : -1;
}

// ---------------------------------------------------------------- SVG

static void svg_subtitle(char *buf, size_t size, const Options *o, const Loaded *l) {
  const Profile *p = l->profile;
  const ProfileSummary *s = profile_summary(p);
  int n = snprintf(buf, size, "%s: %s, estimated from %llu samples (rate %g, %u-byte words)", o->file,
                   o->live ? "live at the end of the trace" : "allocated", (unsigned long long)
                   (o->live ? profile_totals(p)->live_samples : profile_totals(p)->samples), profile_rate(p),
                   profile_word_bytes(p));
  if (l->partial && n > 0 && (size_t)n < size)
    snprintf(buf + n, size - (size_t)n, " - PARTIAL: the trace is damaged after %llu events",
             (unsigned long long)(s->allocs + s->promotes + s->collects));
}

static int write_svg(const Options *o, const Loaded *l, const CallTree *t, FILE *out) {
  char subtitle[1024];
  svg_subtitle(subtitle, sizeof subtitle, o, l);
  const char *title = o->title ? o->title : o->live ? "Live bytes at the end (estimated)" : "Allocated bytes (estimated)";
  FlameSvgOptions fo = {title, subtitle, "bytes", calltree_total(t), (unsigned)o->width, o->min_width, false};
  return flame_tree_svg(t, &fo, o->functions, out);
}

// ---------------------------------------------------------------- command

static int render(const Options *o, const Loaded *l, const CallTree *t) {
  FILE *out = stdout;
  const char *name = o->out && strcmp(o->out, "-") != 0 ? outfile_begin(usage.name, o->out) : NULL;
  if (o->out && strcmp(o->out, "-") != 0 && (!name || !(out = outfile_stream(name)))) {
    if (name) fprintf(stderr, "memtrace flamegraph: cannot create %s: %s\n", o->out, strerror(errno));
    outfile_discard();
    return 1;
  }
  int status = 0;
  if (wants_svg(o)) status = write_svg(o, l, t, out);
  else if (o->json) status = write_json(o, l, t, out);
  else {
    Folded f = {out, o->functions, NULL, 0, 0, NULL, 0};
    status = calltree_walk(t, visit_folded, &f) ? 0 : -1;
    free(f.line);
    free(f.end_of);
    if (calltree_root(t)->self > 0) fprintf(out, "(no backtrace) %.0f\n", calltree_root(t)->self);
    StackBudgetLeft left = stack_budget_left();
    if (left.stacks)
      fprintf(out, "(%llu stacks left out: --max-frames) %.0f\n", (unsigned long long)left.stacks, left.value);
  }
  if (!wants_svg(o)) stack_budget_note(usage.name, calltree_total(t));
  if (out != stdout && fclose(out) != 0) status = -1;
  if (status) fprintf(stderr, "memtrace flamegraph: error writing %s\n", o->out ? o->out : "the output"), outfile_discard();
  return status ? 1 : 0;
}

int cmd_flamegraph(int argc, char **argv) {
  Options o;
  int status = parse_options(argc, argv, &o);
  if (status != TOOL_CONTINUE) return status;
  ProfileOptions popts = {.allocations_only = !o.live};  // allocated bytes: no live table (profile.h)
  Loaded l;
  if (load_trace(&usage, o.file, &popts, NULL, &l) != 0) return 1;
  CallTree *t = calltree_build(l.profile, o.functions ? CALLTREE_BY_FUNCTION : CALLTREE_BY_LINE,
                               o.live ? CALLTREE_LIVE : CALLTREE_ALLOCATED,
                               o.whole_stacks ? 0 : COLLAPSE_MAX_PERIOD, wants_svg(&o));
  if (!t) {
    fprintf(stderr, "memtrace flamegraph: %s: out of memory\n", o.file);
    load_close(&l);
    return 1;
  }
  status = render(&o, &l, t);
  calltree_free(t);
  int trace_status = load_status(&usage, &l);
  load_close(&l);
  return status ? status : trace_status;
}
