// leaks.c - `memtrace leaks FILE`: the leak verdict from the trace's
// snapshots (kept.h gives the rules): the holders that keep growing (a
// series of snapshots) or keep blocks born steadily over the run (the end
// state alone), most kept first, each with its path, what it kept at each
// snapshot, the sites it keeps (by what the user can change, most directly
// held first, callstacks folded) and the bytes kept with their intervals;
// or why it cannot judge and what would let it. Text or JSON. The exit
// status says which: 0 no leak, 3 leaks found, 4 cannot judge.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/kept.h"
#include "../analysis/retain_text.h"
#include "../analysis/stack_budget.h"
#include "../base/xalloc.h"
#include "../cli/kept_load.h"
#include "commands.h"

static const ToolUsage usage = {
    "leaks",
    "usage: memtrace leaks [OPTIONS] FILE\n"
    "Names what leaks in the trace FILE (\"-\": stdin, with --retain), from its\n"
    "snapshots FILE.retain (./vm takes them while the program runs and when it\n"
    "ends: which sampled blocks are alive and a path from a root to each). Blocks\n"
    "are grouped by holder: their path up to its first list, array or Hashtbl,\n"
    "counts erased. With three snapshots or more (a run killed by SIGKILL too), a\n"
    "holder leaks when it keeps blocks born between early snapshots and what it\n"
    "keeps grew from the middle snapshot to the last and at the last step; a\n"
    "holder that does not grow is named with probability at most 1 % a run. With\n"
    "the end state alone, a holder leaks when it keeps blocks born in the third\n"
    "quarter of the run and in the last, not significantly fewer than 2/3 as\n"
    "many in the third (a leak that began before 7/12 of the run is named):\n"
    "a table built once, or the tail of a churn crowding the end, is not a leak.\n"
    "Leaks first, most kept first: the holder's path, the bytes kept [95 % Poisson\n"
    "interval] and their share of what its sites allocated [95 % Clopper-Pearson],\n"
    "what it kept at each snapshot, then its sites - each the innermost line outside\n"
    "the stdlib - most directly held first (the container's cells, its elements,\n"
    "the data they hold), with their callstacks (recursion folded). A holder with\n"
    "too few samples is said so (\"too few samples\"); a trace of fewer than 50\n"
    "samples, or without a usable snapshot, cannot be judged at all: leaks says\n"
    "why and what would let it (a rate, more snapshots, a longer run).\n"
    "Exit status: 0 judged, no leak; 3 judged, leaks found; 4 cannot judge;\n"
    "1 the trace or the snapshot file is damaged or unreadable (a trace cut\n"
    "short, as a killed run leaves it, is said on stderr and judged); 2 usage.\n"
    "  --at N         judge at snapshot N ('end', a number, or a time: 1.5s, P%)\n"
    "                 (default: the end state, else the last snapshot)\n"
    "  --retain FILE  the snapshot file to read (default: FILE.retain)\n"
    "  --stdlib       sites at the allocating frame, stdlib frames included\n"
    "  -n N           show N leaks (default 10; 0: all)\n"
    "  --all          also list the holders that do not leak or cannot be judged\n"
    "  --json         JSON (schema: tools/memtrace_cli/README.md)\n"
    "  --whole-stacks callstacks whole (default: recursion folded)\n"
    "  --max-frames N with --json: at most N lines of callstacks written in all\n"
    "                 (default 4194304; 0: no limit); a callstack past it is\n"
    "                 {\"frames_left_out\": N}, said on stderr\n"
    "  -o OUT         write to OUT instead of stdout\n",
};

enum { LEAKS_NONE = 0, LEAKS_ERROR = 1, LEAKS_FOUND = 3, LEAKS_CANNOT_JUDGE = 4 };

typedef struct LeaksOptions {
  const char *retain, *path;
  SnapPick at;
  uint32_t rows;
  bool json, all, stdlib;
} LeaksOptions;

static const char *depth_text(uint32_t depth) {
  return depth == 0 ? "the container's own cells" : depth == 1 ? "its elements" : "data its elements hold";
}

// ---------------------------------------------------------------- text

