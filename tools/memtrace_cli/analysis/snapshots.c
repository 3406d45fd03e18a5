// snapshots.c - a trace's snapshots, found, read and matched with the trace
// (snapshots.h).
//
// 1. The file is read before the trace: its snapshots say which blocks to
//    take and where. While the profile reads the trace, the hook before each
//    event takes every snapshot whose place has come: every allocation it
//    counts has been read (ids are in order), so each block it lists is in
//    the profile's live set unless the trace collects it before the
//    snapshot (a block it lists dies after the snapshot ends: the events
//    between its last allocation and this one are collections before it or
//    its own, of blocks it does not list). A block listed and not there:
//    damage. Blocks are kept once, by id (a table id -> index); a snapshot
//    keeps an index per path.
// 2. Following a growing trace (snapshots_follow), the hook also keeps the
//    blocks collected since the last snapshot taken at its place: a
//    snapshot found after the reading passed its place is taken from them
//    and the live set.
// 3. At the end, snapshots not taken yet (no event after their last
//    allocation) are taken from the survivors (the live set as
//    profile_finish hands it over, sorted by id); a snapshot the trace does
//    not reach (its alloc count past the allocations read) is not usable,
//    nor the end state of a partial trace.
#include "snapshots.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../../base/hash.h"
#include "../base/xalloc.h"

const char *snapshots_status_name(SnapshotsStatus st) {
  return st == SNAPSHOTS_PRESENT ? "present" : st == SNAPSHOTS_ABSENT ? "absent" : "damaged";
}

static void absent(Snapshots *s, const char *fix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void absent(Snapshots *s, const char *fix, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->why, sizeof s->why, fmt, ap);
  va_end(ap);
  snprintf(s->fix, sizeof s->fix, "%s", fix);
  s->status = SNAPSHOTS_ABSENT;
}

static void damaged(Snapshots *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void damaged(Snapshots *s, const char *fmt, ...) {
  if (s->status == SNAPSHOTS_DAMAGED) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->why, sizeof s->why, fmt, ap);
  va_end(ap);
  s->status = SNAPSHOTS_DAMAGED;
}

static void unusable(SnapState *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void unusable(SnapState *st, const char *fmt, ...) {
  if (!st->usable) return;
  st->usable = false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->why, sizeof st->why, fmt, ap);
  va_end(ap);
}

static const char *const RERUN =
    "run the program under ./vm --memtrace (snapshots: Memtrace.snapshot(), SIGUSR1, "
    "--memtrace-snapshot-every S; the end state when it ends) and keep T.retain beside the trace T, or name it "
    "with --retain FILE";

// ---------------------------------------------------------------- blocks

static uint32_t block_index(const Snapshots *s, uint64_t id) {
  if (!s->slots) return UINT32_MAX;
  for (uint64_t j = hash_mix(id) & s->slot_mask; s->slots[j]; j = (j + 1) & s->slot_mask)
    if (s->blocks[s->slots[j] - 1].id == id) return s->slots[j] - 1;
  return UINT32_MAX;
}

static void grow_slots(Snapshots *s) {
  uint64_t cap = s->slots ? 2 * (s->slot_mask + 1) : 1024;
  while (cap < 2 * ((uint64_t)s->n_blocks + 1)) cap *= 2;   // made late: every block taken so far
  uint32_t *slots = xrealloc(NULL, cap * sizeof *slots);
  memset(slots, 0, cap * sizeof *slots);
  for (uint32_t i = 0; i < s->n_blocks; i++) {
    uint64_t j = hash_mix(s->blocks[i].id) & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = i + 1;
  }
  free(s->slots);
  s->slots = slots;
  s->slot_mask = cap - 1;
}

