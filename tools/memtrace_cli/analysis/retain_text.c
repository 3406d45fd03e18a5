// retain_text.c - JSON of snapshot paths (their text is
// trace/snapshot_holder.c's), folded callstacks (retain_text.h).
#include "retain_text.h"

#include <stdlib.h>
#include <string.h>

#include "../../../base/hash.h"
#include "../base/ocaml_int.h"
#include "../base/xalloc.h"
#include "collapse.h"
#include "stack_budget.h"

char *retain_path_string(const RetainPath *path, uint32_t hops, bool erase) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) xalloc_fail();
  retain_path_text(f, path, hops, erase);
  if (fclose(f) != 0 || !text) xalloc_fail();
  return text;
}

void retain_json_path(Json *j, const char *key, const RetainPath *path, uint32_t hops, bool erase) {
  const RetainRoot *r = &path->root;
  json_object(j, key);
  json_object(j, "root");
  json_string(j, "kind", retain_root_kind_name(r->kind));
  if (r->kind == RETAIN_ROOT_GLOBAL || r->kind == RETAIN_ROOT_STACK) json_string(j, "name", r->name);
  if (r->kind == RETAIN_ROOT_STACK) {
    json_string(j, "file", r->file);
    if (!erase) json_uint(j, "line", r->line);
    json_string(j, "local", r->local);
  }
  if (r->kind == RETAIN_ROOT_STACK || r->kind == RETAIN_ROOT_C) json_uint(j, "index", r->index);
  json_end_object(j);
  json_array(j, "hops");
  for (uint32_t i = 0; i < hops && i < path->hop_count; i++) {
    const RetainHop *h = &path->hops[i];
    json_object(j, NULL);
    bool table = h->kind == RETAIN_HOP_HASHTBL_VALUE || h->kind == RETAIN_HOP_HASHTBL_KEY ||
                 h->kind == RETAIN_HOP_HASHTBL_ENTRY || h->kind == RETAIN_HOP_HASHTBL_STORAGE;
    json_string(j, "kind", erase && table ? "Hashtbl" : retain_hop_kind_name(h->kind));
    bool erased = erase && (h->kind == RETAIN_HOP_LIST_CELL || h->kind == RETAIN_HOP_ARRAY);
    if (!erased) json_uint(j, "count", h->count);
    if ((h->kind == RETAIN_HOP_TUPLE || h->kind == RETAIN_HOP_CAPTURE || h->kind == RETAIN_HOP_OTHER ||
         h->kind == RETAIN_HOP_ARRAY) && !erased)
      json_uint(j, "index", h->index);
    if (h->kind == RETAIN_HOP_FIELD || h->kind == RETAIN_HOP_CAPTURE) json_string(j, "name", h->name);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

// ---------------------------------------------------------------- callstacks

typedef struct Frame {
  const TraceReaderLocation *loc;  // NULL: a code without location
  uint64_t code;
  bool inlined;                    // "inlined in" (the leaf's outer locations)
} Frame;

// The callers of s innermost first (the site itself left out), as out_callers walks them.
static Frame *frames_of(const Profile *p, ProfileStackId s, uint32_t *n) {
  uint32_t cap = 16;
  Frame *fr = xrealloc(NULL, cap * sizeof *fr);
  *n = 0;
  bool innermost = true;
  for (ProfileNodeId node = profile_stack_leaf(p, s); node != 0 && node != PROFILE_NONE;
       node = profile_node_parent(p, node)) {
    const TraceReaderLocation *locs;
    int count = profile_node_locations(p, node, &locs);
    int last = innermost && count > 0 ? count - 2 : count - 1;
    if (count <= 0 && !innermost) {
      if (*n == cap) fr = xrealloc(fr, (cap *= 2) * sizeof *fr);
      fr[(*n)++] = (Frame){NULL, profile_node_code(p, node), false};
    }
    for (int i = last; i >= 0; i--) {
      if (*n == cap) fr = xrealloc(fr, (cap *= 2) * sizeof *fr);
      fr[(*n)++] = (Frame){&locs[i], 0, innermost};
    }
    innermost = false;
  }
  return fr;
}

// A frame's identity, as printed: its location (function, file, line,
// columns) and whether it is inlined, or its code.
static uint64_t frame_key(const Frame *fr) {
  if (!fr->loc) return hash_combine(0xc0de, fr->code);
  uint64_t h = hash_combine(fr->inlined ? 0x1a1 : 0xca11, (uint64_t)(uintptr_t)fr->loc->function);
  h = hash_combine(hash_combine(h, (uint64_t)(uintptr_t)fr->loc->file), fr->loc->line);
  return hash_combine(h, (uint64_t)fr->loc->start_col << 32 | fr->loc->end_col);
}

// The n frames of fr (innermost first) folded into c, outermost first (the
// order collapse.h reads); a frame's rep is its index in fr. The last run.
static CollapseId fold(Collapse *c, const Frame *fr, uint32_t n) {
  CollapseId at = 0;
  for (uint32_t i = n; i-- > 0;) at = collapse_push(c, at, frame_key(&fr[i]), i);
  return at;
}

static void put_frame(FILE *f, const Frame *fr) {
  if (!fr->loc) fprintf(f, "$%lld", (long long)ocaml_int(fr->code));
  else fprintf(f, "%s %s:%u:%u-%u", fr->loc->function, fr->loc->file, fr->loc->line, fr->loc->start_col,
               fr->loc->end_col);
}

void retain_text_callers(FILE *f, const Profile *p, ProfileStackId s, const char *indent, uint32_t max_lines) {
  uint32_t n, lines = 0, left = 0;
  Frame *fr = frames_of(p, s, &n);
  Collapse *c = collapse_new(out_fold_period());
  for (CollapseId r = fold(c, fr, n); r != 0; r = collapse_run(c, r)->parent, lines++) {
    const CollapseRun *run = collapse_run(c, r);
    const uint32_t *reps;
    uint32_t len = collapse_unit(c, run->unit, &reps);
    if (lines >= max_lines) {
      left += len * run->count;
      continue;
    }
    // The unit's frames outermost first: printed innermost first.
    fprintf(f, "%s%s ", indent, fr[reps[len - 1]].inlined ? "inlined in" : "called from");
    for (uint32_t k = len; k-- > 0;) {
      if (k != len - 1) fputs(" <- ", f);
      put_frame(f, &fr[reps[k]]);
    }
    if (run->count > 1) fprintf(f, " x%u", run->count);
    fputc('\n', f);
  }
  if (left) fprintf(f, "%s... %u more frames\n", indent, left);
  collapse_free(c);
  free(fr);
}

void retain_json_callers(Json *j, const char *key, const Profile *p, ProfileStackId s) {
  uint32_t n;
  Frame *fr = frames_of(p, s, &n);
  Collapse *c = collapse_new(out_fold_period());
  CollapseId last = fold(c, fr, n);
  uint32_t lines = last ? collapse_run(c, last)->runs : 0;
  json_array(j, key);
  if (!stack_budget_take(lines, 0)) {
    json_object(j, NULL);
    json_uint(j, "frames_left_out", lines);
    json_end_object(j);
    last = 0;
  }
  for (CollapseId r = last; r != 0; r = collapse_run(c, r)->parent) {
    const CollapseRun *run = collapse_run(c, r);
    const uint32_t *reps;
    uint32_t len = collapse_unit(c, run->unit, &reps);
    json_object(j, NULL);
    json_array(j, "frames");
    for (uint32_t k = len; k-- > 0;) {
      const Frame *x = &fr[reps[k]];
      json_object(j, NULL);
      if (x->loc) {
        json_string(j, "function", x->loc->function);
        json_string(j, "file", x->loc->file);
        json_uint(j, "line", x->loc->line);
      } else {
        json_number(j, "code", (double)ocaml_int(x->code));
      }
      json_end_object(j);
    }
    json_end_array(j);
    json_uint(j, "repeat", run->count);
    json_end_object(j);
  }
  json_end_array(j);
  collapse_free(c);
  free(fr);
}
