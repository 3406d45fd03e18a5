// pretenure_from.c - pretenuring decided from a previous run's trace
// (contract: pretenure_from.h).
//
// 1. Sites. The site of an allocation is the innermost frame of its
//    callstack (a Minnow trace codes it 2 * debug id + 1: an allocation
//    site, never a call); its location is the last of the code's location
//    chain. Codes map to site records through an open-addressing table.
// 2. Trials. Each allocation born in the minor heap keeps its site in a
//    table keyed by its id (open addressing; 16 bytes an allocation: ids
//    need not be dense, a version 3 trace's domains number theirs from
//    far apart, and a hostile one may use any). A promote event resolves it
//    as promoted, a collect event of one still unresolved as dead young;
//    each resolution feeds the site's sequential test in the trace's order,
//    as the online feedback's would have been fed at the trace's rate. A
//    site passes once, with the evidence of that moment.
// 3. Matching. A site that passed is looked up among the current program's
//    debug entries by function, file, line and columns (a linear scan per
//    site: sites that pass are few); one that is not there, or is not a
//    switchable allocation, is left, and said with --pretenure-log.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pretenure_from.h"
#include "../../base/hash.h"
#include "../../core/frames.h"
#include "../../memprof/pretenure.h"
#include "../../memprof/pretenure_rule.h"
#include "../../trace/reader.h"

typedef struct TraceSite {
  uint64_t code;
  TraceReaderLocation loc;     // names owned by the reader (valid until close)
  bool located;
  ShareTest test;
  bool passed;
  double bound;
} TraceSite;

// An allocation born young (part 2): its id, its site's index + 1 (0: an
// empty slot), whether it is still unresolved.
typedef struct Young {
  uint64_t id;
  uint32_t site;
  uint32_t unresolved;
} Young;

typedef struct Offline {
  TraceSite *sites;
  uint32_t site_count, site_cap;
  uint32_t *slots;             // code -> site index + 1 (0: empty), open addressing
  uint32_t slot_cap;
  Young *young;                // open addressing by id, capacity a power of two
  uint64_t young_count, young_cap;
} Offline;

static void *grow(void *p, size_t bytes) { return vm_realloc_or_die(p, bytes, "--pretenure-from"); }

static uint32_t slot_of(const Offline *o, uint64_t code) {
  uint32_t mask = o->slot_cap - 1, i = (uint32_t)hash_mix(code) & mask;
  while (o->slots[i] && o->sites[o->slots[i] - 1].code != code) i = (i + 1) & mask;
  return i;
}

// The site record of frame code `code` (part 1).
static uint32_t site_index(Offline *o, TraceReader *r, uint64_t code) {
  if (2 * (o->site_count + 1) > o->slot_cap) {
    uint32_t old_cap = o->slot_cap, *old = o->slots;
    o->slot_cap = old_cap ? 2 * old_cap : 1024;
    o->slots = calloc(o->slot_cap, sizeof *o->slots);
    if (!o->slots) vm_out_of_memory(NULL, "--pretenure-from");
    for (uint32_t i = 0; i < old_cap; i++)
      if (old[i]) o->slots[slot_of(o, o->sites[old[i] - 1].code)] = old[i];
    free(old);
  }
  uint32_t s = slot_of(o, code);
  if (o->slots[s]) return o->slots[s] - 1;
  if (o->site_count == o->site_cap) {
    o->site_cap = o->site_cap ? 2 * o->site_cap : 256;
    o->sites = grow(o->sites, o->site_cap * sizeof *o->sites);
  }
  TraceSite *t = &o->sites[o->site_count];
  memset(t, 0, sizeof *t);
  t->code = code;
  const TraceReaderLocation *locs;
  int n = trace_reader_locations(r, code, &locs);
  if (n > 0) {
    t->loc = locs[n - 1];
    t->located = true;
  }
  share_test_init(&t->test, &PRETENURE_DEFAULTS);
  o->slots[s] = ++o->site_count;
  return o->site_count - 1;
}

static uint64_t young_slot(const Offline *o, uint64_t id) {
  uint64_t mask = o->young_cap - 1, i = hash_mix(id) & mask;
  while (o->young[i].site && o->young[i].id != id) i = (i + 1) & mask;
  return i;
}

