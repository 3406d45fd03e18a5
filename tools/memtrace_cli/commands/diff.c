// diff.c - `memtrace diff A B`: per allocation site (function, file, stack),
// the change in estimated bytes allocated (live at the end, promoted) from
// trace A to trace B, and whether sampling noise alone could explain it.
//
// Sites of the two traces are matched by their stable keys (profile.h:
// location strings, not frame codes, which differ between runs). Each side
// is unbiased with its own rate first. The test (stats_diff_pvalue) asks
// only whether the two estimates could come from the same bytes through
// sampling; a difference between two runs of a program (inputs, timing) is
// real even when it is small, and this test does not judge that. A change is
// marked significant at 5 % after Bonferroni's correction over the keys
// compared (p < 0.05 / keys).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/output.h"
#include "../analysis/stack_budget.h"
#include "../../../base/hash.h"
#include "../cli/load.h"
#include "commands.h"

static const ToolUsage usage = {
    "diff",
    "usage: memtrace diff [OPTIONS] A B\n"
    "Compares the traces A and B (\"-\" for one of them: stdin) site by site: the\n"
    "estimated bytes allocated in each (95 % intervals), the change B - A, the\n"
    "ratio, and p, the chance that sampling alone gives a difference at least this\n"
    "large (exact conditional binomial test on the samples); * marks a change\n"
    "significant at 5 % after Bonferroni's correction over the keys compared.\n"
    "Ranked by the size of the change.\n"
    "  --live       bytes live at the end of each trace\n"
    "  --promoted   bytes promoted (not with --live)\n"
    "  --by KEY     site (default), function, file or stack; holder: what each\n"
    "               holder keeps at two snapshots (memtrace help diff --by holder)\n"
    "  --strip-prefix P  sites match with P taken off the start of their file\n"
    "               names (the same script run from another directory); with\n"
    "               --strip-prefix-b PB, B's names lose PB instead (every\n"
    "               frame's file, with --by stack)\n"
    "  -n N         show N rows (default 20; 0: all)\n"
    "  --whole-stacks  callers whole (default: recursion folded, \"f \u00d7N\")\n"
    "  --json       JSON (schema: tools/memtrace_cli/README.md)\n"
    "  --max-frames N  --by stack --json: at most N frames of stacks written in all\n"
    "               (default 4194304; 0: no limit); a row's stack past it is\n"
    "               {\"frames_left_out\": N}, said on stderr\n"
    "  -o OUT       write to OUT instead of stdout\n",
};

typedef enum Metric { METRIC_ALLOCATED, METRIC_LIVE, METRIC_PROMOTED } Metric;

typedef struct Options {
  Metric metric;
  ProfileBy by;
  uint32_t rows;
  bool json;
  const char *path[2];
  const char *strip[2];   // the prefix taken off A's and B's file names, or NULL
} Options;

static int parse_options(int argc, char **argv, Options *o) {
  *o = (Options){.metric = METRIC_ALLOCATED, .by = PROFILE_BY_SITE, .rows = 20};
  bool live = false, promoted = false, whole = false;
  uint32_t max_frames = TOOL_MAX_FRAMES_UNSET;
  const char *out = NULL;
  const ToolOption options[] = {
      {"--live", NULL, &live, NULL, NULL, 0, 0},
      {"--promoted", NULL, &promoted, NULL, NULL, 0, 0},
      LOAD_OPTION_BY(&o->by),
      TOOL_OPTION_WHOLE_STACKS(&whole),
      TOOL_OPTION_ROWS(&o->rows),
      TOOL_OPTION_JSON(&o->json),
      TOOL_OPTION_MAX_FRAMES(&max_frames),
      TOOL_OPTION_OUTPUT(&out),
      {"--strip-prefix", "P", &o->strip[0], NULL, NULL, 0, 0},
      {"--strip-prefix-b", "PB", &o->strip[1], NULL, NULL, 0, 0},
  };
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 2, 2, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  o->path[0] = args.files[0];
  o->path[1] = args.files[1];
  out_set_whole_stacks(whole);
  if (whole && o->by != PROFILE_BY_STACK) return tool_usage_error(&usage, "--whole-stacks goes with --by stack");
  status = tool_max_frames(&usage, max_frames, o->by == PROFILE_BY_STACK && o->json, "--by stack --json");
  if (status != TOOL_CONTINUE) return status;
  if (strcmp(o->path[0], "-") == 0 && strcmp(o->path[1], "-") == 0)
    return tool_usage_error(&usage, "stdin can be only one of the two traces");
  if (live && promoted) return tool_usage_error(&usage, "--live and --promoted exclude each other");
  if (o->strip[1] && !o->strip[0]) return tool_usage_error(&usage, "--strip-prefix-b goes with --strip-prefix");
  if (o->strip[0] && !*o->strip[0]) return tool_usage_error(&usage, "--strip-prefix: an empty prefix strips nothing");
  if (o->strip[0] && !o->strip[1]) o->strip[1] = o->strip[0];
  o->metric = live ? METRIC_LIVE : promoted ? METRIC_PROMOTED : METRIC_ALLOCATED;
  return tool_output_to(&usage, out) ? TOOL_CONTINUE : 1;
}

