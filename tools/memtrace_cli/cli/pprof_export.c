// pprof_export.c - traces to a pprof profile (pprof_export.h). Per trace:
// load its profile, give each trie node the pprof location of its frame
// (made on first use, shared across traces by a key hashed from the
// frame's locations) and its node in the location trie (a node per distinct
// path of pprof locations from the root, shared by every trace), and add
// each stack's unbiased values to its leaf's sample. Samples are written once
// every trace is read, each its path of locations walked up from its node.
// Callers' recursion is folded (collapse.h): a run "f ×N" is one location of
// a function named so, so a sample has a location per run, not per frame,
// and the profile's size follows the distinct frames, not the depth.
// Memory: location-trie nodes (16 bytes and a table slot each) and samples,
// never a location list per stack (10,000-frame stacks made those 400 MB).
#include "pprof_export.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analysis/collapse.h"
#include "../analysis/stats.h"
#include "../../../base/hash.h"
#include "../base/ocaml_int.h"
#include "../base/text.h"
#include "../base/xalloc.h"
#include "../render/pprof_file.h"
#include "../analysis/retain_text.h"
#include "../../../trace/snapshot_holder.h"
#include "kept_load.h"
#include "load.h"
#include "outfile.h"

enum { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE, N_VALUES };

// Open addressing on 64-bit keys, linear probing, at most half full.
typedef struct KeyTable {
  uint64_t *keys;
  uint32_t *values;   // value + 1; 0: empty slot
  uint64_t mask;
  uint64_t used;
} KeyTable;

// The location trie. Node 0 is the root (no location); a node's parent has
// a smaller index; `sample` indexes `samples` (UINT32_MAX: none yet).
typedef struct LocNode {
  uint32_t parent, location, depth, sample;
} LocNode;

typedef struct Sample {
  uint32_t node;
  uint32_t holder;        // a snapshot's profile: index in holder_texts
  double values[N_VALUES];
} Sample;

typedef struct Export {
  const ToolUsage *usage;
  uint32_t max_period;    // collapse_new's: 0 keeps stacks whole
  PprofWriter *w;
  uint64_t mapping;
  uint64_t no_backtrace;  // the location of empty callstacks, 0 until needed
  KeyTable location_of;   // frame key -> pprof location id
  KeyTable child_of;      // parent node << 32 | location -> location-trie node
  LocNode *nodes;
  uint32_t n_nodes, cap_nodes;
  Sample *samples;
  uint32_t n_samples, cap_samples;
  char *clean;            // scratch for cleaned strings
  size_t clean_cap;
  uint64_t first_us, last_us;  // since the epoch: earliest start, latest last event
  bool any_time, partial;
  // a snapshot's profile (pprof --at): its blocks, one sample per
  // (location-trie node, holder)
  const Snapshots *snaps;
  uint32_t snap;
  KeyTable holder_of;     // pprof string id of a holder's text -> index in holder_texts
  char **holder_texts;
  uint32_t n_holders, cap_holders;
  KeyTable sample_at;     // node << 32 | holder -> index in samples
} Export;

// ---------------------------------------------------------------- tables

