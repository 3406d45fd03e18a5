// profile.h - the analysis core of the trace tools: one streaming pass over a
// memtrace trace (trace/reader.h) that builds everything the analysing
// subcommands read (top, lifetimes, leaks, diff; flamegraph, pprof, merge,
// timeline; the HTML report).
//
// What it builds
//   * A callstack trie: a node per distinct (parent node, frame code), the
//     root (node 0) standing for "no frame". An allocation's callstack is the
//     path from the root to its leaf node; the reader's `common` prefix
//     means an allocation costs only its new frames (the path of the previous
//     allocation is kept, cut at `common`, extended by the new codes).
//   * Stacks: a stack record per distinct leaf node that allocations ended
//     at, with the counters of ProfileCounts (sampled blocks, samples,
//     estimated blocks, promoted, collected, live now, live at --at).
//   * Sites: a site per distinct innermost location (the last, innermost, of
//     the leaf code's locations; a code with no location is a site of its
//     own, "$code"). Every stack belongs to one site. Functions and files
//     are groupings of sites; per site, when asked for, lifetime histograms
//     and leak windows (below).
//   * A live table: allocation id -> (stack, samples, birth time, birth
//     allocation clock, birth window, promoted), the sampled blocks not yet
//     collected. At the end of a trace what is left in it is "live at the
//     end" (the writer emits no event for blocks alive when it stops).
//   * Keys: every stack has stable 64-bit keys for each grouping (site,
//     function, file, whole stack), hashes of the location strings, so that
//     profiles of different traces (different frame codes) can be matched;
//     equal keys are taken as equal locations (a collision of two distinct
//     ones has probability about 2^-64 per pair).
//
// Units. Counters count samples (integers); an estimate in bytes is samples
// × profile_sample_bytes(p) = word bytes / λ, headers included (memprof
// samples header words too). Several traces: unbias each (a Tally per trace)
// then sum (stats.h) - never sum the samples of traces of different rates.
//
// Clocks. Time is µs since the trace's start (TraceEvent.dtime_us). The
// allocation clock counts the samples of every allocation read so far: the
// clock difference between a block's birth and death, × 1/λ, estimates the
// words allocated meanwhile. "Minor collections survived" is not in the
// trace: a promote event says "survived at least one", and (lifetime in
// allocated words) / (minor heap words, from the trace info's runtime
// params when known) approximates how many minor collections a block lived
// through, assuming they happen only when the minor heap fills.
//
// Leak windows (ProfileOptions.windows = K > 0, .clock_total = the samples
// of all the trace's allocations, from a first pass): checkpoints c_1 .. c_K
// split the run into windows of equal allocation (c_k is the first event
// once the allocation clock reaches k × clock_total / K; c_K is the end), so
// the bursts of collect events of a major collection, which take no
// allocation, fall inside one window; profile_checkpoint_time gives the
// time of each.
//   What counts is what the trace proves reachable, not merely uncollected
// (a collector reports a block dead only when it runs; a program that never
// fills its major heap reclaims no old block at all): a block is proven
// reachable up to the latest of the moment it became old (its promote event:
// a minor collection kept it; or its birth in the major heap) and the last
// major collection it lived through. Major collections show in the trace as
// collect events of old blocks; a run of them with no allocation in between
// is one collection (exact for Minnow's stop-the-world collector; for
// OCaml's incremental one each slice of its sweep counts as one). A block
// never promoted is never proven reachable past its birth.
//   A sampled block born in window j and proven reachable up to a time
// falling in window d (d = K + 1 for a block still alive at the end and
// proven reachable in the last window) counts at checkpoints j+1 .. d-1
// ("old and live": ignored at its own window's end, so the youngest blocks
// never count). Per site, windows[j * (K + 2) + d] sums the samples of such
// blocks with d >= j + 2 (the others never count), which gives the live
// series and the exact sampling variance of any linear statistic of it
// (leaks.c).
//
// Ownership and lifetimes
//   * profile_new borrows the reader: it must stay open until profile_free
//     (locations and their strings belong to it). The profile owns its
//     tables; pointers it returns are valid until the next profile_event /
//     profile_read / profile_finish or profile_free.
//   * The caller drives: profile_read (or profile_event for each event it
//     reads itself), then profile_finish once at the end.
//
// Invariants
//   * node 0 is the root; a node's parent has a smaller id; depth(root) = 0.
//   * for every stack s: live_* <= blocks (collected = blocks - live);
//     at_* <= blocks; promoted_* <= blocks.
//   * the live table holds exactly the sampled blocks allocated and neither
//     collected nor (after profile_finish) flushed into the windows.
//   * memory: O(distinct nodes + stacks + sites + live sampled blocks), never
//     O(events): while reading, 20 bytes a node (parent, code, stack, first
//     child, next sibling), 4 a stack plus 4 to 8 per counter it has ever
//     had non-zero (blocks, samples, live, promoted, major...: counters of
//     u32 made u64 when a sum would pass 2^32 - 1, objects a double), the live
//     table's 16 to 48 bytes a live sampled block (live.h), a site's
//     counters. Distinct nodes grow with depth x samples when stacks share
//     no prefix (a 1 MB trace can declare 80 million), so they are capped at
//     PROFILE_MAX_NODES: an allocation whose stack would pass it is counted
//     under a node "(frames left out: ...)" below the deepest of its frames
//     the trie holds, and profile_cut says how many; the trace is read to
//     its end. So is a backtrace the reader cut (TraceEvent.cut): its
//     allocation counts under "(frames past ... left out)" below its
//     outermost frames. A leak's live set is what it is: a leaking program's
//     live table grows with its leak (by its sampled blocks: λ × leaked
//     words).
#ifndef MINNOW_MEMTRACE_PROFILE_H
#define MINNOW_MEMTRACE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "../../../trace/reader.h"
#include "stats.h"

