// end_state.c - finding, reading and checking a trace's end state
// (end_state.h).
#include "end_state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/xalloc.h"

static void on_survivor(void *ctx, const ProfileSurvivor *s) {
  EndState *es = ctx;
  if (es->n_survivors == es->cap_survivors) {
    es->cap_survivors = es->cap_survivors ? 2 * es->cap_survivors : 256;
    es->survivors = xrealloc(es->survivors, es->cap_survivors * sizeof *es->survivors);
  }
  es->survivors[es->n_survivors++] = *s;
}

void end_state_watch(EndState *es, ProfileOptions *opts) {
  memset(es, 0, sizeof *es);
  es->status = END_STATE_ABSENT;
  opts->on_survivor = on_survivor;
  opts->survivor_ctx = es;
}

static int by_id(const void *a, const void *b) {
  uint64_t x = ((const ProfileSurvivor *)a)->id, y = ((const ProfileSurvivor *)b)->id;
  return x < y ? -1 : x > y;
}

const ProfileSurvivor *end_state_survivor(const EndState *es, uint64_t id) {
  ProfileSurvivor key = {.id = id};
  return es->n_survivors ? bsearch(&key, es->survivors, es->n_survivors, sizeof key, by_id) : NULL;
}

const char *end_state_status_name(EndStateStatus s) {
  return s == END_STATE_PRESENT ? "present" : s == END_STATE_ABSENT ? "absent" : "damaged";
}

static void absent(EndState *es, const char *fix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void absent(EndState *es, const char *fix, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(es->why, sizeof es->why, fmt, ap);
  va_end(ap);
  snprintf(es->fix, sizeof es->fix, "%s", fix);
  es->status = END_STATE_ABSENT;
}

static void damaged(EndState *es, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void damaged(EndState *es, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(es->why, sizeof es->why, fmt, ap);
  va_end(ap);
  es->status = END_STATE_DAMAGED;
  es->paths = false;
}

static const char *const RERUN =
    "run the program to its end under ./vm --memtrace (without --memtrace-no-end-state) and keep "
    "T.retain beside the trace T, or name it with --retain FILE";

// True unless the trace is Minnow's (its runtime params name the VM): OCaml's
// memtrace writes no end state.
static bool ocaml_trace(const TraceReaderInfo *info) {
  return strstr(info->runtime_params, "vm=minnow") == NULL;
}

bool end_state_open(EndState *es, const char *trace, const char *retain, const TraceReaderInfo *info,
                    uint64_t allocs, bool partial) {
  if (!retain && strcmp(trace, "-") == 0) {
    absent(es, "give the end state with --retain FILE", "the trace comes from standard input: no end state beside it");
    return false;
  }
  if (retain) snprintf(es->file, sizeof es->file, "%s", retain);
  else snprintf(es->file, sizeof es->file, "%s%s", trace, RETAIN_SUFFIX);
  struct stat st;
  if (stat(es->file, &st) != 0) {
    int e = errno;
    if (retain)  // named by the user: a typo must not read as "no end state"
      damaged(es, "--retain %s: %s", es->file, strerror(e));
    else if (partial)
      absent(es, RERUN,
             "no %s (%s) and the trace stops at damage: the run was killed or the file cut before the end state",
             es->file, strerror(e));
    else if (ocaml_trace(info))
      absent(es, "record the program with ./vm --memtrace to get an end state",
             "no %s (%s): the trace looks like one of OCaml's memtrace, which writes no end state", es->file,
             strerror(e));
    else
      absent(es, RERUN,
             "no %s (%s): the run was killed before its end (SIGKILL), or the file was not copied with the trace",
             es->file, strerror(e));
    return false;
  }
  char err[512];
  if (!retain_read(es->file, &es->retain, err, sizeof err)) {
    damaged(es, "%s", err);
    return false;
  }
  es->loaded = true;
  const RetainHeader *h = &es->retain.header;
  if (h->pid != info->pid || h->start_time_us != info->start_time_us) {
    damaged(es, "%s: belongs to another trace (pid %" PRIu64 ", started at %" PRIu64 " us; this trace: pid %" PRIu64
                ", %" PRIu64 " us)", es->file, h->pid, h->start_time_us, info->pid, info->start_time_us);
    return false;
  }
  if (partial) {
    absent(es, RERUN, "the trace stops at damage: its survivors are not the end state's (%s)", es->file);
    return false;
  }
  if (!(h->flags & RETAIN_FINAL_GC)) {
    absent(es, RERUN, "%s: the run ended without a final collection (%s)", es->file,
           *h->reason ? h->reason : "no reason given");
    return false;
  }
  if (h->alloc_count != allocs) {
    damaged(es, "%s: made for a trace of %" PRIu64 " allocations; this one has %" PRIu64, es->file, h->alloc_count,
            allocs);
    return false;
  }
  es->status = END_STATE_PRESENT;
  es->paths = (h->flags & RETAIN_PATHS) != 0;
  if (!es->paths)
    snprintf(es->why, sizeof es->why, "%.600s: no paths (%.300s)", es->file, *h->reason ? h->reason : "no reason given");
  return true;
}

void end_state_load(EndState *es, const char *trace, const char *retain, const Profile *p, bool partial) {
  if (es->n_survivors) qsort(es->survivors, es->n_survivors, sizeof *es->survivors, by_id);
  const TraceReaderInfo *info = trace_reader_info(profile_reader(p));
  if (!end_state_open(es, trace, retain, info, profile_summary(p)->allocs, partial)) return;
  const RetainHeader *h = &es->retain.header;
  if (h->live_samples != es->n_survivors) {
    damaged(es, "%s: says %" PRIu64 " sampled blocks alive at the end; the trace leaves %" PRIu64 " uncollected",
            es->file, h->live_samples, es->n_survivors);
    return;
  }
  for (uint64_t i = 0; i < es->retain.path_count; i++)
    if (!end_state_survivor(es, es->retain.paths[i].alloc_id)) {
      damaged(es, "%s: path %" PRIu64 " is of allocation %" PRIu64 ", which the trace collects", es->file, i,
              es->retain.paths[i].alloc_id);
      return;
    }
}

void end_state_free(EndState *es) {
  if (es->loaded) retain_file_free(&es->retain);
  free(es->survivors);
  es->loaded = false;
  es->survivors = NULL;
  es->n_survivors = es->cap_survivors = 0;
}
