// top.c - `memtrace top FILE`: allocation sites (or functions, files,
// stacks) ranked by estimated bytes allocated, live at a moment, or
// promoted; as a table or JSON; --follow redraws it every second while the
// trace is being written (README.md shows the layouts).
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/kept.h"
#include "../analysis/output.h"
#include "../analysis/ranking.h"
#include "../analysis/retain_text.h"
#include "../analysis/stack_budget.h"
#include "../cli/kept_load.h"
#include "../cli/load.h"
#include "commands.h"

static const ToolUsage usage = {
    "top",
    "usage: memtrace top [OPTIONS] FILE\n"
    "Ranks allocation sites of the trace FILE (\"-\": stdin) by estimated bytes\n"
    "allocated (headers included), each with its 95 % interval, share, samples\n"
    "and estimated blocks.\n"
    "  --live        rank by bytes live at the end of the trace (or at --at)\n"
    "  --at TIME     with --live: live at TIME since the trace's start: 1.5s,\n"
    "                250ms, 800us, 2min, a plain number of seconds, or P% of the\n"
    "                trace's duration; with --by holder, a snapshot: its number,\n"
    "                'end', or a time (the last snapshot taken by then)\n"
    "  --promoted    rank by bytes promoted (blocks that survived a minor GC)\n"
    "  --by KEY      site (default: the innermost frame's location), function,\n"
    "                file, or stack (the whole callstack); with --live, holder:\n"
    "                the blocks alive at a snapshot (the end state by default)\n"
    "                grouped by what holds them, from FILE.retain (memtrace paths\n"
    "                --by holder); with --follow, each new snapshot's table\n"
    "  --retain FILE with --by holder: the snapshot file (default: FILE.retain)\n"
    "  -n N          show N rows (default 20; 0: all)\n"
    "  --whole-stacks  callers whole (default: recursion folded, \"f \u00d7N\")\n"
    "  --json        JSON instead of the table (schema: tools/memtrace_cli/README.md)\n"
    "  --max-frames N  --by stack --json: at most N frames of stacks written in all\n"
    "                (default 4194304; 0: no limit); a row's stack past it is\n"
    "                {\"frames_left_out\": N}, said on stderr\n"
    "  -o OUT        write to OUT instead of stdout\n"
    "  --follow      the trace is being written: redraw every second until the\n"
    "                writer is gone (its pid, on this host), or until the file\n"
    "                stopped growing for --idle seconds when that cannot be told;\n"
    "                with --live --by holder, each new snapshot's table as it is\n"
    "                taken, until the end state arrives or SIGINT\n"
    "  --idle S      with --follow (default 10)\n"
    "A damaged or truncated trace: the figures of the events before the damage,\n"
    "marked PARTIAL, the error on stderr, exit status 1.\n",
};

typedef struct TopOptions {
  RankMetric metric;
  ProfileBy by;
  uint32_t rows;
  bool json, follow;
  AtTime at;
  SnapPick pick;        // --at with --by holder
  double idle_s;
  const char *path;
  bool by_holder;
  const char *retain;
} TopOptions;

// ---------------------------------------------------------------- options

// --by: load_parse_by's keys, or "holder" (TopOptions.by_holder).
static bool parse_top_by(const ToolOption *opt, const char *text) {
  TopOptions *o = (TopOptions *)((char *)opt->target - offsetof(TopOptions, by));
  o->by_holder = strcmp(text, "holder") == 0;
  return o->by_holder || load_parse_by(opt, text);
}

