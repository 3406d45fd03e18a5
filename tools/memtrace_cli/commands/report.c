// report.c - `memtrace report FILE -o OUT.html`: one static, self-contained
// HTML page of a trace (its CSS, SVGs and the flame graph's script inline;
// nothing fetched, no server): a summary, the top allocation sites, the live
// heap over time, a flame graph, lifetimes per site and what the end state
// keeps ("Kept by": holders, their paths, the sites under them, leaks first).
//
// One read builds one profile with lifetimes while live_series.h records
// the live heap and end_state.h gathers the survivors for the end state; each section then calls the module
// its command uses: ranking.h (top), live_series.h and svg_chart.h
// (timeline; drawn by the tool itself, so the page is the same whether
// gnuplot is installed or not), calltree.h and flame_tree.h (flamegraph),
// lifetime_rows.h (lifetimes), kept.h (leaks). Paths from the end state are
// written through text_put_xml too.
//
// Every string from the trace (names of functions and files, the executable,
// host, runtime parameters, context) is written through text_put_xml: a
// trace is untrusted input, and nothing in it can open markup or a script.
// A partial trace gives the whole page for the events before the damage,
// under a banner naming the reader's message (and so the byte offset); the
// message follows on stderr and the exit status is 1.
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/calltree.h"
#include "../analysis/flame_tree.h"
#include "../analysis/kept.h"
#include "../analysis/lifetime_rows.h"
#include "../analysis/live_series.h"
#include "../analysis/output.h"
#include "../analysis/ranking.h"
#include "../analysis/retain_text.h"
#include "../base/text.h"
#include "../base/xalloc.h"
#include "../cli/kept_load.h"
#include "../cli/load.h"
#include "../cli/options.h"
#include "../cli/outfile.h"
#include "../render/svg_chart.h"
#include "commands.h"

static const ToolUsage usage = {
    "report",
    "usage: memtrace report [OPTIONS] FILE\n"
    "Writes one self-contained HTML page about the trace FILE (\"-\": stdin): a\n"
    "summary (program, duration, sampling rate, samples, estimated bytes allocated,\n"
    "live at the end and at the peak, with 95 % intervals), the top allocation sites,\n"
    "the estimated live heap over time (top sites stacked, drawn as inline SVG), a\n"
    "flame graph of the bytes allocated (click a frame to zoom), lifetimes per site\n"
    "and what the snapshots keep (\"Kept by\": the holders of the blocks alive at\n"
    "the end state, else the last snapshot, their paths, the sites under them, the\n"
    "bytes kept; leaks first, as memtrace leaks judges them; with three snapshots or\n"
    "more, the leading holders' kept bytes at each, the snapshots ticked on the live\n"
    "heap chart too). Everything is inline: it opens from a file in any browser,\n"
    "offline.\n"
    "  -o OUT      write the page to OUT (default: stdout)\n"
    "  -n N        rows of the sites and lifetimes tables (default 20; 0: all)\n"
    "  --whole-stacks  callstacks and the flame graph whole (default: recursion folded)\n"
    "  --top N     sites of their own in the live heap chart (default 8)\n"
    "  --title T   the page's heading (default: the traced program)\n"
    "  --retain F  the snapshot file (default: FILE.retain)\n"
    "On a damaged or truncated trace: the page of the events before the damage,\n"
    "under a PARTIAL banner naming the byte offset, the error on stderr; exit status 1.\n",
};

typedef struct Options {
  const char *file, *out, *title, *retain;
  uint32_t rows, top;
  bool whole_stacks;
} Options;

// What the sections share.
typedef struct Page {
  FILE *out;
  const Options *o;
  const Loaded *l;
  const Profile *p;
  const LiveSeries *series;
  const Snapshots *snaps;
  const KeptAnalysis *kept;   // the default snapshot's, for the answer and Kept by
} Page;

// ---------------------------------------------------------------- options

static int parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.rows = 20, .top = 8};
  const ToolOption options[] = {
      TOOL_OPTION_OUTPUT(&o->out),
      TOOL_OPTION_ROWS(&o->rows),
      {"--top", "N", &o->top, tool_parse_count, "a count from 0 to 100", 0, 100},
      {"--title", "T", &o->title, NULL, NULL, 0, 0},
      KEPT_OPTION_RETAIN(&o->retain),
      TOOL_OPTION_WHOLE_STACKS(&o->whole_stacks),
  };
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 1, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  o->file = args.files[0];
  out_set_whole_stacks(o->whole_stacks);
  return TOOL_CONTINUE;
}

// ---------------------------------------------------------------- HTML text

// Text from anywhere (the trace, the command line), escaped.
static void put(FILE *out, const char *s) { text_put_xml(out, s, SIZE_MAX); }

// What a printer of output.h writes, captured to be escaped.
typedef struct Captured {
  char *text;
  size_t len;
  FILE *f;
} Captured;

static FILE *capture(Captured *c) {
  *c = (Captured){0};
  if (!(c->f = open_memstream(&c->text, &c->len))) xalloc_fail();
  return c->f;
}

static char *captured(Captured *c) {
  if (fclose(c->f) != 0 || !c->text) xalloc_fail();
  return c->text;
}

// A group's name (out_group_key), escaped.
static void put_group(FILE *out, const Profile *p, ProfileBy by, ProfileStackId first) {
  Captured c;
  out_group_key(capture(&c), p, by, first);
  char *text = captured(&c);
  put(out, text);
  free(text);
}

// Text a printer writes, escaped, as list items (one a line).
static void put_lines(FILE *out, char *text) {
  fputs("<ul class=\"stack\">", out);
  for (char *line = text, *end; *line; line = end + 1) {
    if (!(end = strchr(line, '\n'))) end = line + strlen(line) - 1;
    else *end = 0;
    fputs("<li>", out);
    put(out, line);
    fputs("</li>", out);
  }
  fputs("</ul>", out);
}

// A stack's callers (out_callers) as list items, innermost first.
static void put_callers(FILE *out, const Profile *p, ProfileStackId s, uint32_t max_frames) {
  Captured c;
  out_callers(capture(&c), p, s, "", max_frames);
  char *text = captured(&c);
  put_lines(out, text);
  free(text);
}