typedef uint32_t ProfileNodeId;   // 0: the root
typedef uint32_t ProfileStackId;
typedef uint32_t ProfileSiteId;
enum { PROFILE_NONE = UINT32_MAX };

typedef struct Profile Profile;
typedef struct Progress Progress;

typedef struct ProfileCounts {
  uint64_t blocks, samples;                       // sampled allocations, their samples
  double objects;                                 // estimated blocks allocated (Σ 1/P(sampled))
  uint64_t major_blocks, major_samples;           // of them born outside the minor heap
  uint64_t promoted_blocks, promoted_samples;     // got a promote event
  uint64_t live_blocks, live_samples;             // not collected (yet): alive now
                                                  // (collected = blocks - live)
  uint64_t at_blocks, at_samples;                 // alive at the --at moment
} ProfileCounts;

// The frame codes of the nodes the profile adds itself (trace frame codes
// are below 2^62): where a stack's frames past a limit are left out.
#define PROFILE_CODE_CUT_NODES UINT64_MAX        // past PROFILE_MAX_NODES (the tools')
#define PROFILE_CODE_CUT_FRAMES (UINT64_MAX - 1) // past the reader's TRACE_READER_MAX_FRAMES

typedef struct ProfileSite {
  TraceReaderLocation loc;  // the innermost location (strings: the reader's); function "" if none
  bool located;             // false: the code has no location ("$code")
  uint64_t code;            // the leaf code it was first seen with
  uint64_t key_site, key_function, key_file;   // stable keys
  ProfileCounts counts;     // summed over its stacks (updated with them)
} ProfileSite;

// Lifetime histograms (per site, ProfileOptions.lifetimes): weights are
// samples (so quantiles are of words allocated); bucket PROFILE_HIST_ALIVE
// holds the blocks alive at the end (lifetime unknown, longer than observed).
enum {
  PROFILE_HIST_SUB = 4,                                  // buckets per octave
  PROFILE_HIST_ALIVE = 4 + 62 * PROFILE_HIST_SUB,        // index of "alive at end"
  PROFILE_HIST_BUCKETS = PROFILE_HIST_ALIVE + 1,
};
typedef struct ProfileLifetimes {
  uint64_t time_us[PROFILE_HIST_BUCKETS];     // lifetime in µs
  uint64_t clock[PROFILE_HIST_BUCKETS];       // lifetime in samples of the allocation clock
  uint64_t died_young_blocks, died_young_samples;  // born minor, collected unpromoted
} ProfileLifetimes;

// A sampled block without a collect event, as profile_finish reports it.
typedef struct ProfileSurvivor {
  uint64_t id;             // allocation id
  uint64_t samples;
  uint64_t birth_us;
  uint64_t birth_clock;    // the allocation clock before its own samples
  uint32_t stack;          // ProfileStackId
} ProfileSurvivor;

typedef struct ProfileOptions {
  // Allocations only: promotions and collections are counted in the summary
  // and otherwise ignored, no block enters the live table, and every live,
  // promoted and --at counter stays 0. For a reader of allocated counts
  // alone (top, flamegraph and diff of bytes allocated): about a quarter
  // less time. Ignored with lifetimes, windows or at_set, which need the
  // blocks' deaths.
  bool allocations_only;
  bool lifetimes;         // keep ProfileLifetimes per site
  uint32_t windows;       // K leak windows (0: none); needs clock_total
  uint64_t clock_total;   // samples of all allocations of the trace (0: no windows)
  bool at_set;            // snapshot live counts at at_us (else at_* = live at the end)
  uint64_t at_us;         // µs since the trace's start
  // Called by profile_event before it applies each event (NULL: none): the
  // profile then holds exactly the events before `ev` (timeline series).
  void (*before_event)(void *ctx, const Profile *p, const TraceEvent *ev);
  void *hook_ctx;
  // Called by profile_finish once for each sampled block never collected
  // (NULL: none), in no particular order: what the end state (end_state.h)
  // is matched against. Not called with allocations_only.
  void (*on_survivor)(void *ctx, const ProfileSurvivor *s);
  void *survivor_ctx;
  // The blocks whose births (time, allocation clock) on_survivor and
  // profile_live_block must give: these ids (increasing, borrowed until
  // profile_finish returns), the others' read as 0. NULL: every block's. With
  // on_survivor, without lifetimes and windows, the live table then takes 16
  // bytes a block instead of 32, and the births 24 bytes an id listed.
  const uint64_t *birth_ids;
  uint64_t n_birth_ids;
} ProfileOptions;