static int parse_options(int argc, char **argv, TopOptions *o) {
  *o = (TopOptions){.metric = RANK_ALLOCATED, .by = PROFILE_BY_SITE, .rows = 20, .idle_s = -1};
  bool live = false, promoted = false, whole = false;
  uint32_t max_frames = TOOL_MAX_FRAMES_UNSET;
  const char *out = NULL, *at = NULL;
  const ToolOption options[] = {
      {"--live", NULL, &live, NULL, NULL, 0, 0},
      {"--promoted", NULL, &promoted, NULL, NULL, 0, 0},
      {"--at", "TIME", &at, NULL, NULL, 0, 0},  // parsed below: a time, or with --by holder a snapshot
      {"--by", "KEY", &o->by, parse_top_by, "site, function, file, stack or holder", PROFILE_BY_SITE,
       PROFILE_BY_STACK},
      KEPT_OPTION_RETAIN(&o->retain),
      TOOL_OPTION_ROWS(&o->rows),
      TOOL_OPTION_WHOLE_STACKS(&whole),
      TOOL_OPTION_JSON(&o->json),
      TOOL_OPTION_MAX_FRAMES(&max_frames),
      TOOL_OPTION_OUTPUT(&out),
      {"--follow", NULL, &o->follow, NULL, NULL, 0, 0},
      {"--idle", "S", &o->idle_s, tool_parse_number, "a number of seconds above 0", 1e-9, 1e9},
  };
  ToolArgs args = {&usage, options, sizeof options / sizeof options[0], 1, 1, NULL, 0};
  int status = tool_parse_args(&args, argc, argv);
  if (status != TOOL_CONTINUE) return status;
  o->path = args.files[0];
  out_set_whole_stacks(whole);
  if (whole && (o->by != PROFILE_BY_STACK || o->by_holder))
    return tool_usage_error(&usage, "--whole-stacks goes with --by stack");
  status = tool_max_frames(&usage, max_frames, o->by == PROFILE_BY_STACK && o->json, "--by stack --json");
  if (status != TOOL_CONTINUE) return status;
  if (at && o->by_holder && !kept_parse_pick(at, &o->pick))
    return tool_usage_error(&usage, "option --at: '%s' is not a snapshot (its number, 'end', or a time: 1.5s, "
                            "250ms, 800us, 2min, P%%)", at);
  ToolOption at_option = LOAD_OPTION_AT(&o->at);
  if (at && !o->by_holder && !load_parse_at(&at_option, at))
    return tool_usage_error(&usage, "option --at: '%s' is not %s", at, at_option.expected);
  if (live && promoted) return tool_usage_error(&usage, "--live and --promoted exclude each other");
  if (at && !live) return tool_usage_error(&usage, "--at goes with --live");
  if (o->follow && at) return tool_usage_error(&usage, "--follow shows the present: no --at");
  if (o->follow && strcmp(o->path, "-") == 0) return tool_usage_error(&usage, "--follow needs a file, not stdin");
  if (o->idle_s >= 0 && !o->follow) return tool_usage_error(&usage, "--idle goes with --follow");
  if (o->idle_s < 0) o->idle_s = 10;
  o->metric = live ? RANK_LIVE : promoted ? RANK_PROMOTED : RANK_ALLOCATED;
  if (o->by_holder && !live) return tool_usage_error(&usage, "--by holder goes with --live");
  if (o->retain && !o->by_holder) return tool_usage_error(&usage, "--retain goes with --by holder");
  return tool_output_to(&usage, out) ? TOOL_CONTINUE : 1;
}

// ---------------------------------------------------------------- text

// at_us: the resolved --at (µs), when given.
static void print_heading(const Loaded *l, const TopOptions *o, uint64_t at_us) {
  const Profile *p = l->profile;
  const ProfileSummary *s = profile_summary(p);
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX];
  printf("%s: %llu samples at rate %g (a sample per %.0f words of %u bytes), %s of trace\n", l->path,
         (unsigned long long)profile_totals(p)->samples, profile_rate(p), 1 / profile_rate(p), profile_word_bytes(p),
         out_duration(a, (double)s->last_us));
  load_print_partial(stdout, l);
  const char *what = o->metric == RANK_LIVE ? "bytes live" : o->metric == RANK_PROMOTED ? "bytes promoted"
                                                                                             : "bytes allocated";
  printf("%s by %s", what, out_by_name(o->by));
  if (o->metric == RANK_LIVE && o->at.set && s->at_taken) printf(" at %s", out_duration(a, (double)at_us));
  else if (o->metric == RANK_LIVE && o->at.set)
    printf(" at the end (the trace ends at %s, before --at %s)", out_duration(a, (double)s->last_us),
           out_duration(b, (double)at_us));
  else if (o->metric == RANK_LIVE) printf(" at the end of the trace");
  printf("; estimates = samples x %s, headers included, 95%% intervals (Garwood)\n",
         out_bytes(a, profile_sample_bytes(p)));
}

