// snapshot_holder.c - paths and holders as text (contract in
// snapshot_holder.h).
#include "snapshot_holder.h"

// A name from the file, control characters shown as '?'.
static void put_name(FILE *f, const char *s) {
  for (; *s; s++) fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

void retain_root_text(FILE *f, const RetainRoot *r, bool erase) {
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
    case RETAIN_ROOT_C:
      if (erase) fputs("C root", f);   // its index is the order the runtime registered it in
      else fprintf(f, "C root #%llu", (unsigned long long)r->index);
      break;
    case RETAIN_ROOT_EXCEPTION: fputs("the exception being raised", f); break;
    default: fputs("Memprof callback state", f); break;
  }
}

void retain_hop_text(FILE *f, const RetainHop *h, bool erase) {
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
    case RETAIN_HOP_ELIDED:
      if (erase) fputs("(hops elided)", f);
      else fprintf(f, "(%llu hops elided)", n);
      return;
    default: fprintf(f, "field #%llu", i); break;
  }
  if (n > 1) {
    if (erase) fputs(" xn", f);   // a run's length is where the block sits, not what holds it
    else fprintf(f, " x%llu", n);
  }
}

void retain_path_text(FILE *f, const RetainPath *path, uint32_t hops, bool erase) {
  retain_root_text(f, &path->root, erase);
  for (uint32_t i = 0; i < hops && i < path->hop_count; i++) {
    fputs(" -> ", f);
    retain_hop_text(f, &path->hops[i], erase);
  }
}

static bool container(RetainHopKind k) {
  return k == RETAIN_HOP_LIST_CELL || k == RETAIN_HOP_ARRAY || k == RETAIN_HOP_HASHTBL_VALUE ||
         k == RETAIN_HOP_HASHTBL_KEY || k == RETAIN_HOP_HASHTBL_ENTRY || k == RETAIN_HOP_HASHTBL_STORAGE;
}

uint32_t retain_holder_cut(const RetainPath *path, uint32_t *depth) {
  for (uint32_t i = 0; i < path->hop_count; i++) {
    RetainHopKind k = path->hops[i].kind;
    if (container(k)) {
      // A list cell run and a Hashtbl entry or storage end at the
      // container's own cells; an array, Hashtbl value or key hop at an
      // element.
      bool to_element = k == RETAIN_HOP_ARRAY || k == RETAIN_HOP_HASHTBL_VALUE || k == RETAIN_HOP_HASHTBL_KEY;
      *depth = path->hop_count - i - 1 + to_element;
      return i + 1;
    }
  }
  uint32_t cut = path->hop_count ? path->hop_count - 1 : 0;
  *depth = path->hop_count - cut;
  return cut;
}

void retain_holder_text(FILE *f, const RetainPath *path, uint32_t cut) { retain_path_text(f, path, cut, true); }