static void put_bytes(FILE *out, double bytes) {
  char b[OUT_TEXT_MAX];
  put(out, out_bytes(b, bytes));
}

static void put_interval(FILE *out, Interval iv) {
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX];
  fprintf(out, "[%s, %s]", out_bytes(a, iv.lo), out_bytes(b, iv.hi));
}

// An estimate of bytes from samples with its interval: "1.2 MiB [1.1 MiB, 1.3 MiB]".
static void put_estimate(FILE *out, const Profile *p, uint64_t samples) {
  Tally t = profile_tally(p, samples);
  put_bytes(out, t.bytes);
  fputs(" <span class=\"iv\">", out);
  put_interval(out, tally_interval(&t));
  fputs("</span>", out);
}

static void put_duration(FILE *out, double us) {
  char b[OUT_TEXT_MAX];
  fputs(out_duration(b, us), out);
}

static void row_start(FILE *out, const char *label) { fprintf(out, "<tr><th>%s</th><td>", label); }
static void row_end(FILE *out) { fputs("</td></tr>\n", out); }

static void row_text(FILE *out, const char *label, const char *value) {
  row_start(out, label);
  put(out, value);
  row_end(out);
}

// ---------------------------------------------------------------- page

static const char STYLE[] =
    "<style>\n"
    "body { font-family: sans-serif; font-size: 14px; color: #222; background: #fff; margin: 0 auto;"
    " padding: 0 16px 32px; max-width: 1240px; }\n"
    "h1 { font-size: 22px; margin: 18px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px;"
    " border-bottom: 1px solid #ccc; padding-bottom: 4px; }\n"
    "p.sub, .note { color: #555; } .iv { color: #666; font-size: 12px; }\n"
    "nav a { margin-right: 14px; }\n"
    ".partial { background: #fde2e1; border: 2px solid #c00; color: #700; padding: 8px 12px; margin: 12px 0;"
    " font-weight: bold; }\n"
    "table { border-collapse: collapse; margin: 6px 0; }\n"
    "table.kv th { text-align: left; padding: 3px 16px 3px 0; font-weight: normal; color: #555;"
    " vertical-align: top; white-space: nowrap; }\n"
    "table.kv td { padding: 3px 0; }\n"
    "table.rows th, table.rows td { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: right;"
    " white-space: nowrap; vertical-align: top; }\n"
    "table.rows th { background: #f3f3f3; border-bottom: 1px solid #ccc; }\n"
    "table.rows td.site, table.rows th.site { text-align: left; white-space: normal; font-family: monospace; }\n"
    "th.sortable { cursor: pointer; } th[data-sort=asc]::after { content: ' \\25B2'; }"
    " th[data-sort=desc]::after { content: ' \\25BC'; }\n"
    "input.filter { margin: 4px 0; width: 320px; }\n"
    ".bar { display: inline-block; height: 9px; background: #4e79a7; vertical-align: middle; margin-right: 4px; }\n"
    "details summary { cursor: pointer; }\n"
    "ul.stack { margin: 2px 0 4px; padding-left: 18px; font-size: 12px; color: #444; }\n"
    "ol.leaks > li { margin-bottom: 14px; } .leaksite { font-family: monospace; font-weight: bold; }\n"
    ".holder { font-family: monospace; font-weight: bold; font-size: 15px; }\n"
    "ol.leaks > li.leak .holder { color: #b00; } ul.keptsites { padding-left: 18px; }\n"
    "svg.chart text { font-family: sans-serif; font-size: 11px; fill: #222; }\n"
    "svg.chart text.title { font-size: 14px; } svg.chart text.legend { font-family: monospace; }\n"
    ".figure { overflow-x: auto; }\n"
    "footer { margin-top: 32px; color: #666; font-size: 12px; border-top: 1px solid #ccc; padding-top: 8px; }\n"
    "</style>\n";

static void put_head(const Page *pg) {
  FILE *out = pg->out;
  const TraceReaderInfo *info = trace_reader_info(pg->l->reader);
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"generator\" content=\"memtrace report\">\n<title>memtrace report: ", out);
  put(out, pg->o->title ? pg->o->title : *info->context ? info->context : info->executable);
  fputs("</title>\n", out);
  fputs(STYLE, out);
  fputs("</head>\n<body>\n<header>\n<h1>", out);
  if (pg->o->title) put(out, pg->o->title);
  else {  // Minnow's context is the script; OCaml's a name the program gave
    fputs("Memory profile of ", out);
    put(out, *info->context ? info->context : *info->executable ? info->executable : "(unnamed program)");
  }
  fputs("</h1>\n<p class=\"sub\">trace ", out);
  put(out, pg->o->file);
  fprintf(out, ", estimated from %llu samples at rate %g; figures in bytes include block headers, "
          "each with its 95%% interval where one applies</p>\n</header>\n",
          (unsigned long long)profile_totals(pg->p)->samples, profile_rate(pg->p));
  if (pg->l->partial) {
    fputs("<div class=\"partial\" id=\"partial\" role=\"alert\">PARTIAL: the trace stops at damage (", out);
    put(out, pg->l->error);
    fputs("); every figure below is of the events before it.</div>\n", out);
  }
  fputs("<nav><a href=\"#answer\">Answer</a><a href=\"#summary\">Summary</a><a href=\"#top-sites\">Top sites</a><a href=\"#live-heap\">Live "
        "heap</a><a href=\"#flame-graph\">Flame graph</a><a href=\"#lifetimes\">Lifetimes</a><a "
        "href=\"#kept-by\">Kept by</a></nav>\n", out);
}

// ---------------------------------------------------------------- answer

static void put_path(FILE *out, const RetainPath *path, uint32_t hops, bool erase) {
  char *text = retain_path_string(path, hops, erase);
  put(out, text);
  free(text);
}


enum { ANSWER_HOLDERS = 5 };

