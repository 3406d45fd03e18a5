// info.c - `memtrace info FILE`: the trace's header (trace info), its
// events counted by kind and source, duration, sampling rate, backtrace
// depths, and where its bytes go, per sample (README.md shows the layout);
// then its snapshot file: the snapshots, and the pretenuring decisions, all
// of them in file order (decisions_show.h).
#include <inttypes.h>
#include <time.h>

#include "../analysis/snapshots.h"
#include "../analysis/output.h"
#include "../cli/decisions_show.h"
#include "../cli/kept_load.h"
#include "../cli/options.h"
#include "commands.h"

static const ToolUsage usage = {
    "info",
    "usage: memtrace info [--retain FILE] [--json] [-o OUT] FILE\n"
    "Summarizes the trace FILE (\"-\": stdin): the recording program, sampling rate,\n"
    "start time and duration, counts of allocations (by source), promotions and\n"
    "collections, backtrace depths, and the bytes of the file split into packet\n"
    "headers, trace info, locations, backtraces and other event bytes, in total and\n"
    "per sample. A damaged trace is summarized up to the damage, then the error is\n"
    "printed on stderr; exit status 1. Then the snapshots (FILE.retain, written by\n"
    "./vm while the program runs and when it ends), one line each: what took it,\n"
    "when, the blocks alive and the paths it holds, its pause; whether the trace\n"
    "reaches it; or why there is none. Then the pretenuring decisions the file\n"
    "holds (./vm --pretenure): when, what, which site, on what evidence. A damaged\n"
    "snapshot file, or one of another trace, is an error (status 1).\n"
    "  --retain FILE  the snapshot file to read (default: FILE.retain)\n"
    "  --json         JSON (schema: tools/memtrace_cli/README.md)\n"
    "  -o OUT         write to OUT instead of stdout\n",
};

typedef struct EventTally {
  uint64_t by_source[3];
  uint64_t frames;  // sum of backtrace lengths
} EventTally;

// A string from the trace, with control characters shown as '?'.
static void print_field(const char *label, const char *s) {
  printf("%-16s", label);
  for (; *s; s++) putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
  putchar('\n');
}

static void print_time(uint64_t us) {
  time_t secs = (time_t)(us / 1000000);
  struct tm tm;
  char text[64];
  if (gmtime_r(&secs, &tm) && strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm))
    printf("%-16s%s.%06u UTC (%" PRIu64 " us since the epoch)\n", "start", text, (unsigned)(us % 1000000), us);
  else
    printf("%-16s%" PRIu64 " us since the epoch\n", "start", us);
}

static void print_header(const char *path, const TraceReaderInfo *info) {
  printf("%-16s%s\n", "file", path);
  printf("%-16smemtrace CTF, version %u\n", "format", info->version);
  print_field("executable", info->executable);
  print_field("host", info->host);
  printf("%-16s%" PRIu64 "\n", "pid", info->pid);
  print_field("runtime params", info->runtime_params);
  print_field("context", *info->context ? info->context : "(none)");
  printf("%-16s%u bits\n", "word size", info->word_size);
  printf("%-16s%g (one sample per %.0f words on average)\n", "sampling rate", info->sample_rate,
         1 / info->sample_rate);
  print_time(info->start_time_us);
}

static double per(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0; }

static void print_counts(const TraceReaderInfo *info, const TraceReaderStats *s, const EventTally *t) {
  uint64_t events = s->allocs + s->promotes + s->collects;
  if (events)
    printf("%-16s%.6f s to the last event (the first at %.6f s)\n", "duration",
           (double)(s->last_time_us - info->start_time_us) / 1e6,
           (double)(s->first_time_us - info->start_time_us) / 1e6);
  else
    printf("%-16s(no events)\n", "duration");
  printf("%-16s%" PRIu64 ": %" PRIu64 " allocations, %" PRIu64 " promotions, %" PRIu64 " collections\n", "events",
         events, s->allocs, s->promotes, s->collects);
  printf("%-16s%" PRIu64 " minor, %" PRIu64 " major, %" PRIu64 " external; %" PRIu64 " samples of %s%" PRIu64
         " words (about %.0f words allocated)\n", "allocations", t->by_source[0], t->by_source[1], t->by_source[2],
         s->samples, s->sampled_words == UINT64_MAX ? "at least " : "",  // saturated: reader.h
         s->sampled_words, (double)s->samples / info->sample_rate);
  printf("%-16sdeepest %" PRIu32 " frames, %.1f on average, %.1f new per allocation\n", "backtraces",
         s->max_backtrace, per(t->frames, s->allocs), per(s->new_frames, s->allocs));
  printf("%-16s%" PRIu64 " codes from %" PRIu64 " location events\n", "locations", s->location_codes,
         s->location_events);
  printf("%-16s%" PRIu64 " (%" PRIu64 " of other processes skipped, %" PRIu64 " bytes)\n", "packets", s->packets,
         s->skipped_packets, s->skipped_bytes);
}