// The index of block b, added if new. `first`: the first snapshot taken
// with blocks, whose ids are distinct (the reader refuses an id twice): no
// table is needed until a second one is taken (4 bytes a block saved when
// there is one snapshot, as with the end state alone).
static uint32_t add_block(Snapshots *s, const ProfileSurvivor *b, bool first) {
  if (!first) {
    if (!s->slots && s->n_blocks) grow_slots(s);
    uint32_t i = block_index(s, b->id);
    if (i != UINT32_MAX) return i;
    if (2 * ((uint64_t)s->n_blocks + 1) > (s->slots ? s->slot_mask + 1 : 0)) grow_slots(s);
  }
  if (s->n_blocks == s->cap_blocks) {
    s->cap_blocks = s->cap_blocks ? 2 * s->cap_blocks : 256;
    s->blocks = xrealloc(s->blocks, (size_t)s->cap_blocks * sizeof *s->blocks);
  }
  s->blocks[s->n_blocks] = (SnapBlock){b->id, b->samples, b->birth_us, b->birth_clock, b->stack};
  if (!first) {
    uint64_t j = hash_mix(b->id) & s->slot_mask;
    while (s->slots[j]) j = (j + 1) & s->slot_mask;
    s->slots[j] = s->n_blocks + 1;
  }
  return s->n_blocks++;
}

// ---------------------------------------------------------------- taking

// Takes snapshot k: each block it lists, from the live set (find: the
// profile's, or the survivors at the end).
static void take(Snapshots *s, uint32_t k, bool (*find)(Snapshots *, uint64_t, ProfileSurvivor *)) {
  SnapState *st = &s->snaps[k];
  st->taken = true;
  if (!st->usable) return;
  uint64_t n = st->s->paths;
  st->block = xrealloc(NULL, (n ? n : 1) * sizeof *st->block);
  bool first = s->n_blocks == 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t id = snapshot_path_id(s->reader, k, i);
    ProfileSurvivor b;
    if (!find(s, id, &b)) {
      damaged(s, "%s: snapshot %" PRIu64 " lists allocation %" PRIu64 ", which the trace does not have alive then",
              s->file, st->s->number, id);
      unusable(st, "it lists a block the trace does not have alive");
      return;
    }
    st->block[i] = add_block(s, &b, first);
  }
}

// The end state at its place (not following): every block it lists must be
// alive, as take() checks, but its blocks are taken once the trace is read,
// from the survivors (and the few collected after its place: `late`), so
// that they are not held beside the live set at its fullest.
static void check_end(Snapshots *s, uint32_t k) {
  SnapState *st = &s->snaps[k];
  if (!st->usable) return;
  for (uint64_t i = 0; i < st->s->paths; i++) {
    uint64_t id = snapshot_path_id(s->reader, k, i);
    ProfileSurvivor b;
    if (!profile_live_block(s->profile, id, &b)) {
      damaged(s, "%s: snapshot %" PRIu64 " lists allocation %" PRIu64 ", which the trace does not have alive then",
              s->file, st->s->number, id);
      unusable(st, "it lists a block the trace does not have alive");
      return;
    }
  }
  st->deferred = true;
}

static int by_id(const void *a, const void *b);

// The deferred end state's block `id`: a survivor, or collected after its
// place (late, sorted by id by then).
static bool find_end(Snapshots *s, uint64_t id, ProfileSurvivor *out) {
  ProfileSurvivor key = {.id = id};
  const ProfileSurvivor *b = s->n_late ? bsearch(&key, s->late, s->n_late, sizeof key, by_id) : NULL;
  if (!b) b = snapshots_survivor(s, id);
  if (b) *out = *b;
  return b != NULL;
}

static uint32_t dead_index(const Snapshots *s, uint64_t id) {
  if (!s->dead_slots) return UINT32_MAX;
  for (uint64_t j = hash_mix(id) & s->dead_mask; s->dead_slots[j]; j = (j + 1) & s->dead_mask)
    if (s->dead[s->dead_slots[j] - 1].id == id) return s->dead_slots[j] - 1;
  return UINT32_MAX;
}

