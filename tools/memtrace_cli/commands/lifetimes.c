// lifetimes.c - `memtrace lifetimes FILE`: per allocation site (function,
// file), the share of its sampled blocks promoted and how long its blocks
// lived: quantiles of lifetime in time, in bytes allocated meanwhile, and the
// minor collections that this approximates (README.md shows the layout), as
// a table or JSON; the figures come from lifetime_rows.h.
//
// 1. Pretenuring. The decision records of the snapshot file beside the trace
//    (decisions.h), when it is the trace's, mark the rows holding a site they
//    name (by the row's own key: site, function or file): a mark after the
//    rank and a legend under the table (JSON: "pretenured" per row). A
//    pretenured site's blocks born after its switch are born in the major
//    heap: the trace has them as major allocations, never promoted, so its
//    promoted share counts only its blocks born young, and the legend says
//    how many of its sampled blocks were born outside the minor heap. A
//    trace without decisions prints what it printed before them.
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/decisions.h"
#include "../analysis/lifetime_rows.h"
#include "../analysis/output.h"
#include "../base/xalloc.h"
#include "../cli/decisions_show.h"
#include "../cli/load.h"
#include "commands.h"

static const ToolUsage usage = {
    "lifetimes",
    "usage: memtrace lifetimes [--by site|function|file] [-n N] [--json] [-o OUT] FILE\n"
    "Per allocation site of the trace FILE (\"-\": stdin), largest first: bytes\n"
    "allocated, sampled blocks, the share of sampled blocks born in the minor heap\n"
    "that were promoted (survived a minor collection; 95 % Clopper-Pearson interval),\n"
    "the share still alive at the end, and quantiles (p50, p90; p99 in JSON) of the\n"
    "lifetime of the bytes allocated there: in time, in bytes allocated by the\n"
    "whole program meanwhile, and that divided by the minor heap's size (from the\n"
    "trace's runtime parameters): about how many minor collections they lived\n"
    "through. \"alive\": longer than the trace (still alive at its end).\n"
    "Sites that ./vm --pretenure switched to allocate in the major heap (the\n"
    "decisions in FILE.retain) are marked '*', with a legend under the table.\n"
    "  --by KEY   site (default), function or file\n"
    "  -n N       show N rows (default 20; 0: all)\n"
    "  --json     JSON (schema: tools/memtrace_cli/README.md)\n"
    "  -o OUT     write to OUT instead of stdout\n",
};

// What the table and the JSON show besides the rows: the decisions of the
// trace's snapshot file (part 1) and the trace's start (their clock's zero).
typedef struct Pretenured {
  SiteDecisions index;
  uint64_t start_us;
  const char *file;   // the snapshot file read, or NULL
} Pretenured;

// The decisions of a row (part 1): *first and the count, as site_decisions_find.
static uint32_t row_decisions(const Pretenured *pt, const LifetimeRow *r, uint32_t *first) {
  return site_decisions_find(&pt->index, r->group->key, first);
}

// The decisions that mark none of the rows shown.
static uint32_t decisions_not_shown(const Pretenured *pt, const LifetimeRow *rows, uint32_t shown) {
  uint32_t marked = 0, first;
  for (uint32_t i = 0; i < shown; i++) marked += row_decisions(pt, &rows[i], &first);
  return pt->index.n - marked;
}

// ---------------------------------------------------------------- text

// The legend under the table (nothing when no decision).
static void print_legend(const Profile *p, const RowOptions *o, const Pretenured *pt, const LifetimeRow *rows,
                         uint32_t shown) {
  if (!pt->index.n) return;
  printf("\n* pretenured (%s: ./vm --pretenure's decisions): the site was switched to allocate in the major heap.\n"
         "  Its blocks born old after the switch are sampled as major allocations and never promoted: \"promoted\"\n"
         "  counts only its blocks born young (before the switch, in its probes, after an undo); \"sampled\",\n"
         "  \"at end\" and the lifetimes count its blocks born old too.\n",
         pt->file);
  for (uint32_t i = 0; i < shown; i++) {
    uint32_t first, n = row_decisions(pt, &rows[i], &first);
    if (!n) continue;
    printf("  rank %u, ", i + 1);
    out_group_key(stdout, p, o->by, rows[i].group->first);
    printf(": %" PRIu64 " of its %" PRIu64 " sampled blocks born outside the minor heap\n", rows[i].counts.major_blocks,
           rows[i].counts.blocks);
    for (uint32_t k = first; k < first + n; k++) {
      const SnapshotDecision *x = site_decisions_at(&pt->index, k);
      printf("    ");
      if (o->by != PROFILE_BY_SITE) decision_print_site(stdout, x), printf(": ");
      decision_print(stdout, x, pt->start_us);
      putchar('\n');
    }
  }
  uint32_t left = decisions_not_shown(pt, rows, shown);
  if (left)
    printf("  %u decision%s about sites without a row here (-n 0 shows every row; memtrace info lists every "
           "decision)\n", left, left == 1 ? "" : "s");
}