static const char *metric_name(Metric m) {
  return m == METRIC_LIVE ? "live" : m == METRIC_PROMOTED ? "promoted" : "allocated";
}

// After profile_finish, at_* hold the live counts at the end.
static uint64_t metric_samples(const ProfileCounts *c, Metric m) {
  return m == METRIC_LIVE ? c->at_samples : m == METRIC_PROMOTED ? c->promoted_samples : c->samples;
}

// ---------------------------------------------------------------- matching

typedef struct Pair {
  uint64_t key;
  uint32_t row[2];   // group row in A and in B, PROFILE_NONE when absent
  Tally t[2];
  double change, p;
} Pair;

typedef struct Comparison {
  Pair *pairs;
  uint32_t n;
  Tally total[2];
  double total_p;
} Comparison;

static int by_change(const void *a, const void *b) {
  const Pair *x = a, *y = b;
  double cx = fabs(x->change), cy = fabs(y->change);
  if (cx != cy) return cx > cy ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

// --by stack with --strip-prefix: every node's key from its parent's and
// its frame's locations, each with the prefix taken off its file (a frame
// without location: its code), in one pass over the nodes (parents come
// first), so that a row's key is then one lookup, whatever its depth.
static uint64_t *stripped_node_keys(const Profile *p, const char *strip) {
  uint32_t n = profile_n_nodes(p);
  uint64_t *keys = malloc(((size_t)n + 1) * sizeof *keys);
  if (!keys) return NULL;
  size_t len = strlen(strip);
  keys[0] = 0x737472697070ull;   // the root
  for (ProfileNodeId id = 1; id < n; id++) {
    const TraceReaderLocation *locs;
    int k = profile_node_locations(p, id, &locs);
    uint64_t key = hash_combine(keys[profile_node_parent(p, id)], (uint64_t)(k > 0 ? k : 0));
    if (k <= 0) key = hash_combine(key, profile_node_code(p, id));
    for (int i = 0; i < k; i++) {
      TraceReaderLocation l = locs[i];
      if (l.file && strncmp(l.file, strip, len) == 0) l.file += len;
      key = hash_combine(key, profile_location_key(&l, PROFILE_BY_SITE));
    }
    keys[id] = key;
  }
  return keys;
}

// A row's key: the grouping's, or with `strip` (not NULL) the key of its
// site's location with that prefix taken off its file name (a file that
// does not start with it keeps its name); --by stack, of every frame's
// (node_keys: stripped_node_keys).
static uint64_t row_key(const Profile *p, const ProfileGroups *g, uint32_t r, ProfileBy by, const char *strip,
                        const uint64_t *node_keys) {
  if (!strip) return g->rows[r].key;
  if (by == PROFILE_BY_STACK) return node_keys[profile_stack_leaf(p, g->rows[r].first)];
  const ProfileSite *site = profile_site(p, profile_stack_site(p, g->rows[r].first));
  if (!site->located) return g->rows[r].key;
  TraceReaderLocation l = site->loc;
  size_t n = strlen(strip);
  if (strncmp(l.file, strip, n) == 0) l.file += n;
  return profile_location_key(&l, by);
}

// The key of a row's site with its file cut to its last component, 0 for a
// site without location (part of the hint below).
static uint64_t basename_key(const Profile *p, const ProfileGroups *g, uint32_t r, ProfileBy by) {
  const ProfileSite *site = profile_site(p, profile_stack_site(p, g->rows[r].first));
  if (!site->located) return 0;
  TraceReaderLocation l = site->loc;
  const char *slash = strrchr(l.file, '/');
  if (slash) l.file = slash + 1;
  return profile_location_key(&l, by) | 1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

// Not silent (issue 32 class 5): when rows found on one side only match
// rows on the other side but for their files' directories (the same script
// run from another directory), says so on stderr, with an example and the
// option that matches them. Returns how many matched so.
static uint32_t hint_moved_files(Profile *const prof[2], ProfileGroups *const g[2], const Options *o,
                                 const Comparison *c) {
  if (o->strip[0] || o->by == PROFILE_BY_STACK) return 0;
  uint64_t *only_a = malloc(((size_t)c->n + 1) * sizeof *only_a);
  uint32_t n_a = 0, moved = 0;
  if (!only_a) return 0;
  for (uint32_t i = 0; i < c->n; i++)
    if (c->pairs[i].row[1] == PROFILE_NONE) {
      uint64_t k = basename_key(prof[0], g[0], c->pairs[i].row[0], o->by);
      if (k) only_a[n_a++] = k;
    }
  qsort(only_a, n_a, sizeof *only_a, cmp_u64);
  const Pair *example = NULL;
  for (uint32_t i = 0; i < c->n && n_a; i++) {
    if (c->pairs[i].row[0] != PROFILE_NONE) continue;
    uint64_t k = basename_key(prof[1], g[1], c->pairs[i].row[1], o->by);
    if (k && bsearch(&k, only_a, n_a, sizeof *only_a, cmp_u64)) {
      moved++;
      if (!example) example = &c->pairs[i];
    }
  }
  free(only_a);
  if (moved) {
    const ProfileSite *b = profile_site(prof[1], profile_stack_site(prof[1], g[1]->rows[example->row[1]].first));
    fprintf(stderr, "memtrace diff: %u %s of B match%s %s of A but for the directory of %s file (e.g. %s): the "
            "same script from another directory? --strip-prefix DIR_OF_A/ --strip-prefix-b DIR_OF_B/ matches them\n",
            moved, moved == 1 ? "row" : "rows", moved == 1 ? "es" : "", moved == 1 ? "a row" : "rows",
            moved == 1 ? "its" : "their", b->loc.file);
  }
  return moved;
}

// Pairs the rows of the two groupings by key.
static bool compare(Profile *const prof[2], ProfileGroups *const g[2], const Options *o, Comparison *out) {
  Metric m = o->metric;
  uint32_t cap = g[0]->n + g[1]->n + 1, slots = 16;
  while (slots < 2 * cap) slots *= 2;
  uint32_t *index = calloc(slots, sizeof *index);  // pair + 1
  *out = (Comparison){malloc((size_t)cap * sizeof *out->pairs), 0, {{0}}, 1};
  if (!index || !out->pairs) return free(index), false;
  for (int side = 0; side < 2; side++) {
    uint64_t *node_keys = o->strip[side] && o->by == PROFILE_BY_STACK ? stripped_node_keys(prof[side], o->strip[side]) : NULL;
    if (o->strip[side] && o->by == PROFILE_BY_STACK && !node_keys) return free(index), false;
    for (uint32_t r = 0; r < g[side]->n; r++) {
      uint64_t key = row_key(prof[side], g[side], r, o->by, o->strip[side], node_keys);
      uint32_t j = (uint32_t)(hash_mix(key) & (slots - 1));
      while (index[j] && out->pairs[index[j] - 1].key != key) j = (j + 1) & (slots - 1);
      if (!index[j]) {
        out->pairs[out->n] = (Pair){key, {PROFILE_NONE, PROFILE_NONE},
                                    {profile_tally(prof[0], 0), profile_tally(prof[1], 0)}, 0, 1};
        index[j] = ++out->n;
      }
      Pair *pair = &out->pairs[index[j] - 1];
      pair->row[side] = r;
      ProfileCounts counts = profile_group_counts(prof[side], g[side], r);
      pair->t[side] = profile_tally(prof[side], metric_samples(&counts, m));
    }
    free(node_keys);
  }
  free(index);
  for (uint32_t i = 0; i < out->n; i++) {
    Pair *pair = &out->pairs[i];
    pair->change = pair->t[1].bytes - pair->t[0].bytes;
    pair->p = stats_diff_pvalue(&pair->t[0], &pair->t[1]);
  }
  for (int side = 0; side < 2; side++)
    out->total[side] = profile_tally(prof[side], metric_samples(profile_totals(prof[side]), m));
  out->total_p = stats_diff_pvalue(&out->total[0], &out->total[1]);
  qsort(out->pairs, out->n, sizeof *out->pairs, by_change);
  return true;
}

// A pair with samples on neither side tells nothing (a site that allocated
// but promoted nothing, with --promoted): it is not compared.
static uint32_t compared(const Comparison *c) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < c->n; i++) n += c->pairs[i].t[0].samples + c->pairs[i].t[1].samples > 0;
  return n;
}