// Follow mode: a block collected since the last snapshot taken at its place.
static void keep_dead(Snapshots *s, const ProfileSurvivor *b) {
  if (2 * (s->n_dead + 1) > (s->dead_slots ? s->dead_mask + 1 : 0)) {
    uint64_t cap = s->dead_slots ? 2 * (s->dead_mask + 1) : 1024;
    free(s->dead_slots);
    s->dead_slots = xrealloc(NULL, cap * sizeof *s->dead_slots);
    memset(s->dead_slots, 0, cap * sizeof *s->dead_slots);
    s->dead_mask = cap - 1;
    for (uint64_t i = 0; i < s->n_dead; i++) {
      uint64_t j = hash_mix(s->dead[i].id) & s->dead_mask;
      while (s->dead_slots[j]) j = (j + 1) & s->dead_mask;
      s->dead_slots[j] = (uint32_t)(i + 1);
    }
  }
  if (s->n_dead == s->cap_dead) {
    s->cap_dead = s->cap_dead ? 2 * s->cap_dead : 1024;
    s->dead = xrealloc(s->dead, s->cap_dead * sizeof *s->dead);
  }
  s->dead[s->n_dead] = (SnapBlock){b->id, b->samples, b->birth_us, b->birth_clock, b->stack};
  uint64_t j = hash_mix(b->id) & s->dead_mask;
  while (s->dead_slots[j]) j = (j + 1) & s->dead_mask;
  s->dead_slots[j] = (uint32_t)(++s->n_dead);
}

static void forget_dead(Snapshots *s) {
  s->n_dead = 0;
  if (s->dead_slots) memset(s->dead_slots, 0, (s->dead_mask + 1) * sizeof *s->dead_slots);
}

static bool find_live(Snapshots *s, uint64_t id, ProfileSurvivor *out) {
  if (s->profile && profile_live_block(s->profile, id, out)) return true;
  uint32_t d = s->following ? dead_index(s, id) : UINT32_MAX;
  if (d == UINT32_MAX) return false;
  const SnapBlock *b = &s->dead[d];
  *out = (ProfileSurvivor){b->id, b->samples, b->birth_us, b->birth_clock, b->stack};
  return true;
}

static int by_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int by_id(const void *a, const void *b) {
  uint64_t x = ((const ProfileSurvivor *)a)->id, y = ((const ProfileSurvivor *)b)->id;
  return x < y ? -1 : x > y;
}

const ProfileSurvivor *snapshots_survivor(const Snapshots *s, uint64_t id) {
  ProfileSurvivor key = {.id = id};
  return s->survivors && s->n_survivors ? bsearch(&key, s->survivors, s->n_survivors, sizeof key, by_id) : NULL;
}

static bool find_survivor(Snapshots *s, uint64_t id, ProfileSurvivor *out) {
  const ProfileSurvivor *b = snapshots_survivor(s, id);
  if (b) *out = *b;
  return b != NULL;
}

// The snapshot's begin in µs since the trace's start (0 before it).
uint64_t snapshots_time(const Snapshots *s, uint32_t k) {
  uint64_t t = s->snaps[k].s->time_us;
  return t > s->start_us ? t - s->start_us : 0;
}

// Follow mode: a block the trace collects, kept until the next snapshot's
// place (a snapshot found after its place may list it).
static void record_death(Snapshots *s, const Profile *p, const TraceEvent *ev) {
  ProfileSurvivor b;
  if (profile_live_block(p, ev->id, &b)) keep_dead(s, &b);
}

