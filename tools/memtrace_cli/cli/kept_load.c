// kept_load.c - loading a trace with its snapshots (kept_load.h).
#include "kept_load.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool kept_parse_pick(const char *text, SnapPick *out) {
  *out = (SnapPick){.set = true};
  if (strcmp(text, "end") == 0) return out->end = true;
  size_t digits = strspn(text, "0123456789");
  if (digits && !text[digits] && digits < 20) {
    out->number = strtoull(text, NULL, 10);
    return true;
  }
  ToolOption o = {"--at", "N", &out->at, NULL, NULL, 0, 0};
  if (!load_parse_at(&o, text)) return false;
  out->by_time = true;
  return true;
}

bool kept_parse_at(const ToolOption *o, const char *text) { return kept_parse_pick(text, o->target); }

int64_t kept_pick(const Snapshots *s, const Profile *p, const SnapPick *pick, char *err, size_t err_len) {
  err[0] = 0;
  if (s->status != SNAPSHOTS_PRESENT) {
    snprintf(err, err_len, "%s", s->why);
    return -1;
  }
  if (!pick || !pick->set) return snapshots_default(s);
  if (pick->end) {
    if (s->end_state < 0) snprintf(err, err_len, "%s holds no usable end state", s->file);
    return s->end_state;
  }
  if (!pick->by_time) {
    for (uint32_t k = 0; k < s->n_snaps; k++) {
      if (s->snaps[k].s->number != pick->number) continue;
      if (s->snaps[k].usable) return k;
      snprintf(err, err_len, "snapshot %" PRIu64 " is not usable: %s", pick->number, s->snaps[k].why);
      return -1;
    }
    snprintf(err, err_len, "%s holds no whole snapshot %" PRIu64 " (%u whole: 0 to %u)", s->file, pick->number,
             s->n_snaps, s->n_snaps ? s->n_snaps - 1 : 0);
    return -1;
  }
  double us = pick->at.percent ? (double)profile_summary(p)->last_us * pick->at.value / 100 : pick->at.value;
  int64_t best = -1;
  for (uint32_t k = 0; k < s->n_snaps; k++)
    if (s->snaps[k].usable && (double)snapshots_time(s, k) <= us) best = k;
  if (best < 0) {
    char a[OUT_TEXT_MAX];
    snprintf(err, err_len, "no usable snapshot was taken by %s", out_duration(a, us));
  }
  return best;
}

int kept_load(const ToolUsage *usage, const char *path, const char *retain, ProfileOptions *opts, const AtTime *at,
              Loaded *l, Snapshots *s) {
  snapshots_watch(s, path, retain, opts);
  if (load_trace(usage, path, opts, at, l) != 0) {
    snapshots_free(s);
    return 1;
  }
  snapshots_load(s, l->profile, l->partial);
  return 0;
}

void kept_print_snapshot(FILE *f, const Snapshots *s, uint32_t k) {
  const Snapshot *snap = s->snaps[k].s;
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX];
  fprintf(f, "snapshot %" PRIu64 " (%s, at %s): ", snap->number,
          snap->trigger == RETAIN_TRIGGER_END ? "the end state" : retain_trigger_name(snap->trigger),
          out_duration(a, (double)snapshots_time(s, k)));
  if (!(snap->end.flags & RETAIN_COLLECTED)) {
    fprintf(f, "no collection (%s)", *snap->end.reason ? snap->end.reason : "no reason given");
  } else {
    fprintf(f, "%" PRIu64 " sampled blocks alive, %" PRIu64 " paths", snap->end.live_samples, snap->paths);
    if (*snap->end.reason) fprintf(f, " (%s)", snap->end.reason);
    fprintf(f, "; a collection reaching %" PRIu64 " blocks, pause %s (paths %s)", snap->end.marked_blocks,
            out_duration(a, (double)snap->end.pause_us), out_duration(b, (double)snap->end.paths_us));
  }
  if (!s->snaps[k].usable) fprintf(f, "; not usable: %s", s->snaps[k].why);
  fputc('\n', f);
}

void kept_print_snapshots(FILE *f, const Snapshots *s, int64_t k) {
  switch (s->status) {
    case SNAPSHOTS_PRESENT:
      fprintf(f, "snapshots: %s: %u whole, %u usable, %s", s->file, s->n_snaps, s->n_usable,
              s->end_state >= 0 ? "the end state last" : "no end state (the run was killed, or is still running)");
      if (*s->tail) fprintf(f, "; %s", s->tail);
      fputc('\n', f);
      if (k >= 0) kept_print_snapshot(f, s, (uint32_t)k);
      break;
    case SNAPSHOTS_ABSENT: fprintf(f, "no snapshot: %s\n", s->why); break;
    case SNAPSHOTS_DAMAGED: fprintf(f, "snapshots unusable: %s\n", s->why); break;
  }
}

void kept_json_snapshots(Json *j, const Snapshots *s, int64_t shown) {
  json_object(j, "snapshots");
  json_string(j, "status", snapshots_status_name(s->status));
  if (*s->file) json_string(j, "file", s->file);
  else json_null(j, "file");
  if (s->status != SNAPSHOTS_PRESENT) json_string(j, "why", s->why);
  if (s->status == SNAPSHOTS_ABSENT) json_string(j, "fix", s->fix);
  if (*s->tail) json_string(j, "tail", s->tail);
  if (s->end_state >= 0) json_uint(j, "end_state", s->snaps[s->end_state].s->number);
  else json_null(j, "end_state");
  if (shown >= 0) json_uint(j, "shown", s->snaps[shown].s->number);
  else json_null(j, "shown");
  json_array(j, "list");
  for (uint32_t k = 0; k < s->n_snaps; k++) {
    const Snapshot *snap = s->snaps[k].s;
    json_object(j, NULL);
    json_uint(j, "number", snap->number);
    json_string(j, "trigger", retain_trigger_name(snap->trigger));
    json_number(j, "time_s", (double)snapshots_time(s, k) / 1e6);
    json_uint(j, "alloc_count", snap->alloc_count);
    json_bool(j, "usable", s->snaps[k].usable);
    if (!s->snaps[k].usable) json_string(j, "why", s->snaps[k].why);
    json_bool(j, "collected", (snap->end.flags & RETAIN_COLLECTED) != 0);
    json_bool(j, "every_path", (snap->end.flags & RETAIN_PATHS) != 0);
    json_uint(j, "live_samples", snap->end.live_samples);
    json_uint(j, "paths", snap->paths);
    json_uint(j, "marked_blocks", snap->end.marked_blocks);
    json_uint(j, "marked_words", snap->end.marked_words);
    json_uint(j, "heap_words", snap->end.heap_words);
    json_number(j, "pause_s", (double)snap->end.pause_us / 1e6);
    json_number(j, "paths_s", (double)snap->end.paths_us / 1e6);
    json_string(j, "reason", snap->end.reason);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

int kept_close(const ToolUsage *usage, Loaded *l, Snapshots *s) {
  int status = 0;
  if (s->status == SNAPSHOTS_DAMAGED) {
    fprintf(stderr, "memtrace %s: %s\n", usage->name, s->why);
    status = 1;
  }
  snapshots_free(s);
  status |= load_status(usage, l);
  load_close(l);
  return status;
}
