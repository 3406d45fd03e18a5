// paths.c - `memtrace paths FILE`: the end state's paths (kept.h,
// retain_text.h), one per sampled block alive at the end, or grouped by
// holder, as text or JSON.
#include <inttypes.h>
#include <string.h>

#include "../analysis/kept.h"
#include "../analysis/retain_text.h"
#include "../base/xalloc.h"
#include "../cli/kept_load.h"
#include "commands.h"

static const ToolUsage usage = {
    "paths",
    "usage: memtrace paths [--by holder] [--retain FILE] [-n N] [--json] [-o OUT] FILE\n"
    "Lists the end state of the trace FILE (FILE.retain, written by ./vm when the\n"
    "run ends): for each sampled block alive at the end, its site and one shortest\n"
    "path from a GC root to it (root, then each hop; \"list cell x18\" is 18 cells\n"
    "in a row), by allocation id. With --by holder, the blocks grouped by what\n"
    "holds them (the path up to its first list, array or Hashtbl, counts erased),\n"
    "most kept first, each with its sites, most directly held first. Without an\n"
    "end state says why and what would give one; a damaged or foreign one is an\n"
    "error (status 1).\n"
    "  --by holder    group by holder\n"
    "  --retain FILE  the end state to read (default: FILE.retain)\n"
    "  -n N           show N paths or holders (default 0: all)\n"
    "  --json         JSON (schema: tools/memtrace_cli/README.md)\n"
    "  -o OUT         write to OUT instead of stdout\n",
};

typedef struct PathsOptions {
  const char *by, *retain, *path;
  uint32_t rows;
  bool json;
} PathsOptions;

static void print_paths(const Profile *p, const EndState *es, uint32_t rows) {
  uint64_t shown = 0;
  for (uint64_t i = 0; i < es->retain.path_count && (!rows || shown < rows); i++, shown++) {
    const RetainPath *path = &es->retain.paths[i];
    const ProfileSurvivor *s = end_state_survivor(es, path->alloc_id);
    printf("%" PRIu64 "  ", path->alloc_id);
    out_site(stdout, profile_site(p, profile_stack_site(p, s->stack)));
    printf("\n    ");
    retain_path_text(stdout, path, path->hop_count, false);
    putchar('\n');
  }
  if (shown < es->retain.path_count) printf("(%" PRIu64 " more: -n 0 shows all)\n", es->retain.path_count - shown);
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
    out_site(stdout, profile_site(p, s->site));
    putchar('\n');
  }
}

static void json_paths(Json *j, const Profile *p, const EndState *es, uint32_t rows) {
  json_array(j, "paths");
  for (uint64_t i = 0; i < es->retain.path_count && (!rows || i < rows); i++) {
    const RetainPath *path = &es->retain.paths[i];
    const ProfileSurvivor *s = end_state_survivor(es, path->alloc_id);
    json_object(j, NULL);
    json_uint(j, "alloc_id", path->alloc_id);
    json_uint(j, "samples", s->samples);
    json_object(j, "site");
    json_site_fields(j, profile_site(p, profile_stack_site(p, s->stack)));
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
      json_site_fields(j, profile_site(p, h->sites[k].site));
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
      TOOL_OPTION_JSON(&o.json),                TOOL_OPTION_OUTPUT(&out),
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
  if (!tool_output_to(&usage, out)) return 1;
  ProfileOptions popts = {0};
  Loaded l;
  EndState es;
  if (kept_load(&usage, o.path, o.retain, &popts, NULL, &l, &es) != 0) return 1;
  const Profile *p = l.profile;
  KeptAnalysis an = {0};
  if (by_holder) kept_analyse(p, &es, &an);
  bool usable = es.status == END_STATE_PRESENT && es.paths;
  if (o.json) {
    Json j;
    load_json_begin(&j, stdout, "paths", &l);
    kept_json_end_state(&j, &es);
    json_string(&j, "by", by_holder ? "holder" : "block");
    if (usable && by_holder) json_holders(&j, p, &an, o.rows);
    else if (usable) json_paths(&j, p, &es, o.rows);
    json_end_object(&j);
    json_finish(&j);
  } else {
    printf("%s: ", l.path);
    kept_print_end_state(stdout, &es);
    load_print_partial(stdout, &l);
    if (es.status == END_STATE_ABSENT) printf("to get one: %s\n", es.fix);
    if (usable && by_holder) {
      printf("%u holders, most kept first\n", an.n);
      for (uint32_t i = 0; i < an.n && (!o.rows || i < o.rows); i++) print_holder(p, &an.holders[i], i + 1);
    } else if (usable) {
      print_paths(p, &es, o.rows);
    }
  }
  kept_analysis_free(&an);
  return kept_close(&usage, &l, &es);
}