// Whether the file is the trace's (its pid and start time); else damaged.
// Whether the file names this trace. A file shorter than its header (a run
// killed as it created it; snapshot_reader.h contract 4: "nothing yet")
// names no trace and holds no snapshot: it is not another trace's, and
// settle says it holds no whole snapshot.
static bool same_trace(Snapshots *s, const TraceReaderInfo *info) {
  if (!s->reader || s->status == SNAPSHOTS_DAMAGED) return s->status != SNAPSHOTS_DAMAGED;
  if (snapshot_reader_tail(s->reader)->header_missing) return true;
  if (snapshot_reader_pid(s->reader) == info->pid && snapshot_reader_start_time(s->reader) == info->start_time_us)
    return true;
  damaged(s, "%s: belongs to another trace (pid %" PRIu64 ", started at %" PRIu64 " us; this trace: pid %" PRIu64
             ", %" PRIu64 " us)", s->file, snapshot_reader_pid(s->reader), snapshot_reader_start_time(s->reader),
          info->pid, info->start_time_us);
  return false;
}

static void before_event(void *ctx, const Profile *p, const TraceEvent *ev) {
  Snapshots *s = ctx;
  if (s->chained) s->chained(s->chained_ctx, p, ev);
  if (!s->profile) {
    s->profile = p;
    s->start_us = trace_reader_info(profile_reader(p))->start_time_us;
    if (!s->following && !same_trace(s, trace_reader_info(profile_reader(p)))) s->next = s->n_snaps;  // take nothing
  }
  // A snapshot's place: every allocation it counts read, nothing of its
  // blocks collected yet (a block it lists dies after it ends).
  while (s->next < s->n_snaps && profile_summary(p)->allocs >= s->snaps[s->next].s->alloc_count) {
    if (!s->following && (int64_t)s->next == s->end_state) {
      check_end(s, s->next++);
      continue;
    }
    take(s, s->next++, find_live);
    if (!s->following) continue;
    forget_dead(s);  // every block collected so far died before this place
    if (s->snaps[s->next - 1].usable && s->status == SNAPSHOTS_ABSENT) s->status = SNAPSHOTS_PRESENT;
  }
  if (s->following && ev->kind == TRACE_EVENT_COLLECT) record_death(s, p, ev);
  if (ev->kind == TRACE_EVENT_COLLECT && s->end_state >= 0 && s->snaps[s->end_state].deferred &&
      snapshot_lists(s->reader, (uint32_t)s->end_state, ev->id)) {
    ProfileSurvivor b;
    if (profile_live_block(p, ev->id, &b)) {
      if (s->n_late == s->cap_late) s->late = xrealloc(s->late, (s->cap_late = 2 * s->cap_late + 16) * sizeof *s->late);
      s->late[s->n_late++] = b;
    }
  }
  if (s->chains && ev->kind == TRACE_EVENT_COLLECT && s->n_dead_big < SNAPSHOTS_MAX_DEAD_BIG) {
    ProfileSurvivor b;
    if (profile_live_block(p, ev->id, &b) && b.samples >= 2) {
      if (s->n_dead_big == s->cap_dead_big)
        s->dead_big = xrealloc(s->dead_big, (s->cap_dead_big = 2 * s->cap_dead_big + 256) * sizeof *s->dead_big);
      s->dead_big[s->n_dead_big++] = (SnapDead){b.stack, ev->id, b.samples, b.birth_clock, profile_summary(p)->clock};
    }
  }
}

static int by_stack_birth(const void *a, const void *b) {
  const SnapDead *x = a, *y = b;
  if (x->stack != y->stack) return x->stack < y->stack ? -1 : 1;
  return x->birth_clock < y->birth_clock ? -1 : x->birth_clock > y->birth_clock;
}

uint32_t snapshots_chain(const Snapshots *s, const SnapBlock *b) {
  bool reached;
  return snapshots_chain_through(s, b, UINT64_MAX, &reached);
}