static void print_interval(Interval iv) {
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX];
  char text[2 * OUT_TEXT_MAX + 8];
  snprintf(text, sizeof text, "[%s, %s]", out_bytes(a, iv.lo), out_bytes(b, iv.hi));
  printf("  %-24s", text);
}

static void print_count(double v) {
  if (v < 9999.5) printf(" %9.0f", v);
  else if (v < 9999.5e3) printf(" %8.1fk", v / 1e3);
  else printf(" %8.1fM", v / 1e6);
}

static void print_table(const Loaded *l, const TopOptions *o, bool at, uint64_t at_us, const Ranking *r) {
  const Profile *p = l->profile;
  print_heading(l, o, at_us);
  uint64_t total = rank_samples(profile_totals(p), o->metric, at);
  Tally all = profile_tally(p, total);
  Interval iv = tally_interval(&all);
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX];
  printf("total %s [%s, %s] from %llu samples of %llu blocks\n\n", out_bytes(a, all.bytes), out_bytes(b, iv.lo),
         out_bytes(c, iv.hi), (unsigned long long)total,
         (unsigned long long)rank_blocks(profile_totals(p), o->metric, at));
  bool est_blocks = o->metric == RANK_ALLOCATED;
  printf("rank  %12s  %-24s %6s %9s %9s  %s\n", rank_metric_name(o->metric), "95% interval", "share", "samples",
         est_blocks ? "blocks" : "sampled", o->by == PROFILE_BY_STACK ? "site and callers" : out_by_name(o->by));
  uint32_t shown = o->rows && o->rows < r->n_ranked ? o->rows : r->n_ranked;
  OutFolds *folds = o->by == PROFILE_BY_STACK && shown ? out_folds_new(p) : NULL;   // rows share deep paths
  for (uint32_t i = 0; i < shown; i++) {
    const ProfileGroup *g = &r->groups->rows[r->order[i]];
    ProfileCounts counts = ranking_counts(p, r, i);
    uint64_t n = rank_samples(&counts, o->metric, at);
    Tally t = profile_tally(p, n);
    printf("%4u  %12s", i + 1, out_bytes(a, t.bytes));
    print_interval(tally_interval(&t));
    printf(" %5.1f%%", 100.0 * (double)n / (double)total);
    print_count((double)n);
    print_count(est_blocks ? counts.objects : (double)rank_blocks(&counts, o->metric, at));
    printf("  ");
    out_group_key(stdout, p, o->by, g->first);
    putchar('\n');
    if (folds) out_callers_folded(stdout, folds, g->first, "        ", 12);
  }
  out_folds_free(folds);
  if (shown < r->n_ranked) printf("(%u more rows: -n 0 shows all)\n", r->n_ranked - shown);
  if (r->n_ranked == 0) printf("(no samples)\n");
}

// ---------------------------------------------------------------- JSON

