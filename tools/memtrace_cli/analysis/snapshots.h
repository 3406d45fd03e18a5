// snapshots.h - a trace's snapshots as the tools see them: the file
// "T.ctf.retain" beside the trace T.ctf (trace/snapshot_reader.h;
// docs/trace-format.md section 12), found, read, and matched with the trace:
// for every block a snapshot lists, its allocation in the trace (its stack,
// samples, birth time and allocation clock).
//
// Contract
//   * snapshots_watch opens the file (before the trace is read) and hooks
//     the profile's reading (ProfileOptions.before_event, chained to any hook
//     already set, and on_survivor): each snapshot's blocks are taken from
//     the profile's live set at the snapshot's place in the trace (before
//     the first allocation it does not count, or the first event of the next
//     snapshot's time, or the end), so memory follows the distinct blocks
//     the snapshots list, never the trace's allocations. snapshots_load then
//     decides, once the trace is read, the status of the whole:
//       PRESENT  at least one snapshot is usable (whole, of this trace,
//                covered by the trace read);
//       ABSENT   none: `why` says why (no file, a trace from stdin, no whole
//                snapshot yet, snapshots the trace does not reach, an end
//                state without a collection) and `fix` what would give one;
//       DAMAGED  the file is unreadable or is not this trace's (another pid
//                or start time, an end state made for another count of
//                allocations, a block the trace does not have or collects
//                before the snapshot): `why` names the file (and the byte
//                offset for bytes it cannot read). Commands exit 1.
//     Each snapshot of the file is usable or not, with its reason (a
//     snapshot past the end of a truncated trace is not; the end state of a
//     truncated trace is not).
//   * A mid-run snapshot counts allocations the trace holds (a run killed
//     after it goes on allocating); the end state counts exactly the
//     trace's, and the trace's blocks never collected are exactly those it
//     lists (when every block has its path).
//   * Nothing here aborts on bad input; out of memory is xalloc_fail.
#ifndef MINNOW_MEMTRACE_SNAPSHOTS_H
#define MINNOW_MEMTRACE_SNAPSHOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../../trace/snapshot_reader.h"
#include "profile.h"

typedef enum SnapshotsStatus { SNAPSHOTS_PRESENT, SNAPSHOTS_ABSENT, SNAPSHOTS_DAMAGED } SnapshotsStatus;

enum { SNAPSHOTS_TEXT = 1024, SNAPSHOTS_FILE = 512 };

// A block a snapshot lists, as the trace has it.
typedef struct SnapBlock {
  uint64_t id;
  uint64_t samples;
  uint64_t birth_us;         // µs since the trace's start
  uint64_t birth_clock;      // the allocation clock before its own samples
  ProfileStackId stack;
} SnapBlock;

// A sampled block of two samples or more that the trace collects: the
// links of a storage reallocated as it grows (a Buffer's, a table's bucket
// array: each copied into a larger one, then collected), for the end-state
// rule's chains (kept.h). Sorted by stack, then birth, once the trace is read.
typedef struct SnapDead {
  uint32_t stack;            // ProfileStackId
  uint64_t id;               // its allocation id
  uint64_t samples;
  uint64_t birth_clock, death_clock;   // the allocation clock at its birth and its collection
} SnapDead;
enum { SNAPSHOTS_MAX_DEAD_BIG = 1 << 20 };

// One snapshot of the file, matched with the trace.
typedef struct SnapState {
  const Snapshot *s;         // the reader's
  bool usable;
  char why[256];             // !usable: why ("past the end of the trace read", ...)
  bool taken;                // its blocks were taken from the live set
  bool deferred;             // the end state: checked at its place, taken once the trace is read
  uint32_t *block;           // per path (in the reader's order, by id): index into blocks
} SnapState;