uint32_t snapshots_chain_through(const Snapshots *s, const SnapBlock *b, uint64_t id, bool *reached) {
  *reached = false;
  // The first entry of b's stack.
  uint64_t lo = 0, hi = s->n_dead_big;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (s->dead_big[mid].stack < b->stack) lo = mid + 1;
    else hi = mid;
  }
  uint64_t first = lo, end = lo;
  while (end < s->n_dead_big && s->dead_big[end].stack == b->stack) end++;
  uint32_t links = 1;
  uint64_t birth = b->birth_clock, samples = b->samples, at = end;
  for (;;) {
    uint64_t found = UINT64_MAX;
    // At most 4096 of the stack's blocks looked at per link: a stack that
    // makes many big blocks costs a bounded search.
    uint64_t stop = at - first > 4096 ? at - 4096 : first;
    for (uint64_t i = at; i-- > stop;) {
      const SnapDead *d = &s->dead_big[i];
      if (d->birth_clock >= birth) continue;
      if (d->death_clock >= birth && d->samples < samples) {
        found = i;
        break;
      }
    }
    if (found == UINT64_MAX) return links;
    if (s->dead_big[found].id == id) *reached = true;
    links++;
    birth = s->dead_big[found].birth_clock;
    samples = s->dead_big[found].samples;
    at = found;
  }
}

static void on_survivor(void *ctx, const ProfileSurvivor *b) {
  Snapshots *s = ctx;
  if (s->n_survivors == s->cap_survivors) {
    s->cap_survivors = s->cap_survivors ? 2 * s->cap_survivors : 256;
    s->survivors = xrealloc(s->survivors, s->cap_survivors * sizeof *s->survivors);
  }
  s->survivors[s->n_survivors++] = *b;
}

// ---------------------------------------------------------------- opening

// s->file: --retain FILE, else the snapshot file beside the trace.
static void name_file(Snapshots *s, const char *trace, const char *retain) {
  char *beside = retain ? NULL : retain_file_name(trace);
  if (!retain && !beside) xalloc_fail();
  snprintf(s->file, sizeof s->file, "%s", retain ? retain : beside);
  free(beside);
}

// Whether a path of the file ends at a Buffer's storage: the only blocks
// whose chains (snapshots_chain) the analyses ask for (kept.c). Without
// one, the collected blocks of two samples or more are not kept (up to
// SNAPSHOTS_MAX_DEAD_BIG of them, 40 bytes each).
static bool ends_at_storage(const Snapshots *s) {
  for (uint32_t k = 0; k < s->n_snaps; k++)
    for (uint64_t i = 0; i < s->snaps[k].s->paths; i++) {
      SnapshotPathView v;
      const RetainPath *path = snapshot_path_view(s->reader, k, i, &v);
      if (path->hop_count && path->hops[path->hop_count - 1].kind == RETAIN_HOP_BUFFER) return true;
    }
  return false;
}