static void print_json(const Loaded *l, const TopOptions *o, bool at, uint64_t at_us, const Ranking *r) {
  const Profile *p = l->profile;
  Json j;
  load_json_begin(&j, stdout, "top", l);
  json_string(&j, "metric", rank_metric_name(o->metric));
  json_string(&j, "by", out_by_name(o->by));
  if (o->metric == RANK_LIVE && o->at.set) json_number(&j, "at_s", (double)at_us / 1e6);
  else json_null(&j, "at_s");
  json_bool(&j, "at_in_trace", profile_summary(p)->at_taken);
  uint64_t total = rank_samples(profile_totals(p), o->metric, at);
  Tally all = profile_tally(p, total);
  Interval iv = tally_interval(&all);
  json_object(&j, "total");
  json_number(&j, "bytes", all.bytes);
  json_interval(&j, "interval", iv.lo, iv.hi);
  json_uint(&j, "samples", total);
  json_uint(&j, "sampled_blocks", rank_blocks(profile_totals(p), o->metric, at));
  json_end_object(&j);
  uint32_t shown = o->rows && o->rows < r->n_ranked ? o->rows : r->n_ranked;
  json_array(&j, "rows");
  for (uint32_t i = 0; i < shown; i++) {
    const ProfileGroup *g = &r->groups->rows[r->order[i]];
    ProfileCounts counts = ranking_counts(p, r, i);
    uint64_t n = rank_samples(&counts, o->metric, at);
    Tally t = profile_tally(p, n);
    Interval ti = tally_interval(&t);
    json_object(&j, NULL);
    json_uint(&j, "rank", i + 1);
    json_group_key(&j, p, o->by, g->first);
    json_number(&j, "bytes", t.bytes);
    json_interval(&j, "interval", ti.lo, ti.hi);
    json_number(&j, "share", total ? (double)n / (double)total : 0);
    json_uint(&j, "samples", n);
    json_uint(&j, "sampled_blocks", rank_blocks(&counts, o->metric, at));
    if (o->metric == RANK_ALLOCATED) json_number(&j, "blocks_estimate", counts.objects);
    else json_null(&j, "blocks_estimate");
    json_end_object(&j);
  }
  json_end_array(&j);
  json_uint(&j, "rows_omitted", r->n_ranked - shown);
  json_end_object(&j);
  json_finish(&j);
}

// `finished`: after profile_finish, live counts are the at_* snapshot (the
// --at moment, or the end); while following, the live_* counts of now.
static int show(const Loaded *l, const TopOptions *o, bool finished, uint64_t at_us) {
  Ranking r = {0};
  if (!ranking_make(l->profile, o->by, o->metric, finished, &r)) {
    ranking_free(&r);
    fprintf(stderr, "memtrace top: out of memory\n");
    return 1;
  }
  stack_budget_set(stack_budget_limit());  // each redraw (--follow) its own
  if (o->json) print_json(l, o, finished, at_us, &r);
  else print_table(l, o, finished, at_us, &r);
  ranking_free(&r);
  stack_budget_note(usage.name, 0);
  return 0;
}

// ---------------------------------------------------------------- follow

typedef enum WriterState { WRITER_RUNNING, WRITER_GONE, WRITER_UNKNOWN } WriterState;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_seconds(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

// Seconds since the epoch at boot (/proc/stat's btime), 0 if unknown.
static uint64_t boot_time(void) {
  FILE *f = fopen("/proc/stat", "r");
  char line[256];
  unsigned long long btime = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "btime %llu", &btime) == 1) break;
  if (f) fclose(f);
  return btime;
}

// Whether the process that writes the trace runs: known only on the host
// that wrote it (the trace info's host and pid). A pid whose process started
// after the trace did (a reused pid), a zombie, or no such pid: gone.
static WriterState writer_state(const TraceReaderInfo *info) {
  char host[256] = "", path[64], line[1024];
  if (info->pid == 0 || info->pid > INT32_MAX || gethostname(host, sizeof host - 1) != 0 ||
      strcmp(host, info->host) != 0)
    return WRITER_UNKNOWN;
  snprintf(path, sizeof path, "/proc/%llu/stat", (unsigned long long)info->pid);
  FILE *f = fopen(path, "r");
  if (!f) return kill((pid_t)info->pid, 0) == 0 || errno == EPERM ? WRITER_RUNNING : WRITER_GONE;
  bool got = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  const char *close_paren = got ? strrchr(line, ')') : NULL;
  char state = 0;
  unsigned long long start_ticks = 0;
  // After "pid (comm)": field 3 is the state, field 22 the start time in clock ticks since boot.
  if (!close_paren || sscanf(close_paren + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                                              "%*s %*s %*s %llu", &state, &start_ticks) != 2)
    return WRITER_RUNNING;
  if (state == 'Z' || state == 'X') return WRITER_GONE;
  uint64_t boot = boot_time();
  long ticks = sysconf(_SC_CLK_TCK);
  if (boot && ticks > 0) {
    double started_us = ((double)boot + (double)start_ticks / (double)ticks) * 1e6;
    if (started_us > (double)info->start_time_us + 2e6) return WRITER_GONE;
  }
  return WRITER_RUNNING;
}