// What grouping a key or a row is by.
typedef enum ProfileBy { PROFILE_BY_SITE, PROFILE_BY_FUNCTION, PROFILE_BY_FILE, PROFILE_BY_STACK } ProfileBy;

// ---------------------------------------------------------------- building

// NULL when out of memory. `r` is borrowed (see Ownership).
Profile *profile_new(TraceReader *r, const ProfileOptions *opts);
void profile_free(Profile *p);

// Applies one event read from the profile's reader (the caller's loop).
void profile_event(Profile *p, const TraceEvent *ev);

// Reads and applies events until the reader has no more (END), or an error
// (ERROR: trace_reader_error says what; the events before it are applied).
// `progress` may be NULL. In follow mode END means "no more for now".
TraceReaderStatus profile_read(Profile *p, Progress *progress);

// Once, after the last event: takes the --at snapshot if the trace ended
// before it, closes the last leak window, adds the blocks still alive to the
// lifetime histograms (bucket ALIVE) and the windows, then frees what only
// reading needed (the live table, the trie's indexes): later events are
// ignored; nodes, stacks, sites and their counters stay.
void profile_finish(Profile *p);

// False once an allocation failed (the profile is then incomplete; the tools
// report "out of memory").
bool profile_ok(const Profile *p);

// Distinct callstack nodes (a frame under a given caller) a profile holds at
// most: 20 bytes each while reading, but the folded outputs built from them
// (flamegraph, pprof, report) take up to about 200 bytes a node, and the
// limit keeps them under 500 MB on any trace under 1 MB (bench/
// hostile_traces.c's deep-fan.ctf reaches it from 978 KB; at 2^22 nodes
// flamegraph took 774 MB there). Past it, the nodes "(frames left out:
// ...)" (header: memory), at most one per node and PROFILE_MAX_CUT_NODES in
// all, then one under the root: the trace is still read to its end.
enum { PROFILE_MAX_NODES = 1u << 21, PROFILE_MAX_CUT_NODES = 1u << 20 };

// What limits left out: the allocations counted under a "(frames left
// out: ...)" node for the tools' node limit, and their samples, with the
// byte offset of the first; the allocations the reader cut
// (TraceReaderStats.cut_backtraces) are the reader's to say.
typedef struct ProfileCut {
  uint64_t allocs, samples;
  uint64_t first_offset;
} ProfileCut;
const ProfileCut *profile_cut(const Profile *p);

// Why profile_read stopped with TRACE_READER_ERROR: the reader's error.
const char *profile_error(const Profile *p);

// ---------------------------------------------------------------- reading

const TraceReader *profile_reader(const Profile *p);
double profile_rate(const Profile *p);           // λ
uint32_t profile_word_bytes(const Profile *p);   // 8 for 64-bit words
double profile_sample_bytes(const Profile *p);   // word bytes / λ

// An empty tally of this profile's scale, and one holding `samples`.
Tally profile_tally(const Profile *p, uint64_t samples);

uint32_t profile_n_nodes(const Profile *p);
uint32_t profile_n_stacks(const Profile *p);
uint32_t profile_n_sites(const Profile *p);
// A node's parent (PROFILE_NONE for the root, node 0), its frame code
// (meaningless for the root; PROFILE_CODE_CUT_* for the nodes of what was
// left out), and its stack (PROFILE_NONE unless an allocation ended there).
ProfileNodeId profile_node_parent(const Profile *p, ProfileNodeId id);
uint64_t profile_node_code(const Profile *p, ProfileNodeId id);
ProfileStackId profile_node_stack(const Profile *p, ProfileNodeId id);
// A stack's leaf node, its site, and its counters (by value: per stack they
// are kept in columns, absent while zero). major_* are kept per site and
// in the totals, not per stack: 0 here.
ProfileNodeId profile_stack_leaf(const Profile *p, ProfileStackId id);
ProfileSiteId profile_stack_site(const Profile *p, ProfileStackId id);
ProfileCounts profile_stack_counts(const Profile *p, ProfileStackId id);
const ProfileSite *profile_site(const Profile *p, ProfileSiteId id);