void snapshots_watch(Snapshots *s, const char *trace, const char *retain, ProfileOptions *opts) {
  memset(s, 0, sizeof *s);
  s->end_state = -1;
  s->status = SNAPSHOTS_ABSENT;
  s->chained = opts->before_event;
  s->chained_ctx = opts->hook_ctx;
  opts->before_event = before_event;
  opts->hook_ctx = s;
  opts->on_survivor = on_survivor;
  opts->survivor_ctx = s;
  if (!retain && strcmp(trace, "-") == 0) {
    absent(s, "give the snapshot file with --retain FILE",
           "the trace comes from standard input: no snapshot file beside it");
    return;
  }
  name_file(s, trace, retain);
  struct stat st;
  if (stat(s->file, &st) != 0) {
    if (retain) damaged(s, "cannot read %s: %s", s->file, strerror(errno));
    else absent(s, RERUN, "no %s (%s)", s->file, strerror(errno));
    return;
  }
  char err[SNAPSHOT_READER_ERROR_MAX];
  if (!(s->reader = snapshot_reader_open(s->file, err, sizeof err))) {
    damaged(s, "%s", err);
    return;
  }
  snapshot_tail_text(snapshot_reader_tail(s->reader), s->tail, sizeof s->tail);
  s->n_snaps = snapshot_count(s->reader);
  s->snaps = xrealloc(NULL, (s->n_snaps ? s->n_snaps : 1) * sizeof *s->snaps);
  for (uint32_t k = 0; k < s->n_snaps; k++) s->snaps[k] = (SnapState){.s = snapshot_get(s->reader, k), .usable = true};
  int64_t end = snapshot_end_state(s->reader);
  s->end_state = end;
  s->chains = ends_at_storage(s);
  // The births the tools read are those of the blocks the snapshots list,
  // unless a collected block's (chains) or an unlisted survivor's (an end
  // state short of paths: kept.c counts its survivors without one) is read.
  const Snapshot *e = end >= 0 ? s->snaps[end].s : NULL;
  if (!s->chains && (!e || (e->end.flags & RETAIN_PATHS))) {
    uint64_t n = 0;
    for (uint32_t k = 0; k < s->n_snaps; k++) n += s->snaps[k].s->paths;
    s->birth_ids = xrealloc(NULL, (n ? n : 1) * sizeof *s->birth_ids);
    n = 0;
    for (uint32_t k = 0; k < s->n_snaps; k++)
      for (uint64_t i = 0; i < s->snaps[k].s->paths; i++) s->birth_ids[n++] = snapshot_path_id(s->reader, k, i);
    if (s->n_snaps > 1 && n > 1) qsort(s->birth_ids, n, sizeof *s->birth_ids, by_u64);
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++)
      if (!m || s->birth_ids[i] != s->birth_ids[m - 1]) s->birth_ids[m++] = s->birth_ids[i];
    s->n_birth_ids = m;
    opts->birth_ids = s->birth_ids;
    opts->n_birth_ids = m;
  }
}

// The checks of the file against the trace that need no block (info too).
static void check_header(Snapshots *s, const TraceReaderInfo *info, uint64_t allocs, bool partial) {
  s->start_us = info->start_time_us;
  if (s->status == SNAPSHOTS_DAMAGED || !s->reader) return;
  if (!same_trace(s, info)) return;
  for (uint32_t k = 0; k < s->n_snaps; k++) {
    SnapState *st = &s->snaps[k];
    const Snapshot *snap = st->s;
    bool end = (int64_t)k == s->end_state;
    if (snap->alloc_count > allocs) {
      if (!partial && end) {
        damaged(s, "%s: its end state was made for a trace of %" PRIu64 " allocations; this one has %" PRIu64,
                s->file, snap->alloc_count, allocs);
        return;
      }
      unusable(st, "the trace read stops before it (%" PRIu64 " of its %" PRIu64 " allocations)", allocs,
               snap->alloc_count);
    }
    if (end && partial) unusable(st, "the trace stops at damage: its blocks never collected are not the end state's");
    if (end && !partial && snap->alloc_count != allocs) {
      damaged(s, "%s: its end state was made for a trace of %" PRIu64 " allocations; this one has %" PRIu64,
              s->file, snap->alloc_count, allocs);
      return;
    }
    if (!(snap->end.flags & RETAIN_COLLECTED))
      unusable(st, "no collection ran (%s)", *snap->end.reason ? snap->end.reason : "no reason given");
    // A run's snapshots follow its allocations: one that counts fewer than
    // the snapshot before it was not written by this run after that one.
    if (k > 0 && snap->alloc_count < s->snaps[k - 1].s->alloc_count)
      unusable(st, "it counts %" PRIu64 " allocations, fewer than the %" PRIu64 " of the snapshot before it: not this run's series",
               snap->alloc_count, s->snaps[k - 1].s->alloc_count);
  }
}

static void settle(Snapshots *s) {
  if (s->status == SNAPSHOTS_DAMAGED) return;
  if (!s->reader) return;  // absent, said at watch
  s->n_usable = 0;
  for (uint32_t k = 0; k < s->n_snaps; k++) s->n_usable += s->snaps[k].usable;
  if (s->end_state >= 0 && !s->snaps[s->end_state].usable) s->end_state = -1;
  if (s->n_usable) {
    s->status = SNAPSHOTS_PRESENT;
    return;
  }
  if (!s->n_snaps)
    absent(s, RERUN, "%s holds no whole snapshot%s%s", s->file, *s->tail ? ": " : "", s->tail);
  else
    absent(s, RERUN, "%s: no snapshot usable (the last: %s)", s->file, s->snaps[s->n_snaps - 1].why);
}

