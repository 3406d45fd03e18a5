// snapshot_pprof.c - one pprof profile per snapshot (contract in
// snapshot_pprof.h).
//
// 1. While the mark gives paths, each live sampled block costs one entry
//    (its callstack's node in the trace's stack trie, memprof/memtrace.c
//    part 8; its holder, interned; its samples and estimated objects): 32
//    bytes, only with --memtrace-pprof-dir. At the end the entries are
//    sorted by (holder, node) and equal ones merged: a sample per distinct
//    (callstack, holder).
// 2. A callstack is written leaf first from its trie node up: each run's
//    code `count` times (a recursion of 10,000 frames is 10,000 locations
//    of one id, as pprof wants them). A code's location is written once per
//    profile (a table code -> location id).
// 3. Estimates are the trace tools': a sample stands for word size / rate
//    bytes; a sampled block of w words stands for 1 / (1 - (1 - rate)^(w+1))
//    blocks (the chance that a block of w words and its header is sampled).
// 4. The file: DIR/.NAME.tmp created exclusively (O_EXCL: nothing is
//    overwritten, a stale temporary of a killed run is not reused), written,
//    then renamed to DIR/NAME; on failure the temporary is removed.
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "snapshot_pprof.h"
#include "../../core/frames.h"
#include "../../core/vm_state.h"
#include "../../memprof/memtrace.h"
#include "../../memprof/stack_trie.h"
#include "../../trace/pprof_writer.h"
#include "../../trace/snapshot_holder.h"
#include "../../base/hash.h"

typedef struct Entry {
  uint32_t node;      // the callstack, a node of the trace's stack trie
  uint32_t holder;    // index in holders
  uint64_t samples;
  double objects;
} Entry;

struct SnapshotPprof {
  uint64_t number, time_us;
  RetainTrigger trigger;
  double rate;
  Entry *entries;
  size_t n_entries, cap_entries;
  char **holders;          // interned holder texts
  uint32_t n_holders, cap_holders;
  uint32_t *holder_slots;  // open addressing: holder index + 1, 0 empty
  uint64_t holder_mask;
  FILE *text;              // a memory stream a holder's text is written to
  char *text_buf;
  size_t text_len;
  const char *failure;     // why no profile can be written, or NULL
};

static bool grow_holder_slots(SnapshotPprof *p) {
  uint64_t cap = p->holder_slots ? 2 * (p->holder_mask + 1) : 64;
  uint32_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (uint32_t i = 0; i < p->n_holders; i++) {
    uint64_t h = hash_fnv_bytes(p->holders[i], strlen(p->holders[i])) & (cap - 1);
    while (slots[h]) h = (h + 1) & (cap - 1);
    slots[h] = i + 1;
  }
  free(p->holder_slots);
  p->holder_slots = slots;
  p->holder_mask = cap - 1;
  return true;
}

// The index of holder text s[0 .. n), interned; UINT32_MAX if memory is short.
static uint32_t intern_holder(SnapshotPprof *p, const char *s, size_t n) {
  if ((uint64_t)(p->n_holders + 1) * 2 > p->holder_mask + 1 && !grow_holder_slots(p)) return UINT32_MAX;
  uint64_t h = hash_fnv_bytes(s, n) & p->holder_mask;
  for (; p->holder_slots[h]; h = (h + 1) & p->holder_mask) {
    const char *t = p->holders[p->holder_slots[h] - 1];
    if (strncmp(t, s, n) == 0 && t[n] == '\0') return p->holder_slots[h] - 1;
  }
  if (p->n_holders == p->cap_holders) {
    uint32_t cap = p->cap_holders ? 2 * p->cap_holders : 16;
    char **holders = realloc(p->holders, cap * sizeof *holders);
    if (!holders) return UINT32_MAX;
    p->holders = holders;
    p->cap_holders = cap;
  }
  char *copy = strndup(s, n);
  if (!copy) return UINT32_MAX;
  p->holders[p->n_holders] = copy;
  p->holder_slots[h] = ++p->n_holders;
  return p->n_holders - 1;
}

SnapshotPprof *snapshot_pprof_begin(Vm *vm, uint64_t number, RetainTrigger trigger, uint64_t time_us) {
  MemtraceIdentity id;
  if (!vm->options.memtrace_pprof_dir || !memtrace_stacks(vm) || !memtrace_identity(vm, &id)) return NULL;
  SnapshotPprof *p = calloc(1, sizeof *p);
  if (p) p->text = open_memstream(&p->text_buf, &p->text_len);
  if (!p || !p->text || !grow_holder_slots(p)) {
    if (p && p->text) fclose(p->text);
    if (p) free(p->text_buf);
    free(p);
    memtrace_stop_stacks(vm, "out of memory for a profile");
    return NULL;
  }
  p->number = number;
  p->trigger = trigger;
  p->time_us = time_us;
  p->rate = id.rate;
  return p;
}

