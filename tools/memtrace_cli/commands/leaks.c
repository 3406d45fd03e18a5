// leaks.c - `memtrace leaks FILE`: the allocation sites whose live bytes
// keep growing over the run, ranked by growth rate, each with its callstack,
// as text or JSON. The test itself is leak_test.{c,h}.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/leak_test.h"
#include "../analysis/output.h"
#include "../base/xalloc.h"
#include "../cli/load.h"
#include "commands.h"

static const ToolUsage usage = {
    "leaks",
    "usage: memtrace leaks [--by site|function|file] [-n N] [--json] [--all] [-o OUT] FILE\n"
    "Names the allocation sites of the trace FILE (\"-\": stdin) whose live bytes keep\n"
    "growing over the run. The run is cut into 24 windows of equal allocation; at\n"
    "each window's end a site's bytes that collections kept (promoted, or surviving\n"
    "a major collection) count, blocks younger than a window ignored, up to the\n"
    "last major collection seen. A leak is a trend that sampling noise cannot\n"
    "explain (z >= 4) and that holds in each third of the run. Ranked by growth:\n"
    "the share of the bytes allocated that the site keeps (95 % interval), also per\n"
    "second, with the live bytes at each window's end and the callstack. Prints one\n"
    "line saying so when no site qualifies.\n"
    "  --by KEY   site (default), function or file\n"
    "  -n N       show N leaks (default 10; 0: all)\n"
    "  --all      also list the sites tested that did not qualify, with their figures\n"
    "  --whole-stacks  callstacks whole (default: recursion folded, \"f \u00d7N\")\n"
    "  --json     JSON (schema: tools/memtrace_cli/README.md)\n"
    "  -o OUT     write to OUT instead of stdout\n",
};

// ---------------------------------------------------------------- output

static void print_leak(const Profile *p, const RowOptions *o, const Leak *l, uint32_t rank) {
  char a[OUT_TEXT_MAX];
  uint32_t to = leak_last_judged(p);
  printf("%3u. keeps %.3g%% of the bytes allocated [%.3g%%, %.3g%%] (%s/s), z = %.1f; thirds: %.3g%% %.3g%% %.3g%%\n    ",
         rank, 100 * l->whole.slope, 100 * (l->whole.slope - LEAK_Z95 * l->whole.sd),
         100 * (l->whole.slope + LEAK_Z95 * l->whole.sd), out_bytes(a, l->whole.slope * leak_allocation_rate(p)), l->whole.z,
         100 * l->part[0].slope, 100 * l->part[1].slope, 100 * l->part[2].slope);
  out_group_key(stdout, p, o->by, l->stack);
  putchar('\n');
  out_callers(stdout, p, l->stack, "      ", 16);
  printf("    kept live at each window's end:");
  for (uint32_t i = 2; i <= to; i++) printf(" %s", out_bytes(a, l->series[i] * profile_sample_bytes(p)));
  putchar('\n');
}

static void print_heading(const Loaded *ld, const RowOptions *o, const LeakAnalysis *an) {
  const Profile *p = ld->profile;
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX];
  uint32_t to = leak_last_judged(p);
  printf("%s: %llu samples at rate %g, %s of trace, %u windows of equal allocation\n", ld->path,
         (unsigned long long)profile_totals(p)->samples, profile_rate(p),
         out_duration(a, (double)profile_summary(p)->last_us), profile_windows(p));
  load_print_partial(stdout, ld);
  if (profile_major_collections(p))
    printf("judged up to %s (window %u), the last major collection seen (of %llu): past it, old blocks may be "
           "garbage\n", out_duration(b, (double)profile_checkpoint_time(p, to)), to,
           (unsigned long long)profile_major_collections(p));
  else
    printf("no major collection seen: only promotions prove old blocks reachable\n");
  if (to < LEAK_MIN_POINTS + 1)
    printf("no leak can be judged: fewer than %u windows before that\n", LEAK_MIN_POINTS);
  else if (!an->n_leaking)
    printf("no leak: no %s's kept bytes grow beyond sampling noise all over the run (%u with kept blocks "
           "tested)\n", out_by_name(o->by), an->n);
  else
    printf("%u %s%s whose kept bytes grow all over the run (of %u tested), fastest first: the share of the\n"
           "bytes allocated that it keeps [95%%] (per second at this run's allocation rate), over the run and\n"
           "each third of it\n\n", an->n_leaking, out_by_name(o->by), an->n_leaking > 1 ? "s" : "", an->n);
}

