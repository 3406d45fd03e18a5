// kept.c - holders and leak verdicts from a trace's snapshots (kept.h).
//
// 1. Members. Every block the analysed snapshot lists (and, for an end
//    state whose paths are not all there, every survivor without one) is a
//    member: its holder's key (the hash of the holder's erased text, cached
//    per distinct path), its user site (cached per stack), its depth.
//    Sorted by (holder, site), they make the holders and their sites.
// 2. The series. For each snapshot of the series, each block it lists is
//    matched to a holder of the analysed snapshot (by key; other holders are
//    not followed): the samples kept at each snapshot, and the sets the
//    series rule compares (at S_a, S_{L-1} and S_L, ids sorted per holder,
//    merged).
// 3. The end-state rule counts each holder's kept blocks born in the third
//    and the last quarter of the run (the allocation clock at birth) while
//    the members are gathered.
#include "kept.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../trace/snapshot_holder.h"
#include "../../../base/hash.h"
#include "../base/xalloc.h"

const char *kept_verdict_name(KeptVerdict v) {
  static const char *const names[] = {"leak", "too few samples", "built early", "steady", "a tail"};
  return names[v];
}

double kept_bytes(const Profile *p, uint64_t samples) { return (double)samples * profile_sample_bytes(p); }

Interval kept_bytes_interval(const Profile *p, uint64_t samples) {
  Tally t = profile_tally(p, samples);
  return tally_interval(&t);
}

