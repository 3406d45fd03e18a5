// kept.c - holders and leak verdicts from the end state (kept.h).
#include "kept.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/hash.h"
#include "../base/xalloc.h"
#include "retain_text.h"

const char *kept_verdict_name(KeptVerdict v) {
  static const char *const names[] = {"leak", "built early", "a tail", "too few samples"};
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
// (analysis/stats.c is getting its own; this one serves kept.c until then.)
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

// The holder's text (retain_text.h, erased: Hashtbl hops read the same
// whatever their kind), hashed.
static uint64_t holder_key(const RetainPath *path, uint32_t cut) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) xalloc_fail();
  retain_holder_text(f, path, cut);
  fclose(f);
  uint64_t h = hash_memory(text, len);
  free(text);
  return h;
}

typedef struct Member {
  uint64_t key;
  const ProfileSurvivor *s;
  const RetainPath *path;
  uint32_t cut, depth;
  ProfileSiteId site;
} Member;

static int by_key(const void *a, const void *b) {
  const Member *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  if (x->site != y->site) return x->site < y->site ? -1 : 1;
  return x->s->id < y->s->id ? -1 : x->s->id > y->s->id;
}

static int by_directness(const void *a, const void *b) {
  const KeptSite *x = a, *y = b;
  if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
  if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
  return x->site < y->site ? -1 : x->site > y->site;
}

static int verdict_rank(KeptVerdict v) { return v == KEPT_LEAK ? 0 : v == KEPT_TOO_FEW ? 1 : 2; }

static int by_verdict(const void *a, const void *b) {
  const KeptHolder *x = a, *y = b;
  int rx = verdict_rank(x->verdict), ry = verdict_rank(y->verdict);
  if (rx != ry) return rx - ry;
  if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static KeptVerdict judge(const uint64_t *w, uint64_t samples) {
  bool first = w[0] + w[1] > 0, second = w[2] + w[3] > 0;
  if (first && second) return KEPT_LEAK;
  if (samples < KEPT_MIN_SAMPLES) return KEPT_TOO_FEW;
  return first ? KEPT_EARLY : KEPT_LATE;
}

static void cannot(KeptAnalysis *a, const char *why, const char *fix) {
  a->judgement = KEPT_CANNOT_JUDGE;
  snprintf(a->why, sizeof a->why, "%s", why);
  snprintf(a->fix, sizeof a->fix, "%s", fix);
}

void kept_analyse(const Profile *p, const EndState *es, KeptAnalysis *a) {
  memset(a, 0, sizeof *a);
  if (es->status != END_STATE_PRESENT) {
    cannot(a, es->why, es->status == END_STATE_ABSENT ? es->fix : "replace or remove the damaged end state");
    return;
  }
  uint64_t clock = profile_summary(p)->clock;
  if (clock < KEPT_MIN_TRACE_SAMPLES) {
    char why[END_STATE_TEXT], fix[END_STATE_TEXT];
    snprintf(why, sizeof why,
             "the trace has %llu samples: fewer than %u cannot show a leak keeping under a fifth of what the run "
             "allocates", (unsigned long long)clock, KEPT_MIN_TRACE_SAMPLES);
    snprintf(fix, sizeof fix, "record at --memtrace-rate %g or more, or a longer run",
             kept_rate_for(profile_rate(p), clock, KEPT_MIN_TRACE_SAMPLES));
    cannot(a, why, fix);
    return;
  }
  uint64_t n = es->n_survivors;
  Member *m = xrealloc(NULL, (n ? n : 1) * sizeof *m);
  for (uint64_t i = 0; i < n; i++) {
    const ProfileSurvivor *s = &es->survivors[i];
    const RetainPath *path = es->paths ? retain_find(&es->retain, s->id) : NULL;
    ProfileSiteId site = profile_stack_site(p, s->stack);
    Member *x = &m[i];
    *x = (Member){0, s, path, 0, 0, site};
    if (path) {
      x->cut = retain_holder_cut(path, &x->depth);
      x->key = holder_key(path, x->cut);
    } else {
      x->key = hash_combine(0x6e6f2070617468ull, profile_site(p, site)->key_site);  // "no path"
    }
    a->samples += s->samples;
  }
  if (n) qsort(m, n, sizeof *m, by_key);
  a->holders = xrealloc(NULL, (n ? n : 1) * sizeof *a->holders);
  for (uint64_t i = 0; i < n;) {
    uint64_t j = i;
    while (j < n && m[j].key == m[i].key) j++;
    KeptHolder *h = &a->holders[a->n++];
    *h = (KeptHolder){.key = m[i].key, .example = m[i].path, .cut = m[i].cut, .unknown_site = m[i].site};
    h->sites = xrealloc(NULL, (j - i) * sizeof *h->sites);
    for (uint64_t k = i; k < j; k++) {
      const Member *x = &m[k];
      uint32_t w = (uint32_t)(clock ? x->s->birth_clock * KEPT_WINDOWS / clock : 0);
      if (w >= KEPT_WINDOWS) w = KEPT_WINDOWS - 1;
      if (!h->n_sites || h->sites[h->n_sites - 1].site != x->site) {
        KeptSite *ks = &h->sites[h->n_sites++];
        *ks = (KeptSite){.site = x->site, .stack = x->s->stack, .depth = UINT32_MAX};
        h->allocated_samples += profile_site(p, x->site)->counts.samples;
      }
      KeptSite *ks = &h->sites[h->n_sites - 1];
      ks->blocks++, ks->samples += x->s->samples, ks->windows[w] += x->s->samples;
      if (profile_stack_counts(p, x->s->stack).live_samples > profile_stack_counts(p, ks->stack).live_samples)
        ks->stack = x->s->stack;
      if (x->depth < ks->depth) ks->depth = x->depth, ks->example = x->path;
      h->blocks++, h->samples += x->s->samples, h->windows[w] += x->s->samples;
    }
    qsort(h->sites, h->n_sites, sizeof *h->sites, by_directness);
    h->verdict = judge(h->windows, h->samples);
    a->n_leaking += h->verdict == KEPT_LEAK;
    a->n_too_few += h->verdict == KEPT_TOO_FEW;
    i = j;
  }
  free(m);
  if (a->n) qsort(a->holders, a->n, sizeof *a->holders, by_verdict);
  a->judgement = KEPT_JUDGED;
}

void kept_analysis_free(KeptAnalysis *a) {
  for (uint32_t i = 0; i < a->n; i++) free(a->holders[i].sites);
  free(a->holders);
  a->holders = NULL;
  a->n = 0;
}