// The answer first (issue 34): the leak verdict, the leading holders with
// what each keeps and its first site (the user's line), and the largest
// allocation site, each linked to its section below.
static void put_answer(const Page *pg) {
  FILE *out = pg->out;
  const Profile *p = pg->p;
  const KeptAnalysis *an = pg->kept;
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX];
  fputs("<section id=\"answer\">\n<h2>Answer</h2>\n", out);
  if (an->judgement == KEPT_CANNOT_JUDGE) {
    fputs("<p class=\"verdict\" id=\"answer-verdict\">Leaks: cannot judge: ", out);
    put(out, an->why);
    fputs(". To judge: ", out);
    put(out, an->fix);
    fputs(".</p>\n", out);
  } else if (an->n_leaking) {
    fprintf(out, "<p class=\"verdict\" id=\"answer-verdict\">%u leak%s found (<a href=\"#kept-by\">Kept by</a> "
            "says why and where):</p>\n<ol class=\"answer\">\n", an->n_leaking, an->n_leaking > 1 ? "s" : "");
    uint32_t shown = an->n_leaking < ANSWER_HOLDERS ? an->n_leaking : ANSWER_HOLDERS;
    for (uint32_t i = 0; i < shown; i++) {
      const KeptHolder *h = &an->holders[i];
      Interval bi = kept_bytes_interval(p, h->samples);
      fputs("<li><span class=\"holder\">", out);
      if (h->example) put_path(out, h->example, h->cut, true);
      else fputs("(no path)", out);
      fprintf(out, "</span> keeps <b>%s</b> <span class=\"iv\">[%s, %s]</span>", out_bytes(a, kept_bytes(p, h->samples)),
              out_bytes(b, bi.lo), out_bytes(c, bi.hi));
      if (h->n_sites) {
        uint32_t most = 0;   // the site of the most kept bytes under it
        for (uint32_t k = 1; k < h->n_sites; k++)
          if (h->sites[k].samples > h->sites[most].samples) most = k;
        fputs(", most of it allocated at <span class=\"leaksite\">", out);
        Captured site;
        kept_site_text(capture(&site), p, &h->sites[most]);
        char *text = captured(&site);
        put(out, text);
        free(text);
        fputs("</span>", out);
        if (h->n_sites > 1) fprintf(out, " and %u more site%s", h->n_sites - 1, h->n_sites > 2 ? "s" : "");
      }
      fputs("</li>\n", out);
    }
    fputs("</ol>\n", out);
    if (shown < an->n_leaking) fprintf(out, "<p class=\"note\">%u more in Kept by.</p>\n", an->n_leaking - shown);
  } else if (!an->n_too_few) {
    fprintf(out, "<p class=\"verdict\" id=\"answer-verdict\">No leak: none of the %u holder%s of blocks alive "
            "leaks (<a href=\"#kept-by\">Kept by</a>).</p>\n", an->n, an->n == 1 ? "" : "s");
  } else {
    fprintf(out, "<p class=\"verdict\" id=\"answer-verdict\">No leak found, but %u holder%s keep%s too few "
            "samples to judge (<a href=\"#kept-by\">Kept by</a>).</p>\n", an->n_too_few, an->n_too_few > 1 ? "s" : "",
            an->n_too_few > 1 ? "" : "s");
  }
  // The largest allocator: the first row of Top allocation sites.
  Ranking r;
  if (!ranking_make(p, PROFILE_BY_SITE, RANK_ALLOCATED, true, &r)) xalloc_fail();
  if (r.n_ranked > 0) {
    const ProfileGroup *g = &r.groups->rows[r.order[0]];
    ProfileCounts counts = ranking_counts(p, &r, 0);
    uint64_t total = profile_totals(p)->samples;
    fputs("<p id=\"answer-top-site\">Allocates most: <span class=\"leaksite\">", out);
    put_group(out, p, PROFILE_BY_SITE, g->first);
    fprintf(out, "</span>, %s, %.1f%% of the estimated bytes allocated (<a href=\"#top-sites\">Top allocation "
            "sites</a>).</p>\n", out_bytes(a, profile_tally(p, counts.samples).bytes),
            total ? 100.0 * (double)counts.samples / (double)total : 0.0);
  }
  ranking_free(&r);
  fputs("</section>\n", out);
}

// ---------------------------------------------------------------- summary

static void put_start_time(FILE *out, uint64_t us) {
  time_t secs = (time_t)(us / 1000000);
  struct tm tm;
  char text[64];
  if (gmtime_r(&secs, &tm) && strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm))
    fprintf(out, "%s.%06u UTC", text, (unsigned)(us % 1000000));
  else
    fprintf(out, "%llu us since the epoch", (unsigned long long)us);
}