// Part 3.
static double block_weight(uint64_t wosize, double rate) {
  if (rate >= 1) return 1;
  double q = -expm1((double)(wosize + 1) * log1p(-rate));
  return q > 0 ? 1 / q : 0;
}

void snapshot_pprof_block(Vm *vm, SnapshotPprof *p, uint64_t id, const RetainPath *path) {
  if (!p || p->failure) return;
  uint32_t node, samples;
  uint64_t wosize;
  if (!memtrace_stack_of(vm, id, &node, &samples, &wosize)) {
    p->failure = "a live sampled block's callstack was not kept";
    return;
  }
  uint32_t depth;
  uint32_t cut = retain_holder_cut(path, &depth);
  fseeko(p->text, 0, SEEK_SET);
  retain_holder_text(p->text, path, cut);
  off_t len = ftello(p->text);
  if (fflush(p->text) != 0 || len < 0) {
    p->failure = "out of memory for a holder's text";
    return;
  }
  uint32_t holder = intern_holder(p, p->text_buf, (size_t)len);
  if (holder == UINT32_MAX) {
    p->failure = "out of memory for a holder's text";
    return;
  }
  if (p->n_entries == p->cap_entries) {
    size_t cap = p->cap_entries ? 2 * p->cap_entries : 256;
    Entry *e = realloc(p->entries, cap * sizeof *e);
    if (!e) {
      p->failure = "out of memory for a profile";
      return;
    }
    p->entries = e;
    p->cap_entries = cap;
  }
  p->entries[p->n_entries++] = (Entry){node, holder, samples, block_weight(wosize, p->rate)};
}

static int cmp_entry(const void *a, const void *b) {
  const Entry *x = a, *y = b;
  if (x->holder != y->holder) return x->holder < y->holder ? -1 : 1;
  return x->node < y->node ? -1 : x->node > y->node;
}

// Part 2: code -> location id, made on first use.
typedef struct Locations {
  uint64_t *codes, *ids;
  uint64_t mask, count;
  uint64_t mapping;
} Locations;

static uint64_t code_hash(uint64_t c) { return hash_mix(c); }

static bool grow_locations(Locations *l) {
  uint64_t cap = l->codes ? 2 * (l->mask + 1) : 256;
  uint64_t *codes = malloc(cap * sizeof *codes), *ids = calloc(cap, sizeof *ids);
  if (!codes || !ids) {
    free(codes);
    free(ids);
    return false;
  }
  for (uint64_t i = 0; l->codes && i <= l->mask; i++) {
    if (!l->ids[i]) continue;
    uint64_t h = code_hash(l->codes[i]) & (cap - 1);
    while (ids[h]) h = (h + 1) & (cap - 1);
    codes[h] = l->codes[i];
    ids[h] = l->ids[i];
  }
  free(l->codes);
  free(l->ids);
  l->codes = codes;
  l->ids = ids;
  l->mask = cap - 1;
  return true;
}

// The location of callstack code `code`; 0 if memory is short.
static uint64_t location_of(const Vm *vm, PprofWriter *w, Locations *l, uint64_t code) {
  if ((l->count + 1) * 2 > l->mask + 1 && !grow_locations(l)) return 0;
  uint64_t h = code_hash(code) & l->mask;
  for (; l->ids[h]; h = (h + 1) & l->mask)
    if (l->codes[h] == code) return l->ids[h];
  PprofLine lines[8];
  size_t n = 0;
  for (const DebugInfo *d = memtrace_code_debug(vm, code); d && n < 8; d = d->inlined_into)
    lines[n++] = (PprofLine){pprof_writer_function(w, d->function, d->file, 0), d->line};
  uint64_t id = pprof_writer_location(w, l->mapping, lines, n);
  l->codes[h] = code;
  l->ids[h] = id;
  l->count++;
  return id;
}

static void file_name(const SnapshotPprof *p, char *out, size_t cap, const char *dir, bool temporary) {
  time_t secs = (time_t)(p->time_us / 1000000u);
  struct tm tm;
  gmtime_r(&secs, &tm);
  char when[32];
  strftime(when, sizeof when, "%Y%m%dT%H%M%S", &tm);
  snprintf(out, cap, "%s/%sminnow-%s.%06uZ-%ld-%llu-%s.pb%s", dir, temporary ? "." : "", when,
           (unsigned)(p->time_us % 1000000u), (long)getpid(), (unsigned long long)p->number,
           retain_trigger_name(p->trigger), temporary ? ".tmp" : "");
}