// ---------------------------------------------------------------- output

typedef struct Sides {
  const Loaded *l[2];
  ProfileGroups *g[2];
} Sides;

// The side whose profile names the pair (A when it has it).
static int naming_side(const Pair *pair) { return pair->row[0] != PROFILE_NONE ? 0 : 1; }

static void print_side(const char *name, const Loaded *l, Metric m) {
  const Profile *p = l->profile;
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX];
  Tally t = profile_tally(p, metric_samples(profile_totals(p), m));
  printf("%s: %s: %llu samples at rate %g, %s of trace, %s %s\n", name, l->path,
         (unsigned long long)profile_totals(p)->samples, profile_rate(p),
         out_duration(a, (double)profile_summary(p)->last_us), out_bytes(b, t.bytes), metric_name(m));
  load_print_partial(stdout, l);
}

static const char *p_text(char buf[OUT_TEXT_MAX], double p) {
  if (p < 1e-99) snprintf(buf, OUT_TEXT_MAX, "<1e-99");
  else if (p < 0.001) snprintf(buf, OUT_TEXT_MAX, "%.0e", p);
  else snprintf(buf, OUT_TEXT_MAX, "%.3f", p);
  return buf;
}

static void print_text(const Sides *s, const Options *o, const Comparison *c) {
  print_side("A", s->l[0], o->metric);
  print_side("B", s->l[1], o->metric);
  uint32_t keys = compared(c);
  double alpha = keys ? 0.05 / keys : 0.05;
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], d[OUT_TEXT_MAX], e[OUT_TEXT_MAX];
  printf("bytes %s by %s, B - A; p: chance that sampling alone gives a difference this large (exact\n"
         "conditional binomial test); * significant at 5%% after Bonferroni over %u %s%s (p < %.2g)\n",
         metric_name(o->metric), out_by_name(o->by), keys, out_by_name(o->by), keys == 1 ? "" : "s", alpha);
  printf("total %s -> %s (%s%s, p %s)\n\n", out_bytes(a, c->total[0].bytes), out_bytes(b, c->total[1].bytes),
         c->total[1].bytes >= c->total[0].bytes ? "+" : "", out_bytes(d, c->total[1].bytes - c->total[0].bytes),
         p_text(e, c->total_p));
  printf("rank            A            B       change    ratio        p    %s\n",
         o->by == PROFILE_BY_STACK ? "site and callers" : out_by_name(o->by));
  uint32_t shown = o->rows && o->rows < keys ? o->rows : keys;
  OutFolds *folds[2] = {NULL, NULL};   // by stack: each side's rows share deep paths
  for (uint32_t i = 0, rank = 0; rank < shown && i < c->n; i++) {
    const Pair *pair = &c->pairs[i];
    if (pair->t[0].samples + pair->t[1].samples == 0) continue;
    char ratio[OUT_TEXT_MAX];
    if (pair->t[0].bytes > 0) snprintf(ratio, sizeof ratio, "%.2fx", pair->t[1].bytes / pair->t[0].bytes);
    else snprintf(ratio, sizeof ratio, "new");
    char change[OUT_TEXT_MAX + 2];
    snprintf(change, sizeof change, "%s%s", pair->change >= 0 ? "+" : "", out_bytes(d, pair->change));
    printf("%4u %12s %12s %12s %8s %8s %s  ", ++rank, out_bytes(a, pair->t[0].bytes), out_bytes(b, pair->t[1].bytes),
           change, ratio, p_text(e, pair->p), pair->p < alpha ? "*" : " ");
    int side = naming_side(pair);
    const Profile *p = s->l[side]->profile;
    ProfileStackId first = s->g[side]->rows[pair->row[side]].first;
    out_group_key(stdout, p, o->by, first);
    putchar('\n');
    if (o->by == PROFILE_BY_STACK) {
      if (!folds[side]) folds[side] = out_folds_new(p);
      out_callers_folded(stdout, folds[side], first, "        ", 12);
    }
  }
  out_folds_free(folds[0]);
  out_folds_free(folds[1]);
  if (shown < keys) printf("(%u more rows: -n 0 shows all)\n", keys - shown);
  if (!keys) printf("(no samples in either trace)\n");
}

