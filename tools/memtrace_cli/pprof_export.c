// pprof_export.c - traces to a pprof profile (pprof_export.h). Per trace:
// load its profile, give each trie node the pprof location of its frame
// (made on first use, shared across traces by a key hashed from the
// frame's locations), and add each stack's unbiased values to the merged
// stack of the same key. Samples are written once every trace is read.
#include "pprof_export.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "pprof_writer.h"
#include "stats.h"
#include "text.h"

enum { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE, N_VALUES };

// Open addressing on 64-bit keys, linear probing, at most half full.
typedef struct KeyTable {
  uint64_t *keys;
  uint32_t *values;   // value + 1; 0: empty slot
  uint64_t mask;
  uint64_t used;
} KeyTable;

typedef struct Merged {
  uint64_t key;
  double values[N_VALUES];
  size_t ids, n_ids;  // its location ids: ids_pool[ids .. ids + n_ids), leaf first
} Merged;

typedef struct Export {
  const ToolUsage *usage;
  PprofWriter *w;
  uint64_t mapping;
  uint64_t no_backtrace;  // the location of empty callstacks, 0 until needed
  KeyTable location_of;   // frame key -> pprof location id
  KeyTable merged_of;     // stack key -> index in `merged`
  Merged *merged;
  uint32_t n_merged, cap_merged;
  uint64_t *ids_pool;
  size_t n_ids, cap_ids;
  char *clean;            // scratch for cleaned strings
  size_t clean_cap;
  uint64_t first_us, last_us;  // since the epoch: earliest start, latest last event
  bool any_time, partial;
} Export;

static void out_of_memory(void) {
  fputs("memtrace: out of memory\n", stderr);
  exit(1);
}

static void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) out_of_memory();
  return p;
}

// ---------------------------------------------------------------- tables

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

static uint64_t combine(uint64_t h, uint64_t v) { return mix(h * 0x9e3779b97f4a7c15ull + v + 1); }

static void table_grow(KeyTable *t) {
  uint64_t n = t->keys ? 2 * (t->mask + 1) : 1024;
  KeyTable bigger = {xrealloc(NULL, n * sizeof(uint64_t)), xrealloc(NULL, n * sizeof(uint32_t)), n - 1, t->used};
  memset(bigger.values, 0, n * sizeof(uint32_t));
  for (uint64_t i = 0; t->keys && i <= t->mask; i++) {
    if (!t->values[i]) continue;
    uint64_t j = mix(t->keys[i]) & bigger.mask;
    while (bigger.values[j]) j = (j + 1) & bigger.mask;
    bigger.keys[j] = t->keys[i], bigger.values[j] = t->values[i];
  }
  free(t->keys);
  free(t->values);
  *t = bigger;
}

// The slot of `key`: holding it, or the empty one where it goes.
static uint64_t table_slot(KeyTable *t, uint64_t key) {
  if (2 * (t->used + 1) > (t->keys ? t->mask + 1 : 0)) table_grow(t);
  uint64_t j = mix(key) & t->mask;
  while (t->values[j] && t->keys[j] != key) j = (j + 1) & t->mask;
  return j;
}

static void table_free(KeyTable *t) {
  free(t->keys);
  free(t->values);
}

// ---------------------------------------------------------------- locations

static uint64_t hash_string(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return mix(h);
}

// A frame's key: its locations as pprof shows them (function, file, line;
// not the columns, which pprof has no field for), or its code.
static uint64_t frame_key(const TraceReaderLocation *locs, int n, uint64_t code) {
  if (n <= 0) return combine(0xc0de, code);
  uint64_t h = 0x10c;
  for (int i = 0; i < n; i++) {
    h = combine(h, hash_string(locs[i].function));
    h = combine(h, hash_string(locs[i].file));
    h = combine(h, locs[i].line);
  }
  return h;
}

static const char *cleaned(Export *e, const char *s) {
  size_t n = strlen(s) + 1;
  if (n > e->clean_cap) e->clean = xrealloc(e->clean, e->clean_cap = 2 * n);
  return text_clean(e->clean, n, s);
}

static uint64_t function_id(Export *e, const char *name, const char *file) {
  char *clean_name = strdup(cleaned(e, name));
  if (!clean_name) out_of_memory();
  uint64_t id = pprof_writer_function(e->w, clean_name, cleaned(e, file), 0);
  free(clean_name);
  return id;
}