static void print_bytes(const TraceReaderStats *s) {
  printf("%-16s%" PRIu64 ": headers %" PRIu64 ", trace info %" PRIu64 ", locations %" PRIu64 ", backtraces %" PRIu64
         ", events %" PRIu64 "\n", "bytes", s->bytes, s->header_bytes, s->info_bytes, s->location_bytes,
         s->backtrace_bytes, s->event_bytes);
  if (!s->samples) {
    printf("%-16s(no samples)\n", "bytes/sample");
    return;
  }
  printf("%-16s%.2f: headers %.2f, locations %.2f, backtraces %.2f, events %.2f (trace info %.2f)\n",
         "bytes/sample", per(s->bytes, s->samples), per(s->header_bytes, s->samples),
         per(s->location_bytes, s->samples), per(s->backtrace_bytes, s->samples), per(s->event_bytes, s->samples),
         per(s->info_bytes, s->samples));
}

// After the snapshots: every decision, in the order made (nothing when the
// file is not the trace's: the snapshots line said why).
static void print_decisions(const Snapshots *s, uint64_t start_us) {
  const SnapshotReader *r = decisions_reader(s);
  if (!r) return;
  uint32_t n = snapshot_decision_count(r);
  if (!n) {
    printf("%-16snone (pretenuring: ./vm --pretenure)\n", "decisions");
    return;
  }
  printf("%-16s%u pretenuring decision%s\n", "decisions", n, n == 1 ? "" : "s");
  for (uint32_t i = 0; i < n; i++) {
    const SnapshotDecision *x = snapshot_decision(r, i);
    printf("%-16s", "");
    decision_print_site(stdout, x);
    printf(": ");
    decision_print(stdout, x, start_us);
    putchar('\n');
  }
}

static void print_snapshots(const Snapshots *s) {
  if (s->status == SNAPSHOTS_ABSENT && !s->n_snaps) {
    printf("%-16snone: %s\n%-16s%s\n", "snapshots", s->why, "to get some", s->fix);
    return;
  }
  if (s->status == SNAPSHOTS_DAMAGED) {
    printf("%-16sunusable: %s\n", "snapshots", s->why);
    return;
  }
  printf("%-16s%s: %u whole, %u usable, %s\n", "snapshots", s->file, s->n_snaps, s->n_usable,
         s->end_state >= 0 ? "the end state last" : "no end state");
  if (*s->tail) printf("%-16s%s\n", "", s->tail);
  for (uint32_t k = 0; k < s->n_snaps; k++) {
    printf("%-16s", "");
    kept_print_snapshot(stdout, s, k);
  }
}

