// decisions.h - the pretenuring decisions of a snapshot file (its kind 5
// records, trace/snapshot_reader.h; docs/trace-format.md 12.1) matched with
// the rows of a grouping of sites (profile.h, ProfileGroups).
//
// Contract
// 1. A decision names its site by location (function, file, line, first and
//    last column), as the trace's locations do: its key for a grouping is
//    profile_location_key of that location, the key the profile gives a
//    site with that innermost location. So a decision finds the row of the
//    site it switched (by site), or of the function or file holding it,
//    whatever frame codes the trace used.
// 2. A decision whose line or columns do not fit the trace's locations
//    (32 bits: a damaged or hostile record) names no site: it has no key and
//    is never matched (it still counts in `n`).
// 3. The decisions of one key keep the file's order (the order they were
//    made: a switch, then its undo). Lookups take O(log n).
// 4. The index borrows the reader: it must stay open until
//    site_decisions_free. Out of memory is xalloc_fail.
#ifndef MINNOW_MEMTRACE_DECISIONS_H
#define MINNOW_MEMTRACE_DECISIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../../trace/snapshot_reader.h"
#include "profile.h"

typedef struct SiteDecisionsEntry {
  uint64_t key;
  uint32_t index;   // the decision's index in the reader
} SiteDecisionsEntry;

typedef struct SiteDecisions {
  const SnapshotReader *reader;  // borrowed; NULL: no decision
  uint32_t n;                    // the reader's decisions
  uint32_t n_keyed;              // those with a key (contract 2), the entries
  SiteDecisionsEntry *entries;   // by key, then index
} SiteDecisions;

// Indexes r's decisions by their key for `by` (r NULL: none).
void site_decisions_init(SiteDecisions *d, const SnapshotReader *r, ProfileBy by);
void site_decisions_free(SiteDecisions *d);

// The key of decision x for `by`, or false when it names no site (contract 2).
bool decision_key(const SnapshotDecision *x, ProfileBy by, uint64_t *key);

// The decisions of key: returns how many, and sets *first to the position
// of the first (positions first .. first + count - 1, in file order).
uint32_t site_decisions_find(const SiteDecisions *d, uint64_t key, uint32_t *first);
// The decision at a position of the index (0 <= pos < n_keyed).
const SnapshotDecision *site_decisions_at(const SiteDecisions *d, uint32_t pos);

// "old" (action 1: the site allocates in the major heap) or "young" (0 or 2:
// again in the minor heap); "unknown" for any other action.
const char *decision_action_name(uint32_t action);

#endif
