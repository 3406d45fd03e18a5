// diff_holder.c - `memtrace diff --by holder`: what each holder keeps at one
// snapshot and at another (of one trace, or one of each of two traces), the
// change, and whether sampling alone could explain it.
//
// 1. Holders are matched by their text (trace/snapshot_holder.h, erased: the
//    same in every snapshot and every run of a program), each side's blocks
//    gathered from the snapshot's paths.
// 2. Two snapshots of one trace list the same blocks by id: per holder, the
//    sampled blocks kept at the second and not the first (new) and the
//    other way (gone). A holder that only turns over gives new and gone
//    independent Poisson counts of equal mean (leaks' series rule, kept.h),
//    so p = P(Binomial(new + gone, 1/2) >= max(new, gone)) x 2, two-sided.
// 3. Two traces share no block: p is diff's test on the kept samples, each
//    side at its own rate (stats_diff_pvalue).
// 4. A change is marked significant at 5 % after Bonferroni's correction over
//    the holders compared, as diff marks sites. Rows by the size of the
//    change.
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../trace/snapshot_holder.h"
#include "../analysis/kept.h"
#include "../analysis/retain_text.h"
#include "../../../base/hash.h"
#include "../base/xalloc.h"
#include "../cli/kept_load.h"
#include "commands.h"

static const ToolUsage usage = {
    "diff",
    "usage: memtrace diff --by holder [--from N] [--to M] [--retain FILE] [-n N] [--json] [-o OUT] A [B]\n"
    "Compares what each holder keeps (memtrace paths --by holder) at two snapshots:\n"
    "of the trace A (--from and --to: its first usable snapshot and its end state,\n"
    "else its last), or of the traces A and B (A's at --from, B's at --to; each its\n"
    "end state, else its last). Per holder the estimated bytes kept at each (95 %\n"
    "intervals), the change, and p, the chance that sampling alone gives a change at\n"
    "least this large: of one trace, from the sampled blocks kept at the second and\n"
    "not the first (new) and the other way (gone), two-sided binomial; of two\n"
    "traces, diff's exact conditional test on the samples. * marks a change\n"
    "significant at 5 % after Bonferroni's correction over the holders compared.\n"
    "Ranked by the size of the change.\n"
    "  --from N       the first snapshot: its number, 'end', or a time (1.5s, P%)\n"
    "  --to M         the second snapshot, the same way\n"
    "  --retain FILE  with one trace: its snapshot file (default: A.retain)\n"
    "  -n N           show N rows (default 20; 0: all)\n"
    "  --json         JSON (schema: tools/memtrace_cli/README.md)\n"
    "  -o OUT         write to OUT instead of stdout\n"
    "A snapshot file damaged, or --from/--to naming no usable snapshot: said on\n"
    "stderr, exit status 1.\n",
};

typedef struct Options {
  const char *path[2], *retain;
  SnapPick from, to;
  uint32_t rows;
  bool json, two;
} Options;

// One holder of either side.
typedef struct Row {
  char *text;
  const RetainPath *example;      // for JSON: a path of it (either side)
  uint64_t samples[2], blocks[2];
  uint64_t fresh, gone;           // one trace: sampled blocks new at the second, gone from the first
  Tally t[2];
  double change, p;
} Row;

typedef struct Side {
  Loaded l;
  Snapshots s;
  int64_t k;
  bool loaded;
} Side;

typedef struct Held {   // one trace: a block kept by a holder
  uint32_t row;
  uint64_t id;
} Held;

typedef struct Table {
  Row *rows;
  uint32_t n, cap;
  uint32_t *slots;      // row + 1, by the text's hash
  uint64_t mask;
} Table;