static void table_grow(KeyTable *t) {
  uint64_t n = t->keys ? 2 * (t->mask + 1) : 1024;
  KeyTable bigger = {xrealloc(NULL, n * sizeof(uint64_t)), xrealloc(NULL, n * sizeof(uint32_t)), n - 1, t->used};
  memset(bigger.values, 0, n * sizeof(uint32_t));
  for (uint64_t i = 0; t->keys && i <= t->mask; i++) {
    if (!t->values[i]) continue;
    uint64_t j = hash_mix(t->keys[i]) & bigger.mask;
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
  uint64_t j = hash_mix(key) & t->mask;
  while (t->values[j] && t->keys[j] != key) j = (j + 1) & t->mask;
  return j;
}

static void table_free(KeyTable *t) {
  free(t->keys);
  free(t->values);
}

// ---------------------------------------------------------------- locations

// A frame's key: its locations as pprof shows them (function, file, line;
// not the columns, which pprof has no field for), or its code.
static uint64_t frame_key(const TraceReaderLocation *locs, int n, uint64_t code) {
  if (n <= 0) return hash_combine(0xc0de, code);
  uint64_t h = 0x10c;
  for (int i = 0; i < n; i++) {
    h = hash_combine(h, hash_string(locs[i].function));
    h = hash_combine(h, hash_string(locs[i].file));
    h = hash_combine(h, locs[i].line);
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
  if (!clean_name) xalloc_fail();
  uint64_t id = pprof_writer_function(e->w, clean_name, cleaned(e, file), 0);
  free(clean_name);
  return id;
}

// Writes the location of a frame: pprof lines innermost first, the reverse
// of the trace's order; a code without location is a function "$CODE".
static uint64_t write_location(Export *e, const TraceReaderLocation *locs, int n, uint64_t code) {
  if (n <= 0) {
    char name[32];
    snprintf(name, sizeof name, "$%" PRId64, ocaml_int(code));
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

// The location id of trie node `id` (not the root).
static uint32_t node_location(Export *e, const Profile *p, ProfileNodeId id) {
  const TraceReaderLocation *locs;
  int n = profile_node_locations(p, id, &locs);
  uint64_t code = profile_node_code(p, id), key = frame_key(locs, n, code);
  uint64_t j = table_slot(&e->location_of, key);
  if (!e->location_of.values[j]) {
    uint64_t loc = write_location(e, locs, n, code);
    if (loc > UINT32_MAX) xalloc_fail();  // 4 G locations: nothing reads that
    e->location_of.keys[j] = key;
    e->location_of.values[j] = (uint32_t)loc;
    e->location_of.used++;
  }
  return e->location_of.values[j];
}

// The location of a folded run: one line, its function "f ×N" (a cycle or
// an inlined frame: "(f → g) ×N", outermost first) at the first frame's
// file and line.
static uint32_t run_location(Export *e, const Profile *p, const Collapse *c, CollapseId r, const uint64_t *key_of) {
  const CollapseRun *run = collapse_run(c, r);
  const uint32_t *reps;
  uint32_t len = collapse_unit(c, run->unit, &reps);
  uint64_t key = hash_combine(hash_combine(0xf01d, run->count), len);
  for (uint32_t k = 0; k < len; k++) key = hash_combine(key, key_of[reps[k]]);
  uint64_t j = table_slot(&e->location_of, key);
  if (e->location_of.values[j]) return e->location_of.values[j];
  char *name = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&name, &size);
  if (!f) xalloc_fail();
  const char *file = "", *sep = "";
  uint32_t line = 0, names = 0;
  for (uint32_t k = 0; k < len; k++) {
    const TraceReaderLocation *locs;
    int n = profile_node_locations(p, reps[k], &locs);
    if (n <= 0) fprintf(f, "%s$%" PRId64, sep, ocaml_int(profile_node_code(p, reps[k]))), sep = " \u2192 ", names++;
    for (int i = 0; i < n; i++, sep = " \u2192 ", names++) {
      fprintf(f, "%s%s", sep, locs[i].function);
      if (!*file) file = locs[i].file, line = locs[i].line;
    }
  }
  if (fclose(f) != 0) xalloc_fail();
  char *label = NULL;
  if (asprintf(&label, names > 1 ? "(%s) \u00d7%u" : "%s \u00d7%u", name, run->count) < 0) xalloc_fail();
  free(name);
  char *clean_label = xstrdup(cleaned(e, label));
  PprofLine pl = {pprof_writer_function(e->w, clean_label, cleaned(e, file), 0), line};
  free(clean_label);
  free(label);
  uint64_t loc = pprof_writer_location(e->w, e->mapping, &pl, 1);
  if (loc > UINT32_MAX) xalloc_fail();
  j = table_slot(&e->location_of, key);  // written since: the table may have grown
  e->location_of.keys[j] = key;
  e->location_of.values[j] = (uint32_t)loc;
  e->location_of.used++;
  return (uint32_t)loc;
}

// ---------------------------------------------------------------- stacks

// The location-trie child of `parent` at `location`, made if new.
static uint32_t loc_child(Export *e, uint32_t parent, uint32_t location) {
  uint64_t key = (uint64_t)parent << 32 | location, j = table_slot(&e->child_of, key);
  if (e->child_of.values[j]) return e->child_of.values[j] - 1;
  if (e->n_nodes == UINT32_MAX - 1) xalloc_fail();
  if (e->n_nodes == e->cap_nodes)
    e->nodes = xrealloc(e->nodes, (e->cap_nodes = 2 * e->cap_nodes + 1024) * sizeof *e->nodes);
  uint32_t id = e->n_nodes++;
  e->nodes[id] = (LocNode){parent, location, e->nodes[parent].depth + 1, UINT32_MAX};
  e->child_of.keys[j] = key;
  e->child_of.values[j] = id + 1;
  e->child_of.used++;
  return id;
}

static Sample *sample_of(Export *e, uint32_t node) {
  LocNode *n = &e->nodes[node];
  if (n->sample != UINT32_MAX) return &e->samples[n->sample];
  if (e->n_samples == e->cap_samples)
    e->samples = xrealloc(e->samples, (e->cap_samples = 2 * e->cap_samples + 256) * sizeof *e->samples);
  n->sample = e->n_samples;
  e->samples[e->n_samples] = (Sample){node, 0, {0}};
  return &e->samples[e->n_samples++];
}

// A snapshot's profile: the sample of the node and the holder.
static Sample *holder_sample(Export *e, uint32_t node, uint32_t holder) {
  uint64_t j = table_slot(&e->sample_at, (uint64_t)node << 32 | holder);
  if (e->sample_at.values[j]) return &e->samples[e->sample_at.values[j] - 1];
  if (e->n_samples == e->cap_samples)
    e->samples = xrealloc(e->samples, (e->cap_samples = 2 * e->cap_samples + 256) * sizeof *e->samples);
  e->samples[e->n_samples] = (Sample){node, holder, {0}};
  e->sample_at.keys[j] = (uint64_t)node << 32 | holder;
  e->sample_at.values[j] = e->n_samples + 1;
  e->sample_at.used++;
  return &e->samples[e->n_samples++];
}

// The index of a path's holder text (made on first use).
static uint32_t holder_index(Export *e, const RetainPath *path) {
  uint32_t depth;
  char *text = retain_path_string(path, retain_holder_cut(path, &depth), true);
  const char *clean = cleaned(e, text);
  uint64_t sid = (uint64_t)pprof_writer_string(e->w, clean);
  uint64_t j = table_slot(&e->holder_of, sid);
  if (!e->holder_of.values[j]) {
    if (e->n_holders == e->cap_holders)
      e->holder_texts = xrealloc(e->holder_texts, (e->cap_holders = 2 * e->cap_holders + 64) * sizeof(char *));
    e->holder_texts[e->n_holders] = xstrdup(clean);
    e->holder_of.keys[j] = sid;
    e->holder_of.values[j] = ++e->n_holders;
    e->holder_of.used++;
  }
  free(text);
  return e->holder_of.values[j] - 1;
}

// A snapshot's blocks, each into the sample of its stack's node and its
// holder: inuse_space its samples' bytes, inuse_objects the blocks it
// stands for as its stack's sampled blocks do on average.
static void add_snapshot(Export *e, const Profile *p, const uint32_t *node_of) {
  double bytes = profile_sample_bytes(p);
  SnapshotPathView v;
  for (uint64_t i = 0; i < snapshots_paths(e->snaps, e->snap); i++) {
    const SnapBlock *b = snapshots_block(e->snaps, e->snap, i);
    ProfileCounts c = profile_stack_counts(p, b->stack);
    Sample *m = holder_sample(e, node_of[profile_stack_leaf(p, b->stack)],
                              holder_index(e, snapshots_path_view(e->snaps, e->snap, i, &v)));
    m->values[INUSE_OBJECTS] += c.blocks ? c.objects / (double)c.blocks : 0;
    m->values[INUSE_SPACE] += (double)b->samples * bytes;
  }
}

// inuse_objects: the live blocks weighted as the stack's blocks are on
// average; exact when the stack's blocks all have one size.
static void add_stack(Export *e, const Profile *p, ProfileStackId s, const uint32_t *node_of) {
  ProfileCounts counts = profile_stack_counts(p, s), *c = &counts;
  if (!c->samples) return;
  Sample *m = sample_of(e, node_of[profile_stack_leaf(p, s)]);
  double bytes = profile_sample_bytes(p);
  m->values[ALLOC_OBJECTS] += c->objects;
  m->values[ALLOC_SPACE] += (double)c->samples * bytes;
  m->values[INUSE_OBJECTS] += c->blocks ? c->objects * (double)c->live_blocks / (double)c->blocks : 0;
  m->values[INUSE_SPACE] += (double)c->live_samples * bytes;
}

// The location-trie node of run r, made (with its ancestors') if new: only
// the runs of sampled stacks get locations, however many the trie holds.
static uint32_t run_node(Export *e, const Profile *p, const Collapse *c, CollapseId r, const uint64_t *key_of,
                         uint32_t *node_of_run) {
  CollapseId top = r;
  while (node_of_run[top] == UINT32_MAX) top = collapse_run(c, top)->parent;
  // node_of_run[top] is made: make the runs after it on the way to r,
  // outermost first.
  uint32_t depth = collapse_run(c, r)->runs - collapse_run(c, top)->runs;
  CollapseId *path = xrealloc(NULL, ((size_t)depth + 1) * sizeof *path);
  uint32_t k = 0;
  for (CollapseId id = r; id != top; id = collapse_run(c, id)->parent) path[k++] = id;
  while (k--) {
    CollapseId id = path[k];
    const uint32_t *reps;
    collapse_unit(c, collapse_run(c, id)->unit, &reps);
    uint32_t loc = collapse_plain(c, id) ? node_location(e, p, reps[0]) : run_location(e, p, c, id, key_of);
    node_of_run[id] = loc_child(e, node_of_run[collapse_run(c, id)->parent], loc);
  }
  free(path);
  return node_of_run[r];
}

// Each trie node's path folded (runs come after their parents, as trie
// nodes do), each run's location-trie node, then each stack's values into
// its sample: its callers' runs, then its own frame's location (the
// allocating frame is never folded into its callers).
static void add_stacks(Export *e, const Profile *p) {
  uint32_t n = profile_n_nodes(p);
  uint32_t *run_of = xrealloc(NULL, (size_t)(n ? n : 1) * sizeof *run_of);
  uint64_t *key_of = xrealloc(NULL, (size_t)(n ? n : 1) * sizeof *key_of);
  Collapse *c = collapse_new(e->max_period);
  run_of[0] = 0;
  for (ProfileNodeId id = 1; id < n; id++) {
    const TraceReaderLocation *locs;
    int k = profile_node_locations(p, id, &locs);
    key_of[id] = frame_key(locs, k, profile_node_code(p, id));
    run_of[id] = collapse_push(c, run_of[profile_node_parent(p, id)], key_of[id], id);
  }
  collapse_seal(c);
  uint32_t n_runs = collapse_size(c);
  uint32_t *node_of_run = xrealloc(NULL, (size_t)n_runs * sizeof *node_of_run);
  memset(node_of_run, 0xff, (size_t)n_runs * sizeof *node_of_run);  // UINT32_MAX: not made yet
  node_of_run[0] = 0;
  uint32_t *node_of = xrealloc(NULL, (size_t)(n ? n : 1) * sizeof *node_of);
  node_of[0] = 0;
  for (ProfileStackId s = 0; s < profile_n_stacks(p); s++) {
    ProfileNodeId leaf = profile_stack_leaf(p, s);
    if (!profile_stack_counts(p, s).samples) continue;
    if (leaf != 0) {
      uint32_t at = run_node(e, p, c, run_of[profile_node_parent(p, leaf)], key_of, node_of_run);
      node_of[leaf] = loc_child(e, at, node_location(e, p, leaf));
    }
    if (!e->snaps) add_stack(e, p, s, node_of);
  }
  if (e->snaps) add_snapshot(e, p, node_of);
  collapse_free(c);
  free(node_of_run);
  free(run_of);
  free(key_of);
  free(node_of);
}

// ---------------------------------------------------------------- traces

static void add_comment(Export *e, const Loaded *l) {
  const Profile *p = l->profile;
  char text[512 + TRACE_READER_ERROR_MAX];
  const char *exe = trace_reader_info(profile_reader(p))->executable;
  int n = snprintf(text, sizeof text, "memtrace trace %s: rate %g, %u-byte words, %" PRIu64 " samples of %" PRIu64
                   " allocations; executable %s", l->path, profile_rate(p), profile_word_bytes(p),
                   profile_totals(p)->samples, profile_summary(p)->allocs, *exe ? exe : "(not recorded)");
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

// The mapping's file: the program's name as a virtual object ("[vm]"), never
// a path pprof could open: its source and disassembly views would read the
// program's machine code at addresses the profile does not have (pprof
// 1.19's -weblist and -http's Source view panicked when ./vm existed at the
// mapping's path). The executable's path is in the comments.
static const char *mapping_name(Export *e, const char *executable) {
  const char *slash = strrchr(executable, '/'), *base = slash && slash[1] ? slash + 1 : executable;
  char *name = NULL;
  if (asprintf(&name, "[%s]", *base ? base : "program") < 0) xalloc_fail();
  const char *clean = cleaned(e, name);
  free(name);
  return clean;
}

static void add_trace(Export *e, const Loaded *l, bool first) {
  const Profile *p = l->profile;
  if (first) {
    e->mapping = pprof_writer_mapping(e->w, mapping_name(e, trace_reader_info(profile_reader(p))->executable));
    pprof_writer_period(e->w, "space", "bytes", llround(profile_sample_bytes(p)));
  }
  add_comment(e, l);
  note_times(e, p);
  add_stacks(e, p);
  e->partial |= l->partial;
}

static size_t sample_path(Export *e, uint32_t node, uint64_t *ids);

// A snapshot's samples: inuse_objects and inuse_space, the holder a label.
static void write_holder_samples(Export *e) {
  uint32_t max_depth = 0;
  for (uint32_t i = 0; i < e->n_samples; i++)
    if (e->nodes[e->samples[i].node].depth > max_depth) max_depth = e->nodes[e->samples[i].node].depth;
  uint64_t *ids = xrealloc(NULL, ((size_t)max_depth + 1) * sizeof *ids);
  for (uint32_t i = 0; i < e->n_samples; i++) {
    const Sample *m = &e->samples[i];
    int64_t values[2] = {llround(m->values[INUSE_OBJECTS]), llround(m->values[INUSE_SPACE])};
    PprofLabel label = {.key = "holder", .str = e->holder_texts[m->holder]};
    if (values[0] || values[1])
      pprof_writer_sample_labels(e->w, ids, sample_path(e, m->node, ids), values, 2, &label, 1);
  }
  free(ids);
}

// A sample's locations leaf first; the root's (empty callstacks, which
// pprof would drop): a location "(no backtrace)".
static size_t sample_path(Export *e, uint32_t node, uint64_t *ids) {
  size_t n = 0;
  for (; node != 0; node = e->nodes[node].parent) ids[n++] = e->nodes[node].location;
  if (n == 0) {
    if (!e->no_backtrace) {
      PprofLine line = {function_id(e, "(no backtrace)", ""), 0};
      e->no_backtrace = pprof_writer_location(e->w, e->mapping, &line, 1);
    }
    ids[n++] = e->no_backtrace;
  }
  return n;
}

static void write_samples(Export *e) {
  if (e->snaps) {
    write_holder_samples(e);
    return;
  }
  uint32_t max_depth = 0;
  for (uint32_t i = 0; i < e->n_samples; i++)
    if (e->nodes[e->samples[i].node].depth > max_depth) max_depth = e->nodes[e->samples[i].node].depth;
  uint64_t *ids = xrealloc(NULL, ((size_t)max_depth + 1) * sizeof *ids);
  int64_t values[N_VALUES];
  for (uint32_t i = 0; i < e->n_samples; i++) {
    const Sample *m = &e->samples[i];
    bool any = false;
    for (int k = 0; k < N_VALUES; k++) any |= (values[k] = llround(m->values[k])) != 0;
    if (any) pprof_writer_sample(e->w, ids, sample_path(e, m->node, ids), values, N_VALUES);
  }
  free(ids);
}

static void header(Export *e) {
  static const char *const types[N_VALUES][2] = {
      {"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}};
  for (int k = e->snaps ? INUSE_OBJECTS : 0; k < N_VALUES; k++) pprof_writer_sample_type(e->w, types[k][0], types[k][1]);
  pprof_writer_default_sample_type(e->w, e->snaps ? "inuse_space" : "alloc_space");
}

static void free_export(Export *e) {
  table_free(&e->location_of);
  table_free(&e->child_of);
  free(e->nodes);
  free(e->samples);
  free(e->clean);
  table_free(&e->holder_of);
  table_free(&e->sample_at);
  for (uint32_t i = 0; i < e->n_holders; i++) free(e->holder_texts[i]);
  free(e->holder_texts);
}

// Reads every trace into e; false when one could not be read at all.
// A trace that is the same recording as an earlier one is summed all the
// same (the user asked for it) and said on stderr.
static bool read_traces(Export *e, const char *const *paths, size_t n) {
  LoadIdentity *ids = xrealloc(NULL, (n ? n : 1) * sizeof *ids);
  for (size_t i = 0; i < n; i++) {
    ProfileOptions popts = {0};
    Loaded l;
    if (load_trace(e->usage, paths[i], &popts, NULL, &l) != 0) {
      free(ids);
      return false;
    }
    ids[i] = load_identity(&l);
    for (size_t k = 0; k < i; k++)
      if (load_same_recording(&ids[k], &ids[i])) {
        load_warn_same_recording(e->usage, paths[k], paths[i], &ids[i], "its estimates are summed twice");
        break;
      }
    add_trace(e, &l, i == 0);
    if (l.partial) fprintf(stderr, "memtrace %s: %s: %s\n", e->usage->name, l.path, l.error);
    load_close(&l);
  }
  free(ids);
  return true;
}

bool pprof_export_output_ok(const ToolUsage *usage, const char **out) {
  if (!*out) *out = "-";
  if (strcmp(*out, "-") != 0 || !isatty(1)) return true;
  fprintf(stderr, "memtrace %s: stdout is a terminal: a gzipped profile goes to a file (-o OUT.pb.gz) or a pipe\n",
          usage->name);
  return false;
}

// Opens the output: `out` ("-": stdout) through outfile.h; false (said on
// stderr, nothing left) on failure.
static bool open_output(Export *e, const char *out) {
  char err[512];
  e->nodes = xrealloc(NULL, 1024 * sizeof *e->nodes);
  e->cap_nodes = 1024;
  e->nodes[e->n_nodes++] = (LocNode){UINT32_MAX, 0, 0, UINT32_MAX};  // the root
  const char *name = strcmp(out, "-") == 0 ? out : outfile_begin(e->usage->name, out);
  if (!name) return false;
  int fd = strcmp(name, "-") == 0 ? dup(1) : outfile_fd(name);
  if (fd < 0) snprintf(err, sizeof err, "cannot create %s: %s", out, strerror(errno));
  if (fd < 0 || !(e->w = pprof_file_open_fd(fd, out, err, sizeof err))) {
    outfile_discard();
    fprintf(stderr, "memtrace %s: %s\n", e->usage->name, err);
    return false;
  }
  header(e);
  return true;
}

// Closes the output; the exit status (1: writing failed, or `failed`: the
// output is discarded).
static int close_output(Export *e, const char *out, bool failed) {
  char err[512];
  int status = pprof_file_close(e->w, err, sizeof err);
  if (status != 0) fprintf(stderr, "memtrace %s: %s: %s\n", e->usage->name, out, err);
  if (failed || status != 0) outfile_discard();
  return status != 0 ? 1 : 0;
}

int pprof_export(const ToolUsage *usage, const char *const *paths, size_t n, const char *out, bool whole_stacks) {
  Export e = {.usage = usage, .max_period = whole_stacks ? 0 : COLLAPSE_MAX_PERIOD};
  if (!open_output(&e, out)) {
    free_export(&e);
    return 1;
  }
  bool ok = read_traces(&e, paths, n);
  if (ok) {
    write_samples(&e);
    pprof_writer_times(e.w, (int64_t)e.first_us * 1000, (int64_t)(e.last_us - e.first_us) * 1000);
  }
  int status = close_output(&e, out, !ok);
  free_export(&e);
  return !ok || status != 0 || e.partial ? 1 : 0;
}

int pprof_export_snapshot(const ToolUsage *usage, const char *path, const char *retain, const SnapPick *pick,
                          const char *out, bool whole_stacks) {
  ProfileOptions popts = {0};
  Loaded l;
  Snapshots s;
  if (kept_load(usage, path, retain, &popts, NULL, &l, &s) != 0) return 1;
  char why[SNAPSHOTS_TEXT];
  int64_t k = kept_pick(&s, l.profile, pick, why, sizeof why);
  if (k < 0) {
    int closed = kept_close(usage, &l, &s);
    if (!closed) fprintf(stderr, "memtrace %s: %s: no snapshot to write: %s\n", usage->name, path, why);
    return 1;
  }
  Export e = {.usage = usage, .max_period = whole_stacks ? 0 : COLLAPSE_MAX_PERIOD, .snaps = &s, .snap = (uint32_t)k};
  int status = 1;
  if (open_output(&e, out)) {
    add_trace(&e, &l, true);
    const Snapshot *snap = s.snaps[k].s;
    char text[256];
    uint64_t at_us = snapshots_time(&s, (uint32_t)k);
    snprintf(text, sizeof text, "memtrace snapshot %" PRIu64 " (%s, at %.6f s of the trace): %" PRIu64
             " sampled blocks alive; label holder: what keeps each (docs/retention.md)", snap->number,
             retain_trigger_name(snap->trigger), (double)at_us / 1e6, snapshots_paths(&s, (uint32_t)k));
    pprof_writer_comment(e.w, text);
    write_samples(&e);
    pprof_writer_times(e.w, (int64_t)(s.start_us + at_us) * 1000, 0);
    status = close_output(&e, out, false);
  }
  free_export(&e);
  int closed = kept_close(usage, &l, &s);
  return status || closed ? 1 : 0;
}