// The sums over every stack.
const ProfileCounts *profile_totals(const Profile *p);

// NULL when not kept or the site had no collected or surviving block.
const ProfileLifetimes *profile_site_lifetimes(const Profile *p, ProfileSiteId id);

// The site's leak matrix ((K + 2) × (K + 2) sample counts, see the header),
// or NULL when none of its blocks lived through a checkpoint.
const uint64_t *profile_site_windows(const Profile *p, ProfileSiteId id);
uint32_t profile_windows(const Profile *p);   // K (0: none)
// µs, and the allocation clock (samples), at checkpoint k (1..K) (valid
// after profile_finish).
uint64_t profile_checkpoint_time(const Profile *p, uint32_t k);
uint64_t profile_checkpoint_clock(const Profile *p, uint32_t k);

// How far the trace proves anything about old blocks: the time of the last
// major collection seen (old blocks alive after it may be garbage that the
// next one would reclaim), or the end of the trace when none was seen (then
// only promotions prove anything). LIVE's windows past it undercount.
uint64_t profile_proof_horizon(const Profile *p);
// Major collections seen (episodes of old blocks' collect events).
uint64_t profile_major_collections(const Profile *p);

// The sampled block of allocation `id` if it is in the live set now (read
// and not collected; while reading, before profile_finish), as a
// ProfileSurvivor. False otherwise, and always with allocations_only.
bool profile_live_block(const Profile *p, uint64_t id, ProfileSurvivor *out);

// Events and time read so far.
typedef struct ProfileSummary {
  uint64_t allocs, promotes, collects;
  uint64_t unknown_ids;          // promote/collect of an id not in the live table
  uint64_t first_us, last_us;    // dtime of the first and last events (0 if none)
  uint64_t clock;                // the allocation clock: samples of every allocation
  bool at_taken;                 // the --at snapshot was taken inside the trace
  uint64_t minor_heap_words;     // from the runtime params (Minnow's minor_words=,
                                 // OCaml's s=); 0 when unknown
} ProfileSummary;
const ProfileSummary *profile_summary(const Profile *p);

// The stable key of a stack for a grouping (by stack: the hash of its
// frames' locations, root to leaf: O(depth); profile_group keys every
// stack in one pass over the nodes).
uint64_t profile_stack_key(const Profile *p, ProfileStackId s, ProfileBy by);

// The key a located site (one whose innermost location is *l) has for a
// grouping by site, function or file (PROFILE_BY_STACK: as by site): what
// rows are keyed by, so that something naming a location outside the trace
// (a pretenuring decision) finds its row. A site without location has a
// key of its code instead.
uint64_t profile_location_key(const TraceReaderLocation *l, ProfileBy by);

// The locations of a node's code: as trace_reader_locations; a node of
// what a limit left out has one, its function naming the limit.
int profile_node_locations(const Profile *p, ProfileNodeId n, const TraceReaderLocation **locs);

// Lifetime histogram bucket of a value, and the value a bucket stands for
// (the middle of its range: within 12.5 % of any value in it; buckets 0-3
// are exact; infinity for ALIVE).
uint32_t profile_hist_bucket(uint64_t v);
double profile_hist_value(uint32_t bucket);

// ---------------------------------------------------------------- groups

// Stacks grouped by a key: rows with summed counts. `first` is the group's
// stack with the most samples (its callstack names the group in reports).
// Site, function and file rows sum the sites' counters; stack rows (usually
// one stack each) are summed when asked, so that they take 16 bytes a row
// and 8 a stack, not a copy of each stack's counters.
typedef struct ProfileGroup {
  uint64_t key;
  ProfileStackId first;
  uint32_t n_stacks;
} ProfileGroup;

typedef struct ProfileGroups {
  ProfileBy by;
  ProfileGroup *rows;
  uint32_t n;
  uint32_t *of_stack;   // stack id -> row index
  uint32_t *of_site;    // site id -> row index (PROFILE_NONE when by stack)
  ProfileCounts *counts;  // per row (not by stack)
  uint32_t *next;       // by stack: the row's next stack after this one (PROFILE_NONE: the last)
  uint32_t *head;       // by stack: per row, its first stack
} ProfileGroups;

// NULL when out of memory. Rows in order of first appearance.
ProfileGroups *profile_group(const Profile *p, ProfileBy by);
void profile_groups_free(ProfileGroups *g);

// A row's summed counts.
ProfileCounts profile_group_counts(const Profile *p, const ProfileGroups *g, uint32_t row);

// ---------------------------------------------------------------- counts

// Sums b into a.
void profile_counts_add(ProfileCounts *a, const ProfileCounts *b);

#endif