static void print_percent(double share, int width) {
  if (isnan(share)) printf(" %*s", width, "-");
  else printf(" %*.0f%%", width - 1, 100 * share);
}

static void print_duration(double us) {
  char b[OUT_TEXT_MAX];
  printf(" %8s", isnan(us) ? "-" : out_duration(b, us));
}

// Bytes allocated meanwhile: the clock counts samples, so bucket 0 means
// "under one sample's worth".
static void print_alloc(const Profile *p, double bytes) {
  char b[OUT_TEXT_MAX], text[OUT_TEXT_MAX + 2];
  if (isnan(bytes)) snprintf(text, sizeof text, "-");
  else if (isinf(bytes)) snprintf(text, sizeof text, "alive");
  else if (bytes == 0) snprintf(text, sizeof text, "<%s", out_bytes(b, profile_sample_bytes(p)));
  else snprintf(text, sizeof text, "%s", out_bytes(b, bytes));
  printf(" %10s", text);
}

static void print_gcs(double gcs) {
  if (isnan(gcs)) printf(" %5s", "-");
  else if (isinf(gcs)) printf(" %5s", "alive");
  else printf(" %5.0f", gcs);
}

static void print_table(const Loaded *l, const RowOptions *o, const ProfileGroups *g, const LifetimeRow *rows,
                        const Pretenured *pt) {
  const Profile *p = l->profile;
  const ProfileSummary *s = profile_summary(p);
  char a[OUT_TEXT_MAX];
  printf("%s: %llu samples at rate %g, %s of trace\n", l->path, (unsigned long long)profile_totals(p)->samples,
         profile_rate(p), out_duration(a, (double)s->last_us));
  if (s->minor_heap_words)
    printf("minor heap: %llu words (the trace's runtime parameters)\n", (unsigned long long)s->minor_heap_words);
  else
    printf("minor heap: size unknown (not in the trace's runtime parameters): no ~GCs\n");
  load_print_partial(stdout, l);
  printf("lifetimes by %s, largest allocators first. promoted: share of the sampled blocks born in the minor\n"
         "heap that survived a minor collection [95%% interval]; at end: share of the bytes still alive at the\n"
         "end; quantiles of the bytes' lifetime in time, in bytes allocated meanwhile by the program, and that\n"
         "over the minor heap's size (~GCs: about how many minor collections they lived through)\n\n",
         out_by_name(o->by));
  printf("rank  allocated  sampled  promoted [95%%]      at end  time p50      p90  alloc p50        p90 ~GCs p50  p90  %s\n",
         out_by_name(o->by));
  uint32_t shown = o->rows && o->rows < g->n ? o->rows : g->n;
  for (uint32_t i = 0; i < shown; i++) {
    const LifetimeRow *r = &rows[i];
    LifetimeFigures f = lifetime_figures(p, r);
    uint32_t first;
    printf("%4u%c%10s %8llu", i + 1, row_decisions(pt, r, &first) ? '*' : ' ',
           out_bytes(a, profile_tally(p, r->counts.samples).bytes), (unsigned long long)r->counts.blocks);
    print_percent(f.promoted_share, 5);
    if (f.minor_blocks) printf(" [%3.0f%%, %3.0f%%]", 100 * f.promoted.lo, 100 * f.promoted.hi);
    else printf(" %12s", "");
    print_percent(f.alive_share, 6);
    print_duration(f.time_us[0]);
    print_duration(f.time_us[1]);
    print_alloc(p, f.alloc_bytes[0]);
    print_alloc(p, f.alloc_bytes[1]);
    print_gcs(f.minor_gcs[0]);
    print_gcs(f.minor_gcs[1]);
    printf("  ");
    out_group_key(stdout, p, o->by, r->group->first);
    putchar('\n');
  }
  if (shown < g->n) printf("(%u more rows: -n 0 shows all)\n", g->n - shown);
  if (g->n == 0) printf("(no samples)\n");
  print_legend(p, o, pt, rows, shown);
}

// ---------------------------------------------------------------- JSON