static void print_rule(const Snapshots *s, const KeptAnalysis *an) {
  if (an->rule == KEPT_RULE_SERIES) {
    printf("rule: the series of %u snapshots (", an->n_series);
    for (uint32_t q = 0; q < an->n_series; q++) printf("%s%" PRIu64, q ? ", " : "", s->snaps[an->series[q]].s->number);
    printf("): a holder leaks when it keeps blocks born between snapshots %" PRIu64 " and %" PRIu64
           ", kept more from snapshot %" PRIu64 " to %" PRIu64 " (p <= %.2g: 1 %% over the %u holder%s that keep%s "
           "such blocks) and grew at the last step\n",
           s->snaps[an->series[0]].s->number, s->snaps[an->series[an->series_a]].s->number,
           s->snaps[an->series[an->series_a]].s->number, s->snaps[an->series[an->n_series - 1]].s->number, an->alpha,
           an->eligible, an->eligible == 1 ? "" : "s", an->eligible == 1 ? "s" : "");
  } else if (an->rule == KEPT_RULE_END_STATE) {
    printf("rule: the end state alone: a holder leaks when it keeps blocks born in the third quarter of the run and "
           "in the last, not significantly fewer than 2/3 as many in the third (p >= %.2g)\n", KEPT_ALPHA);
  }
}

static void print_figures(const Profile *p, const Snapshots *s, const KeptAnalysis *an, const KeptHolder *h,
                          const char *indent) {
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX];
  Interval bi = kept_bytes_interval(p, h->samples), si = kept_share_interval(h->samples, h->allocated_samples);
  double share = h->allocated_samples ? (double)h->samples / (double)h->allocated_samples : 0;
  printf("%skeeps %s [%s, %s], %.3g%% [%.3g%%, %.3g%%] of what its sites allocated\n", indent,
         out_bytes(a, kept_bytes(p, h->samples)), out_bytes(b, bi.lo), out_bytes(c, bi.hi), 100 * share, 100 * si.lo,
         100 * si.hi);
  if (an->rule == KEPT_RULE_SERIES && h->series) {
    printf("%skept at each snapshot:", indent);
    for (uint32_t q = 0; q < an->n_series; q++) printf(" %s", out_bytes(a, kept_bytes(p, h->series[q])));
    printf("\n%s%" PRIu64 " blocks born between snapshots %" PRIu64 " and %" PRIu64 " still kept; sampled blocks from snapshot %" PRIu64
           " +%" PRIu64 " -%" PRIu64 " (p %.2g), at the last step +%" PRIu64 " -%" PRIu64 "\n",
           indent, h->persist, s->snaps[an->series[0]].s->number, s->snaps[an->series[an->series_a]].s->number,
           s->snaps[an->series[an->series_a]].s->number, h->grew, h->let_go, h->p, h->grew_last, h->let_go_last);
    if (h->storage_links)
      printf("%sits Buffer storage at snapshot %" PRIu64 " is a larger copy of the one at snapshot %" PRIu64
             " (a storage copied %u times as it grew; p %.2g)\n",
             indent, s->snaps[an->series[an->n_series - 1]].s->number, s->snaps[an->series[0]].s->number,
             h->storage_links - 1, h->storage_p);
  } else {
    printf("%skept samples by tenth of the run:", indent);
    for (int w = 0; w < KEPT_WINDOWS; w++) printf(" %" PRIu64, h->windows[w]);
    printf("; sampled blocks born in its third quarter %" PRIu64 ", in the last %" PRIu64 " (p %.2g)", h->third_quarter,
           h->last_quarter, h->p);
    if (h->chain >= KEPT_CHAIN_MIN)
      printf("; its largest block the last of a storage copied %u times as it grew, at %.0f%% of the run",
             h->chain - 1, 100 * h->chain_at);
    printf("\n");
  }
}