typedef struct Snapshots {
  SnapshotsStatus status;
  char file[SNAPSHOTS_FILE];     // the file looked for ("" for a trace from stdin without --retain)
  char why[SNAPSHOTS_TEXT];      // ABSENT, DAMAGED: what is missing or wrong
  char fix[SNAPSHOTS_TEXT];      // ABSENT: what would give a snapshot
  char tail[SNAPSHOTS_TEXT];     // what the reader left out at the end of the file ("" if nothing)
  SnapshotReader *reader;        // NULL: no file read
  SnapState *snaps;              // one per whole snapshot of the file
  uint32_t n_snaps, n_usable;
  int64_t end_state;             // the usable end state's index, or -1
  SnapBlock *blocks;             // distinct blocks the snapshots list
  uint32_t n_blocks, cap_blocks;
  uint32_t *slots;               // id -> block index + 1
  uint64_t slot_mask;
  ProfileSurvivor *survivors;    // the trace's blocks never collected, by id; after snapshots_load
                                 // NULL unless the usable end state lacks some of their paths
  uint64_t n_survivors, cap_survivors;   // (n_survivors: how many, always)
  SnapDead *dead_big;            // at most SNAPSHOTS_MAX_DEAD_BIG (the first ones)
  uint64_t *birth_ids;           // every id the snapshots list, increasing (ProfileOptions.birth_ids),
  uint64_t n_birth_ids;          // or NULL: every block's birth is kept
  ProfileSurvivor *late;         // blocks the deferred end state lists, collected after its place
  uint64_t n_late, cap_late;     // (none in a trace ./vm wrote)
  bool chains;                   // dead_big is kept: a path of the file (or of a file
                                 // that grows: follow mode) ends at a Buffer's storage
  uint64_t n_dead_big, cap_dead_big;
  // follow mode (snapshots_follow): the blocks collected since the last
  // snapshot taken at its place, for a snapshot found after its place
  bool following;
  SnapBlock *dead;
  uint64_t n_dead, cap_dead;
  uint32_t *dead_slots;          // id -> dead index + 1
  uint64_t dead_mask;
  // the reading
  uint32_t next;                 // the next snapshot to take
  uint64_t start_us;             // the trace's start (µs since the epoch), once known
  const Profile *profile;
  void (*chained)(void *ctx, const Profile *p, const TraceEvent *ev);
  void *chained_ctx;
  bool partial;
} Snapshots;

// Zeroes *s, finds and reads the file (`trace`: the trace's path, "-" for
// stdin; `retain`: --retain FILE, or NULL for trace + ".retain") and hooks
// `opts`. Call before the trace is read.
void snapshots_watch(Snapshots *s, const char *trace, const char *retain, ProfileOptions *opts);

// After profile_finish: matches what was taken with the trace and sets the
// status. `partial`: the trace stopped at damage or was cut.
void snapshots_load(Snapshots *s, const Profile *p, bool partial);

// Without the trace's blocks (info: the trace read alone): reads the file
// and checks it against the trace's info and allocation count (which
// snapshots the trace reaches, the end state's count). *s is then as after
// snapshots_load, its blocks not taken.
void snapshots_check(Snapshots *s, const char *trace, const char *retain, const TraceReaderInfo *info,
                     uint64_t allocs, bool partial);

// Follow mode (top --follow --by holder): the file may not exist yet and
// grows. snapshots_follow hooks `opts` as snapshots_watch does, without
// reading; each snapshots_follow_update then opens the file once it holds
// its header (checking it against the trace's info) and reads the
// snapshots appended since: those the trace read has passed already are
// taken at once (from the live set and the blocks collected since the last
// snapshot), the others when the reading passes them. Returns false on
// damage (the status DAMAGED, why set). A snapshot taken is usable.
void snapshots_follow(Snapshots *s, const char *trace, const char *retain, ProfileOptions *opts);
bool snapshots_follow_update(Snapshots *s, const TraceReaderInfo *info);

void snapshots_free(Snapshots *s);

// The usable snapshot a command shows by default: the end state, else the
// last usable one; -1 if none.
int64_t snapshots_default(const Snapshots *s);

// The number of paths of snapshot k and its i-th path and block.
uint64_t snapshots_paths(const Snapshots *s, uint32_t k);
const RetainPath *snapshots_path(const Snapshots *s, uint32_t k, uint64_t i);
// The same decoded into *v and not kept (snapshot_path_view): for a reader
// of every path, which would otherwise keep them all decoded.
const RetainPath *snapshots_path_view(const Snapshots *s, uint32_t k, uint64_t i, SnapshotPathView *v);
const SnapBlock *snapshots_block(const Snapshots *s, uint32_t k, uint64_t i);

// The snapshot's time in µs since the trace's start.
uint64_t snapshots_time(const Snapshots *s, uint32_t k);

// The links of the chain that ends at block b (2 samples or more): b, then
// each time the last-born collected block of its stack that was born
// before the link, alive at its birth and of fewer samples (its storage
// before the copy; at most 4096 blocks looked at per link). 1 when none.
uint32_t snapshots_chain(const Snapshots *s, const SnapBlock *b);
// The same, and whether one of the chain's links is the block of
// allocation id `id` (*reached).
uint32_t snapshots_chain_through(const Snapshots *s, const SnapBlock *b, uint64_t id, bool *reached);

// The trace's block never collected of allocation `id`, or NULL (always
// NULL once the survivors are gone: see Snapshots.survivors).
const ProfileSurvivor *snapshots_survivor(const Snapshots *s, uint64_t id);

// "present" / "absent" / "damaged".
const char *snapshots_status_name(SnapshotsStatus st);

#endif
