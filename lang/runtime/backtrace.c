// backtrace.c - the backtrace of a runtime error (backtrace.h): the walker's
// frames (core/frames.h) named by their functions' names and line tables.
#include <stdio.h>
#include <string.h>

#include "backtrace.h"
#include "../lib/stdlib_sources.h"
#include "../../core/image.h"
#include "../../core/vm_state.h"
#include "../../gc/gc.h"

static const Proto *proto_of_frame(const Vm *vm, const Value *base) {
  Value clos = base[0];
  return vm->protos[val_to_int(val_field(clos, 0))];
}

static const Proto *cursor_proto(const FrameCursor *c) {
  return c->desc ? c->desc->proto : proto_of_frame(c->vm, c->base);
}

void backtrace_position(const FrameCursor *c, const char **function, const char **file,
                        uint32_t *line, uint32_t *col) {
  const Proto *p = cursor_proto(c);
  *function = p->name;
  *file = p->file;
  if (c->desc && c->desc->debug_count > 0 && !c->is_top) {
    const DebugInfo *d = c->desc->debug[0];
    *line = d->line;
    *col = d->start_col;
    return;
  }
  image_position(p, c->pc, line, col);
}

// Whether `file` is a module of the standard library: "stdlib/NAME.mn" with
// NAME one of the embedded modules (a stdlib module's name wins over a
// user's file, so no script module is called that).
bool backtrace_stdlib_file(const char *file) {
  static const char prefix[] = "stdlib/";
  size_t n = strlen(file), p = sizeof prefix - 1;
  if (n <= p + 3 || strncmp(file, prefix, p) != 0 || strcmp(file + n - 3, ".mn") != 0) return false;
  char name[64];
  if (n - p - 3 >= sizeof name) return false;
  memcpy(name, file + p, n - p - 3);
  name[n - p - 3] = '\0';
  return strchr(name, '/') == NULL && stdlib_source(name) != NULL;
}

void backtrace_blame(const FrameCursor *cursor, const char **file, uint32_t *line, uint32_t *col) {
  FrameCursor c = *cursor;
  const char *fn;
  backtrace_position(&c, &fn, file, line, col);
  if (!backtrace_stdlib_file(*file)) return;
  FrameCursor outer = c;
  while (frames_next(&outer)) {
    const char *f, *ofile;
    uint32_t oline, ocol;
    backtrace_position(&outer, &f, &ofile, &oline, &ocol);
    if (strcmp(f, "<entry>") == 0 || backtrace_stdlib_file(ofile)) continue;
    *file = ofile;
    *line = oline;
    *col = ocol;
    return;
  }
}

void backtrace_print(Vm *vm, FrameCursor *c, FILE *out) {
  (void)vm;
  enum { HEAD = 20, TAIL = 10 };
  typedef struct Line { const char *fn, *file; uint32_t line, col; } Line;
  Line tail[TAIL];
  uint64_t count = 0;
  do {
    Line l;
    backtrace_position(c, &l.fn, &l.file, &l.line, &l.col);
    if (strcmp(l.fn, "<entry>") == 0) continue;
    if (count < HEAD) fprintf(out, "  at %s (%s:%u:%u)\n", l.fn, l.file, l.line, l.col + 1);
    else tail[(count - HEAD) % TAIL] = l;
    count++;
  } while (frames_next(c));
  if (count <= HEAD) return;
  uint64_t kept = count - HEAD < TAIL ? count - HEAD : TAIL;
  if (count - HEAD > kept) fprintf(out, "  ... %llu more frames\n", (unsigned long long)(count - HEAD - kept));
  for (uint64_t i = count - HEAD - kept; i < count - HEAD; i++) {
    const Line *l = &tail[i % TAIL];
    fprintf(out, "  at %s (%s:%u:%u)\n", l->fn, l->file, l->line, l->col + 1);
  }
}