static void put_summary(const Page *pg) {
  FILE *out = pg->out;
  const Profile *p = pg->p;
  const TraceReaderInfo *info = trace_reader_info(pg->l->reader);
  const ProfileSummary *s = profile_summary(p);
  const ProfileCounts *t = profile_totals(p);
  char a[OUT_TEXT_MAX];
  fputs("<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"kv\">\n", out);
  row_text(out, "trace", pg->o->file);
  // The executable by its name: a page that travels shows no path of the machine that made it.
  const char *exe = info->executable, *slash = strrchr(exe, '/');
  row_text(out, "program", *exe ? (slash && slash[1] ? slash + 1 : exe) : "(not recorded)");
  row_start(out, "host, pid");
  put(out, info->host);
  fprintf(out, ", pid %llu", (unsigned long long)info->pid);
  row_end(out);
  row_start(out, "format");
  fprintf(out, "memtrace CTF version %u, %u-bit words", info->version, info->word_size);
  row_end(out);
  if (*info->context) row_text(out, "context", info->context);
  if (*info->runtime_params) row_text(out, "runtime parameters", info->runtime_params);
  row_start(out, "start");
  put_start_time(out, info->start_time_us);
  row_end(out);
  row_start(out, "duration");
  put_duration(out, (double)s->last_us);
  fputs(" to the last event", out);
  row_end(out);
  row_start(out, "sampling rate");
  fprintf(out, "%g: one sample per %.0f words on average; a sample stands for %s", profile_rate(p),
          1 / profile_rate(p), out_bytes(a, profile_sample_bytes(p)));
  row_end(out);
  row_start(out, "events");
  fprintf(out, "%llu allocations, %llu promotions, %llu collections", (unsigned long long)s->allocs,
          (unsigned long long)s->promotes, (unsigned long long)s->collects);
  row_end(out);
  row_start(out, "samples");
  fprintf(out, "%llu, of %llu sampled blocks", (unsigned long long)t->samples, (unsigned long long)t->blocks);
  row_end(out);
  row_start(out, "allocated (estimated)");
  put_estimate(out, p, t->samples);
  fprintf(out, " in about %.0f blocks", t->objects);
  if (s->last_us > 0) fprintf(out, "; %s/s", out_bytes(a, (double)t->samples * profile_sample_bytes(p) / (double)s->last_us * 1e6));
  row_end(out);
  row_start(out, "promoted (estimated)");
  put_estimate(out, p, t->promoted_samples);
  row_end(out);
  row_start(out, "peak live (estimated)");
  const LiveSeries *ls = pg->series;
  if (ls->n_points) {
    uint32_t k = live_series_peak(ls);
    put_estimate(out, p, (uint64_t)ls->total[k]);
    fprintf(out, " at %s <span class=\"note\">(the largest of the %u moments of the chart below, with that "
            "moment's interval; a spike between two moments is missed)</span>",
            out_duration(a, ls->times_us[k]), ls->n_points);
  } else {
    fputs("(no events)", out);
  }
  row_end(out);
  row_start(out, "live at the end (estimated)");
  put_estimate(out, p, t->live_samples);
  if (pg->snaps && pg->snaps->end_state >= 0)
    fputs(" <span class=\"note\">(reachable when the trace ended: a final collection ran first; see Kept "
          "by)</span>", out);
  else
    fputs(" <span class=\"note\">(not collected when the trace ends: garbage included until a collection "
          "reclaims it; no end state)</span>", out);
  row_end(out);
  row_start(out, "major collections seen");
  fprintf(out, "%llu", (unsigned long long)profile_major_collections(p));
  row_end(out);
  fputs("</table>\n</section>\n", out);
}

// ---------------------------------------------------------------- top sites

static uint32_t shown_rows(uint32_t limit, uint32_t n) { return limit && limit < n ? limit : n; }

static void put_top_sites(const Page *pg) {
  FILE *out = pg->out;
  const Profile *p = pg->p;
  Ranking r;
  if (!ranking_make(p, PROFILE_BY_SITE, RANK_ALLOCATED, true, &r)) xalloc_fail();
  uint64_t total = profile_totals(p)->samples;
  fputs("<section id=\"top-sites\">\n<h2>Top allocation sites</h2>\n", out);
  fputs("<p class=\"note\">Sites (the innermost frame's location) by estimated bytes allocated; live: of their "
        "blocks not collected at the end of the trace. Open a site for its callers (of its largest callstack).</p>\n",
        out);
  if (r.n_ranked == 0) fputs("<p>(no samples)</p>\n", out);
  else {
    fputs("<table class=\"rows\" id=\"top-sites-table\">\n<tr><th>#</th><th>allocated</th><th>95% interval</th>"
          "<th>share</th><th>samples</th><th>blocks</th><th>live at end</th><th class=\"site\">site</th></tr>\n", out);
    uint32_t shown = shown_rows(pg->o->rows, r.n_ranked);
    for (uint32_t i = 0; i < shown; i++) {
      const ProfileGroup *g = &r.groups->rows[r.order[i]];
      ProfileCounts counts = ranking_counts(p, &r, i);
      Tally t = profile_tally(p, counts.samples);
      double share = total ? (double)counts.samples / (double)total : 0;
      fprintf(out, "<tr><td>%u</td><td>", i + 1);
      put_bytes(out, t.bytes);
      fputs("</td><td class=\"iv\">", out);
      put_interval(out, tally_interval(&t));
      fprintf(out, "</td><td><span class=\"bar\" style=\"width:%.0fpx\"></span>%.1f%%</td><td>%llu</td><td>%.0f</td><td>",
              60 * share, 100 * share, (unsigned long long)counts.samples, counts.objects);
      put_bytes(out, profile_tally(p, counts.at_samples).bytes);
      fputs("</td><td class=\"site\"><details><summary>", out);
      put_group(out, p, PROFILE_BY_SITE, g->first);
      fputs("</summary>", out);
      put_callers(out, p, g->first, 24);
      fputs("</details></td></tr>\n", out);
    }
    fputs("</table>\n", out);
    if (shown < r.n_ranked) fprintf(out, "<p class=\"note\">%u more sites (-n 0 shows all).</p>\n", r.n_ranked - shown);
  }
  fputs("</section>\n", out);
  ranking_free(&r);
}

// ---------------------------------------------------------------- snapshots

// The usable snapshots' times (s since the trace's start) and labels; with
// `only`, those of the series (indices into the file) only.
typedef struct SnapTicks {
  double *x;
  char **labels;
  size_t n;
} SnapTicks;

static void snap_ticks(SnapTicks *t, const Snapshots *s, const uint32_t *only, uint32_t n_only) {
  *t = (SnapTicks){0};
  if (s->status != SNAPSHOTS_PRESENT) return;
  size_t cap = only ? n_only : s->n_snaps;
  t->x = xrealloc(NULL, (cap ? cap : 1) * sizeof *t->x);
  t->labels = xrealloc(NULL, (cap ? cap : 1) * sizeof *t->labels);
  for (size_t i = 0; i < cap; i++) {
    uint32_t k = only ? only[i] : (uint32_t)i;
    if (!s->snaps[k].usable) continue;
    char d[OUT_TEXT_MAX], *label = NULL;
    const Snapshot *snap = s->snaps[k].s;
    if (asprintf(&label, "snapshot %" PRIu64 " (%s, at %s)", snap->number, retain_trigger_name(snap->trigger),
                 out_duration(d, (double)snapshots_time(s, k))) < 0)
      xalloc_fail();
    t->x[t->n] = (double)snapshots_time(s, k) / 1e6;
    t->labels[t->n++] = label;
  }
}

static void snap_ticks_free(SnapTicks *t) {
  for (size_t i = 0; i < t->n; i++) free(t->labels[i]);
  free(t->x);
  free(t->labels);
}