static void json_side(Json *j, const char *key, const Tally *t) {
  Interval iv = tally_interval(t);
  json_object(j, key);
  json_number(j, "bytes", t->bytes);
  json_interval(j, "interval", iv.lo, iv.hi);
  json_uint(j, "samples", t->samples);
  json_end_object(j);
}

static void print_json(const Sides *s, const Options *o, const Comparison *c) {
  Json j;
  json_init(&j, stdout);
  json_object(&j, NULL);
  json_string(&j, "command", "diff");
  json_trace_as(&j, "a", s->l[0]->path, s->l[0]->profile);
  json_trace_as(&j, "b", s->l[1]->path, s->l[1]->profile);
  json_bool(&j, "partial", s->l[0]->partial || s->l[1]->partial);
  if (s->l[0]->partial || s->l[1]->partial) json_string(&j, "error", s->l[0]->partial ? s->l[0]->error : s->l[1]->error);
  else json_null(&j, "error");
  json_string(&j, "metric", metric_name(o->metric));
  json_string(&j, "by", out_by_name(o->by));
  uint32_t keys = compared(c);
  json_uint(&j, "keys_compared", keys);
  json_number(&j, "alpha", keys ? 0.05 / keys : 0.05);
  json_object(&j, "total");
  json_side(&j, "a", &c->total[0]);
  json_side(&j, "b", &c->total[1]);
  json_number(&j, "change_bytes", c->total[1].bytes - c->total[0].bytes);
  json_number(&j, "p", c->total_p);
  json_end_object(&j);
  uint32_t shown = o->rows && o->rows < keys ? o->rows : keys;
  json_array(&j, "rows");
  for (uint32_t i = 0, rank = 0; rank < shown && i < c->n; i++) {
    const Pair *pair = &c->pairs[i];
    if (pair->t[0].samples + pair->t[1].samples == 0) continue;
    int side = naming_side(pair);
    json_object(&j, NULL);
    json_uint(&j, "rank", ++rank);
    json_group_key(&j, s->l[side]->profile, o->by, s->g[side]->rows[pair->row[side]].first);
    json_side(&j, "a", &pair->t[0]);
    json_side(&j, "b", &pair->t[1]);
    json_number(&j, "change_bytes", pair->change);
    if (pair->t[0].bytes > 0) json_number(&j, "ratio", pair->t[1].bytes / pair->t[0].bytes);
    else json_null(&j, "ratio");
    json_number(&j, "p", pair->p);
    json_bool(&j, "significant", pair->p < (keys ? 0.05 / keys : 0.05));
    json_end_object(&j);
  }
  json_end_array(&j);
  json_uint(&j, "rows_omitted", keys - shown);
  json_end_object(&j);
  json_finish(&j);
}