// The row of a holder's text (made if new; `text` is taken or freed).
static uint32_t row_of(Table *t, char *text) {
  if (2 * ((uint64_t)t->n + 1) > (t->slots ? t->mask + 1 : 0)) {
    uint64_t cap = t->slots ? 2 * (t->mask + 1) : 256;
    uint32_t *slots = xrealloc(NULL, cap * sizeof *slots);
    memset(slots, 0, cap * sizeof *slots);
    for (uint32_t i = 0; i < t->n; i++) {
      uint64_t j = hash_string(t->rows[i].text) & (cap - 1);
      while (slots[j]) j = (j + 1) & (cap - 1);
      slots[j] = i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
  }
  uint64_t j = hash_string(text) & t->mask;
  for (; t->slots[j]; j = (j + 1) & t->mask)
    if (strcmp(t->rows[t->slots[j] - 1].text, text) == 0) {
      free(text);
      return t->slots[j] - 1;
    }
  if (t->n == t->cap) t->rows = xrealloc(t->rows, (t->cap = 2 * t->cap + 64) * sizeof *t->rows);
  t->rows[t->n] = (Row){.text = text, .p = 1};
  t->slots[j] = t->n + 1;
  return t->n++;
}

// Each block of side `side`'s snapshot into its holder's row; with `held`,
// the (row, id) pairs too.
static void gather(Table *t, const Side *sd, int side, Held **held, uint64_t *n_held) {
  uint32_t k = (uint32_t)sd->k;
  uint64_t n = snapshots_paths(&sd->s, k);
  if (held) {
    *held = xrealloc(NULL, (n ? n : 1) * sizeof **held);
    *n_held = n;
  }
  SnapshotPathView v;
  for (uint64_t i = 0; i < n; i++) {
    const RetainPath *path = snapshots_path_view(&sd->s, k, i, &v);
    uint32_t depth;
    uint32_t r = row_of(t, retain_path_string(path, retain_holder_cut(path, &depth), true));
    Row *row = &t->rows[r];
    if (!row->example) row->example = snapshots_path(&sd->s, k, i);   // kept: a view is not
    row->samples[side] += snapshots_block(&sd->s, k, i)->samples;
    row->blocks[side]++;
    if (held) (*held)[i] = (Held){r, path->alloc_id};
  }
}

static int by_row_id(const void *a, const void *b) {
  const Held *x = a, *y = b;
  if (x->row != y->row) return x->row < y->row ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

// One trace: new and gone blocks per holder.
static void count_turnover(Table *t, Held *a, uint64_t na, Held *b, uint64_t nb) {
  qsort(a, na, sizeof *a, by_row_id);
  qsort(b, nb, sizeof *b, by_row_id);
  uint64_t i = 0, j = 0;
  while (i < na || j < nb) {
    int c = i == na ? 1 : j == nb ? -1 : by_row_id(&a[i], &b[j]);
    if (c < 0) t->rows[a[i++].row].gone++;
    else if (c > 0) t->rows[b[j++].row].fresh++;
    else i++, j++;
  }
}

static int by_change(const void *a, const void *b) {
  const Row *x = a, *y = b;
  double cx = fabs(x->change), cy = fabs(y->change);
  if (cx != cy) return cx > cy ? -1 : 1;
  return strcmp(x->text, y->text);
}

// ---------------------------------------------------------------- output

static void side_text(const Side *sd, const char *what) {
  char t[OUT_TEXT_MAX];
  const Snapshot *snap = sd->s.snaps[sd->k].s;
  printf("%s: %s snapshot %" PRIu64 " (%s, at %s)\n", what, sd->l.path, snap->number,
         retain_trigger_name(snap->trigger), out_duration(t, (double)snapshots_time(&sd->s, (uint32_t)sd->k)));
}

// sd[0] the first snapshot's side, sd[1] the second's (of one trace: the
// same trace, its k the second's).
static void print_text(const Options *o, const Side *sd, const Table *t, double alpha) {
  side_text(&sd[0], "from");
  side_text(&sd[1], "to  ");
  printf("kept by holder: estimated bytes at each, the change, p (%s); * significant at 5 %% over %u holders\n\n",
         o->two ? "the samples' conditional test" : "new and gone sampled blocks, two-sided", t->n);
  printf("rank %12s %12s %13s %6s %6s %9s  holder\n", "from", "to", "change", "new", "gone", "p");
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX];
  for (uint32_t i = 0; i < t->n && (!o->rows || i < o->rows); i++) {
    const Row *r = &t->rows[i];
    char change[OUT_TEXT_MAX + 2];
    snprintf(change, sizeof change, "%s%s", r->change > 0 ? "+" : r->change < 0 ? "-" : "",
             out_bytes(c, fabs(r->change)));
    char fresh[24] = "-", gone[24] = "-";
    if (!o->two) {
      snprintf(fresh, sizeof fresh, "%" PRIu64, r->fresh);
      snprintf(gone, sizeof gone, "%" PRIu64, r->gone);
    }
    printf("%4u %12s %12s %12s%c %6s %6s %9.2g  %s\n", i + 1, out_bytes(a, r->t[0].bytes), out_bytes(b, r->t[1].bytes),
           change, r->p < alpha ? '*' : ' ', fresh, gone, r->p, r->text);
  }
  if (o->rows && t->n > o->rows) printf("(%u more: -n 0 shows all)\n", t->n - o->rows);
}

static void json_side(Json *j, const char *key, const Side *sd) {
  const Snapshot *snap = sd->s.snaps[sd->k].s;
  json_object(j, key);
  json_string(j, "trace", sd->l.path);
  json_uint(j, "snapshot", snap->number);
  json_string(j, "trigger", retain_trigger_name(snap->trigger));
  json_number(j, "time_s", (double)snapshots_time(&sd->s, (uint32_t)sd->k) / 1e6);
  json_end_object(j);
}

static void print_json(const Options *o, const Side *sd, const Table *t, double alpha) {
  Json j;
  json_init(&j, stdout);
  json_object(&j, NULL);
  json_string(&j, "command", "diff");
  json_string(&j, "by", "holder");
  json_side(&j, "from", &sd[0]);
  json_side(&j, "to", &sd[1]);
  json_number(&j, "alpha", alpha);
  json_array(&j, "rows");
  for (uint32_t i = 0; i < t->n && (!o->rows || i < o->rows); i++) {
    const Row *r = &t->rows[i];
    json_object(&j, NULL);
    json_uint(&j, "rank", i + 1);
    json_string(&j, "holder", r->text);
    json_number(&j, "from_bytes", r->t[0].bytes);
    json_number(&j, "to_bytes", r->t[1].bytes);
    json_number(&j, "change", r->change);
    json_uint(&j, "from_samples", r->samples[0]);
    json_uint(&j, "to_samples", r->samples[1]);
    if (o->two) {
      json_null(&j, "new_blocks");
      json_null(&j, "gone_blocks");
    } else {
      json_uint(&j, "new_blocks", r->fresh);
      json_uint(&j, "gone_blocks", r->gone);
    }
    json_number(&j, "p", r->p);
    json_bool(&j, "significant", r->p < alpha);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_end_object(&j);
  json_finish(&j);
}

// ---------------------------------------------------------------- main

static bool load_side(Side *sd, const char *path, const char *retain, const SnapPick *pick, bool first_default) {
  ProfileOptions popts = {0};
  if (kept_load(&usage, path, retain, &popts, NULL, &sd->l, &sd->s) != 0) return false;
  sd->loaded = true;
  char why[SNAPSHOTS_TEXT];
  if (!pick->set && first_default) {   // the first usable snapshot
    sd->k = -1;
    for (uint32_t k = 0; k < sd->s.n_snaps && sd->s.status == SNAPSHOTS_PRESENT; k++)
      if (sd->s.snaps[k].usable) {
        sd->k = k;
        break;
      }
    if (sd->k < 0) snprintf(why, sizeof why, "%s", sd->s.status == SNAPSHOTS_PRESENT ? "no usable snapshot" : sd->s.why);
  } else {
    sd->k = kept_pick(&sd->s, sd->l.profile, pick, why, sizeof why);
  }
  if (sd->k < 0) fprintf(stderr, "memtrace diff: %s: no snapshot to compare: %s\n", path, why);
  return sd->k >= 0;
}

int cmd_diff_holder(int argc, char **argv) {
  Options o = {.rows = 20};
  const char *out = NULL, *by = NULL;
  const ToolOption options[] = {
      {"--by", "KEY", &by, NULL, NULL, 0, 0},
      {"--from", "N", &o.from, kept_parse_at, "a snapshot: its number, 'end', or a time (1.5s, 250ms, 2min, P%)", 0, 0},
      {"--to", "M", &o.to, kept_parse_at, "a snapshot: its number, 'end', or a time (1.5s, 250ms, 2min, P%)", 0, 0},
      KEPT_OPTION_RETAIN(&o.retain),
      TOOL_OPTION_ROWS(&o.rows),
      TOOL_OPTION_JSON(&o.json),
      TOOL_OPTION_OUTPUT(&out),
  };
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 2, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  if (!by || strcmp(by, "holder") != 0) return tool_usage_error(&usage, "--by holder expected");
  o.two = args.n_files == 2;
  o.path[0] = args.files[0];
  o.path[1] = o.two ? args.files[1] : args.files[0];
  if (o.two && o.retain) return tool_usage_error(&usage, "--retain goes with one trace");
  if (o.two && strcmp(o.path[0], "-") == 0 && strcmp(o.path[1], "-") == 0)
    return tool_usage_error(&usage, "stdin can be only one of the two traces");
  if (!tool_output_to(&usage, out)) return 1;
  Side sd[2];
  memset(sd, 0, sizeof sd);
  bool ok = load_side(&sd[0], o.path[0], o.retain, &o.from, !o.two);
  if (ok && o.two) ok = load_side(&sd[1], o.path[1], NULL, &o.to, false);
  if (ok && !o.two) {
    char why[SNAPSHOTS_TEXT];
    int64_t k = kept_pick(&sd[0].s, sd[0].l.profile, &o.to, why, sizeof why);
    if (k < 0) fprintf(stderr, "memtrace diff: %s: no snapshot to compare: %s\n", o.path[0], why);
    ok = k >= 0;
    sd[1].k = k;
  }
  status = ok ? 0 : 1;
  if (ok) {
    Table t = {0};
    Held *held[2] = {NULL, NULL};
    uint64_t n_held[2] = {0, 0};
    for (int side = 0; side < 2; side++) {
      Side view = o.two ? sd[side] : sd[0];
      view.k = sd[side].k;
      gather(&t, &view, side, o.two ? NULL : &held[side], &n_held[side]);
    }
    if (!o.two) count_turnover(&t, held[0], n_held[0], held[1], n_held[1]);
    for (uint32_t i = 0; i < t.n; i++) {
      Row *r = &t.rows[i];
      for (int side = 0; side < 2; side++) r->t[side] = profile_tally(sd[o.two ? side : 0].l.profile, r->samples[side]);
      r->change = r->t[1].bytes - r->t[0].bytes;
      if (o.two) {
        r->p = stats_diff_pvalue(&r->t[0], &r->t[1]);
      } else {
        uint64_t hi = r->fresh > r->gone ? r->fresh : r->gone, n = r->fresh + r->gone;
        r->p = n ? fmin(1, 2 * kept_growth_p(hi, n)) : 1;
      }
    }
    if (t.n > 1) qsort(t.rows, t.n, sizeof *t.rows, by_change);
    double alpha = 0.05 / (t.n ? t.n : 1);
    Side view[2] = {sd[0], o.two ? sd[1] : sd[0]};
    view[1].k = sd[1].k;
    (o.json ? print_json : print_text)(&o, view, &t, alpha);
    for (uint32_t i = 0; i < t.n; i++) free(t.rows[i].text);
    free(t.rows);
    free(t.slots);
    free(held[0]);
    free(held[1]);
  }
  for (int side = 0; side < 1 + o.two; side++)
    if (sd[side].loaded && kept_close(&usage, &sd[side].l, &sd[side].s)) status = 1;
  return tool_finish_output(&usage) ? 1 : status;
}
