// ranking.h - groups of allocation sites ranked by a measure: bytes
// allocated, live (at the end, or at the --at snapshot) or promoted. Used by
// `memtrace top` and the top-sites table of `memtrace report`.
#ifndef MINNOW_MEMTRACE_RANKING_H
#define MINNOW_MEMTRACE_RANKING_H

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"

typedef enum RankMetric { RANK_ALLOCATED, RANK_LIVE, RANK_PROMOTED } RankMetric;

// "allocated", "live", "promoted".
const char *rank_metric_name(RankMetric m);

// The samples and sampled blocks a row counts for the metric. `at`: live
// means the at_* snapshot (after profile_finish: live at the end without
// --at), else the live_* counts of now (a profile still reading).
uint64_t rank_samples(const ProfileCounts *c, RankMetric m, bool at);
uint64_t rank_blocks(const ProfileCounts *c, RankMetric m, bool at);

typedef struct Ranking {
  ProfileGroups *groups;
  uint32_t *order;   // row indices, largest first (ties: smaller key first); n_ranked of them
  uint32_t n_ranked; // the groups with samples for the metric
} Ranking;

// The counts of the i-th ranked row (order[i]).
ProfileCounts ranking_counts(const Profile *p, const Ranking *r, uint32_t i);

// False when out of memory; ranking_free in every case.
bool ranking_make(const Profile *p, ProfileBy by, RankMetric m, bool at, Ranking *out);
void ranking_free(Ranking *r);

#endif