// ---------------------------------------------------------------- live heap

static void put_live_heap(const Page *pg) {
  FILE *out = pg->out;
  const Profile *p = pg->p;
  LiveBands b;
  live_bands_make(&b, p, pg->series, PROFILE_BY_SITE, pg->o->top);
  fputs("<section id=\"live-heap\">\n<h2>Live heap over time</h2>\n", out);
  fprintf(out, "<p class=\"note\">Estimated bytes of the blocks allocated and not yet collected, at %u evenly "
          "spaced moments; the %u site%s of highest peak stacked, the rest grey. Hover a band for its site.</p>\n",
          b.n_points, b.n_top, b.n_top == 1 ? "" : "s");
  char title[256], label[2 * OUT_TEXT_MAX + 32], a[OUT_TEXT_MAX], t[OUT_TEXT_MAX];
  snprintf(title, sizeof title, "Live heap (estimated), top %u site%s%s", b.n_top, b.n_top == 1 ? "" : "s",
           pg->l->partial ? " - PARTIAL: up to the damage" : "");
  StackedChart c = {title, "time since the trace's start", "live bytes", b.n_points, b.n_top + 1, b.x_s, b.y,
                    (const char *const *)b.names, true};
  SvgChartOptions so = {1180, 300, "chart", false, 0, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL};
  SnapTicks ticks;
  snap_ticks(&ticks, pg->snaps, NULL, 0);
  so.ticks = ticks.x, so.tick_labels = (const char *const *)ticks.labels, so.n_ticks = ticks.n;
  if (pg->series->n_points) {
    uint32_t k = live_series_peak(pg->series);
    snprintf(label, sizeof label, "peak %s at %s", out_bytes(a, pg->series->total[k] * profile_sample_bytes(p)),
             out_duration(t, pg->series->times_us[k]));
    so.marker = true;
    so.marker_x = pg->series->times_us[k] / 1e6;
    so.marker_label = label;
  }
  if (ticks.n)
    fprintf(out, "<p class=\"note\">The %zu snapshot%s of <code>%s</code> ticked (dotted lines; hover one for its "
            "number).</p>\n", ticks.n, ticks.n == 1 ? "" : "s", pg->snaps->file);
  // The live floors (live_series.h part 4), in bytes.
  const LiveSeries *ls = pg->series;
  double *floor_x = xrealloc(NULL, (ls->n_floors ? ls->n_floors : 1) * sizeof *floor_x);
  double *floor_y = xrealloc(NULL, (ls->n_floors ? ls->n_floors : 1) * sizeof *floor_y);
  for (uint32_t i = 0; i < ls->n_floors; i++) {
    floor_x[i] = ls->floor_us[i] / 1e6;
    floor_y[i] = ls->floor_live[i] * profile_sample_bytes(p);
  }
  so.line_x = floor_x, so.line_y = floor_y, so.n_line = ls->n_floors;
  so.line_label = "live after each major collection";
  if (ls->n_floors)
    fprintf(out, "<p class=\"note\" id=\"live-floors\">The black dashed line joins the live heap right after each of "
            "%u major collection%s%s: what a collection cannot free stays under it, so a leak shows as a floor that "
            "climbs, garbage not yet collected only above it.</p>\n", ls->n_floors, ls->n_floors == 1 ? "" : "s",
            ls->floor_stride > 1 ? " (one in every few: the trace has many)" : "");
  else
    fputs("<p class=\"note\" id=\"live-floors\">No major collection in the trace: no floor of the live heap is "
          "known (the blocks not yet collected may be garbage).</p>\n", out);
  fputs("<div class=\"figure\">", out);
  svg_chart_write(&c, &so, out);
  fputs("</div>\n</section>\n", out);
  free(floor_x);
  free(floor_y);
  snap_ticks_free(&ticks);
  live_bands_free(&b);
}

// ---------------------------------------------------------------- flame graph

static void put_flame_graph(const Page *pg) {
  FILE *out = pg->out;
  const Profile *p = pg->p;
  // One box per function (issue 34): a function's call sites merged, as
  // `flamegraph --functions` draws it; the lines are in Top allocation sites.
  CallTree *t = calltree_build(p, CALLTREE_BY_FUNCTION, CALLTREE_ALLOCATED, out_fold_period(), true);
  if (!t) xalloc_fail();
  fputs("<section id=\"flame-graph\">\n<h2>Flame graph</h2>\n<p class=\"note\">Estimated bytes allocated by "
        "callstack: callers below, callees above, one frame per function (its call sites merged), each as wide as the "
        "bytes allocated under it. Hover a frame for its file and bytes; click it to zoom in, \"Reset zoom\" (top left) or the bottom frame to zoom "
        "out.</p>\n<div class=\"figure\">\n", out);
  char subtitle[512];
  snprintf(subtitle, sizeof subtitle, "estimated from %llu samples (rate %g, %u-byte words)%s",
           (unsigned long long)profile_totals(p)->samples, profile_rate(p), profile_word_bytes(p),
           pg->l->partial ? " - PARTIAL: up to the damage" : "");
  FlameSvgOptions fo = {"Allocated bytes (estimated)", subtitle, "bytes", calltree_total(t), 1200, 0.1, true};
  if (flame_tree_svg(t, &fo, true, out) != 0 && !ferror(out)) xalloc_fail();  // a write error: reported at the end
  fputs("</div>\n</section>\n", out);
  calltree_free(t);
}

// ---------------------------------------------------------------- lifetimes

static void put_quantile_time(FILE *out, double us) {
  if (isnan(us)) fputs("-", out);
  else put_duration(out, us);
}

static void put_quantile_alloc(FILE *out, const Profile *p, double bytes) {
  char b[OUT_TEXT_MAX];
  if (isnan(bytes)) fputs("-", out);
  else if (isinf(bytes)) fputs("alive", out);
  else if (bytes == 0) fprintf(out, "&lt;%s", out_bytes(b, profile_sample_bytes(p)));
  else put_bytes(out, bytes);
}

static void put_quantile_gcs(FILE *out, double gcs) {
  if (isnan(gcs)) fputs("-", out);
  else if (isinf(gcs)) fputs("alive", out);
  else fprintf(out, "%.0f", gcs);
}

