// paths.c - `memtrace paths FILE`: a snapshot's paths (kept.h,
// retain_text.h; the end state by default, --at N another), one per sampled
// block alive then, or grouped by holder, as text or JSON.
#include <inttypes.h>
#include <string.h>

#include "../analysis/kept.h"
#include "../analysis/retain_text.h"
#include "../base/xalloc.h"
#include "../cli/kept_load.h"
#include "commands.h"

static const ToolUsage usage = {
    "paths",
    "usage: memtrace paths [--at N] [--by holder] [--retain FILE] [--stdlib] [-n N] [--json] [-o OUT] FILE\n"
    "Lists a snapshot of the trace FILE (FILE.retain, written by ./vm while the\n"
    "program runs and when it ends; by default the end state, else the last\n"
    "snapshot): for each sampled block alive then, its site and the path from a GC\n"
    "root by which the collection's mark reached it (root, then each hop; \"list\n"
    "cell x18\" is 18 cells in a row), by allocation id. With --by holder, the\n"
    "blocks grouped by what holds them (the path up to its first list, array or\n"
    "Hashtbl, counts erased), most kept first, each with its sites (the innermost\n"
    "line outside the stdlib), most directly held first. Without a snapshot says\n"
    "why and what would give one; a damaged or foreign file is an error (status 1).\n"
    "  --at N         snapshot N: its number, 'end', or a time (1.5s, 250ms, P%):\n"
    "                 the last taken by then\n"
    "  --by holder    group by holder\n"
    "  --retain FILE  the snapshot file to read (default: FILE.retain)\n"
    "  --stdlib       with --by holder: sites at the allocating frame, stdlib included\n"
    "  -n N           show N paths or holders (default 0: all)\n"
    "  --json         JSON (schema: tools/memtrace_cli/README.md)\n"
    "  -o OUT         write to OUT instead of stdout\n",
};

typedef struct PathsOptions {
  const char *by, *retain, *path;
  SnapPick at;
  uint32_t rows;
  bool json, stdlib;
} PathsOptions;

static void print_paths(const Profile *p, const Snapshots *s, uint32_t k, uint32_t rows) {
  uint64_t n = snapshots_paths(s, k), shown = 0;
  SnapshotPathView v;
  for (uint64_t i = 0; i < n && (!rows || shown < rows); i++, shown++) {
    const RetainPath *path = snapshots_path_view(s, k, i, &v);
    printf("%" PRIu64 "  ", path->alloc_id);
    out_site(stdout, profile_site(p, profile_stack_site(p, snapshots_block(s, k, i)->stack)));
    printf("\n    ");
    retain_path_text(stdout, path, path->hop_count, false);
    putchar('\n');
  }
  if (shown < n) printf("(%" PRIu64 " more: -n 0 shows all)\n", n - shown);
}

static void print_holder(const Profile *p, const KeptHolder *h, uint32_t rank) {
  char a[OUT_TEXT_MAX];
  printf("%3u. ", rank);
  if (h->example) retain_path_text(stdout, h->example, h->cut, true);
  else fputs("(no path)", stdout);
  printf("\n     %" PRIu64 " blocks, %" PRIu64 " samples, ~%s\n", h->blocks, h->samples,
         out_bytes(a, kept_bytes(p, h->samples)));
  for (uint32_t k = 0; k < h->n_sites; k++) {
    const KeptSite *s = &h->sites[k];
    printf("     depth %u  %" PRIu64 " samples  ", s->depth, s->samples);
    kept_site_text(stdout, p, s);
    putchar('\n');
  }
}

static void json_paths(Json *j, const Profile *p, const Snapshots *s, uint32_t k, uint32_t rows) {
  json_array(j, "paths");
  SnapshotPathView v;
  for (uint64_t i = 0; i < snapshots_paths(s, k) && (!rows || i < rows); i++) {
    const RetainPath *path = snapshots_path_view(s, k, i, &v);
    const SnapBlock *b = snapshots_block(s, k, i);
    json_object(j, NULL);
    json_uint(j, "alloc_id", path->alloc_id);
    json_uint(j, "samples", b->samples);
    json_object(j, "site");
    json_site_fields(j, profile_site(p, profile_stack_site(p, b->stack)));
    json_end_object(j);
    retain_json_path(j, "path", path, path->hop_count, false);
    json_end_object(j);
  }
  json_end_array(j);
}