static uint64_t file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n > 0 ? (uint64_t)n : 0;
}

// Opens a trace that may not exist yet or hold no whole packet yet.
static TraceReader *open_when_there(const TopOptions *o) {
  double start = now_seconds();
  for (;;) {
    TraceReaderError err;
    TraceReader *r = trace_reader_open(o->path, &err);
    if (r) return r;
    bool waiting = err.kind == TRACE_ERROR_TRUNCATED || access(o->path, F_OK) != 0;
    if (!waiting || now_seconds() - start > o->idle_s) {
      fprintf(stderr, "memtrace top: %s: %s\n", o->path, err.message);
      return NULL;
    }
    pause_seconds(0.2);
  }
}

static void follow_banner(const TopOptions *o, const TraceReaderInfo *info, WriterState w, bool done) {
  if (o->json) return;
  if (done) printf("memtrace top --follow: the writer has finished; final figures\n");
  else if (w == WRITER_RUNNING)
    printf("memtrace top --follow: the writer (pid %llu) is running; redrawn every second\n",
           (unsigned long long)info->pid);
  else
    printf("memtrace top --follow: the writer is on another host or unknown; stops after %g s without growth\n",
           o->idle_s);
}

static void redraw(const Loaded *l, const TopOptions *o, WriterState w, bool done) {
  if (!o->json && isatty(1)) fputs("\033[H\033[2J", stdout);
  else if (!o->json) putchar('\n');
  follow_banner(o, trace_reader_info(l->reader), w, done);
  show(l, o, done, 0);
  fflush(stdout);
}

static int follow(const TopOptions *o) {
  Loaded l = {.path = o->path};
  if (!(l.reader = open_when_there(o))) return 1;
  trace_reader_follow(l.reader, true);
  ProfileOptions popts = {.allocations_only = o->metric == RANK_ALLOCATED};
  if (!(l.profile = profile_new(l.reader, &popts))) {
    fprintf(stderr, "memtrace top: out of memory\n");
    load_close(&l);
    return 1;
  }
  const TraceReaderInfo *info = trace_reader_info(l.reader);
  uint64_t size = file_size(o->path);
  double last_growth = now_seconds();
  TraceReaderStatus s;
  WriterState w;
  for (;;) {
    s = profile_read(l.profile, NULL);
    w = writer_state(info);
    uint64_t now_size = file_size(o->path);
    if (now_size != size) size = now_size, last_growth = now_seconds();
    bool idle = w == WRITER_UNKNOWN && now_seconds() - last_growth > o->idle_s;
    if (s == TRACE_READER_ERROR || w == WRITER_GONE || idle) break;
    redraw(&l, o, w, false);
    pause_seconds(1);
  }
  if (s != TRACE_READER_ERROR) {  // the writer is done: what is left, and an incomplete packet is damage
    trace_reader_follow(l.reader, false);
    s = profile_read(l.profile, NULL);
  }
  if (s == TRACE_READER_ERROR) {
    l.partial = true;
    snprintf(l.error, sizeof l.error, "%s", profile_error(l.profile));
  }
  int status = 1;
  if (profile_ok(l.profile)) {
    profile_finish(l.profile);
    redraw(&l, o, w, true);
    load_note_cuts(&usage, o->path, l.profile);
    status = load_status(&usage, &l);
  } else {
    fprintf(stderr, "memtrace top: %s: out of memory\n", o->path);
  }
  load_close(&l);
  return status;
}

// ---------------------------------------------------------------- by holder

