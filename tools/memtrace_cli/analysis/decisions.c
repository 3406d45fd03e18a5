// decisions.c - pretenuring decisions indexed by site key (decisions.h).
//
// 1. The index is an array of (key, reader index) sorted by key then index:
//    a key's decisions are one run, in file order (contract 3).
#include "decisions.h"

#include <stdlib.h>

#include "../base/xalloc.h"

bool decision_key(const SnapshotDecision *x, ProfileBy by, uint64_t *key) {
  if (x->line > UINT32_MAX || x->first_col > UINT32_MAX || x->last_col > UINT32_MAX) return false;
  TraceReaderLocation loc = {x->function, x->file, (uint32_t)x->line, (uint32_t)x->first_col, (uint32_t)x->last_col};
  *key = profile_location_key(&loc, by);
  return true;
}

static int by_key(const void *a, const void *b) {
  const SiteDecisionsEntry *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

void site_decisions_init(SiteDecisions *d, const SnapshotReader *r, ProfileBy by) {
  *d = (SiteDecisions){.reader = r};
  if (!r) return;
  d->n = snapshot_decision_count(r);
  d->entries = xrealloc(NULL, (d->n ? d->n : 1) * sizeof *d->entries);
  for (uint32_t i = 0; i < d->n; i++) {
    uint64_t key;
    if (decision_key(snapshot_decision(r, i), by, &key)) d->entries[d->n_keyed++] = (SiteDecisionsEntry){key, i};
  }
  qsort(d->entries, d->n_keyed, sizeof *d->entries, by_key);
}

void site_decisions_free(SiteDecisions *d) {
  free(d->entries);
  *d = (SiteDecisions){0};
}

uint32_t site_decisions_find(const SiteDecisions *d, uint64_t key, uint32_t *first) {
  uint32_t lo = 0, hi = d->n_keyed;  // the first entry whose key is >= key
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (d->entries[mid].key < key) lo = mid + 1;
    else hi = mid;
  }
  *first = lo;
  uint32_t end = lo;
  while (end < d->n_keyed && d->entries[end].key == key) end++;
  return end - lo;
}

const SnapshotDecision *site_decisions_at(const SiteDecisions *d, uint32_t pos) {
  return snapshot_decision(d->reader, d->entries[pos].index);
}

const char *decision_action_name(uint32_t action) {
  return action == 1 ? "old" : action == 0 || action == 2 ? "young" : "unknown";
}