static void json_holders(Json *j, const Profile *p, const KeptAnalysis *an, uint32_t rows) {
  json_array(j, "holders");
  for (uint32_t i = 0; i < an->n && (!rows || i < rows); i++) {
    const KeptHolder *h = &an->holders[i];
    json_object(j, NULL);
    if (h->example) retain_json_path(j, "holder", h->example, h->cut, true);
    else json_null(j, "holder");
    json_uint(j, "blocks", h->blocks);
    json_uint(j, "samples", h->samples);
    json_number(j, "bytes", kept_bytes(p, h->samples));
    json_array(j, "sites");
    for (uint32_t k = 0; k < h->n_sites; k++) {
      json_object(j, NULL);
      kept_site_json(j, p, &h->sites[k]);
      json_uint(j, "depth", h->sites[k].depth);
      json_uint(j, "samples", h->sites[k].samples);
      json_end_object(j);
    }
    json_end_array(j);
    json_end_object(j);
  }
  json_end_array(j);
}

int cmd_paths(int argc, char **argv) {
  PathsOptions o = {0};
  const char *out = NULL;
  const ToolOption options[] = {
      {"--by", "KEY", &o.by, NULL, NULL, 0, 0}, KEPT_OPTION_RETAIN(&o.retain), TOOL_OPTION_ROWS(&o.rows),
      TOOL_OPTION_JSON(&o.json),                TOOL_OPTION_OUTPUT(&out),        KEPT_OPTION_AT(&o.at),
      KEPT_OPTION_STDLIB(&o.stdlib),
  };
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 1, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  o.path = args.files[0];
  bool by_holder = false;
  if (o.by) {
    if (strcmp(o.by, "holder") != 0) return tool_usage_error(&usage, "option --by: '%s' is not holder", o.by);
    by_holder = true;
  }
  if (o.stdlib && !by_holder) return tool_usage_error(&usage, "--stdlib goes with --by holder");
  if (!tool_output_to(&usage, out)) return 1;
  ProfileOptions popts = {0};
  Loaded l;
  Snapshots s;
  if (kept_load(&usage, o.path, o.retain, &popts, NULL, &l, &s) != 0) return 1;
  const Profile *p = l.profile;
  char err[SNAPSHOTS_TEXT] = "";
  int64_t k = kept_pick(&s, p, &o.at, err, sizeof err);
  KeptAnalysis an = {0};
  KeptOptions ko = {.stdlib = o.stdlib};
  if (by_holder && k >= 0) {
    kept_analyse(p, &s, k, &ko, &an);
    kept_sort_by_kept(&an);
  }
  bool usable = k >= 0;
  if (o.json) {
    Json j;
    load_json_begin(&j, stdout, "paths", &l);
    kept_json_snapshots(&j, &s, k);
    if (!usable && *err) json_string(&j, "why", err);
    json_string(&j, "by", by_holder ? "holder" : "block");
    if (usable && by_holder) json_holders(&j, p, &an, o.rows);
    else if (usable) json_paths(&j, p, &s, (uint32_t)k, o.rows);
    json_end_object(&j);
    json_finish(&j);
  } else {
    printf("%s: ", l.path);
    kept_print_snapshots(stdout, &s, k);
    load_print_partial(stdout, &l);
    if (s.status == SNAPSHOTS_ABSENT) printf("to get one: %s\n", s.fix);
    else if (!usable && s.status == SNAPSHOTS_PRESENT) printf("--at: %s\n", err);
    if (usable && by_holder) {
      printf("%u holders, most kept first\n", an.n);
      for (uint32_t i = 0; i < an.n && (!o.rows || i < o.rows); i++) print_holder(p, &an.holders[i], i + 1);
    } else if (usable) {
      print_paths(p, &s, (uint32_t)k, o.rows);
    }
  }
  kept_analysis_free(&an);
  bool unpicked = !usable && s.status == SNAPSHOTS_PRESENT && o.at.set;
  status = kept_close(&usage, &l, &s);
  if (unpicked) fprintf(stderr, "memtrace paths: --at: %s\n", err);
  return unpicked ? 1 : status;
}