// The same figures as one JSON document.
static void print_json(const char *path, const TraceReader *r, const TraceReaderStats *s, const EventTally *t,
                       bool partial, const Snapshots *snaps) {
  const TraceReaderInfo *info = trace_reader_info(r);
  uint64_t events = s->allocs + s->promotes + s->collects;
  Json j;
  json_init(&j, stdout);
  json_object(&j, NULL);
  json_string(&j, "command", "info");
  json_string(&j, "file", path);
  json_uint(&j, "format_version", info->version);
  json_string(&j, "executable", info->executable);
  json_string(&j, "host", info->host);
  json_uint(&j, "pid", info->pid);
  json_string(&j, "runtime_params", info->runtime_params);
  json_string(&j, "context", info->context);
  json_uint(&j, "word_bits", info->word_size);
  json_number(&j, "sample_rate", info->sample_rate);
  json_uint(&j, "start_us", info->start_time_us);
  if (events) {
    json_number(&j, "duration_s", (double)(s->last_time_us - info->start_time_us) / 1e6);
    json_number(&j, "first_event_s", (double)(s->first_time_us - info->start_time_us) / 1e6);
  } else {
    json_null(&j, "duration_s");
    json_null(&j, "first_event_s");
  }
  json_object(&j, "events");
  json_uint(&j, "total", events);
  json_uint(&j, "allocations", s->allocs);
  json_uint(&j, "promotions", s->promotes);
  json_uint(&j, "collections", s->collects);
  json_end_object(&j);
  json_object(&j, "allocations");
  json_uint(&j, "minor", t->by_source[0]);
  json_uint(&j, "major", t->by_source[1]);
  json_uint(&j, "external", t->by_source[2]);
  json_uint(&j, "samples", s->samples);
  json_uint(&j, "sampled_words", s->sampled_words);
  json_number(&j, "words_estimate", (double)s->samples / info->sample_rate);
  json_end_object(&j);
  json_object(&j, "backtraces");
  json_uint(&j, "deepest", s->max_backtrace);
  json_number(&j, "mean_depth", per(t->frames, s->allocs));
  json_number(&j, "new_frames_per_allocation", per(s->new_frames, s->allocs));
  json_end_object(&j);
  json_object(&j, "locations");
  json_uint(&j, "codes", s->location_codes);
  json_uint(&j, "events", s->location_events);
  json_end_object(&j);
  json_object(&j, "packets");
  json_uint(&j, "count", s->packets);
  json_uint(&j, "skipped", s->skipped_packets);
  json_uint(&j, "skipped_bytes", s->skipped_bytes);
  json_end_object(&j);
  json_object(&j, "bytes");
  json_uint(&j, "total", s->bytes);
  json_uint(&j, "headers", s->header_bytes);
  json_uint(&j, "trace_info", s->info_bytes);
  json_uint(&j, "locations", s->location_bytes);
  json_uint(&j, "backtraces", s->backtrace_bytes);
  json_uint(&j, "events", s->event_bytes);
  json_end_object(&j);
  json_bool(&j, "partial", partial);
  if (partial) json_string(&j, "error", trace_reader_error(r)->message);
  else json_null(&j, "error");
  kept_json_snapshots(&j, snaps, snapshots_default(snaps));
  json_array(&j, "decisions");
  const SnapshotReader *dr = decisions_reader(snaps);
  for (uint32_t i = 0; dr && i < snapshot_decision_count(dr); i++)
    decision_json(&j, NULL, snapshot_decision(dr, i), info->start_time_us);
  json_end_array(&j);
  json_end_object(&j);
  json_finish(&j);
}

int cmd_info(int argc, char **argv) {
  const char *out_path = NULL;
  const char *retain = NULL;
  bool json = false;
  const ToolOption options[] = {TOOL_OPTION_JSON(&json), TOOL_OPTION_OUTPUT(&out_path),
                                {"--retain", "FILE", &retain, NULL, NULL, 0, 0}};
  ToolArgs args = {&usage, options, 3, 1, 1, NULL, 0};
  TraceReader *r;
  int status = tool_parse_and_open(&args, argc, argv, &out_path, &r);
  if (status != TOOL_CONTINUE) return status;
  const char *path = args.files[0];
  EventTally tally = {{0}, 0};
  TraceEvent ev;
  TraceReaderStatus s;
  while ((s = trace_reader_next(r, &ev)) == TRACE_READER_EVENT) {
    if (ev.kind != TRACE_EVENT_ALLOC) continue;
    tally.by_source[ev.source]++;
    tally.frames += ev.backtrace_len;
  }
  TraceReaderStats stats;
  trace_reader_stats(r, &stats);
  Snapshots snaps;
  snapshots_check(&snaps, path, retain, trace_reader_info(r), stats.allocs, s == TRACE_READER_ERROR);
  if (json) {
    print_json(path, r, &stats, &tally, s == TRACE_READER_ERROR, &snaps);
  } else {
    print_header(path, trace_reader_info(r));
    print_counts(trace_reader_info(r), &stats, &tally);
    print_bytes(&stats);
    print_snapshots(&snaps);
    print_decisions(&snaps, trace_reader_info(r)->start_time_us);
  }
  status = tool_finish_output(&usage);
  if (snaps.status == SNAPSHOTS_DAMAGED) {
    fprintf(stderr, "memtrace info: %s\n", snaps.why);
    status = 1;
  }
  snapshots_free(&snaps);
  if (s == TRACE_READER_ERROR) status = tool_trace_error(&usage, path, r);
  trace_reader_close(r);
  return status;
}
