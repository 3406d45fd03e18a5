// live_series.c - live heap series and their bands (live_series.h).
#include "live_series.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/xalloc.h"
#include "output.h"

// ---------------------------------------------------------------- series

void live_series_init(LiveSeries *s, uint32_t max_points) {
  *s = (LiveSeries){.max_points = max_points, .interval_us = 1};
  s->times_us = xcalloc(max_points, sizeof *s->times_us);
  s->total = xcalloc(max_points, sizeof *s->total);
  s->floor_us = xcalloc(max_points, sizeof *s->floor_us);
  s->floor_live = xcalloc(max_points, sizeof *s->floor_live);
  s->floor_stride = 1;
}

void live_series_free(LiveSeries *s) {
  for (uint32_t i = 0; i < s->n_sites; i++) free(s->of_site[i]);
  free(s->of_site);
  free(s->times_us);
  free(s->total);
  free(s->floor_us);
  free(s->floor_live);
  *s = (LiveSeries){0};
}

// Keeps the points of even index (times 0, 2Δ, 4Δ, ...) and doubles Δ.
static void halve(LiveSeries *s) {
  uint32_t kept = (s->n_points + 1) / 2;
  for (uint32_t k = 0; k < kept; k++) {
    s->times_us[k] = s->times_us[2 * k];
    s->total[k] = s->total[2 * k];
    for (uint32_t i = 0; i < s->n_sites; i++)
      if (s->of_site[i]) s->of_site[i][k] = s->of_site[i][2 * k];
  }
  s->n_points = kept;
  s->interval_us *= 2;
  s->next_us = kept * s->interval_us;
}

static void record(LiveSeries *s, const Profile *p, double time_us) {
  if (s->n_points == s->max_points) halve(s);
  uint32_t n_sites = profile_n_sites(p), k = s->n_points++;
  if (n_sites > s->n_sites) {
    s->of_site = realloc(s->of_site, n_sites * sizeof *s->of_site);
    if (!s->of_site) xalloc_fail();
    memset(s->of_site + s->n_sites, 0, (n_sites - s->n_sites) * sizeof *s->of_site);
    s->n_sites = n_sites;
  }
  for (ProfileSiteId i = 0; i < n_sites; i++) {
    uint64_t live = profile_site(p, i)->counts.live_samples;
    if (live && !s->of_site[i]) s->of_site[i] = xcalloc(s->max_points, sizeof **s->of_site);
    if (s->of_site[i]) s->of_site[i][k] = (double)live;
  }
  s->times_us[k] = time_us;
  s->total[k] = (double)profile_totals(p)->live_samples;
}

// Part 4: the floor after major collection number `seen` (from 1), at t.
static void record_floor(LiveSeries *s, const Profile *p, double t) {
  uint64_t n = profile_major_collections(p);
  if (n == s->collections_seen) return;
  s->collections_seen = n;
  if ((n - 1) % s->floor_stride != 0) return;
  if (s->n_floors == s->max_points) {
    uint32_t kept = (s->n_floors + 1) / 2;
    for (uint32_t k = 0; k < kept; k++) {
      s->floor_us[k] = s->floor_us[2 * k];
      s->floor_live[k] = s->floor_live[2 * k];
    }
    s->n_floors = kept;
    s->floor_stride *= 2;
    if ((n - 1) % s->floor_stride != 0) return;
  }
  s->floor_us[s->n_floors] = t;
  s->floor_live[s->n_floors++] = (double)profile_totals(p)->live_samples;
}

void live_series_hook(void *series, const Profile *p, const TraceEvent *ev) {
  LiveSeries *s = series;
  if (ev->kind == TRACE_EVENT_ALLOC) record_floor(s, p, (double)ev->dtime_us);
  while ((double)ev->dtime_us > s->next_us) {
    double t = s->next_us;
    record(s, p, t);  // may halve: Δ and next_us change
    if (s->next_us <= t) s->next_us = t + s->interval_us;
  }
}

void live_series_end(LiveSeries *s, const Profile *p) {
  double last = (double)profile_summary(p)->last_us;
  record_floor(s, p, last);
  if (s->n_points == 0 || s->times_us[s->n_points - 1] < last) record(s, p, last);
}