// Writes the location of a frame: pprof lines innermost first, the reverse
// of the trace's order; a code without location is a function "$CODE".
static uint64_t write_location(Export *e, const TraceReaderLocation *locs, int n, uint64_t code) {
  if (n <= 0) {
    char name[32];
    snprintf(name, sizeof name, "$%" PRId64, tool_ocaml_int(code));
    PprofLine line = {function_id(e, name, ""), 0};
    return pprof_writer_location(e->w, e->mapping, &line, 1);
  }
  PprofLine *lines = xrealloc(NULL, (size_t)n * sizeof *lines);
  for (int i = 0; i < n; i++) {
    const TraceReaderLocation *l = &locs[n - 1 - i];
    lines[i] = (PprofLine){function_id(e, l->function, l->file), l->line};
  }
  uint64_t id = pprof_writer_location(e->w, e->mapping, lines, (size_t)n);
  free(lines);
  return id;
}

// The location id of trie node `id` (not the root), memoized in loc_of.
static uint64_t node_location(Export *e, const Profile *p, ProfileNodeId id, uint64_t *loc_of) {
  if (loc_of[id]) return loc_of[id];
  const TraceReaderLocation *locs;
  int n = profile_node_locations(p, id, &locs);
  uint64_t code = profile_node(p, id)->code, key = frame_key(locs, n, code);
  uint64_t j = table_slot(&e->location_of, key);
  if (!e->location_of.values[j]) {
    uint64_t loc = write_location(e, locs, n, code);
    e->location_of.keys[j] = key;
    e->location_of.values[j] = (uint32_t)loc;
    e->location_of.used++;
  }
  return loc_of[id] = e->location_of.values[j];
}

// ---------------------------------------------------------------- stacks

// The merged stack of stack `s`: the one with the same locations, leaf
// first (so stacks that pprof could not tell apart are one sample).
static Merged *merged_stack(Export *e, const Profile *p, ProfileStackId s, uint64_t *loc_of) {
  ProfileNodeId leaf = profile_stack(p, s)->leaf;
  uint32_t depth = profile_node(p, leaf)->depth;
  if (e->cap_ids - e->n_ids < depth + 1)
    e->ids_pool = xrealloc(e->ids_pool, (e->cap_ids = 2 * e->cap_ids + depth + 1024) * sizeof *e->ids_pool);
  uint64_t *ids = e->ids_pool + e->n_ids, key = 0x57ac;  // written past the pool's end: kept if new
  size_t n_ids = 0;
  for (ProfileNodeId n = leaf; n != 0; n = profile_node(p, n)->parent) {
    ids[n_ids] = node_location(e, p, n, loc_of);
    key = combine(key, ids[n_ids++]);
  }
  if (n_ids == 0) {  // pprof drops samples without locations: one that says so
    if (!e->no_backtrace) {
      PprofLine line = {function_id(e, "(no backtrace)", ""), 0};
      e->no_backtrace = pprof_writer_location(e->w, e->mapping, &line, 1);
    }
    ids[n_ids++] = e->no_backtrace;
  }
  uint64_t j = table_slot(&e->merged_of, key);
  for (; e->merged_of.values[j]; j = (j + 1) & e->merged_of.mask) {  // equal keys: compare the ids
    Merged *m = &e->merged[e->merged_of.values[j] - 1];
    if (m->key == key && m->n_ids == n_ids && memcmp(e->ids_pool + m->ids, ids, n_ids * sizeof *ids) == 0) return m;
  }
  if (e->n_merged == e->cap_merged)
    e->merged = xrealloc(e->merged, (e->cap_merged = 2 * e->cap_merged + 256) * sizeof *e->merged);
  Merged *m = &e->merged[e->n_merged];
  *m = (Merged){key, {0}, e->n_ids, n_ids};
  e->n_ids += n_ids;
  e->merged_of.keys[j] = key;
  e->merged_of.values[j] = ++e->n_merged;
  e->merged_of.used++;
  return m;
}

// inuse_objects: the live blocks weighted as the stack's blocks are on
// average; exact when the stack's blocks all have one size.
static void add_stack(Export *e, const Profile *p, ProfileStackId s, uint64_t *loc_of) {
  const ProfileCounts *c = &profile_stack(p, s)->counts;
  if (!c->samples) return;
  Merged *m = merged_stack(e, p, s, loc_of);
  double bytes = profile_sample_bytes(p);
  m->values[ALLOC_OBJECTS] += c->objects;
  m->values[ALLOC_SPACE] += (double)c->samples * bytes;
  m->values[INUSE_OBJECTS] += c->blocks ? c->objects * (double)c->live_blocks / (double)c->blocks : 0;
  m->values[INUSE_SPACE] += (double)c->live_samples * bytes;
}

