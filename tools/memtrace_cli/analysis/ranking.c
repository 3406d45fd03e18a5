// ranking.c - groups ranked by a measure (ranking.h).
#include "ranking.h"

#include <stdlib.h>

const char *rank_metric_name(RankMetric m) {
  return m == RANK_LIVE ? "live" : m == RANK_PROMOTED ? "promoted" : "allocated";
}

uint64_t rank_samples(const ProfileCounts *c, RankMetric m, bool at) {
  if (m == RANK_LIVE) return at ? c->at_samples : c->live_samples;
  return m == RANK_PROMOTED ? c->promoted_samples : c->samples;
}

uint64_t rank_blocks(const ProfileCounts *c, RankMetric m, bool at) {
  if (m == RANK_LIVE) return at ? c->at_blocks : c->live_blocks;
  return m == RANK_PROMOTED ? c->promoted_blocks : c->blocks;
}

// A row to rank: its measure, then its key (ties), then its index.
typedef struct Ranked {
  uint64_t samples, key;
  uint32_t row;
} Ranked;

static int by_samples(const void *a, const void *b) {
  const Ranked *x = a, *y = b;
  if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

bool ranking_make(const Profile *p, ProfileBy by, RankMetric m, bool at, Ranking *out) {
  *out = (Ranking){0};
  out->groups = profile_group(p, by);
  if (!out->groups) return false;
  uint32_t n = out->groups->n;
  Ranked *ranked = malloc(((size_t)n + 1) * sizeof *ranked);
  out->order = malloc(((size_t)n + 1) * sizeof *out->order);
  if (!ranked || !out->order) return free(ranked), false;
  for (uint32_t i = 0; i < n; i++) {
    ProfileCounts c = profile_group_counts(p, out->groups, i);
    uint64_t samples = rank_samples(&c, m, at);
    if (samples) ranked[out->n_ranked++] = (Ranked){samples, out->groups->rows[i].key, i};
  }
  qsort(ranked, out->n_ranked, sizeof *ranked, by_samples);
  for (uint32_t i = 0; i < out->n_ranked; i++) out->order[i] = ranked[i].row;
  free(ranked);
  return true;
}

ProfileCounts ranking_counts(const Profile *p, const Ranking *r, uint32_t i) {
  return profile_group_counts(p, r->groups, r->order[i]);
}

void ranking_free(Ranking *r) {
  profile_groups_free(r->groups);
  free(r->order);
  *r = (Ranking){0};
}