uint32_t live_series_peak(const LiveSeries *s) {
  uint32_t best = 0;
  for (uint32_t k = 1; k < s->n_points; k++)
    if (s->total[k] > s->total[best]) best = k;
  return best;
}

// ---------------------------------------------------------------- bands

static char *group_name(const Profile *p, ProfileBy by, ProfileStackId first) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) xalloc_fail();
  out_group_key(f, p, by, first);
  if (fclose(f) != 0 || !text) xalloc_fail();
  return text;
}

// Sums the site series into one per group: [n_groups][n_points], bytes.
static double *group_series(const LiveSeries *s, const ProfileGroups *g, double bytes) {
  double *v = xcalloc((size_t)g->n * s->n_points, sizeof *v);
  for (uint32_t i = 0; i < s->n_sites; i++) {
    if (!s->of_site[i] || g->of_site[i] == PROFILE_NONE) continue;
    double *row = v + (size_t)g->of_site[i] * s->n_points;
    for (uint32_t k = 0; k < s->n_points; k++) row[k] += s->of_site[i][k] * bytes;
  }
  return v;
}

// The groups of highest peak (ties: first appearance), at most n of them
// and only groups live at some point; *count says how many.
static uint32_t *top_groups(const double *v, uint32_t n_groups, uint32_t n_points, uint32_t n, uint32_t *count) {
  double *peak = xcalloc(n_groups, sizeof *peak);
  for (uint32_t g = 0; g < n_groups; g++)
    for (uint32_t k = 0; k < n_points; k++)
      if (v[(size_t)g * n_points + k] > peak[g]) peak[g] = v[(size_t)g * n_points + k];
  uint32_t *order = xcalloc(n, sizeof *order);
  bool *taken = xcalloc(n_groups, sizeof *taken);
  for (*count = 0; *count < n; ++*count) {  // n is small (--top): selection, O(n × groups)
    uint32_t best = UINT32_MAX;
    for (uint32_t g = 0; g < n_groups; g++)
      if (!taken[g] && peak[g] > 0 && (best == UINT32_MAX || peak[g] > peak[best])) best = g;
    if (best == UINT32_MAX) break;
    taken[best] = true;
    order[*count] = best;
  }
  free(peak);
  free(taken);
  return order;
}

static void fill(LiveBands *b, const LiveSeries *s, const double *v, const uint32_t *order, double bytes) {
  uint32_t width = b->n_top + 1;
  for (uint32_t k = 0; k < s->n_points; k++) {
    double rest = s->total[k] * bytes;
    b->x_s[k] = s->times_us[k] / 1e6;
    for (uint32_t t = 0; t < b->n_top; t++) {
      double y = v[(size_t)order[t] * s->n_points + k];
      b->y[(size_t)k * width + t] = y;
      rest -= y;
    }
    b->y[(size_t)k * width + b->n_top] = rest > 0 ? rest : 0;  // float sums: never below 0
  }
}

void live_bands_make(LiveBands *b, const Profile *p, const LiveSeries *s, ProfileBy by, uint32_t top) {
  double bytes = profile_sample_bytes(p);
  ProfileGroups *g = profile_group(p, by);
  if (!g) xalloc_fail();
  double *v = group_series(s, g, bytes);
  *b = (LiveBands){0, s->n_points, xcalloc(s->n_points, sizeof(double)), NULL, NULL};
  uint32_t *order = top_groups(v, g->n, s->n_points, top < g->n ? top : g->n, &b->n_top);
  b->y = xcalloc((size_t)s->n_points * (b->n_top + 1), sizeof *b->y);
  b->names = xcalloc(b->n_top + 1, sizeof *b->names);
  for (uint32_t t = 0; t < b->n_top; t++) b->names[t] = group_name(p, by, g->rows[order[t]].first);
  if (!(b->names[b->n_top] = strdup("rest"))) xalloc_fail();
  fill(b, s, v, order, bytes);
  free(order);
  free(v);
  profile_groups_free(g);
}

void live_bands_free(LiveBands *b) {
  for (uint32_t t = 0; b->names && t <= b->n_top; t++) free(b->names[t]);
  free(b->names);
  free(b->x_s);
  free(b->y);
  *b = (LiveBands){0};
}