// No file: why, from the trace (OCaml's memtrace writes none; a run of ./vm
// killed before its first snapshot leaves none).
static void explain_missing(Snapshots *s, const TraceReaderInfo *info, bool partial) {
  if (s->reader || s->status != SNAPSHOTS_ABSENT || !*s->file) return;
  char why[SNAPSHOTS_TEXT];
  snprintf(why, sizeof why, "%s", s->why);
  if (!strstr(info->runtime_params, "vm=minnow"))
    absent(s, "record the program with ./vm --memtrace to get snapshots",
           "%.600s: the trace looks like one of OCaml's memtrace, which writes no snapshot", why);
  else
    absent(s, RERUN, "%.600s: the run was killed before its first snapshot (SIGKILL)%s, or the file was not copied "
           "with the trace", why, partial ? " and the trace stops at damage" : "");
}

void snapshots_load(Snapshots *s, const Profile *p, bool partial) {
  s->partial = partial;
  s->profile = p;
  if (s->n_survivors > 1) qsort(s->survivors, s->n_survivors, sizeof *s->survivors, by_id);
  if (s->n_late > 1) qsort(s->late, s->n_late, sizeof *s->late, by_id);
  if (s->n_dead_big > 1) qsort(s->dead_big, s->n_dead_big, sizeof *s->dead_big, by_stack_birth);
  const TraceReaderInfo *info = trace_reader_info(profile_reader(p));
  explain_missing(s, info, partial);
  check_header(s, info, profile_summary(p)->allocs, partial);
  if (s->status == SNAPSHOTS_DAMAGED || !s->reader) {
    settle(s);
    return;
  }
  // The end state checked at its place; then snapshots whose place the
  // trace did not pass: from the survivors.
  for (uint32_t k = 0; k < s->next; k++)
    if (s->snaps[k].deferred) take(s, k, find_end);
  for (uint32_t k = s->next; k < s->n_snaps; k++) take(s, k, find_survivor);
  s->next = s->n_snaps;
  if (s->end_state >= 0 && s->snaps[s->end_state].usable) {
    const Snapshot *e = s->snaps[s->end_state].s;
    if ((e->end.flags & RETAIN_PATHS) && e->end.live_samples != s->n_survivors)
      damaged(s, "%s: its end state says %" PRIu64 " sampled blocks alive at the end; the trace leaves %" PRIu64
                 " uncollected", s->file, e->end.live_samples, s->n_survivors);
  }
  settle(s);
  // The survivors serve the takes above, and then only an end state short
  // of paths (its survivors without one: kept.c); else they go (40 bytes a
  // block alive at the end). n_survivors stays.
  if (s->end_state < 0 || s->snaps[s->end_state].s->paths >= s->n_survivors) {
    free(s->survivors);
    s->survivors = NULL;
    s->cap_survivors = 0;
  }
}

void snapshots_check(Snapshots *s, const char *trace, const char *retain, const TraceReaderInfo *info,
                     uint64_t allocs, bool partial) {
  ProfileOptions unused = {0};
  snapshots_watch(s, trace, retain, &unused);
  s->partial = partial;
  explain_missing(s, info, partial);
  check_header(s, info, allocs, partial);
  settle(s);
}

void snapshots_follow(Snapshots *s, const char *trace, const char *retain, ProfileOptions *opts) {
  memset(s, 0, sizeof *s);
  s->end_state = -1;
  s->status = SNAPSHOTS_ABSENT;
  s->following = true;
  s->chains = true;
  s->chained = opts->before_event;
  s->chained_ctx = opts->hook_ctx;
  opts->before_event = before_event;
  opts->hook_ctx = s;
  name_file(s, trace, retain);
  absent(s, RERUN, "no snapshot in %s yet", s->file);
}