static void print_holder(const Profile *p, const Snapshots *s, const KeptAnalysis *an, const KeptHolder *h,
                         uint32_t rank, bool detail) {
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX];
  printf("%3u. Kept by ", rank);
  if (h->example) retain_path_text(stdout, h->example, h->cut, true);
  else printf("(no path: the snapshot has none) at "), out_site(stdout, profile_site(p, h->unknown_site));
  if (h->verdict != KEPT_LEAK) printf("  [%s]", kept_verdict_name(h->verdict));
  putchar('\n');
  print_figures(p, s, an, h, "     ");
  if (!detail) return;
  if (h->example) {
    printf("     e.g. ");
    retain_path_text(stdout, h->example, h->example->hop_count, false);
    putchar('\n');
  }
  printf("     sites, most directly held first (* the most direct: where to look first):\n");
  for (uint32_t k = 0; k < h->n_sites; k++) {
    const KeptSite *ks = &h->sites[k];
    Interval iv = kept_bytes_interval(p, ks->samples);
    printf("     %c ", k == 0 ? '*' : '-');
    kept_site_text(stdout, p, ks);
    printf("\n         %s: %s [%s, %s] in %" PRIu64 " sampled blocks\n", h->example ? depth_text(ks->depth) : "kept",
           out_bytes(a, kept_bytes(p, ks->samples)), out_bytes(b, iv.lo), out_bytes(c, iv.hi), ks->blocks);
    retain_text_callers(stdout, p, ks->stack, "         ", 12);
  }
}

static void print_verdict(const Profile *p, const KeptAnalysis *an) {
  if (an->judgement == KEPT_CANNOT_JUDGE) {
    printf("cannot judge: %s\nto judge: %s\n", an->why, an->fix);
    return;
  }
  uint32_t judged = an->n - an->n_too_few;
  if (an->rule == KEPT_RULE_END_STATE)
    printf("judged: a leak keeping %.2g%% or more of the bytes allocated shows here for sure (%u samples in a "
           "holder); --all lists every holder\n", 100 * kept_floor(p), KEPT_MIN_SAMPLES);
  const char *what = an->rule == KEPT_RULE_SERIES ? "growing from snapshot to snapshot"
                                                   : "blocks born steadily to the end of the run";
  if (an->n_leaking)
    printf("%u leak%s: %s holder%s keep%s %s, most kept first\n", an->n_leaking, an->n_leaking > 1 ? "s" : "",
           an->n_leaking > 1 ? "these" : "this", an->n_leaking > 1 ? "s" : "", an->n_leaking > 1 ? "" : "s", what);
  else if (!an->n_too_few)
    printf("no leak: of %u holders of blocks alive, none %s\n", an->n, an->rule == KEPT_RULE_SERIES
           ? "keeps growing from snapshot to snapshot" : "keeps blocks born steadily to the end of the run");
  if (an->n_too_few) {
    const KeptHolder *most = &an->holders[an->n_leaking];  // the too-few come next, most kept first
    printf("%s%u holder%s keep%s too few samples to judge (the most: %" PRIu64 " samples; --memtrace-rate %g would "
           "give it %u)\n", an->n_leaking ? "" : "no leak found, but ", an->n_too_few, an->n_too_few > 1 ? "s" : "",
           an->n_too_few > 1 ? "" : "s", most->samples, kept_rate_for(profile_rate(p), most->samples, KEPT_MIN_SAMPLES),
           KEPT_MIN_SAMPLES);
    if (!an->n_leaking && judged) printf("(%u other holders judged: none leaks)\n", judged);
  }
}

static void print_text(const Loaded *ld, const Snapshots *s, const LeaksOptions *o, const KeptAnalysis *an) {
  const Profile *p = ld->profile;
  char a[OUT_TEXT_MAX];
  printf("%s: %llu samples at rate %g, %s of trace\n", ld->path, (unsigned long long)profile_summary(p)->clock,
         profile_rate(p), out_duration(a, (double)profile_summary(p)->last_us));
  load_print_partial(stdout, ld);
  kept_print_snapshots(stdout, s, an->snapshot);
  print_rule(s, an);
  print_verdict(p, an);
  uint32_t shown = o->rows && o->rows < an->n_leaking ? o->rows : an->n_leaking;
  for (uint32_t i = 0; i < shown; i++) {
    putchar('\n');
    print_holder(p, s, an, &an->holders[i], i + 1, true);
  }
  if (shown < an->n_leaking) printf("(%u more: -n 0 shows all)\n", an->n_leaking - shown);
  if (!o->all || an->n_leaking == an->n) return;
  printf("\nnot leaking, or too few samples to judge:\n");
  for (uint32_t i = an->n_leaking; i < an->n; i++) print_holder(p, s, an, &an->holders[i], i + 1, false);
}

// ---------------------------------------------------------------- JSON

