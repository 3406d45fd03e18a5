// lifetime_rows.c - lifetime figures per group of sites (lifetime_rows.h).
#include "lifetime_rows.h"

#include <math.h>
#include <stdlib.h>

static int by_samples(const void *a, const void *b) {
  const LifetimeRow *x = a, *y = b;
  if (x->counts.samples != y->counts.samples) return x->counts.samples > y->counts.samples ? -1 : 1;
  return x->group->key < y->group->key ? -1 : x->group->key > y->group->key;
}

static void add_hist(ProfileLifetimes *to, const ProfileLifetimes *from) {
  for (uint32_t i = 0; i < PROFILE_HIST_BUCKETS; i++) to->time_us[i] += from->time_us[i], to->clock[i] += from->clock[i];
  to->died_young_blocks += from->died_young_blocks;
  to->died_young_samples += from->died_young_samples;
}

LifetimeRow *lifetime_rows(const Profile *p, const ProfileGroups *g) {
  LifetimeRow *rows = calloc((size_t)g->n + 1, sizeof *rows);
  if (!rows) return NULL;
  for (uint32_t i = 0; i < g->n; i++) rows[i].group = &g->rows[i], rows[i].counts = profile_group_counts(p, g, i);
  for (ProfileSiteId s = 0; s < profile_n_sites(p); s++) {
    const ProfileLifetimes *l = profile_site_lifetimes(p, s);
    if (l && g->of_site[s] != PROFILE_NONE) add_hist(&rows[g->of_site[s]].hist, l);
  }
  qsort(rows, g->n, sizeof *rows, by_samples);
  return rows;
}

// The q-quantile of a histogram (weights: samples): the value its bucket
// stands for; INFINITY when it falls among the blocks alive at the end; NAN
// for an empty histogram.
static double quantile(const uint64_t *hist, double q) {
  uint64_t total = 0, seen = 0;
  for (uint32_t i = 0; i < PROFILE_HIST_BUCKETS; i++) total += hist[i];
  if (!total) return NAN;
  for (uint32_t i = 0; i < PROFILE_HIST_BUCKETS; i++) {
    seen += hist[i];
    if ((double)seen >= q * (double)total) return profile_hist_value(i);
  }
  return INFINITY;
}

static const double QUANTILES[3] = {0.5, 0.9, 0.99};

LifetimeFigures lifetime_figures(const Profile *p, const LifetimeRow *r) {
  LifetimeFigures f;
  const ProfileCounts *c = &r->counts;
  double minor_bytes = (double)profile_summary(p)->minor_heap_words * profile_word_bytes(p);
  for (int i = 0; i < 3; i++) {
    f.time_us[i] = quantile(r->hist.time_us, QUANTILES[i]);
    f.alloc_bytes[i] = quantile(r->hist.clock, QUANTILES[i]) * profile_sample_bytes(p);
    f.minor_gcs[i] = minor_bytes > 0 ? floor(f.alloc_bytes[i] / minor_bytes) : NAN;
  }
  f.minor_blocks = c->blocks - c->major_blocks;
  f.promoted_share = f.minor_blocks ? (double)c->promoted_blocks / (double)f.minor_blocks : NAN;
  f.promoted = stats_proportion_interval(c->promoted_blocks, f.minor_blocks);
  f.alive_share = c->samples ? (double)r->hist.time_us[PROFILE_HIST_ALIVE] / (double)c->samples : NAN;
  return f;
}

