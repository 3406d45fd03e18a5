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

// What the comparator ranks by (qsort_r's context).
typedef struct SortBy {
  const ProfileGroups *groups;
  RankMetric metric;
  bool at;
} SortBy;

static int by_samples(const void *a, const void *b, void *context) {
  const SortBy *by = context;
  const ProfileGroup *x = &by->groups->rows[*(const uint32_t *)a], *y = &by->groups->rows[*(const uint32_t *)b];
  uint64_t sx = rank_samples(&x->counts, by->metric, by->at), sy = rank_samples(&y->counts, by->metric, by->at);
  if (sx != sy) return sx > sy ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

bool ranking_make(const Profile *p, ProfileBy by, RankMetric m, bool at, Ranking *out) {
  *out = (Ranking){0};
  out->groups = profile_group(p, by);
  if (!out->groups) return false;
  out->order = malloc(((size_t)out->groups->n + 1) * sizeof *out->order);
  if (!out->order) return false;
  for (uint32_t i = 0; i < out->groups->n; i++)
    if (rank_samples(&out->groups->rows[i].counts, m, at)) out->order[out->n_ranked++] = i;
  SortBy s = {out->groups, m, at};
  qsort_r(out->order, out->n_ranked, sizeof *out->order, by_samples, &s);
  return true;
}

void ranking_free(Ranking *r) {
  profile_groups_free(r->groups);
  free(r->order);
  *r = (Ranking){0};
}