bool snapshots_follow_update(Snapshots *s, const TraceReaderInfo *info) {
  if (s->status == SNAPSHOTS_DAMAGED) return false;
  char err[SNAPSHOT_READER_ERROR_MAX];
  if (!s->reader) {
    struct stat st;
    if (stat(s->file, &st) != 0) return true;  // not there yet
    if (!(s->reader = snapshot_reader_open(s->file, err, sizeof err))) {
      damaged(s, "%s", err);
      return false;
    }
  } else if (snapshot_reader_update(s->reader, err, sizeof err) < 0) {
    damaged(s, "%s", err);
    return false;
  }
  if (snapshot_reader_version(s->reader) == 0) return true;  // no whole header yet
  s->start_us = info->start_time_us;
  if (!same_trace(s, info)) return false;
  snapshot_tail_text(snapshot_reader_tail(s->reader), s->tail, sizeof s->tail);
  uint32_t n = snapshot_count(s->reader);
  if (n > s->n_snaps) {
    s->snaps = xrealloc(s->snaps, (size_t)n * sizeof *s->snaps);
    for (uint32_t k = s->n_snaps; k < n; k++) {
      s->snaps[k] = (SnapState){.s = snapshot_get(s->reader, k), .usable = true};
      if (!(s->snaps[k].s->end.flags & RETAIN_COLLECTED))
        unusable(&s->snaps[k], "no collection ran (%s)",
                 *s->snaps[k].s->end.reason ? s->snaps[k].s->end.reason : "no reason given");
    }
    s->n_snaps = n;
    s->end_state = snapshot_end_state(s->reader);
  }
  // Snapshots the reading has passed already: now, from the live set and the dead.
  while (s->next < s->n_snaps && s->profile &&
         profile_summary(s->profile)->allocs >= s->snaps[s->next].s->alloc_count)
    take(s, s->next++, find_live);
  s->n_usable = 0;
  for (uint32_t k = 0; k < s->next; k++) s->n_usable += s->snaps[k].usable;
  if (s->status != SNAPSHOTS_DAMAGED && s->n_usable) s->status = SNAPSHOTS_PRESENT;
  return s->status != SNAPSHOTS_DAMAGED;
}

void snapshots_free(Snapshots *s) {
  free(s->dead);
  free(s->dead_slots);
  for (uint32_t k = 0; k < s->n_snaps; k++) free(s->snaps[k].block);
  free(s->snaps);
  free(s->blocks);
  free(s->slots);
  free(s->survivors);
  free(s->dead_big);
  free(s->birth_ids);
  free(s->late);
  snapshot_reader_close(s->reader);
  memset(s, 0, sizeof *s);
  s->end_state = -1;
}

int64_t snapshots_default(const Snapshots *s) {
  if (s->status != SNAPSHOTS_PRESENT) return -1;
  if (s->end_state >= 0) return s->end_state;
  for (uint32_t k = s->n_snaps; k-- > 0;)
    if (s->snaps[k].usable) return k;
  return -1;
}

uint64_t snapshots_paths(const Snapshots *s, uint32_t k) { return s->snaps[k].usable ? s->snaps[k].s->paths : 0; }

const RetainPath *snapshots_path_view(const Snapshots *s, uint32_t k, uint64_t i, SnapshotPathView *v) {
  return snapshot_path_view(s->reader, k, i, v);
}

const RetainPath *snapshots_path(const Snapshots *s, uint32_t k, uint64_t i) {
  const RetainPath *path = snapshot_path(s->reader, k, i);
  if (!path) xalloc_fail();   // i < snapshots_paths(s, k): out of memory
  return path;
}

const SnapBlock *snapshots_block(const Snapshots *s, uint32_t k, uint64_t i) {
  return &s->blocks[s->snaps[k].block[i]];
}