static void print_text(const Loaded *ld, const RowOptions *o, const LeakAnalysis *an) {
  const Profile *p = ld->profile;
  print_heading(ld, o, an);
  uint32_t shown = o->rows && o->rows < an->n_leaking ? o->rows : an->n_leaking;
  for (uint32_t i = 0; i < shown; i++) print_leak(p, o, &an->leaks[i], i + 1);
  if (shown < an->n_leaking) printf("(%u more: -n 0 shows all)\n", an->n_leaking - shown);
  if (!o->all) return;
  printf("\nnot leaking (z over the run and each third; share of the allocation kept):\n");
  for (uint32_t i = an->n_leaking; i < an->n; i++) {
    const Leak *l = &an->leaks[i];
    printf("  z %6.1f %6.1f %6.1f %6.1f  %8.3g%%  ", l->whole.z, l->part[0].z, l->part[1].z, l->part[2].z,
           100 * l->whole.slope);
    out_group_key(stdout, p, o->by, l->stack);
    putchar('\n');
  }
}

static void json_trend(Json *j, const char *key, const LeakTrend *t) {
  json_object(j, key);
  json_number(j, "share", t->slope);
  json_interval(j, "interval", t->slope - LEAK_Z95 * t->sd, t->slope + LEAK_Z95 * t->sd);
  json_number(j, "z", t->z);
  json_end_object(j);
}

static void json_leak(Json *j, const Profile *p, const RowOptions *o, const Leak *l, uint32_t rank) {
  uint32_t to = leak_last_judged(p);
  json_object(j, NULL);
  json_uint(j, "rank", rank);
  json_bool(j, "leaks", l->leaks);
  json_group_key(j, p, o->by, l->stack);
  json_stack(j, "stack", p, l->stack);
  json_trend(j, "growth", &l->whole);
  json_array(j, "thirds");
  for (int i = 0; i < 3; i++) json_trend(j, NULL, &l->part[i]);
  json_end_array(j);
  json_number(j, "growth_bytes_per_s", l->whole.slope * leak_allocation_rate(p));
  json_number(j, "live_bytes_judged_end", l->series[to] * profile_sample_bytes(p));
  json_array(j, "series_bytes");
  for (uint32_t k = 1; k <= profile_windows(p); k++) json_number(j, NULL, l->series[k] * profile_sample_bytes(p));
  json_end_array(j);
  json_end_object(j);
}

static void print_json(const Loaded *ld, const RowOptions *o, const LeakAnalysis *an) {
  const Profile *p = ld->profile;
  Json j;
  load_json_begin(&j, stdout, "leaks", ld);
  json_string(&j, "by", out_by_name(o->by));
  json_uint(&j, "windows", profile_windows(p));
  json_array(&j, "checkpoints_s");
  for (uint32_t k = 1; k <= profile_windows(p); k++) json_number(&j, NULL, (double)profile_checkpoint_time(p, k) / 1e6);
  json_end_array(&j);
  json_array(&j, "checkpoints_allocated_bytes");
  for (uint32_t k = 1; k <= profile_windows(p); k++)
    json_number(&j, NULL, (double)profile_checkpoint_clock(p, k) * profile_sample_bytes(p));
  json_end_array(&j);
  json_uint(&j, "major_collections", profile_major_collections(p));
  json_uint(&j, "judged_windows", leak_last_judged(p));
  json_object(&j, "criteria");
  json_number(&j, "z_min", LEAK_Z);
  json_number(&j, "z_third_min", LEAK_Z_PART);
  json_number(&j, "third_share_min", LEAK_PART_SHARE);
  json_uint(&j, "windows_min", LEAK_MIN_POINTS + 1);
  json_end_object(&j);
  json_uint(&j, "tested", an->n);
  uint32_t shown = o->rows && o->rows < an->n_leaking ? o->rows : an->n_leaking;
  json_array(&j, "leaks");
  for (uint32_t i = 0; i < shown; i++) json_leak(&j, p, o, &an->leaks[i], i + 1);
  json_end_array(&j);
  json_uint(&j, "leaks_omitted", an->n_leaking - shown);
  if (o->all) {
    json_array(&j, "not_leaking");
    for (uint32_t i = an->n_leaking; i < an->n; i++) json_leak(&j, p, o, &an->leaks[i], i + 1);
    json_end_array(&j);
  }
  json_end_object(&j);
  json_finish(&j);
}

int cmd_leaks(int argc, char **argv) {
  RowOptions o;
  int status = load_parse_rows(&usage, argc, argv, 10, true, &o);
  if (status != TOOL_CONTINUE) return status;
  ProfileOptions popts = {.windows = LEAK_WINDOWS};
  Loaded l;
  ProfileGroups *g;
  if (load_grouped(&usage, o.path, &popts, o.by, &l, &g) != 0) return 1;
  LeakAnalysis an = {0};
  if (!leak_analyse(l.profile, g, &an)) xalloc_fail();
  (o.json ? print_json : print_text)(&l, &o, &an);
  leak_analysis_free(&an);
  return load_finish_grouped(&usage, &l, g);
}