// A quantile: a number, "alive" when it falls among the blocks alive at the
// end, null when undefined (no collected nor surviving block, no minor heap size).
static void json_quantiles(Json *j, const char *key, const double v[3]) {
  static const char *const names[3] = {"p50", "p90", "p99"};
  json_object(j, key);
  for (int i = 0; i < 3; i++) {
    if (isinf(v[i])) json_string(j, names[i], "alive");
    else json_number(j, names[i], v[i]);
  }
  json_end_object(j);
}

static void print_json(const Loaded *l, const RowOptions *o, const ProfileGroups *g, const LifetimeRow *rows,
                       const Pretenured *pt) {
  const Profile *p = l->profile;
  Json j;
  load_json_begin(&j, stdout, "lifetimes", l);
  json_string(&j, "by", out_by_name(o->by));
  uint64_t minor = profile_summary(p)->minor_heap_words;
  if (minor) json_uint(&j, "minor_heap_words", minor);
  else json_null(&j, "minor_heap_words");
  json_number(&j, "clock_resolution_bytes", profile_sample_bytes(p));
  uint32_t shown = o->rows && o->rows < g->n ? o->rows : g->n;
  json_array(&j, "rows");
  for (uint32_t i = 0; i < shown; i++) {
    const LifetimeRow *r = &rows[i];
    const ProfileCounts *c = &r->counts;
    LifetimeFigures f = lifetime_figures(p, r);
    json_object(&j, NULL);
    json_uint(&j, "rank", i + 1);
    json_group_key(&j, p, o->by, r->group->first);
    json_number(&j, "bytes", profile_tally(p, c->samples).bytes);
    json_uint(&j, "samples", c->samples);
    json_uint(&j, "sampled_blocks", c->blocks);
    json_uint(&j, "minor_blocks", f.minor_blocks);
    json_uint(&j, "promoted_blocks", c->promoted_blocks);
    json_number(&j, "promoted_share", f.promoted_share);
    json_interval(&j, "promoted_interval", f.promoted.lo, f.promoted.hi);
    json_uint(&j, "died_young_blocks", r->hist.died_young_blocks);
    json_number(&j, "alive_at_end_share", f.alive_share);
    json_quantiles(&j, "lifetime_us", f.time_us);
    json_quantiles(&j, "lifetime_alloc_bytes", f.alloc_bytes);
    json_quantiles(&j, "minor_gcs_estimate", f.minor_gcs);
    json_uint(&j, "major_blocks", c->major_blocks);
    uint32_t first, n = row_decisions(pt, r, &first);
    json_array(&j, "pretenured");
    for (uint32_t k = first; k < first + n; k++) decision_json(&j, NULL, site_decisions_at(&pt->index, k), pt->start_us);
    json_end_array(&j);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_uint(&j, "rows_omitted", g->n - shown);
  json_object(&j, "pretenure_decisions");
  if (pt->file) json_string(&j, "file", pt->file);
  else json_null(&j, "file");
  json_uint(&j, "count", pt->index.n);
  json_uint(&j, "not_shown", decisions_not_shown(pt, rows, shown));
  json_end_object(&j);
  json_end_object(&j);
  json_finish(&j);
}

int cmd_lifetimes(int argc, char **argv) {
  ProfileOptions popts = {.lifetimes = true};  // the histograms of profile.h
  RowOptions o;
  Loaded l;
  ProfileGroups *g;
  int status = load_parse_rows(&usage, argc, argv, 20, false, &o);
  if (status != TOOL_CONTINUE) return status;
  if (load_grouped(&usage, o.path, &popts, o.by, &l, &g) != 0) return 1;
  LifetimeRow *rows = lifetime_rows(l.profile, g);
  if (!rows) xalloc_fail();
  const TraceReaderInfo *info = trace_reader_info(profile_reader(l.profile));
  Snapshots snaps;
  snapshots_check(&snaps, o.path, NULL, info, profile_summary(l.profile)->allocs, l.partial);
  Pretenured pt = {.start_us = info->start_time_us};
  site_decisions_init(&pt.index, decisions_reader(&snaps), o.by);
  if (decisions_reader(&snaps)) pt.file = snaps.file;
  (o.json ? print_json : print_table)(&l, &o, g, rows, &pt);
  free(rows);
  site_decisions_free(&pt.index);
  status = 0;
  if (snaps.status == SNAPSHOTS_DAMAGED) {
    fprintf(stderr, "memtrace lifetimes: %s (its pretenuring decisions are not shown)\n", snaps.why);
    status = 1;
  }
  snapshots_free(&snaps);
  return load_finish_grouped(&usage, &l, g) | status;
}
