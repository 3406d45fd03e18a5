// retain_text.c - text and JSON of end-state paths, collapsed callstacks
// (retain_text.h).
#include "retain_text.h"

#include <stdlib.h>
#include <string.h>

#include "../base/ocaml_int.h"
#include "../base/xalloc.h"

// A name from the end state, control characters shown as '?'.
static void put_name(FILE *f, const char *s) {
  for (; *s; s++) fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

void retain_text_root(FILE *f, const RetainRoot *r, bool erase) {
  switch (r->kind) {
    case RETAIN_ROOT_GLOBAL: fputs("global ", f), put_name(f, r->name); break;
    case RETAIN_ROOT_STACK:
      fputs("local ", f);
      if (*r->local) put_name(f, r->local);
      else fprintf(f, "#%llu", (unsigned long long)r->index);
      fputs(" of ", f), put_name(f, r->name), fputs(" (", f), put_name(f, r->file);
      if (!erase) fprintf(f, ":%u", r->line);
      fputc(')', f);
      break;
    case RETAIN_ROOT_C: fprintf(f, "C root #%llu", (unsigned long long)r->index); break;
    case RETAIN_ROOT_EXCEPTION: fputs("the exception being raised", f); break;
    default: fputs("Memprof callback state", f); break;
  }
}

void retain_text_hop(FILE *f, const RetainHop *h, bool erase) {
  unsigned long long i = (unsigned long long)h->index, n = (unsigned long long)h->count;
  switch (h->kind) {
    case RETAIN_HOP_FIELD: fputs("field ", f), put_name(f, h->name); break;
    case RETAIN_HOP_TUPLE: fprintf(f, "tuple .%llu", i); break;
    case RETAIN_HOP_ARRAY:
      if (erase) fputs("array [*]", f);
      else fprintf(f, "array [%llu]", i);
      break;
    case RETAIN_HOP_LIST_CELL:
      if (erase) fputs("list cell xn", f);
      else fprintf(f, "list cell x%llu", n);
      return;
    case RETAIN_HOP_LIST_ELEMENT: fputs("list element", f); break;
    case RETAIN_HOP_CAPTURE:
      fputs("capture ", f);
      if (*h->name) put_name(f, h->name);
      else fprintf(f, "#%llu", i);
      break;
    case RETAIN_HOP_HASHTBL_VALUE: fputs(erase ? "Hashtbl" : "Hashtbl value", f); break;
    case RETAIN_HOP_HASHTBL_KEY: fputs(erase ? "Hashtbl" : "Hashtbl key", f); break;
    case RETAIN_HOP_HASHTBL_ENTRY: fputs(erase ? "Hashtbl" : "Hashtbl entry", f); break;
    case RETAIN_HOP_HASHTBL_STORAGE: fputs(erase ? "Hashtbl" : "Hashtbl storage", f); break;
    case RETAIN_HOP_BUFFER: fputs("Buffer storage", f); break;
    case RETAIN_HOP_ELIDED: fprintf(f, "(%llu hops elided)", n); return;
    default: fprintf(f, "field #%llu", i); break;
  }
  if (n > 1) fprintf(f, " x%llu", n);
}

void retain_text_path(FILE *f, const RetainPath *path, uint32_t hops, bool erase) {
  retain_text_root(f, &path->root, erase);
  for (uint32_t i = 0; i < hops && i < path->hop_count; i++) {
    fputs(" -> ", f);
    retain_text_hop(f, &path->hops[i], erase);
  }
}

char *retain_path_string(const RetainPath *path, uint32_t hops, bool erase) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) xalloc_fail();
  retain_text_path(f, path, hops, erase);
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

typedef struct Line {
  uint32_t first, len, repeat;     // frames[first .. first + len) repeated `repeat` times
} Line;

static bool same(const Frame *a, const Frame *b) {
  if (!a->loc || !b->loc) return !a->loc && !b->loc && a->code == b->code;
  return a->loc->function == b->loc->function && a->loc->file == b->loc->file && a->loc->line == b->loc->line &&
         a->loc->start_col == b->loc->start_col;
}

