// leaks.c - `memtrace leaks FILE`: the leak verdict from the trace's end
// state (kept.h gives the rule): the holders that keep blocks allocated all
// over the run, most kept first, each with its path, the sites it keeps
// (most directly held first, callstacks collapsed) and the bytes kept with
// their intervals; or why it cannot judge and what would let it. Text or JSON.
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
    "usage: memtrace leaks [--retain FILE] [-n N] [--json] [--all] [--whole-stacks] [-o OUT] FILE\n"
    "Names what leaks in the trace FILE (\"-\": stdin, with --retain), from its end\n"
    "state FILE.retain (./vm writes it when the run ends: a final collection, then\n"
    "a path from a root to every sampled block still alive). The blocks alive at\n"
    "the end are grouped by holder: their path up to its first list, array or\n"
    "Hashtbl, counts erased. The run is cut into 5 windows of equal allocation; the\n"
    "last is not judged, the others make two halves: a holder leaks when the blocks\n"
    "it keeps were born in both (a structure built early, or a tail kept by a\n"
    "bounded cache or a queue, is not a leak). Leaks first, most kept first: the holder's path, the bytes kept\n"
    "[95 % Poisson interval] and their share of what its sites allocated [95 %\n"
    "Clopper-Pearson], survivors per window, then its sites, most directly held\n"
    "first (the container's cells, its elements, the data they hold), with their\n"
    "callstacks (recursion folded: \"List.map x16\"). A holder with fewer\n"
    "than 10 samples that misses a half cannot be judged; a trace of fewer than\n"
    "50 samples, or without a usable end state, cannot be judged at all: leaks\n"
    "then says why and what would let it (a rate, a longer run), never \"no leak\".\n"
    "A damaged end state, or one of another trace, is an error (status 1).\n"
    "  --retain FILE  the end state to read (default: FILE.retain)\n"
    "  -n N           show N leaks (default 10; 0: all)\n"
    "  --all          also list the holders that do not leak or cannot be judged\n"
    "  --json         JSON (schema: tools/memtrace_cli/README.md)\n"
    "  --whole-stacks callstacks whole (default: recursion folded)\n"
    "  --max-frames N with --json: at most N lines of callstacks written in all\n"
    "                 (default 4194304; 0: no limit); a callstack past it is\n"
    "                 {\"frames_left_out\": N}, said on stderr\n"
    "  -o OUT         write to OUT instead of stdout\n",
};

typedef struct LeaksOptions {
  const char *retain, *path;
  uint32_t rows;
  bool json, all;
} LeaksOptions;

static const char *depth_text(uint32_t depth) {
  return depth == 0 ? "the container's own cells" : depth == 1 ? "its elements" : "data its elements hold";
}

// ---------------------------------------------------------------- text

static void print_figures(const Profile *p, const KeptHolder *h, const char *indent) {
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX];
  Interval bi = kept_bytes_interval(p, h->samples), si = kept_share_interval(h->samples, h->allocated_samples);
  double share = h->allocated_samples ? (double)h->samples / (double)h->allocated_samples : 0;
  printf("%skeeps %s [%s, %s], %.3g%% [%.3g%%, %.3g%%] of what its sites allocated; survivor samples by fifth:",
         indent, out_bytes(a, kept_bytes(p, h->samples)), out_bytes(b, bi.lo), out_bytes(c, bi.hi), 100 * share,
         100 * si.lo, 100 * si.hi);
  for (int w = 0; w < KEPT_WINDOWS; w++) printf(" %" PRIu64, h->windows[w]);
  putchar('\n');
}

static void print_holder(const Profile *p, const KeptHolder *h, uint32_t rank, bool detail) {
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX];
  printf("%3u. Kept by ", rank);
  if (h->example) retain_path_text(stdout, h->example, h->cut, true);
  else printf("(no path: the end state has none) at "), out_site(stdout, profile_site(p, h->unknown_site));
  if (h->verdict != KEPT_LEAK) printf("  [%s]", kept_verdict_name(h->verdict));
  putchar('\n');
  print_figures(p, h, "     ");
  if (!detail) return;
  if (h->example) {
    printf("     e.g. ");
    retain_path_text(stdout, h->example, h->example->hop_count, false);
    putchar('\n');
  }
  printf("     sites, most directly held first:\n");
  for (uint32_t k = 0; k < h->n_sites; k++) {
    const KeptSite *s = &h->sites[k];
    Interval iv = kept_bytes_interval(p, s->samples);
    printf("     %c ", k == 0 ? '*' : '-');
    out_site(stdout, profile_site(p, s->site));
    printf("\n         %s: %s [%s, %s] in %" PRIu64 " sampled blocks\n", h->example ? depth_text(s->depth) : "kept",
           out_bytes(a, kept_bytes(p, s->samples)), out_bytes(b, iv.lo), out_bytes(c, iv.hi), s->blocks);
    retain_text_callers(stdout, p, s->stack, "         ", 12);
  }
}