static void holders_text(const Loaded *l, const Snapshots *s, const TopOptions *o, const KeptAnalysis *an) {
  const Profile *p = l->profile;
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX], c[OUT_TEXT_MAX];
  printf("%s: live by holder\n", l->path);
  load_print_partial(stdout, l);
  kept_print_snapshots(stdout, s, an->snapshot);
  if (an->snapshot < 0) {
    if (s->status == SNAPSHOTS_ABSENT) printf("to get one: %s\n", s->fix);
    else if (s->status == SNAPSHOTS_PRESENT) printf("%s\n", an->why);
    return;
  }
  if (an->judgement == KEPT_CANNOT_JUDGE) printf("verdicts: cannot judge: %s\n", an->why);
  double total = kept_bytes(p, an->samples);
  printf("%4s %10s %23s %6s %7s  %-15s %s\n", "rank", "bytes", "95% interval", "share", "samples", "verdict",
         "holder");
  for (uint32_t i = 0; i < an->n && (!o->rows || i < o->rows); i++) {
    const KeptHolder *h = &an->holders[i];
    Interval iv = kept_bytes_interval(p, h->samples);
    printf("%4u %10s [%10s, %10s] %5.1f%% %7llu  %-15s ", i + 1, out_bytes(a, kept_bytes(p, h->samples)),
           out_bytes(b, iv.lo), out_bytes(c, iv.hi), total > 0 ? 100 * kept_bytes(p, h->samples) / total : 0,
           (unsigned long long)h->samples,
           an->judgement == KEPT_CANNOT_JUDGE ? "-" : kept_verdict_name(h->verdict));
    if (h->example) retain_path_text(stdout, h->example, h->cut, true);
    else printf("(no path) "), out_site(stdout, profile_site(p, h->unknown_site));
    putchar('\n');
  }
}

static void holders_json(const Loaded *l, const Snapshots *s, const TopOptions *o, const KeptAnalysis *an) {
  const Profile *p = l->profile;
  Json j;
  load_json_begin(&j, stdout, "top", l);
  json_string(&j, "metric", "live");
  json_string(&j, "by", "holder");
  kept_json_snapshots(&j, s, an->snapshot);
  json_array(&j, "rows");
  for (uint32_t i = 0; an->snapshot >= 0 && i < an->n && (!o->rows || i < o->rows); i++) {
    const KeptHolder *h = &an->holders[i];
    json_object(&j, NULL);
    json_uint(&j, "rank", i + 1);
    if (h->example) retain_json_path(&j, "holder", h->example, h->cut, true);
    else json_null(&j, "holder");
    json_number(&j, "bytes", kept_bytes(p, h->samples));
    Interval iv = kept_bytes_interval(p, h->samples);
    json_interval(&j, "interval", iv.lo, iv.hi);
    json_uint(&j, "samples", h->samples);
    json_uint(&j, "blocks", h->blocks);
    if (an->judgement == KEPT_CANNOT_JUDGE) json_null(&j, "verdict");
    else json_string(&j, "verdict", kept_verdict_name(h->verdict));
    json_end_object(&j);
  }
  json_end_array(&j);
  json_end_object(&j);
  json_finish(&j);
}

// The table of snapshot k (-1: the default), most kept first.
static void holders_show(const Loaded *l, const Snapshots *s, const TopOptions *o, int64_t k, const char *why) {
  KeptAnalysis an;
  kept_analyse(l->profile, s, k, NULL, &an);
  if (k < 0 && *why) {  // --at named no usable snapshot
    kept_analysis_free(&an);
    memset(&an, 0, sizeof an);
    an.snapshot = -1;
    snprintf(an.why, sizeof an.why, "--at: %s", why);
  }
  kept_sort_by_kept(&an);  // most kept first, whatever the verdict
  (o->json ? holders_json : holders_text)(l, s, o, &an);
  kept_analysis_free(&an);
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
  (void)sig;
  interrupted = 1;
}