// Whether the arguments ask for --by holder (diff_holder.c answers).
static bool by_holder(int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--by=holder") == 0 || (strcmp(argv[i], "--by") == 0 && i + 1 < argc && strcmp(argv[i + 1], "holder") == 0))
      return true;
  return false;
}

int cmd_diff(int argc, char **argv) {
  if (by_holder(argc, argv)) return cmd_diff_holder(argc, argv);
  Options o;
  int status = parse_options(argc, argv, &o);
  if (status != TOOL_CONTINUE) return status;
  Loaded l[2] = {{0}, {0}};
  // Allocated counts need no block's death: no live table (a quarter less time).
  bool allocations_only = o.metric == METRIC_ALLOCATED;
  ProfileOptions popts[2] = {{.allocations_only = allocations_only}, {.allocations_only = allocations_only}};
  if (load_trace(&usage, o.path[0], &popts[0], NULL, &l[0])) return 1;
  if (load_trace(&usage, o.path[1], &popts[1], NULL, &l[1])) {
    load_close(&l[0]);
    return 1;
  }
  LoadIdentity id[2] = {load_identity(&l[0]), load_identity(&l[1])};
  if (load_same_recording(&id[0], &id[1]))
    load_warn_same_recording(&usage, o.path[0], o.path[1], &id[0],
                             "a change shows only where one of them is cut short");
  Sides s = {{&l[0], &l[1]}, {profile_group(l[0].profile, o.by), profile_group(l[1].profile, o.by)}};
  Profile *prof[2] = {l[0].profile, l[1].profile};
  Comparison c = {0};
  if (!s.g[0] || !s.g[1] || !compare(prof, s.g, &o, &c)) {
    fprintf(stderr, "memtrace diff: out of memory\n");
    status = 1;
  } else {
    hint_moved_files(prof, s.g, &o, &c);
    if (o.json) print_json(&s, &o, &c);
    else print_text(&s, &o, &c);
    stack_budget_note(usage.name, 0);
    int a = load_status(&usage, &l[0]), b = load_status(&usage, &l[1]);
    status = a || b;
  }
  free(c.pairs);
  for (int i = 0; i < 2; i++) {
    profile_groups_free(s.g[i]);
    load_close(&l[i]);
  }
  return status;
}
