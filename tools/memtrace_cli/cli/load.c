// load.c - shared options and trace loading of the analysing commands
// (load.h).
#include "load.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analysis/output.h"
#include "../base/progress.h"
#include "../base/xalloc.h"
#include "outfile.h"

// ---------------------------------------------------------------- options

bool load_parse_at(const ToolOption *o, const char *text) {
  char number[64], *end;
  size_t n = strspn(text, "0123456789.");  // decimal: no sign, space, exponent, hex, inf
  if (n == 0 || n >= sizeof number || strchr(text, '.') != strrchr(text, '.') || strspn(text, ".") == n) return false;
  memcpy(number, text, n);
  number[n] = '\0';
  errno = 0;
  double v = strtod(number, &end);
  if (end != number + n || errno || !isfinite(v) || v < 0) return false;
  end = (char *)text + n;
  static const struct { const char *suffix; double us; } units[] = {
      {"", 1e6}, {"s", 1e6}, {"ms", 1e3}, {"us", 1}, {"min", 60e6}, {"%", 0},
  };
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp(end, units[i].suffix) != 0) continue;
    bool percent = units[i].us == 0;
    if (percent && v > 100) return false;
    *(AtTime *)o->target = (AtTime){true, percent, percent ? v : v * units[i].us};
    return true;
  }
  return false;
}

bool load_parse_by(const ToolOption *o, const char *text) {
  static const char *const names[] = {"site", "function", "file", "stack"};
  for (int by = (int)o->min; by <= (int)o->max; by++)
    if (strcmp(text, names[by]) == 0) return *(ProfileBy *)o->target = (ProfileBy)by, true;
  return false;
}

int load_parse_rows(const ToolUsage *usage, int argc, char **argv, uint32_t rows, bool with_all, RowOptions *o) {
  *o = (RowOptions){.by = PROFILE_BY_SITE, .rows = rows};
  const char *out = NULL;
  bool whole = false;
  const ToolOption options[] = {
      LOAD_OPTION_BY_NO_STACK(&o->by), TOOL_OPTION_ROWS(&o->rows), TOOL_OPTION_JSON(&o->json),
      TOOL_OPTION_OUTPUT(&out),        TOOL_OPTION_WHOLE_STACKS(&whole), {"--all", NULL, &o->all, NULL, NULL, 0, 0},
  };
  ToolArgs args = {usage, options, sizeof options / sizeof options[0] - (with_all ? 0 : 2), 1, 1, NULL, 0};
  int status = tool_parse_output(&args, argc, argv, &out);
  o->path = args.files[0];  // argv[1]: read only when status is TOOL_CONTINUE
  out_set_whole_stacks(whole);
  return status;
}

// ---------------------------------------------------------------- input