// The p where P(X <= k | n, p) = target, P decreasing in p; bisection.
static double binomial_root(uint64_t k, uint64_t n, double target) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 60; i++) {
    double mid = (lo + hi) / 2;
    if (stats_binomial_cdf(k, n, mid) > target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

// Clopper-Pearson: lo solves P(X >= k) = 2.5 %, hi solves P(X <= k) = 2.5 %.
Interval kept_share_interval(uint64_t k, uint64_t n) {
  if (n == 0) return (Interval){0, 1};
  if (k > n) k = n;
  Interval iv;
  iv.lo = k == 0 ? 0 : binomial_root(k - 1, n, 0.975);
  iv.hi = k == n ? 1 : binomial_root(k, n, 0.025);
  return iv;
}

double kept_rate_for(double rate, uint64_t have, uint64_t want) {
  double r = rate * (double)want / (double)(have ? have : 1);
  if (r >= 1) return 1;
  double e = pow(10, floor(log10(r)));
  double steps[] = {1, 2, 5, 10};
  for (int i = 0; i < 4; i++)
    if (r <= steps[i] * e * (1 + 1e-12)) return fmin(1, steps[i] * e);
  return fmin(1, 10 * e);
}

double kept_floor(const Profile *p) {
  uint64_t clock = profile_summary(p)->clock;
  return clock ? fmin(1, (double)KEPT_MIN_SAMPLES / (double)clock) : 1;
}

double kept_growth_p(uint64_t x, uint64_t n) {
  if (x == 0) return 1;
  if (x > n) return 0;
  return stats_binomial_cdf(n - x, n, 0.5);  // P(B >= x) = P(n - B <= n - x), B and n - B alike
}

// ---------------------------------------------------------------- sites

static bool stdlib_file(const char *file) { return strncmp(file, "stdlib/", 7) == 0; }

typedef struct UserSite {
  const TraceReaderLocation *loc;
  uint64_t code, key;
} UserSite;

static uint64_t location_key(const TraceReaderLocation *l) {
  uint64_t h = hash_combine(hash_string(l->function), hash_string(l->file));
  return hash_combine(hash_combine(h, l->line), (uint64_t)l->start_col << 32 | l->end_col);
}

// The user's line of stack s: the innermost location outside the stdlib
// (any with `stdlib`), else the allocating one.
static UserSite user_site(const Profile *p, ProfileStackId s, bool stdlib) {
  ProfileNodeId leaf = profile_stack_leaf(p, s);
  UserSite first = {NULL, leaf ? profile_node_code(p, leaf) : 0, 0};
  bool have_first = false;
  for (ProfileNodeId node = leaf; node != 0 && node != PROFILE_NONE; node = profile_node_parent(p, node)) {
    const TraceReaderLocation *locs;
    int count = profile_node_locations(p, node, &locs);
    for (int i = count - 1; i >= 0; i--) {
      UserSite u = {&locs[i], 0, location_key(&locs[i])};
      if (!have_first) first = u, have_first = true;
      if (stdlib || !stdlib_file(locs[i].file)) return u;
    }
    if (count <= 0 && !have_first) {
      first.key = hash_combine(0xc0de, profile_node_code(p, node));
      return first;  // a code without location: its own site
    }
  }
  if (!have_first) first.key = hash_combine(0xc0de, first.code);
  return first;
}

void kept_site_text(FILE *f, const Profile *p, const KeptSite *s) {
  if (!s->loc) {
    out_site(f, profile_site(p, s->site));
    return;
  }
  fprintf(f, "%s %s:%u:%u-%u", s->loc->function, s->loc->file, s->loc->line, s->loc->start_col, s->loc->end_col);
  const ProfileSite *a = profile_site(p, s->site);
  if (!a->located || a->loc.function != s->loc->function || a->loc.line != s->loc->line ||
      a->loc.start_col != s->loc->start_col || a->loc.file != s->loc->file)
    fprintf(f, " (through %s)", a->located ? a->loc.function : "$code");
}

void kept_site_json(Json *j, const Profile *p, const KeptSite *s) {
  const ProfileSite *a = profile_site(p, s->site);
  if (!s->loc) {
    json_site_fields(j, a);
    return;
  }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) xalloc_fail();
  kept_site_text(f, p, s);
  if (fclose(f) != 0) xalloc_fail();
  json_string(j, "site", text);
  free(text);
  json_string(j, "function", s->loc->function);
  json_string(j, "file", s->loc->file);
  json_uint(j, "line", s->loc->line);
  json_uint(j, "start_col", s->loc->start_col);
  json_uint(j, "end_col", s->loc->end_col);
  if (!a->located || a->loc.line != s->loc->line || a->loc.file != s->loc->file ||
      a->loc.function != s->loc->function || a->loc.start_col != s->loc->start_col) {
    json_object(j, "allocating_site");
    json_site_fields(j, a);
    json_end_object(j);
  }
}

// ---------------------------------------------------------------- caches

// What the analysis needs of a path, computed once per distinct path from
// a view of it (snapshot_path_view: the paths are not kept decoded).
typedef struct PathInfo {
  uint64_t key;             // 0: not computed
  uint32_t cut, depth;
  bool storage;             // its last hop is a Buffer's storage
  bool cells;               // depth 0 below a cut whose last hop is not a list cell
} PathInfo;

typedef struct Caches {
  PathInfo *paths;          // per distinct path of the snapshot file
  bool stdlib;
} Caches;

static uint64_t holder_key(const RetainPath *path, uint32_t cut) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) xalloc_fail();
  retain_holder_text(f, path, cut);
  if (fclose(f) != 0) xalloc_fail();
  uint64_t h = hash_memory(text, len);
  free(text);
  return h ? h : 1;
}

// Snapshot k's i-th path's PathInfo.
static const PathInfo *path_info(Caches *c, const Snapshots *s, uint32_t k, uint64_t i) {
  PathInfo *x = &c->paths[snapshot_path_index(s->reader, k, i)];
  if (x->key) return x;
  SnapshotPathView v;
  const RetainPath *path = snapshot_path_view(s->reader, k, i, &v);
  x->cut = retain_holder_cut(path, &x->depth);
  x->key = holder_key(path, x->cut);
  x->storage = path->hop_count && path->hops[path->hop_count - 1].kind == RETAIN_HOP_BUFFER;
  x->cells = x->depth == 0 && x->cut && path->hops[x->cut - 1].kind != RETAIN_HOP_LIST_CELL;
  return x;
}