static void put_share(FILE *out, double share) {
  if (isnan(share)) fputs("-", out);
  else fprintf(out, "%.0f%%", 100 * share);
}

static void put_lifetimes(const Page *pg) {
  FILE *out = pg->out;
  const Profile *p = pg->p;
  ProfileGroups *g = profile_group(p, PROFILE_BY_SITE);
  LifetimeRow *rows = g ? lifetime_rows(p, g) : NULL;
  if (!rows) xalloc_fail();
  const ProfileSummary *s = profile_summary(p);
  fputs("<section id=\"lifetimes\">\n<h2>Lifetimes per site</h2>\n<p class=\"note\">Largest allocators first. "
        "promoted: share of the sampled blocks born in the minor heap that survived a minor collection [95% Clopper-Pearson "
        "interval]; at end: share of the bytes still alive when the trace ends; quantiles of the bytes' lifetime in "
        "time, in bytes the whole program allocated meanwhile, and that over the minor heap's size (~GCs: about how "
        "many minor collections they lived through", out);
  if (s->minor_heap_words) fprintf(out, "; minor heap %llu words", (unsigned long long)s->minor_heap_words);
  else fputs("; the minor heap's size is not in the trace: no ~GCs", out);
  fputs("). alive: longer than the trace.</p>\n", out);
  if (g->n == 0) fputs("<p>(no samples)</p>\n", out);
  else {
    fputs("<table class=\"rows\" id=\"lifetimes-table\">\n<tr><th>#</th><th>allocated</th><th>sampled</th>"
          "<th>promoted [95%]</th><th>at end</th><th>time p50</th><th>p90</th><th>alloc p50</th><th>p90</th>"
          "<th>~GCs p50</th><th>p90</th><th class=\"site\">site</th></tr>\n", out);
    uint32_t shown = shown_rows(pg->o->rows, g->n);
    for (uint32_t i = 0; i < shown; i++) {
      const LifetimeRow *r = &rows[i];
      LifetimeFigures f = lifetime_figures(p, r);
      fprintf(out, "<tr><td>%u</td><td>", i + 1);
      put_bytes(out, profile_tally(p, r->counts.samples).bytes);
      fprintf(out, "</td><td>%llu</td><td>", (unsigned long long)r->counts.blocks);
      put_share(out, f.promoted_share);
      if (f.minor_blocks)
        fprintf(out, " <span class=\"iv\">[%.0f%%, %.0f%%]</span>", 100 * f.promoted.lo, 100 * f.promoted.hi);
      fputs("</td><td>", out);
      put_share(out, f.alive_share);
      for (int q = 0; q < 2; q++) fputs("</td><td>", out), put_quantile_time(out, f.time_us[q]);
      for (int q = 0; q < 2; q++) fputs("</td><td>", out), put_quantile_alloc(out, p, f.alloc_bytes[q]);
      for (int q = 0; q < 2; q++) fputs("</td><td>", out), put_quantile_gcs(out, f.minor_gcs[q]);
      fputs("</td><td class=\"site\">", out);
      put_group(out, p, PROFILE_BY_SITE, r->group->first);
      fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
    if (shown < g->n) fprintf(out, "<p class=\"note\">%u more sites (-n 0 shows all).</p>\n", g->n - shown);
  }
  fputs("</section>\n", out);
  free(rows);
  profile_groups_free(g);
}

// ---------------------------------------------------------------- kept by

static const char *depth_text(uint32_t depth) {
  return depth == 0 ? "the container's own cells" : depth == 1 ? "its elements" : "data its elements hold";
}

static void put_holder(FILE *out, const Profile *p, const KeptHolder *h) {
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX];
  fprintf(out, "<li class=\"%s\"><div class=\"holder\">", h->verdict == KEPT_LEAK ? "leak" : "kept");
  if (h->example) put_path(out, h->example, h->cut, true);
  else fputs("(no path) ", out), put_group(out, p, PROFILE_BY_SITE, h->sites[0].stack);
  fprintf(out, "</div>\n<div><b>%s</b>: keeps <b>", h->verdict == KEPT_LEAK ? "leak" : kept_verdict_name(h->verdict));
  Interval bi = kept_bytes_interval(p, h->samples), si = kept_share_interval(h->samples, h->allocated_samples);
  double share = h->allocated_samples ? (double)h->samples / (double)h->allocated_samples : 0;
  fprintf(out, "%s</b> <span class=\"iv\">[%s, %s]</span>, %.3g%% <span class=\"iv\">[%.3g%%, %.3g%%]</span> of "
          "what its sites allocated; kept samples by tenth of the run:", out_bytes(a, kept_bytes(p, h->samples)),
          out_bytes(b, bi.lo), out_bytes(c, bi.hi), 100 * share, 100 * si.lo, 100 * si.hi);
  for (int w = 0; w < KEPT_WINDOWS; w++) fprintf(out, " %llu", (unsigned long long)h->windows[w]);
  fputs("</div>\n", out);
  if (h->example) {
    fputs("<div class=\"note\">e.g. <code>", out);
    put_path(out, h->example, h->example->hop_count, false);
    fputs("</code></div>\n", out);
  }
  fputs("<ul class=\"keptsites\">\n", out);
  for (uint32_t k = 0; k < h->n_sites; k++) {
    const KeptSite *s = &h->sites[k];
    Interval iv = kept_bytes_interval(p, s->samples);
    fputs("<li><span class=\"leaksite\">", out);
    Captured site;
    kept_site_text(capture(&site), p, s);
    char *site_text = captured(&site);
    put(out, site_text);
    free(site_text);
    fprintf(out, "</span> &mdash; %s: %s <span class=\"iv\">[%s, %s]</span>", h->example ? depth_text(s->depth) : "kept",
            out_bytes(a, kept_bytes(p, s->samples)), out_bytes(b, iv.lo), out_bytes(c, iv.hi));
    Captured cap;
    retain_text_callers(capture(&cap), p, s->stack, "", 16);
    char *text = captured(&cap);
    put_lines(out, text);
    free(text);
    fputs("</li>\n", out);
  }
  fputs("</ul></li>\n", out);
}