static void json_holder(Json *j, const Profile *p, const KeptAnalysis *an, const KeptHolder *h, uint32_t rank) {
  json_object(j, NULL);
  json_uint(j, "rank", rank);
  json_string(j, "verdict", kept_verdict_name(h->verdict));
  if (h->example) {
    char *text = retain_path_string(h->example, h->cut, true);
    json_string(j, "holder_text", text);
    free(text);
    retain_json_path(j, "holder", h->example, h->cut, true);
    retain_json_path(j, "example_path", h->example, h->example->hop_count, false);
  } else {
    json_null(j, "holder_text");
    json_null(j, "holder");
  }
  json_uint(j, "blocks", h->blocks);
  json_uint(j, "samples", h->samples);
  json_number(j, "kept_bytes", kept_bytes(p, h->samples));
  Interval bi = kept_bytes_interval(p, h->samples), si = kept_share_interval(h->samples, h->allocated_samples);
  json_interval(j, "kept_bytes_interval", bi.lo, bi.hi);
  json_uint(j, "allocated_samples", h->allocated_samples);
  json_number(j, "kept_share", h->allocated_samples ? (double)h->samples / (double)h->allocated_samples : 0);
  json_interval(j, "kept_share_interval", si.lo, si.hi);
  json_array(j, "window_samples");
  for (int w = 0; w < KEPT_WINDOWS; w++) json_uint(j, NULL, h->windows[w]);
  json_end_array(j);
  json_uint(j, "third_quarter_blocks", h->third_quarter);
  json_uint(j, "last_quarter_blocks", h->last_quarter);
  json_uint(j, "chain_links", h->chain);
  json_uint(j, "storage_links", h->storage_links);
  json_number(j, "chain_last_at", h->chain_at);
  if (an->rule == KEPT_RULE_SERIES && h->series) {
    json_array(j, "series_samples");
    for (uint32_t q = 0; q < an->n_series; q++) json_uint(j, NULL, h->series[q]);
    json_end_array(j);
    json_object(j, "growth");
    json_uint(j, "persist", h->persist);
    json_uint(j, "grew", h->grew);
    json_uint(j, "let_go", h->let_go);
    json_number(j, "p", h->p);
    json_uint(j, "grew_last", h->grew_last);
    json_uint(j, "let_go_last", h->let_go_last);
    json_end_object(j);
  } else {
    json_null(j, "series_samples");
    json_null(j, "growth");
  }
  json_array(j, "sites");
  for (uint32_t k = 0; k < h->n_sites; k++) {
    const KeptSite *ks = &h->sites[k];
    json_object(j, NULL);
    json_object(j, "site");
    kept_site_json(j, p, ks);
    json_end_object(j);
    json_uint(j, "depth", ks->depth);
    json_uint(j, "blocks", ks->blocks);
    json_uint(j, "samples", ks->samples);
    json_number(j, "kept_bytes", kept_bytes(p, ks->samples));
    Interval iv = kept_bytes_interval(p, ks->samples);
    json_interval(j, "kept_bytes_interval", iv.lo, iv.hi);
    if (ks->example) retain_json_path(j, "path", ks->example, ks->example->hop_count, false);
    else json_null(j, "path");
    retain_json_callers(j, "callers", p, ks->stack);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

static void print_json(const Loaded *ld, const Snapshots *s, const LeaksOptions *o, const KeptAnalysis *an) {
  const Profile *p = ld->profile;
  Json j;
  load_json_begin(&j, stdout, "leaks", ld);
  kept_json_snapshots(&j, s, an->snapshot);
  json_string(&j, "judgement", an->judgement == KEPT_JUDGED ? "judged" : "cannot judge");
  if (an->judgement == KEPT_CANNOT_JUDGE) {
    json_string(&j, "why", an->why);
    json_string(&j, "fix", an->fix);
  }
  json_object(&j, "rule");
  json_string(&j, "name", an->rule == KEPT_RULE_SERIES ? "series" : an->rule == KEPT_RULE_END_STATE ? "end state"
                                                                                                     : "none");
  json_array(&j, "series");
  for (uint32_t q = 0; q < an->n_series && an->rule == KEPT_RULE_SERIES; q++)
    json_uint(&j, NULL, s->snaps[an->series[q]].s->number);
  json_end_array(&j);
  json_number(&j, "alpha", an->rule == KEPT_RULE_SERIES ? an->alpha : KEPT_ALPHA);
  json_uint(&j, "eligible", an->eligible);
  json_uint(&j, "windows", KEPT_WINDOWS);
  json_uint(&j, "min_samples", KEPT_MIN_SAMPLES);
  json_uint(&j, "min_trace_samples", KEPT_MIN_TRACE_SAMPLES);
  json_end_object(&j);
  json_uint(&j, "kept_samples", an->samples);
  json_uint(&j, "holders", an->n);
  json_uint(&j, "too_few", an->n_too_few);
  uint32_t shown = o->rows && o->rows < an->n_leaking ? o->rows : an->n_leaking;
  json_array(&j, "leaks");
  for (uint32_t i = 0; i < shown; i++) json_holder(&j, p, an, &an->holders[i], i + 1);
  json_end_array(&j);
  json_uint(&j, "leaks_omitted", an->n_leaking - shown);
  if (o->all) {
    json_array(&j, "not_leaking");
    for (uint32_t i = an->n_leaking; i < an->n; i++) json_holder(&j, p, an, &an->holders[i], i + 1);
    json_end_array(&j);
  }
  json_end_object(&j);
  json_finish(&j);
}

int cmd_leaks(int argc, char **argv) {
  LeaksOptions o = {.rows = 10};
  const char *out = NULL;
  bool whole = false;
  uint32_t max_frames = TOOL_MAX_FRAMES_UNSET;
  const ToolOption options[] = {
      KEPT_OPTION_RETAIN(&o.retain),     TOOL_OPTION_ROWS(&o.rows),
      TOOL_OPTION_JSON(&o.json),         TOOL_OPTION_OUTPUT(&out),
      {"--all", NULL, &o.all, NULL, NULL, 0, 0}, TOOL_OPTION_WHOLE_STACKS(&whole),
      TOOL_OPTION_MAX_FRAMES(&max_frames), KEPT_OPTION_AT(&o.at),
      KEPT_OPTION_STDLIB(&o.stdlib),
  };
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 1, NULL, 0};
  int status = tool_parse_output(&args, argc, argv, &out);
  if (status != TOOL_CONTINUE) return status;
  o.path = args.files[0];
  out_set_whole_stacks(whole);
  status = tool_max_frames(&usage, max_frames, o.json, "--json");
  if (status != TOOL_CONTINUE) return status;
  ProfileOptions popts = {0};
  Loaded l;
  Snapshots s;
  if (kept_load(&usage, o.path, o.retain, &popts, NULL, &l, &s) != 0) return LEAKS_ERROR;
  char err[SNAPSHOTS_TEXT];
  int64_t k = kept_pick(&s, l.profile, &o.at, err, sizeof err);
  KeptAnalysis an;
  KeptOptions ko = {.stdlib = o.stdlib};
  if (k < 0 && o.at.set && s.status == SNAPSHOTS_PRESENT) {
    memset(&an, 0, sizeof an);
    an.judgement = KEPT_CANNOT_JUDGE;
    an.snapshot = -1;
    an.rule = KEPT_RULE_NONE;
    snprintf(an.why, sizeof an.why, "--at: %.1000s", err);
    snprintf(an.fix, sizeof an.fix, "name a usable snapshot (memtrace info lists them)");
  } else {
    kept_analyse(l.profile, &s, k, &ko, &an);
  }
  (o.json ? print_json : print_text)(&l, &s, &o, &an);
  int verdict = an.judgement == KEPT_CANNOT_JUDGE ? LEAKS_CANNOT_JUDGE : an.n_leaking ? LEAKS_FOUND : LEAKS_NONE;
  kept_analysis_free(&an);
  stack_budget_note(usage.name, 0);
  // A trace cut short (a killed run) is said and judged; damage is an error.
  bool cut = l.partial && trace_reader_error(l.reader)->kind == TRACE_ERROR_TRUNCATED;
  bool damaged = s.status == SNAPSHOTS_DAMAGED || (l.partial && !cut);
  int closed = kept_close(&usage, &l, &s);   // says what was wrong on stderr
  if (tool_finish_output(&usage) != 0 || (closed && damaged)) return LEAKS_ERROR;
  return verdict;
}
