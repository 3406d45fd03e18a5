// live_series.h - the estimated live heap over time, per site, recorded
// while a profile (profile.h) takes a trace in, then grouped into the bands
// of a stacked chart: the top N groups by peak, and the rest. Used by
// `memtrace timeline` (CSV, gnuplot) and `memtrace report` (inline SVG).
//
// Contract
// 1. Points are at times k × Δ µs since the trace's start; the point at t
//    holds the events of times <= t (live_series_hook runs before each
//    event, so it records the points due before it). At most max_points are
//    kept: when full, every other point is dropped and Δ doubles (Δ starts
//    at 1 µs), so a trace of any length ends with between max_points / 2 and
//    max_points evenly spaced points, plus one at its last event
//    (live_series_end).
// 2. Values are live samples (exact integers in doubles up to 2^53); bands
//    convert them to bytes (× profile_sample_bytes). A band's rest is the
//    total live minus the top groups', never below 0.
// 3. Memory: max_points doubles per site live at some point, and four arrays
//    of max_points. Out of memory exits (status 1, message on stderr).
// 4. Floors: the total live samples right after each major collection the
//    trace shows (profile.h: a run of collect events of old blocks), taken
//    at the first allocation after the run (so the minor collection's deaths
//    that come with it are in), stamped with that allocation's time. What a
//    collection cannot free stays under every floor: a leak shows as floors
//    that climb, uncollected garbage only between them. At most max_points
//    are kept: when full, every other floor is dropped (the first kept).
#ifndef MINNOW_MEMTRACE_LIVE_SERIES_H
#define MINNOW_MEMTRACE_LIVE_SERIES_H

#include <stdint.h>

#include "profile.h"

typedef struct LiveSeries {
  uint32_t max_points, n_points;
  double interval_us;   // Δ
  double next_us;       // the time of the next point
  double *times_us;     // [max_points]
  double *total;        // [max_points]: live samples of every site
  double **of_site;     // per site: NULL, or [max_points] live samples
  uint32_t n_sites;
  // part 4
  double *floor_us, *floor_live;   // [max_points]
  uint32_t n_floors;
  uint32_t floor_stride;           // a floor kept every floor_stride collections
  uint64_t collections_seen;       // major collections counted into the floors
} LiveSeries;

// max_points even, >= 4.
void live_series_init(LiveSeries *s, uint32_t max_points);
void live_series_free(LiveSeries *s);

// ProfileOptions.before_event with hook_ctx = the series.
void live_series_hook(void *series, const Profile *p, const TraceEvent *ev);

// After profile_finish: the point at the last event, unless one is there.
void live_series_end(LiveSeries *s, const Profile *p);

// The point of largest total: its index (0 when there is none).
uint32_t live_series_peak(const LiveSeries *s);

// The chart's data: y[k * (n_top + 1) + b] bytes of band b at point k, b <
// n_top the top groups (highest peak first), then the rest; names[b] their
// labels (out_group_key's text, "rest" last).
typedef struct LiveBands {
  uint32_t n_top, n_points;
  double *x_s;       // [n_points] seconds since the trace's start
  double *y;         // [n_points][n_top + 1] bytes
  char **names;      // [n_top + 1]
} LiveBands;

// by: site, function or file; top: at most that many bands of their own.
void live_bands_make(LiveBands *b, const Profile *p, const LiveSeries *s, ProfileBy by, uint32_t top);
void live_bands_free(LiveBands *b);

#endif