static void resolve(Offline *o, uint64_t id, bool promoted) {
  if (!o->young_cap) return;
  Young *y = &o->young[young_slot(o, id)];
  if (!y->site || !y->unresolved) return;
  y->unresolved = 0;
  TraceSite *t = &o->sites[y->site - 1];
  if (!t->passed && share_test_add(&t->test, promoted, &PRETENURE_DEFAULTS, &t->bound)) t->passed = true;
}

static void on_alloc(Offline *o, TraceReader *r, const TraceEvent *ev) {
  if (ev->backtrace_len == 0 || ev->source != TRACE_SOURCE_MINOR) return;
  if (2 * (o->young_count + 1) > o->young_cap) {
    Young *old = o->young;
    uint64_t old_cap = o->young_cap;
    o->young_cap = old_cap ? 2 * old_cap : 1 << 16;
    o->young = calloc(o->young_cap, sizeof *o->young);
    if (!o->young) vm_out_of_memory(NULL, "--pretenure-from");
    for (uint64_t i = 0; i < old_cap; i++)
      if (old[i].site) o->young[young_slot(o, old[i].id)] = old[i];
    free(old);
  }
  Young *y = &o->young[young_slot(o, ev->id)];
  if (y->site) return;   // an id allocated twice (a damaged trace): the first stands
  *y = (Young){ev->id, site_index(o, r, ev->backtrace[ev->backtrace_len - 1]) + 1, 1};
  o->young_count++;
}

// The current program's debug entry at `loc` (part 3), or NULL.
static const DebugInfo *find_site(const Vm *vm, const TraceReaderLocation *loc) {
  uint32_t n = frames_debug_count(vm->frames);
  for (uint32_t id = 0; id < n; id++) {
    const DebugInfo *d = frames_debug_by_id(vm->frames, id);
    if (d->line == loc->line && d->start_col == loc->start_col && d->end_col == loc->end_col &&
        strcmp(d->function, loc->function) == 0 && strcmp(d->file, loc->file) == 0)
      return d;
  }
  return NULL;
}

static void free_offline(Offline *o) {
  free(o->sites);
  free(o->slots);
  free(o->young);
}

bool pretenure_from_trace(Vm *vm, const char *path, char *err, size_t err_len) {
  err[0] = 0;
  TraceReaderError open_err;
  TraceReader *r = trace_reader_open(path, &open_err);
  if (!r) {
    snprintf(err, err_len, "%s: %s", path, open_err.message);
    return false;
  }
  Offline o = {0};
  TraceEvent ev;
  TraceReaderStatus st;
  while ((st = trace_reader_next(r, &ev)) == TRACE_READER_EVENT) {
    if (ev.kind == TRACE_EVENT_ALLOC) on_alloc(&o, r, &ev);
    else resolve(&o, ev.id, ev.kind == TRACE_EVENT_PROMOTE);
  }
  if (st == TRACE_READER_ERROR) {
    const TraceReaderError *e = trace_reader_error(r);
    if (e->kind != TRACE_ERROR_TRUNCATED) {
      snprintf(err, err_len, "%s: %s", path, e->message);
      trace_reader_close(r);
      free_offline(&o);
      return false;
    }
    snprintf(err, err_len, "%s: %s; its whole packets are used", path, e->message);
  }
  for (uint32_t i = 0; i < o.site_count; i++) {
    TraceSite *t = &o.sites[i];
    if (!t->passed) continue;
    const DebugInfo *d = t->located ? find_site(vm, &t->loc) : NULL;
    PretenureDecision dec = {.old = true, .site = d, .blocks = t->test.n, .count = t->test.k, .bound = t->bound,
                             .threshold = PRETENURE_DEFAULTS.threshold, .offline = true};
    if (!d || !pretenure_decide_offline(vm, &dec)) {
      if (vm->options.pretenure_log && t->located)
        fprintf(stderr, "pretenure: %s (%s:%u:%u-%u) from the trace: not an allocation site of this program\n",
                t->loc.function, t->loc.file, t->loc.line, t->loc.start_col, t->loc.end_col);
    }
  }
  trace_reader_close(r);
  free_offline(&o);
  return true;
}