// Writes the merged entries to fd; false with *why on failure (msg: room
// for its text).
static bool write_profile(const Vm *vm, SnapshotPprof *p, int fd, const char **why, char *msg, size_t msg_cap) {
  PprofWriter *w = pprof_writer_new(pprof_sink_fd, &fd);
  if (!w) {
    *why = "out of memory for a profile";
    return false;
  }
  pprof_writer_sample_type(w, "samples", "count");
  pprof_writer_sample_type(w, "inuse_objects", "count");
  pprof_writer_sample_type(w, "inuse_space", "bytes");
  pprof_writer_default_sample_type(w, "inuse_space");
  pprof_writer_period(w, "space", "bytes", (int64_t)llround(8 / p->rate));
  pprof_writer_times(w, (int64_t)p->time_us * 1000, 0);
  char comment[160];
  snprintf(comment, sizeof comment, "minnow: snapshot %llu (%s) of the sampled blocks alive, sampled at rate %g",
           (unsigned long long)p->number, retain_trigger_name(p->trigger), p->rate);
  pprof_writer_comment(w, comment);
  Locations l = {.mapping = pprof_writer_mapping(w, "[vm]")};
  uint64_t *locs = NULL;
  size_t cap_locs = 0;
  bool ok = grow_locations(&l);
  const StackTrie *trie = memtrace_stacks(vm);
  for (size_t i = 0; ok && i < p->n_entries; i++) {
    const Entry *e = &p->entries[i];
    size_t n = 0;
    for (uint32_t id = e->node; ok && id != 0;) {
      const StackTrieNode *t = stack_trie_node(trie, id);
      uint64_t loc = location_of(vm, w, &l, t->code);
      if (!loc || n + t->count > SIZE_MAX / 2) ok = false;
      else if (n + t->count > cap_locs) {
        size_t cap = 2 * (n + t->count);
        uint64_t *more = realloc(locs, cap * sizeof *more);
        if (more) {
          locs = more;
          cap_locs = cap;
        } else ok = false;
      }
      for (uint32_t k = 0; ok && k < t->count; k++) locs[n++] = loc;
      id = t->parent;
    }
    if (!ok) {
      *why = "out of memory for a profile";
      break;
    }
    int64_t values[3] = {(int64_t)e->samples, llround(e->objects), llround((double)e->samples * 8 / p->rate)};
    PprofLabel label = {.key = "holder", .str = p->holders[e->holder]};
    pprof_writer_sample_labels(w, locs, n, values, 3, &label, 1);
  }
  free(locs);
  free(l.codes);
  free(l.ids);
  const char *err = pprof_writer_error(w);
  if (ok && err[0]) {
    snprintf(msg, msg_cap, "%s", err);
    *why = msg;
    ok = false;
  }
  pprof_writer_free(w);
  return ok;
}

static void release(SnapshotPprof *p) {
  for (uint32_t i = 0; i < p->n_holders; i++) free(p->holders[i]);
  free(p->holders);
  free(p->holder_slots);
  free(p->entries);
  fclose(p->text);
  free(p->text_buf);
  free(p);
}

void snapshot_pprof_end(Vm *vm, SnapshotPprof *p, bool whole) {
  if (!p) return;
  const char *why = p->failure;
  char msg[300];
  if (whole && !why) {
    qsort(p->entries, p->n_entries, sizeof *p->entries, cmp_entry);
    size_t m = 0;
    for (size_t i = 0; i < p->n_entries; i++) {
      if (m > 0 && cmp_entry(&p->entries[m - 1], &p->entries[i]) == 0) {
        p->entries[m - 1].samples += p->entries[i].samples;
        p->entries[m - 1].objects += p->entries[i].objects;
      } else p->entries[m++] = p->entries[i];
    }
    p->n_entries = m;
    const char *dir = vm->options.memtrace_pprof_dir;
    size_t cap = strlen(dir) + 128;
    char *tmp = malloc(cap), *final = malloc(cap);
    int fd = -1;
    if (!tmp || !final) why = "out of memory for a profile";
    else {
      file_name(p, tmp, cap, dir, true);
      file_name(p, final, cap, dir, false);
      fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    }
    if (!why && fd < 0) {
      snprintf(msg, sizeof msg, "cannot create %s: %s", tmp, strerror(errno));
      why = msg;
    } else if (!why) {
      bool ok = write_profile(vm, p, fd, &why, msg, sizeof msg);
      if (close(fd) != 0 && ok) {
        snprintf(msg, sizeof msg, "cannot write %s: %s", tmp, strerror(errno));
        why = msg;
        ok = false;
      }
      if (ok && rename(tmp, final) != 0) {
        snprintf(msg, sizeof msg, "cannot rename %s to %s: %s", tmp, final, strerror(errno));
        why = msg;
        ok = false;
      }
      if (!ok) unlink(tmp);
    }
    free(tmp);
    free(final);
  }
  if (why) memtrace_stop_stacks(vm, why);
  release(p);
}