// --follow --by holder: each snapshot's table as it is taken; stops with
// the end state, SIGINT, or when the writer is gone.
static int follow_holders(const TopOptions *o) {
  Loaded l = {.path = o->path};
  if (!(l.reader = open_when_there(o))) return 1;
  trace_reader_follow(l.reader, true);
  ProfileOptions popts = {0};
  Snapshots s;
  snapshots_follow(&s, o->path, o->retain, &popts);
  if (!(l.profile = profile_new(l.reader, &popts))) {
    fprintf(stderr, "memtrace top: out of memory\n");
    snapshots_free(&s);
    load_close(&l);
    return 1;
  }
  struct sigaction sa = {0}, old;
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  const TraceReaderInfo *info = trace_reader_info(l.reader);
  uint64_t size = file_size(o->path);
  double last_growth = now_seconds();
  uint32_t shown = 0;
  bool end_state = false;
  TraceReaderStatus st = TRACE_READER_END;
  WriterState w = WRITER_RUNNING;
  if (!o->json)
    printf("memtrace top --follow --by holder: %s, each snapshot's table as it is taken (until the end state or "
           "SIGINT)\n", o->path);
  while (!interrupted) {
    if (!snapshots_follow_update(&s, info)) break;
    st = profile_read(l.profile, NULL);
    if (!snapshots_follow_update(&s, info)) break;
    for (; shown < s.next; shown++) {
      if (!s.snaps[shown].usable) continue;
      if (!o->json) putchar('\n');
      holders_show(&l, &s, o, shown, "");
      fflush(stdout);
      end_state |= (int64_t)shown == s.end_state;
    }
    if (end_state || st == TRACE_READER_ERROR || !profile_ok(l.profile)) break;
    w = writer_state(info);
    uint64_t now_size = file_size(o->path);
    if (now_size != size) size = now_size, last_growth = now_seconds();
    if (w == WRITER_GONE || (w == WRITER_UNKNOWN && now_seconds() - last_growth > o->idle_s)) break;
    pause_seconds(1);
  }
  sigaction(SIGINT, &old, NULL);
  int status = 0;
  if (s.status == SNAPSHOTS_DAMAGED) {
    fprintf(stderr, "memtrace top: %s\n", s.why);
    status = 1;
  } else if (st == TRACE_READER_ERROR && !end_state) {
    fprintf(stderr, "memtrace top: %s: %s\n", o->path, profile_error(l.profile));
    status = 1;
  } else if (!profile_ok(l.profile)) {
    fprintf(stderr, "memtrace top: %s: out of memory\n", o->path);
    status = 1;
  } else if (!o->json && !end_state) {
    printf("\nmemtrace top --follow: %s; %u snapshot%s shown, no end state\n",
           interrupted ? "interrupted" : "the writer is gone", shown, shown == 1 ? "" : "s");
  }
  snapshots_free(&s);
  load_close(&l);
  return tool_finish_output(&usage) ? 1 : status;
}

static int top_by_holder(const TopOptions *o) {
  ProfileOptions popts = {0};
  Loaded l;
  Snapshots s;
  if (kept_load(&usage, o->path, o->retain, &popts, NULL, &l, &s) != 0) return 1;
  char why[SNAPSHOTS_TEXT] = "";
  int64_t k = kept_pick(&s, l.profile, &o->pick, why, sizeof why);
  holders_show(&l, &s, o, k, o->pick.set ? why : "");
  int status = kept_close(&usage, &l, &s);
  if (k < 0 && o->pick.set && !status) {
    fprintf(stderr, "memtrace top: --at: %s\n", why);
    return 1;
  }
  return status;
}

// ---------------------------------------------------------------- main

int cmd_top(int argc, char **argv) {
  TopOptions o;
  int status = parse_options(argc, argv, &o);
  if (status != TOOL_CONTINUE) return status;
  if (o.follow && o.by_holder) return follow_holders(&o);
  if (o.follow) return follow(&o);
  if (o.by_holder) return top_by_holder(&o);
  // Bytes allocated need no block's death: no live table (profile.h).
  ProfileOptions popts = {.allocations_only = o.metric == RANK_ALLOCATED};
  Loaded l;
  if (load_trace(&usage, o.path, &popts, &o.at, &l)) return 1;
  status = show(&l, &o, true, popts.at_us);
  if (status == 0) status = load_status(&usage, &l);
  load_close(&l);
  return status;
}
