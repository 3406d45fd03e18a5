// lifetime_rows.h - the figures of `memtrace lifetimes` and of the
// lifetimes section of `memtrace report`: per group of sites, its lifetime
// histograms summed (profile.h, ProfileLifetimes) and what they give: the
// share of its minor blocks promoted (Clopper-Pearson interval), the share of its
// bytes alive at the end, and quantiles of its bytes' lifetime in time, in
// bytes allocated meanwhile, and in minor heaps' worth of that.
#ifndef MINNOW_MEMTRACE_LIFETIME_ROWS_H
#define MINNOW_MEMTRACE_LIFETIME_ROWS_H

#include <stdint.h>

#include "profile.h"

typedef struct LifetimeRow {
  const ProfileGroup *group;
  ProfileCounts counts;   // the group's (profile_group_counts)
  ProfileLifetimes hist;   // summed over the group's sites
} LifetimeRow;

// A row per group of g, largest allocators (samples) first, from a profile
// built with ProfileOptions.lifetimes; NULL when out of memory. free() it.
LifetimeRow *lifetime_rows(const Profile *p, const ProfileGroups *g);

// Each quantile (p50, p90, p99) is the value its histogram bucket stands
// for; INFINITY when it falls among the blocks alive at the end; NAN when
// undefined (no collected nor surviving block; minor_gcs: no minor heap
// size in the trace). promoted_share is NAN without minor blocks.
typedef struct LifetimeFigures {
  double time_us[3], alloc_bytes[3], minor_gcs[3];   // p50, p90, p99
  double promoted_share, alive_share;
  Interval promoted;
  uint64_t minor_blocks;
} LifetimeFigures;

LifetimeFigures lifetime_figures(const Profile *p, const LifetimeRow *r);

#endif