// ---------------------------------------------------------------- members

typedef struct Member {
  uint64_t key;
  const SnapBlock *b;
  const PathInfo *path;     // NULL: no path
  uint64_t at;              // its path's position in the snapshot
  uint32_t cut, depth;
  UserSite site;            // (by value: a cache per stack would take 24 bytes a stack of the trace)
} Member;

static int by_key(const void *a, const void *b) {
  const Member *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  if (x->site.key != y->site.key) return x->site.key < y->site.key ? -1 : 1;
  return x->b->id < y->b->id ? -1 : x->b->id > y->b->id;
}

static int by_directness(const void *a, const void *b) {
  const KeptSite *x = a, *y = b;
  if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
  if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static int verdict_rank(KeptVerdict v) { return v == KEPT_LEAK ? 0 : v == KEPT_TOO_FEW ? 1 : 2; }

static int by_verdict(const void *a, const void *b) {
  const KeptHolder *x = a, *y = b;
  int rx = verdict_rank(x->verdict), ry = verdict_rank(y->verdict);
  if (rx != ry) return rx - ry;
  if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static void cannot(KeptAnalysis *a, const char *why, const char *fix) {
  a->judgement = KEPT_CANNOT_JUDGE;
  snprintf(a->why, sizeof a->why, "%s", why);
  snprintf(a->fix, sizeof a->fix, "%s", fix);
}

// The holder index of `key` (a table over the holders), or UINT32_MAX.
typedef struct HolderIndex {
  uint32_t *slots;   // holder + 1
  uint64_t mask;
} HolderIndex;

static void index_build(HolderIndex *ix, const KeptAnalysis *a) {
  uint64_t cap = 16;
  while (cap < 2 * (uint64_t)a->n + 2) cap *= 2;
  ix->slots = xrealloc(NULL, cap * sizeof *ix->slots);
  memset(ix->slots, 0, cap * sizeof *ix->slots);
  ix->mask = cap - 1;
  for (uint32_t i = 0; i < a->n; i++) {
    uint64_t j = hash_mix(a->holders[i].key) & ix->mask;
    while (ix->slots[j]) j = (j + 1) & ix->mask;
    ix->slots[j] = i + 1;
  }
}

static uint32_t index_find(const HolderIndex *ix, const KeptAnalysis *a, uint64_t key) {
  for (uint64_t j = hash_mix(key) & ix->mask; ix->slots[j]; j = (j + 1) & ix->mask)
    if (a->holders[ix->slots[j] - 1].key == key) return ix->slots[j] - 1;
  return UINT32_MAX;
}

// ---------------------------------------------------------------- holders

// Gathers the members of snapshot k into holders and sites.
static void build_holders(const Profile *p, const Snapshots *s, uint32_t k, Caches *c, KeptAnalysis *a) {
  const SnapState *st = &s->snaps[k];
  uint64_t n = st->s->paths, extra = 0;
  bool end_state = (int64_t)k == s->end_state;
  (void)end_state;
  // An end state short of paths: its survivors without one are members too.
  if (end_state && n < s->n_survivors) extra = s->n_survivors - n;
  Member *m = xrealloc(NULL, (n + extra ? n + extra : 1) * sizeof *m);
  SnapBlock *unlisted = xrealloc(NULL, (extra ? extra : 1) * sizeof *unlisted);
  uint64_t count = 0, n_unlisted = 0;
  for (uint64_t i = 0; i < n; i++) {
    const PathInfo *pi = path_info(c, s, k, i);
    const SnapBlock *b = snapshots_block(s, k, i);
    m[count++] = (Member){pi->key, b, pi, i, pi->cut, pi->depth, user_site(p, b->stack, c->stdlib)};
  }
  if (extra) {
    for (uint64_t i = 0; i < s->n_survivors; i++) {
      const ProfileSurvivor *sv = &s->survivors[i];
      if (snapshot_lists(s->reader, k, sv->id)) continue;
      unlisted[n_unlisted] = (SnapBlock){sv->id, sv->samples, sv->birth_us, sv->birth_clock, sv->stack};
      UserSite u = user_site(p, sv->stack, c->stdlib);
      m[count++] = (Member){hash_combine(0x6e6f2070617468ull, u.key), &unlisted[n_unlisted++], NULL, 0, 0, 0, u};
    }
  }
  a->no_path = st->s->end.live_samples > n ? st->s->end.live_samples - n : 0;
  if (count) qsort(m, count, sizeof *m, by_key);
  uint64_t clock = profile_summary(p)->clock;
  a->holders = xrealloc(NULL, (count ? count : 1) * sizeof *a->holders);
  ProfileSiteId *alloc_sites = xrealloc(NULL, (count ? count : 1) * sizeof *alloc_sites);
  for (uint64_t i = 0; i < count;) {
    uint64_t j = i;
    while (j < count && m[j].key == m[i].key) j++;
    KeptHolder *h = &a->holders[a->n++];
    const SnapBlock *biggest = NULL;   // its Buffer storage of most samples (2 or more)
    *h = (KeptHolder){.key = m[i].key, .example = m[i].path ? snapshots_path(s, k, m[i].at) : NULL, .cut = m[i].cut,
                      .unknown_site = profile_stack_site(p, m[i].b->stack), .p = 1, .storage_p = 1};
    uint32_t n_sites = 1;   // members are sorted by site within a holder: its sites are runs
    for (uint64_t q = i + 1; q < j; q++) n_sites += m[q].site.key != m[q - 1].site.key;
    h->sites = xrealloc(NULL, n_sites * sizeof *h->sites);
    for (uint64_t q = i; q < j; q++) {
      const Member *x = &m[q];
      uint32_t w = (uint32_t)(clock ? x->b->birth_clock * KEPT_WINDOWS / clock : 0);
      if (w >= KEPT_WINDOWS) w = KEPT_WINDOWS - 1;
      if (!h->n_sites || h->sites[h->n_sites - 1].key != x->site.key) {
        KeptSite *ks = &h->sites[h->n_sites++];
        *ks = (KeptSite){.loc = x->site.loc, .code = x->site.code, .site = profile_stack_site(p, x->b->stack),
                         .stack = x->b->stack, .key = x->site.key};
      }
      KeptSite *ks = &h->sites[h->n_sites - 1];
      ks->blocks++, ks->samples += x->b->samples;
      ks->by_depth[x->depth < 3 ? x->depth : 3] += x->b->samples;
      if (profile_stack_counts(p, x->b->stack).samples > profile_stack_counts(p, ks->stack).samples)
        ks->stack = x->b->stack, ks->site = profile_stack_site(p, x->b->stack);
      h->blocks++, h->samples += x->b->samples, h->windows[w] += x->b->samples;
      // The chain rule (kept.h) looks only at a Buffer's storage: the one
      // block the runtime copies into a larger one as it grows, so that a
      // chain of copies means one storage growing (a string rebuilt by ++,
      // a table's bucket array, are other things).
      bool storage = x->path && x->path->storage;
      if (storage && x->b->samples >= 2 && (!biggest || x->b->samples > biggest->samples)) biggest = x->b;
      // The end-state rule's evidence: blocks born in the third quarter of
      // the run, and in the last. A table's own cells and bucket arrays are
      // made anew as it grows (Hashtbl.resize) and as values are replaced:
      // their births say when it last changed, not when its data came. So
      // the evidence is the data (depth 1 and more) and a list's cells.
      double at = clock ? (double)x->b->birth_clock / (double)clock : 0;
      if (x->path && x->path->cells) continue;
      if (at >= 0.75) h->last_quarter++;
      else if (at >= 0.5) h->third_quarter++;
      if (at >= 0.5) {
        if (h->third_quarter + h->last_quarter == 1 || at < h->first_late_at) h->first_late_at = at;
        if (at > h->last_late_at) h->last_late_at = at;
      }
    }
    // Each site's depth: where most of its samples are held; an example path there.
    for (uint32_t k2 = 0; k2 < h->n_sites; k2++) {
      KeptSite *ks = &h->sites[k2];
      uint32_t best = 0;
      for (uint32_t d = 1; d < 4; d++)
        if (ks->by_depth[d] > ks->by_depth[best]) best = d;
      ks->depth = best;
      for (uint64_t q = i; q < j && !ks->example; q++)
        if (m[q].site.key == ks->key && (m[q].depth < 3 ? m[q].depth : 3) == best && m[q].path)
          ks->example = snapshots_path(s, k, m[q].at), ks->depth = m[q].depth;
    }
    qsort(h->sites, h->n_sites, sizeof *h->sites, by_directness);
    // A storage reallocated as it grows keeps one block, its last copy: the
    // chain of its earlier copies in the trace says it grew (kept.h).
    if (biggest) {
      h->chain = snapshots_chain(s, biggest);
      h->chain_at = clock ? (double)biggest->birth_clock / (double)clock : 0;
    }
    // Samples its members' allocating sites allocated over the run, each site once.
    uint64_t n_alloc = 0;
    for (uint64_t q = i; q < j; q++) {
      ProfileSiteId site = profile_stack_site(p, m[q].b->stack);
      bool seen = false;
      for (uint64_t r = 0; r < n_alloc && !seen; r++) seen = alloc_sites[r] == site;
      if (!seen) alloc_sites[n_alloc++] = site, h->allocated_samples += profile_site(p, site)->counts.samples;
    }
    a->samples += h->samples;
    i = j;
  }
  free(m);
  free(unlisted);
  free(alloc_sites);
}

// ---------------------------------------------------------------- end-state rule

KeptVerdict kept_end_state_verdict(KeptHolder *h) {
  uint64_t third = h->third_quarter, last = h->last_quarter;
  // Births steady from 7/12 of the run on give the third quarter at least
  // 2/3 as many as the last: at least 2/5 of the two, Binomial(third +
  // last, >= 2/5); a tail is significantly below that.
  h->p = third + last ? stats_binomial_cdf(third, third + last, 0.4) : 1;
  bool rising = h->p < KEPT_ALPHA;
  // Born at once (a working set replaced whole at 3/4 of the run): enough
  // blocks to tell, all within a tenth of the run (kept.h).
  bool burst = third + last >= KEPT_BURST_BLOCKS && h->last_late_at - h->first_late_at < KEPT_BURST_SPAN;
  if (third && last && !rising && !burst) return KEPT_LEAK;
  if (h->chain >= KEPT_CHAIN_MIN && h->chain_at >= 0.5) return KEPT_LEAK;
  if (h->samples < KEPT_MIN_SAMPLES) return KEPT_TOO_FEW;
  return !last || burst ? KEPT_EARLY : KEPT_LATE;
}

static void judge_end_state(KeptAnalysis *a) {
  for (uint32_t i = 0; i < a->n; i++) a->holders[i].verdict = kept_end_state_verdict(&a->holders[i]);
}

// ---------------------------------------------------------------- series rule

typedef struct HeldId {
  uint32_t holder;
  uint64_t id, samples;
} HeldId;

static int by_holder_id(const void *a, const void *b) {
  const HeldId *x = a, *y = b;
  if (x->holder != y->holder) return x->holder < y->holder ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

// The blocks of snapshot k held by the analysis's holders, sorted.
static HeldId *held(const Snapshots *s, uint32_t k, Caches *c, const HolderIndex *ix, const KeptAnalysis *a,
                    uint64_t *n_out) {
  uint64_t n = s->snaps[k].s->paths, count = 0;
  HeldId *out = xrealloc(NULL, (n ? n : 1) * sizeof *out);
  for (uint64_t i = 0; i < n; i++) {
    const PathInfo *pi = path_info(c, s, k, i);
    uint32_t h = index_find(ix, a, pi->key);
    if (h != UINT32_MAX) out[count++] = (HeldId){h, snapshot_path_id(s->reader, k, i), snapshots_block(s, k, i)->samples};
  }
  if (count > 1) qsort(out, count, sizeof *out, by_holder_id);
  *n_out = count;
  return out;
}

// Per holder: the sampled blocks in `to` not in `from` (*grew) and in
// `from` not in `to` (*let_go). Blocks, not samples: a block of many
// samples moves them all at once, and a count of samples is no Poisson
// count (it would name a churn of big blocks far more often than 1 %).
static void compare(const HeldId *from, uint64_t nf, const HeldId *to, uint64_t nt, uint32_t n_holders,
                    uint64_t *grew, uint64_t *let_go) {
  memset(grew, 0, n_holders * sizeof *grew);
  memset(let_go, 0, n_holders * sizeof *let_go);
  uint64_t i = 0, j = 0;
  while (i < nf || j < nt) {
    int c = i == nf ? 1 : j == nt ? -1 : by_holder_id(&from[i], &to[j]);
    if (c < 0) let_go[from[i].holder]++, i++;
    else if (c > 0) grew[to[j].holder]++, j++;
    else i++, j++;
  }
}

// Per holder, the Buffer storage of most samples that snapshot k lists
// (the block its path reaches through a Buffer-storage hop, the last), or
// NULL.
static void buffer_storages(const Snapshots *s, uint32_t k, Caches *c, const HolderIndex *ix, const KeptAnalysis *a,
                            const SnapBlock **out) {
  for (uint32_t i = 0; i < a->n; i++) out[i] = NULL;
  for (uint64_t i = 0; i < s->snaps[k].s->paths; i++) {
    const PathInfo *pi = path_info(c, s, k, i);
    if (!pi->storage) continue;
    uint32_t h = index_find(ix, a, pi->key);
    const SnapBlock *b = snapshots_block(s, k, i);
    if (h != UINT32_MAX && (!out[h] || b->samples > out[h]->samples)) out[h] = b;
  }
}

static void judge_series(const Profile *p, const Snapshots *s, Caches *c, KeptAnalysis *a) {
  uint32_t n = a->n_series, L = n - 1, pos_a = L / 2;
  a->series_a = pos_a;
  uint32_t k_last = a->series[L], k_a = a->series[pos_a], k_prev = a->series[L - 1], k_0 = a->series[0];
  HolderIndex ix;
  index_build(&ix, a);
  for (uint32_t i = 0; i < a->n; i++) a->holders[i].series = xrealloc(NULL, n * sizeof(uint64_t));
  for (uint32_t q = 0; q < n; q++) {
    uint32_t k = a->series[q];
    for (uint32_t i = 0; i < a->n; i++) a->holders[i].series[q] = 0;
    for (uint64_t i = 0; i < s->snaps[k].s->paths; i++) {
      uint32_t h = index_find(&ix, a, path_info(c, s, k, i)->key);
      if (h != UINT32_MAX) a->holders[h].series[q] += snapshots_block(s, k, i)->samples;
    }
  }
  uint64_t nl, na, np;
  HeldId *last = held(s, k_last, c, &ix, a, &nl), *mid = held(s, k_a, c, &ix, a, &na),
         *prev = held(s, k_prev, c, &ix, a, &np);
  uint64_t *x = xrealloc(NULL, (a->n ? a->n : 1) * sizeof *x), *y = xrealloc(NULL, (a->n ? a->n : 1) * sizeof *y);
  compare(mid, na, last, nl, a->n, x, y);
  for (uint32_t i = 0; i < a->n; i++) a->holders[i].grew = x[i], a->holders[i].let_go = y[i];
  compare(prev, np, last, nl, a->n, x, y);
  for (uint32_t i = 0; i < a->n; i++) a->holders[i].grew_last = x[i], a->holders[i].let_go_last = y[i];
  uint64_t from = s->snaps[k_0].s->alloc_count, to = s->snaps[k_a].s->alloc_count;
  for (uint64_t i = 0; i < nl; i++)
    if (last[i].id >= from && last[i].id < to) a->holders[last[i].holder].persist++;
  // A holder kept at every snapshot of the series may be a Buffer whose
  // storage is reallocated as it grows (it keeps no block for long): (S).
  for (uint32_t i = 0; i < a->n; i++) {
    bool always = true;
    for (uint32_t q = 0; q < n && always; q++) always = a->holders[i].series[q] > 0;
    a->holders[i].always = always;
  }
  // (S): each holder's Buffer storage of most samples at each snapshot of
  // the series; the chain from the one at S_L must go through every other.
  const SnapBlock **store = xrealloc(NULL, ((size_t)n * (a->n ? a->n : 1)) * sizeof *store);
  for (uint32_t q = 0; q < n; q++) buffer_storages(s, a->series[q], c, &ix, a, store + (size_t)q * a->n);
  for (uint32_t i = 0; i < a->n; i++) {
    const SnapBlock *first = store[i], *bl = store[(size_t)L * a->n + i];
    if (!first || !bl || bl->id == first->id) continue;
    bool through = false;
    uint32_t links = snapshots_chain_through(s, bl, first->id, &through);
    for (uint32_t q = 1; q < L && through; q++) {
      const SnapBlock *bq = store[(size_t)q * a->n + i];
      if (!bq) through = false;
      else if (bq->id != bl->id && bq->id != first->id) snapshots_chain_through(s, bl, bq->id, &through);
    }
    a->holders[i].storage_p = kept_growth_p(bl->samples, bl->samples + first->samples);
    if (through && links >= KEPT_CHAIN_MIN) a->holders[i].storage_links = links;
  }
  free(store);
  free(x);
  free(y);
  free(last);
  free(mid);
  free(prev);
  free(ix.slots);
  a->eligible = 0;
  for (uint32_t i = 0; i < a->n; i++) a->eligible += a->holders[i].persist > 0 || a->holders[i].always;
  a->alpha = KEPT_ALPHA / (a->eligible ? a->eligible : 1);
  for (uint32_t i = 0; i < a->n; i++) a->holders[i].verdict = kept_series_verdict(&a->holders[i], a->alpha);
  (void)p;
}

KeptVerdict kept_series_verdict(KeptHolder *h, double alpha) {
  uint64_t changed = h->grew + h->let_go;
  h->p = kept_growth_p(h->grew, changed);
  if (!h->persist && !h->always) return KEPT_LATE;
  // (G) only with (P): a holder emptied and filled again (a table rebuilt
  // each hour, a queue drained) keeps something at every snapshot and may
  // be low at S_a and high at S_L, but keeps nothing born before S_a.
  if (h->persist && h->p <= alpha && h->grew_last > h->let_go_last) return KEPT_LEAK;
  if (h->always && h->storage_links && h->storage_p <= alpha) return KEPT_LEAK;   // (S)
  if (h->persist && h->grew > h->let_go && h->grew_last > h->let_go_last &&
      ldexp(1, -(int)(changed < 1000 ? changed : 1000)) > alpha)
    return KEPT_TOO_FEW;
  return h->grew == 0 ? KEPT_EARLY : KEPT_STEADY;
}

// ---------------------------------------------------------------- the analysis

void kept_analyse(const Profile *p, const Snapshots *s, int64_t k, const KeptOptions *o, KeptAnalysis *a) {
  memset(a, 0, sizeof *a);
  a->snapshot = -1;
  a->rule = KEPT_RULE_NONE;
  if (s->status != SNAPSHOTS_PRESENT) {
    cannot(a, s->why, s->status == SNAPSHOTS_ABSENT ? s->fix : "replace or remove the damaged snapshot file");
    return;
  }
  if (k < 0) k = snapshots_default(s);
  if (k < 0 || (uint32_t)k >= s->n_snaps || !s->snaps[k].usable) {
    cannot(a, k >= 0 && (uint32_t)k < s->n_snaps ? s->snaps[k].why : "no usable snapshot",
           "pick a usable snapshot (memtrace info lists them)");
    return;
  }
  a->snapshot = k;
  Caches c = {.stdlib = o && o->stdlib};
  uint64_t distinct = snapshot_reader_distinct_paths(s->reader);
  c.paths = xrealloc(NULL, (distinct ? distinct : 1) * sizeof *c.paths);
  memset(c.paths, 0, (distinct ? distinct : 1) * sizeof *c.paths);
  build_holders(p, s, (uint32_t)k, &c, a);
  // The series: usable snapshots up to k with every path.
  a->series = xrealloc(NULL, ((size_t)k + 1) * sizeof *a->series);
  for (uint32_t q = 0; q <= (uint32_t)k; q++) {
    if (!s->snaps[q].usable || !(s->snaps[q].s->end.flags & RETAIN_PATHS)) continue;
    // Two snapshots with no allocation between them (a period's, then the
    // end state) are one moment of the run: the later stands for both.
    if (a->n_series && s->snaps[a->series[a->n_series - 1]].s->alloc_count == s->snaps[q].s->alloc_count)
      a->n_series--;
    a->series[a->n_series++] = q;
  }
  bool series = a->n_series >= KEPT_SERIES_MIN && a->series[a->n_series - 1] == (uint32_t)k;
  uint64_t clock = profile_summary(p)->clock;
  if (series) {
    a->rule = KEPT_RULE_SERIES;
    judge_series(p, s, &c, a);
  } else if (k == s->end_state) {
    a->rule = KEPT_RULE_END_STATE;
    if (clock < KEPT_MIN_TRACE_SAMPLES) {
      char why[SNAPSHOTS_TEXT], fix[SNAPSHOTS_TEXT];
      snprintf(why, sizeof why,
               "the trace has %llu samples: fewer than %u cannot show a leak keeping under a fifth of what the run "
               "allocates", (unsigned long long)clock, KEPT_MIN_TRACE_SAMPLES);
      snprintf(fix, sizeof fix, "record at --memtrace-rate %g or more, or a longer run",
               kept_rate_for(profile_rate(p), clock, KEPT_MIN_TRACE_SAMPLES));
      cannot(a, why, fix);
    } else {
      judge_end_state(a);
    }
  } else {
    char why[SNAPSHOTS_TEXT];
    snprintf(why, sizeof why,
             "snapshot %llu is not the end state and the series up to it holds %u snapshot%s with every path (the "
             "series rule needs %d)", (unsigned long long)s->snaps[k].s->number, a->n_series,
             a->n_series == 1 ? "" : "s", KEPT_SERIES_MIN);
    cannot(a, why, "take more snapshots (--memtrace-snapshot-every SECONDS, SIGUSR1, Memtrace.snapshot()), or let "
                   "the run end to get its end state");
  }
  if (a->judgement != KEPT_CANNOT_JUDGE) {
    a->judgement = KEPT_JUDGED;
    for (uint32_t i = 0; i < a->n; i++) {
      a->n_leaking += a->holders[i].verdict == KEPT_LEAK;
      a->n_too_few += a->holders[i].verdict == KEPT_TOO_FEW;
    }
    if (a->n) qsort(a->holders, a->n, sizeof *a->holders, by_verdict);
  }
  free(c.paths);
}

static int by_kept(const void *a, const void *b) {
  const KeptHolder *x = a, *y = b;
  if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

void kept_sort_by_kept(KeptAnalysis *a) {
  if (a->n > 1) qsort(a->holders, a->n, sizeof *a->holders, by_kept);
}

void kept_analysis_free(KeptAnalysis *a) {
  for (uint32_t i = 0; i < a->n; i++) {
    free(a->holders[i].sites);
    free(a->holders[i].series);
  }
  free(a->holders);
  free(a->series);
  memset(a, 0, sizeof *a);
}