// The series rule's holders: the kept bytes of the leading ones (by what
// they keep at the snapshot judged) at each snapshot of the series, stacked,
// the rest grey, the snapshots ticked.
enum { KEPT_CHART_TOP = 6 };

static void put_kept_chart(const Page *pg, const KeptAnalysis *an) {
  FILE *out = pg->out;
  uint32_t n = an->n_series, top = an->n < KEPT_CHART_TOP ? an->n : KEPT_CHART_TOP;
  uint32_t *order = xrealloc(NULL, (an->n ? an->n : 1) * sizeof *order);
  for (uint32_t i = 0; i < an->n; i++) order[i] = i;
  for (uint32_t i = 0; i < top; i++)   // the `top` most kept first (selection: few)
    for (uint32_t j = i + 1; j < an->n; j++)
      if (an->holders[order[j]].samples > an->holders[order[i]].samples) {
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
  uint32_t bands = top + 1;   // the rest last, grey (if empty: zero)
  double *x = xrealloc(NULL, (size_t)n * sizeof *x), *y = xrealloc(NULL, (size_t)n * bands * sizeof *y);
  char **names = xrealloc(NULL, (size_t)bands * sizeof *names);
  double bytes = profile_sample_bytes(pg->p);
  for (uint32_t q = 0; q < n; q++) {
    x[q] = (double)snapshots_time(pg->snaps, an->series[q]) / 1e6;
    double rest = 0;
    for (uint32_t i = 0; i < an->n; i++) {
      double v = an->holders[order[i]].series ? (double)an->holders[order[i]].series[q] * bytes : 0;
      if (i < top) y[(size_t)q * bands + i] = v;
      else rest += v;
    }
    y[(size_t)q * bands + top] = rest;
  }
  for (uint32_t i = 0; i < top; i++) {
    const KeptHolder *h = &an->holders[order[i]];
    char *text = h->example ? retain_path_string(h->example, h->cut, true) : xstrdup("unknown holder");
    if (asprintf(&names[i], "%s [%s]", text, kept_verdict_name(h->verdict)) < 0) xalloc_fail();
    free(text);
  }
  names[top] = xstrdup("other holders");
  char title[128];
  snprintf(title, sizeof title, "Kept by the leading holders at each of %u snapshots", n);
  StackedChart c = {title, "time since the trace's start", "kept bytes", n, bands, x, y, (const char *const *)names,
                    true};
  SnapTicks ticks;
  snap_ticks(&ticks, pg->snaps, an->series, n);
  SvgChartOptions so = {1180, 240, "chart", false, 0, NULL, ticks.x, (const char *const *)ticks.labels, ticks.n, NULL, NULL, 0, NULL};
  fprintf(out, "<p class=\"note\">What the %u holder%s keeping the most at the snapshot judged kept at each "
          "snapshot of the series (estimated bytes, stacked; the rest grey), the snapshots ticked.</p>\n", top,
          top == 1 ? "" : "s");
  fputs("<div class=\"figure\" id=\"kept-over-time\">", out);
  svg_chart_write(&c, &so, out);
  fputs("</div>\n", out);
  snap_ticks_free(&ticks);
  for (uint32_t i = 0; i < bands; i++) free(names[i]);
  free(names);
  free(x);
  free(y);
  free(order);
}

static void put_kept(const Page *pg) {
  FILE *out = pg->out;
  const Profile *p = pg->p;
  const KeptAnalysis an = *pg->kept;
  fputs("<section id=\"kept-by\">\n<h2>Kept by</h2>\n<p class=\"note\">", out);
  fputs("From the snapshots (each a major collection, then a path from a GC root to every sampled block still "
        "alive): blocks grouped by what holds them (their path up to its first list, array or Hashtbl, counts "
        "erased). With three snapshots or more, a holder <b>leaks</b> when it still keeps blocks born between the "
        "early snapshots and what it keeps grew from the middle one to the last (a holder that does not grow is "
        "named in at most 1% of runs); with the end state alone, when the blocks it keeps were born steadily over "
        "the later part of the run (in its third quarter and its last, not significantly fewer than 2/3 as many in "
        "the third). Under each holder, its sites, most directly held first. Bytes with Garwood's Poisson 95% "
        "interval, shares with Clopper-Pearson's.</p>\n<p class=\"note\">", out);
  Captured cap;
  kept_print_snapshots(capture(&cap), pg->snaps, an.snapshot);
  char *text = captured(&cap);
  text[strcspn(text, "\n")] = 0;
  put(out, text);
  free(text);
  fputs("</p>\n", out);
  if (an.judgement == KEPT_CANNOT_JUDGE) {
    fputs("<p class=\"verdict\" id=\"cannot-judge\">Cannot judge: ", out);
    put(out, an.why);
    fputs(". To judge: ", out);
    put(out, an.fix);
    fputs(".</p>\n", out);
  } else {
    const char *how = an.rule == KEPT_RULE_SERIES ? "keeps growing from snapshot to snapshot"
                                                  : "keeps blocks born steadily to the end of the run";
    if (an.rule == KEPT_RULE_SERIES) put_kept_chart(pg, &an);
    if (an.n_leaking)
      fprintf(out, "<p class=\"verdict\">%u leak%s: %s, most kept first:</p>\n", an.n_leaking,
              an.n_leaking > 1 ? "s" : "", how);
    else if (!an.n_too_few)
      fprintf(out, "<p class=\"verdict\" id=\"no-leaks\">No leak: of %u holder%s of blocks alive, none %s.</p>\n", an.n,
              an.n == 1 ? "" : "s", how);
    else
      fprintf(out, "<p class=\"verdict\" id=\"too-few\">No leak found, but %u holder%s keep%s too few samples to "
              "judge (%d needed).</p>\n", an.n_too_few, an.n_too_few > 1 ? "s" : "", an.n_too_few > 1 ? "" : "s",
              KEPT_MIN_SAMPLES);
    uint32_t shown = shown_rows(pg->o->rows, an.n);
    if (shown) {
      fputs("<ol class=\"leaks\">\n", out);
      for (uint32_t i = 0; i < shown; i++) put_holder(out, p, &an.holders[i]);
      fputs("</ol>\n", out);
    }
    if (shown < an.n) fprintf(out, "<p class=\"note\">%u more holders (-n 0 shows all).</p>\n", an.n - shown);
  }
  fputs("</section>\n", out);
}

// The tables' script: every table.rows gets a filter box (rows whose site, or
// whole text, lacks what is typed are hidden) and headers that sort on click
// (numbers by value, bytes by their unit, text by text; again: the other way).
// The page stays one static file: the script is inline and loads nothing.
static const char TABLE_SCRIPT[] =
    "<script>\n"
    "(function () {\n"
    "  var units = {B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824, TiB: 1099511627776};\n"
    "  function key(cell) {\n"
    "    var t = (cell.querySelector('summary') || cell).textContent.trim();\n"
    "    var m = /^\\[?(-?[0-9.]+(?:e[+-]?[0-9]+)?)\\s*(B|KiB|MiB|GiB|TiB)?/.exec(t);\n"
    "    return m ? {n: parseFloat(m[1]) * (units[m[2]] || 1), t: t} : {n: NaN, t: t};\n"
    "  }\n"
    "  function cmp(a, b) {\n"
    "    if (!isNaN(a.n) && !isNaN(b.n)) return a.n - b.n;\n"
    "    if (isNaN(a.n) !== isNaN(b.n)) return isNaN(a.n) ? 1 : -1;\n"
    "    return a.t < b.t ? -1 : a.t > b.t ? 1 : 0;\n"
    "  }\n"
    "  var tables = document.querySelectorAll('table.rows');\n"
    "  for (var k = 0; k < tables.length; k++) (function (table) {\n"
    "    var head = table.rows[0], body = head.parentNode;\n"
    "    var box = document.createElement('input');\n"
    "    box.type = 'search'; box.className = 'filter'; box.placeholder = 'filter rows (site, function, file)';\n"
    "    table.parentNode.insertBefore(box, table);\n"
    "    box.addEventListener('input', function () {\n"
    "      var q = box.value.toLowerCase();\n"
    "      for (var i = 1; i < table.rows.length; i++) {\n"
    "        var r = table.rows[i], site = r.querySelector('td.site summary') || r.querySelector('td.site') || r;\n"
    "        r.style.display = site.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';\n"
    "      }\n"
    "    });\n"
    "    for (var c = 0; c < head.cells.length; c++) (function (c) {\n"
    "      var th = head.cells[c];\n"
    "      th.className += ' sortable'; th.title = 'sort by this column';\n"
    "      th.addEventListener('click', function () {\n"
    "        var dir = th.getAttribute('data-sort') === 'desc' ? 'asc' : 'desc';\n"
    "        for (var j = 0; j < head.cells.length; j++) head.cells[j].removeAttribute('data-sort');\n"
    "        th.setAttribute('data-sort', dir);\n"
    "        var rows = [];\n"
    "        for (var i = 1; i < table.rows.length; i++) rows.push(table.rows[i]);\n"
    "        rows.sort(function (a, b) {\n"
    "          var d = cmp(key(a.cells[c]), key(b.cells[c]));\n"
    "          return dir === 'asc' ? d : -d;\n"
    "        });\n"
    "        for (var i = 0; i < rows.length; i++) body.appendChild(rows[i]);\n"
    "      });\n"
    "    })(c);\n"
    "  })(tables[k]);\n"
    "})();\n"
    "</script>\n";

static void put_footer(const Page *pg) {
  fputs("<footer>Written by <code>memtrace report</code> (tools/memtrace_cli/README.md explains every figure). "
        "Estimates: bytes = samples &times; word bytes / sampling rate, headers included; 95% intervals are "
        "Garwood's exact Poisson intervals on the sample count. This page is self-contained: it loads nothing.",
        pg->out);
  fputs("</footer>\n", pg->out);
  fputs(TABLE_SCRIPT, pg->out);
  fputs("</body>\n</html>\n", pg->out);
}

// ---------------------------------------------------------------- command

static void write_page(const Page *pg) {
  put_head(pg);
  put_answer(pg);
  put_summary(pg);
  put_top_sites(pg);
  put_live_heap(pg);
  put_flame_graph(pg);
  put_lifetimes(pg);
  put_kept(pg);
  put_footer(pg);
}

int cmd_report(int argc, char **argv) {
  Options o;
  int status = parse_options(argc, argv, &o);
  if (status != TOOL_CONTINUE) return status;
  bool to_stdout = !o.out || strcmp(o.out, "-") == 0;
  const char *name = to_stdout ? NULL : outfile_begin(usage.name, o.out);  // before reading: a bad -o fails at once
  FILE *out = to_stdout ? stdout : name ? outfile_stream(name) : NULL;
  if (!out) {
    if (name) fprintf(stderr, "memtrace report: cannot create %s: %s\n", o.out, strerror(errno));
    outfile_discard();
    return 1;
  }
  LiveSeries series;
  live_series_init(&series, 400);
  ProfileOptions popts = {.lifetimes = true, .before_event = live_series_hook, .hook_ctx = &series};
  Loaded l;
  Snapshots snaps;
  if (kept_load(&usage, o.file, o.retain, &popts, NULL, &l, &snaps) != 0) {
    live_series_free(&series);
    if (!to_stdout) fclose(out);  // load_trace discarded the output
    return 1;
  }
  live_series_end(&series, l.profile);
  KeptAnalysis kept;
  kept_analyse(l.profile, &snaps, -1, NULL, &kept);
  Page pg = {out, &o, &l, l.profile, &series, &snaps, &kept};
  write_page(&pg);
  kept_analysis_free(&kept);
  status = 0;
  if (!to_stdout) {
    bool failed = ferror(out) != 0;
    if (fclose(out) != 0 || failed) status = 1;
  } else if (fflush(out) != 0 || ferror(out)) {
    status = 1;
  }
  if (status) fprintf(stderr, "memtrace report: error writing %s\n", to_stdout ? "the output" : o.out), outfile_discard();
  live_series_free(&series);
  int trace_status = kept_close(&usage, &l, &snaps);
  return status ? status : trace_status;
}