static void print_verdict(const Profile *p, const KeptAnalysis *an) {
  if (an->judgement == KEPT_CANNOT_JUDGE) {
    printf("cannot judge: %s\nto judge: %s\n", an->why, an->fix);
    return;
  }
  uint32_t judged = an->n - an->n_too_few;
  printf("judged: a leak keeping %.2g%% or more of the bytes allocated shows here for sure (%u samples in a "
         "holder); --all lists every holder\n", 100 * kept_floor(p), KEPT_MIN_SAMPLES);
  if (an->n_leaking)
    printf("%u leak%s: %s holder%s keep%s blocks born all over the run (in the first two fifths and the next "
           "two), most kept first\n",
           an->n_leaking, an->n_leaking > 1 ? "s" : "", an->n_leaking > 1 ? "these" : "this",
           an->n_leaking > 1 ? "s" : "", an->n_leaking > 1 ? "" : "s");
  else if (!an->n_too_few)
    printf("no leak: of %u holders of blocks alive at the end, none keeps blocks born all over the run\n", an->n);
  if (an->n_too_few) {
    const KeptHolder *most = &an->holders[an->n_leaking];  // the too-few come next, most kept first
    printf("%s%u holder%s keep%s too few samples to judge (at most %" PRIu64 " of the %u needed; --memtrace-rate "
           "%g would give them)\n",
           an->n_leaking ? "" : "no leak found, but ", an->n_too_few, an->n_too_few > 1 ? "s" : "",
           an->n_too_few > 1 ? "" : "s", most->samples, KEPT_MIN_SAMPLES,
           kept_rate_for(profile_rate(p), most->samples, KEPT_MIN_SAMPLES));
    if (!an->n_leaking && judged) printf("(%u other holders judged: none leaks)\n", judged);
  }
}

static void print_text(const Loaded *ld, const EndState *es, const LeaksOptions *o, const KeptAnalysis *an) {
  const Profile *p = ld->profile;
  char a[OUT_TEXT_MAX];
  printf("%s: %llu samples at rate %g, %s of trace\n", ld->path, (unsigned long long)profile_summary(p)->clock,
         profile_rate(p), out_duration(a, (double)profile_summary(p)->last_us));
  load_print_partial(stdout, ld);
  kept_print_end_state(stdout, es);
  print_verdict(p, an);
  uint32_t shown = o->rows && o->rows < an->n_leaking ? o->rows : an->n_leaking;
  for (uint32_t i = 0; i < shown; i++) {
    putchar('\n');
    print_holder(p, &an->holders[i], i + 1, true);
  }
  if (shown < an->n_leaking) printf("(%u more: -n 0 shows all)\n", an->n_leaking - shown);
  if (!o->all || an->n_leaking == an->n) return;
  printf("\nnot leaking, or too few samples to judge:\n");
  for (uint32_t i = an->n_leaking; i < an->n; i++) print_holder(p, &an->holders[i], i + 1, false);
}

// ---------------------------------------------------------------- JSON

static void json_holder(Json *j, const Profile *p, const KeptHolder *h, uint32_t rank) {
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
  json_array(j, "sites");
  for (uint32_t k = 0; k < h->n_sites; k++) {
    const KeptSite *s = &h->sites[k];
    json_object(j, NULL);
    json_object(j, "site");
    json_site_fields(j, profile_site(p, s->site));
    json_end_object(j);
    json_uint(j, "depth", s->depth);
    json_uint(j, "blocks", s->blocks);
    json_uint(j, "samples", s->samples);
    json_number(j, "kept_bytes", kept_bytes(p, s->samples));
    Interval iv = kept_bytes_interval(p, s->samples);
    json_interval(j, "kept_bytes_interval", iv.lo, iv.hi);
    if (s->example) retain_json_path(j, "path", s->example, s->example->hop_count, false);
    else json_null(j, "path");
    retain_json_callers(j, "callers", p, s->stack);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

static void print_json(const Loaded *ld, const EndState *es, const LeaksOptions *o, const KeptAnalysis *an) {
  const Profile *p = ld->profile;
  Json j;
  load_json_begin(&j, stdout, "leaks", ld);
  kept_json_end_state(&j, es);
  json_string(&j, "judgement", an->judgement == KEPT_JUDGED ? "judged" : "cannot judge");
  if (an->judgement == KEPT_CANNOT_JUDGE) {
    json_string(&j, "why", an->why);
    json_string(&j, "fix", an->fix);
  }
  json_object(&j, "rule");
  json_uint(&j, "windows", KEPT_WINDOWS);
  json_uint(&j, "min_samples", KEPT_MIN_SAMPLES);
  json_uint(&j, "min_trace_samples", KEPT_MIN_TRACE_SAMPLES);
  json_end_object(&j);
  json_uint(&j, "survivor_samples", an->samples);
  json_uint(&j, "holders", an->n);
  json_uint(&j, "too_few", an->n_too_few);
  uint32_t shown = o->rows && o->rows < an->n_leaking ? o->rows : an->n_leaking;
  json_array(&j, "leaks");
  for (uint32_t i = 0; i < shown; i++) json_holder(&j, p, &an->holders[i], i + 1);
  json_end_array(&j);
  json_uint(&j, "leaks_omitted", an->n_leaking - shown);
  if (o->all) {
    json_array(&j, "not_leaking");
    for (uint32_t i = an->n_leaking; i < an->n; i++) json_holder(&j, p, &an->holders[i], i + 1);
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
      TOOL_OPTION_MAX_FRAMES(&max_frames),
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
  EndState es;
  if (kept_load(&usage, o.path, o.retain, &popts, NULL, &l, &es) != 0) return 1;
  KeptAnalysis an;
  kept_analyse(l.profile, &es, &an);
  (o.json ? print_json : print_text)(&l, &es, &o, &an);
  kept_analysis_free(&an);
  stack_budget_note(usage.name, 0);
  return kept_close(&usage, &l, &es);
}