// Copies stdin into an unlinked temporary file; its descriptor, or -1.
static int spool_stdin(void) {
  FILE *tmp = tmpfile();
  if (!tmp) return -1;
  int fd = dup(fileno(tmp));
  fclose(tmp);
  if (fd < 0) return -1;
  char buf[1 << 16];
  ssize_t n;
  while ((n = read(0, buf, sizeof buf)) > 0)
    if (write(fd, buf, (size_t)n) != n) n = -1;
  if (n < 0 || lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Opens the input: a descriptor at offset 0, and its size when it is a
// regular file (0 otherwise). `rewindable`: stdin is spooled.
static int open_input(const ToolUsage *usage, const char *path, bool rewindable, uint64_t *size) {
  int fd = strcmp(path, "-") != 0 ? open(path, O_RDONLY) : rewindable ? spool_stdin() : dup(0);
  struct stat st;
  if (fd < 0) {
    fprintf(stderr, "memtrace %s: %s: %s\n", usage->name, path, strerror(errno));
    return -1;
  }
  *size = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
  return fd;
}

static TraceReader *open_reader(const ToolUsage *usage, const char *path, int fd) {
  TraceReaderError err;
  TraceReader *r = trace_reader_open_fd(fd, &err);
  if (!r) fprintf(stderr, "memtrace %s: %s: %s\n", usage->name, path, err.message);
  return r;
}

// The first pass: the time of the last event and the samples of all
// allocations.
static bool first_pass(const ToolUsage *usage, const char *path, int fd, Progress *progress, uint64_t *last,
                       uint64_t *samples) {
  TraceReader *r = open_reader(usage, path, dup(fd));
  if (!r) return false;
  TraceEvent ev;
  uint64_t n = 0;
  *last = *samples = 0;
  while (trace_reader_next(r, &ev) == TRACE_READER_EVENT) {
    *last = ev.dtime_us;
    *samples += ev.n_samples;
    if ((++n & 0xffff) == 0) progress_update(progress, ev.offset / 4, n);
  }
  trace_reader_close(r);
  return lseek(fd, 0, SEEK_SET) == 0;
}

static int load_or_fail(const ToolUsage *usage, const char *path, ProfileOptions *opts, const AtTime *at, Loaded *out);

int load_trace(const ToolUsage *usage, const char *path, ProfileOptions *opts, const AtTime *at, Loaded *out) {
  int status = load_or_fail(usage, path, opts, at, out);
  if (status != 0) outfile_discard();  // nothing to show: an older output stays as it was
  return status;
}

static int load_or_fail(const ToolUsage *usage, const char *path, ProfileOptions *opts, const AtTime *at, Loaded *out) {
  *out = (Loaded){.path = path};
  bool percent = at && at->set && at->percent, two_pass = percent || opts->windows;
  int fd = open_input(usage, path, two_pass, &out->file_bytes);
  if (fd < 0) return 1;
  Progress progress;
  progress_init(&progress, usage->name, path, out->file_bytes);
  uint64_t last = 0, samples = 0;
  if (two_pass && !first_pass(usage, path, fd, &progress, &last, &samples)) {
    close(fd);
    return 1;
  }
  if (at && at->set) {
    opts->at_set = true;
    opts->at_us = percent ? (uint64_t)llround((double)last * at->value / 100) : (uint64_t)llround(at->value);
  }
  opts->clock_total = samples;
  if (!(out->reader = open_reader(usage, path, fd))) return 1;
  if (!(out->profile = profile_new(out->reader, opts))) {
    fprintf(stderr, "memtrace %s: out of memory\n", usage->name);
    load_close(out);
    return 1;
  }
  TraceReaderStatus s = profile_read(out->profile, &progress);
  progress_done(&progress);
  if (!profile_ok(out->profile)) {
    fprintf(stderr, "memtrace %s: %s: out of memory\n", usage->name, path);
    load_close(out);
    return 1;
  }
  profile_finish(out->profile);
  trace_reader_done(out->reader);  // every event read: the backtrace buffer goes (up to 64 MiB)
  if (s == TRACE_READER_ERROR) {
    out->partial = true;
    snprintf(out->error, sizeof out->error, "%s", profile_error(out->profile));
  }
  load_note_cuts(usage, path, out->profile);
  return 0;
}

void load_note_cuts(const ToolUsage *usage, const char *path, const Profile *p) {
  TraceReaderStats rs;
  trace_reader_stats(profile_reader(p), &rs);
  uint64_t samples = profile_summary(p)->clock;
  if (rs.cut_backtraces)
    fprintf(stderr, "memtrace %s: %s: %" PRIu64 " allocations have backtraces deeper than the reader's limit of %d "
            "frames (the deepest %" PRIu64 "): their frames past it are left out, and they count under \"(frames "
            "left out: ...)\" below the frames kept\n", usage->name, path, rs.cut_backtraces, TRACE_READER_MAX_FRAMES,
            rs.deepest_cut);
  const ProfileCut *cut = profile_cut(p);
  if (cut->allocs)
    fprintf(stderr, "memtrace %s: %s: %" PRIu64 " allocations (%.1f%% of the samples; the first at byte %" PRIu64
            ") have callstacks past the tools' limit of %u distinct frames: each counts under \"(frames left out: "
            "...)\" below the deepest of its frames the profile holds\n", usage->name, path, cut->allocs,
            samples ? 100.0 * (double)cut->samples / (double)samples : 0.0, cut->first_offset,
            (unsigned)PROFILE_MAX_NODES);
}

void load_close(Loaded *l) {
  profile_free(l->profile);
  trace_reader_close(l->reader);
  l->profile = NULL;
  l->reader = NULL;
}

int load_grouped(const ToolUsage *usage, const char *path, ProfileOptions *opts, ProfileBy by, Loaded *out,
                 ProfileGroups **groups) {
  if (load_trace(usage, path, opts, NULL, out) != 0) return 1;
  if (!(*groups = profile_group(out->profile, by))) xalloc_fail();
  return 0;
}

int load_finish_grouped(const ToolUsage *usage, Loaded *l, ProfileGroups *groups) {
  int status = load_status(usage, l);
  profile_groups_free(groups);
  load_close(l);
  return status;
}

LoadIdentity load_identity(const Loaded *l) {
  const TraceReaderInfo *info = trace_reader_info(l->reader);
  LoadIdentity id = {info->pid, info->start_time_us, ""};
  snprintf(id.host, sizeof id.host, "%s", info->host);
  return id;
}

bool load_same_recording(const LoadIdentity *a, const LoadIdentity *b) {
  return a->pid == b->pid && a->start_time_us == b->start_time_us && strcmp(a->host, b->host) == 0;
}

void load_warn_same_recording(const ToolUsage *usage, const char *a, const char *b, const LoadIdentity *id,
                              const char *consequence) {
  fprintf(stderr, "memtrace %s: %s is the same recording as %s (pid %" PRIu64 " on %s, started at %" PRIu64
          " us): %s\n", usage->name, b, a, id->pid, id->host, id->start_time_us, consequence);
}

int load_status(const ToolUsage *usage, const Loaded *l) {
  if (tool_finish_output(usage) != 0) return 1;
  if (!l->partial) return 0;
  fprintf(stderr, "memtrace %s: %s: %s\n", usage->name, l->path, l->error);
  return 1;
}

void load_print_partial(FILE *f, const Loaded *l) {
  if (l->partial)
    fprintf(f, "PARTIAL: the trace stops at damage (%s); the figures are of the events before it\n", l->error);
}

void load_json_begin(Json *j, FILE *f, const char *command, const Loaded *l) {
  json_init(j, f);
  json_object(j, NULL);
  json_string(j, "command", command);
  json_trace(j, l->path, l->profile);
  json_bool(j, "partial", l->partial);
  if (l->partial) json_string(j, "error", l->error);
  else json_null(j, "error");
}