// The callers of s innermost first (the site itself left out), as out_callers walks them.
static Frame *frames_of(const Profile *p, ProfileStackId s, uint32_t *n) {
  uint32_t cap = 16;
  Frame *fr = xrealloc(NULL, cap * sizeof *fr);
  *n = 0;
  bool innermost = true;
  for (ProfileNodeId node = profile_stack(p, s)->leaf; node != 0 && node != PROFILE_NONE;
       node = profile_node(p, node)->parent) {
    const TraceReaderLocation *locs;
    int count = profile_node_locations(p, node, &locs);
    int last = innermost && count > 0 ? count - 2 : count - 1;
    if (count <= 0 && !innermost) {
      if (*n == cap) fr = xrealloc(fr, (cap *= 2) * sizeof *fr);
      fr[(*n)++] = (Frame){NULL, profile_node(p, node)->code, false};
    }
    for (int i = last; i >= 0; i--) {
      if (*n == cap) fr = xrealloc(fr, (cap *= 2) * sizeof *fr);
      fr[(*n)++] = (Frame){&locs[i], 0, innermost};
    }
    innermost = false;
  }
  return fr;
}

// Lines of frames: at each place, the shortest cycle (1..RETAIN_TEXT_CYCLE
// frames) that repeats right after itself, taken as often as it repeats.
static Line *collapse(const Frame *fr, uint32_t n, uint32_t *n_lines) {
  Line *lines = xrealloc(NULL, (n ? n : 1) * sizeof *lines);
  *n_lines = 0;
  for (uint32_t i = 0; i < n;) {
    Line best = {i, 1, 1};
    for (uint32_t len = 1; len <= RETAIN_TEXT_CYCLE && i + 2 * len <= n; len++) {
      uint32_t rep = 1;
      while (i + (rep + 1) * len <= n) {
        bool eq = true;
        for (uint32_t k = 0; k < len && eq; k++) eq = same(&fr[i + k], &fr[i + rep * len + k]);
        if (!eq) break;
        rep++;
      }
      if (rep > 1) {
        best = (Line){i, len, rep};
        break;
      }
    }
    lines[(*n_lines)++] = best;
    i += best.len * best.repeat;
  }
  return lines;
}

static void put_frame(FILE *f, const Frame *fr) {
  if (!fr->loc) fprintf(f, "$%lld", (long long)ocaml_int(fr->code));
  else fprintf(f, "%s %s:%u:%u-%u", fr->loc->function, fr->loc->file, fr->loc->line, fr->loc->start_col,
               fr->loc->end_col);
}

void retain_text_callers(FILE *f, const Profile *p, ProfileStackId s, const char *indent, uint32_t max_lines) {
  uint32_t n, n_lines;
  Frame *fr = frames_of(p, s, &n);
  Line *lines = collapse(fr, n, &n_lines);
  uint32_t left = 0;
  for (uint32_t i = 0; i < n_lines; i++) {
    const Line *l = &lines[i];
    if (i >= max_lines) {
      left += l->len * l->repeat;
      continue;
    }
    fprintf(f, "%s%s ", indent, fr[l->first].inlined ? "inlined in" : "called from");
    for (uint32_t k = 0; k < l->len; k++) {
      if (k) fputs(" <- ", f);
      put_frame(f, &fr[l->first + k]);
    }
    if (l->repeat > 1) fprintf(f, " x%u", l->repeat);
    fputc('\n', f);
  }
  if (left) fprintf(f, "%s... %u more frames\n", indent, left);
  free(lines);
  free(fr);
}

void retain_json_callers(Json *j, const char *key, const Profile *p, ProfileStackId s) {
  uint32_t n, n_lines;
  Frame *fr = frames_of(p, s, &n);
  Line *lines = collapse(fr, n, &n_lines);
  json_array(j, key);
  for (uint32_t i = 0; i < n_lines; i++) {
    json_object(j, NULL);
    json_array(j, "frames");
    for (uint32_t k = 0; k < lines[i].len; k++) {
      const Frame *x = &fr[lines[i].first + k];
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
    json_uint(j, "repeat", lines[i].repeat);
    json_end_object(j);
  }
  json_end_array(j);
  free(lines);
  free(fr);
}