// ---------------------------------------------------------------- traces

static void add_comment(Export *e, const Loaded *l) {
  const Profile *p = l->profile;
  char text[512 + TRACE_READER_ERROR_MAX];
  int n = snprintf(text, sizeof text, "memtrace trace %s: rate %g, %u-byte words, %" PRIu64 " samples of %" PRIu64
                   " allocations", l->path, profile_rate(p), profile_word_bytes(p), profile_totals(p)->samples,
                   profile_summary(p)->allocs);
  if (l->partial && n > 0 && (size_t)n < sizeof text)
    snprintf(text + n, sizeof text - (size_t)n, "; PARTIAL: the trace is damaged (%s)", l->error);
  pprof_writer_comment(e->w, cleaned(e, text));
}

static void note_times(Export *e, const Profile *p) {
  const TraceReaderInfo *info = trace_reader_info(profile_reader(p));
  uint64_t start = info->start_time_us, end = start + profile_summary(p)->last_us;
  if (!e->any_time || start < e->first_us) e->first_us = start;
  if (!e->any_time || end > e->last_us) e->last_us = end;
  e->any_time = true;
}

static void add_trace(Export *e, const Loaded *l, bool first) {
  const Profile *p = l->profile;
  if (first) {
    e->mapping = pprof_writer_mapping(e->w, cleaned(e, trace_reader_info(profile_reader(p))->executable));
    pprof_writer_period(e->w, "space", "bytes", llround(profile_sample_bytes(p)));
  }
  add_comment(e, l);
  note_times(e, p);
  uint64_t *loc_of = calloc(profile_n_nodes(p) + 1, sizeof *loc_of);
  if (!loc_of) out_of_memory();
  for (ProfileStackId s = 0; s < profile_n_stacks(p); s++) add_stack(e, p, s, loc_of);
  free(loc_of);
  e->partial |= l->partial;
}

static void write_samples(Export *e) {
  int64_t values[N_VALUES];
  for (uint32_t i = 0; i < e->n_merged; i++) {
    const Merged *m = &e->merged[i];
    bool any = false;
    for (int k = 0; k < N_VALUES; k++) any |= (values[k] = llround(m->values[k])) != 0;
    if (any) pprof_writer_sample(e->w, e->ids_pool + m->ids, m->n_ids, values, N_VALUES);
  }
}

static void header(Export *e) {
  static const char *const types[N_VALUES][2] = {
      {"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}};
  for (int k = 0; k < N_VALUES; k++) pprof_writer_sample_type(e->w, types[k][0], types[k][1]);
  pprof_writer_default_sample_type(e->w, "alloc_space");
}

static void free_export(Export *e) {
  table_free(&e->location_of);
  table_free(&e->merged_of);
  free(e->merged);
  free(e->ids_pool);
  free(e->clean);
}

// Reads every trace into e; false when one could not be read at all.
static bool read_traces(Export *e, const char *const *paths, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ProfileOptions popts = {0};
    Loaded l;
    if (analysis_load(e->usage, paths[i], &popts, NULL, &l) != 0) return false;
    add_trace(e, &l, i == 0);
    if (l.partial) fprintf(stderr, "memtrace %s: %s: %s\n", e->usage->name, l.path, l.error);
    analysis_close(&l);
  }
  return true;
}

int pprof_export(const ToolUsage *usage, const char *const *paths, size_t n, const char *out) {
  char err[512];
  Export e = {.usage = usage};
  if (!(e.w = pprof_writer_open(out, err, sizeof err))) {
    fprintf(stderr, "memtrace %s: %s\n", usage->name, err);
    return 1;
  }
  header(&e);
  bool ok = read_traces(&e, paths, n);
  if (ok) {
    write_samples(&e);
    pprof_writer_times(e.w, (int64_t)e.first_us * 1000, (int64_t)(e.last_us - e.first_us) * 1000);
  }
  int status = pprof_writer_close(e.w, err, sizeof err);
  free_export(&e);
  if (status != 0) fprintf(stderr, "memtrace %s: %s: %s\n", usage->name, out, err);
  if (!ok && strcmp(out, "-") != 0) unlink(out);
  return !ok || status != 0 || e.partial ? 1 : 0;
}
