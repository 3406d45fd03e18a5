// output.c - text and JSON output of the analysing commands (output.h).
#include "output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../base/hash.h"
#include "../base/ocaml_int.h"
#include "../base/xalloc.h"
#include "collapse.h"
#include "stack_budget.h"
#include "../base/text.h"

// ---------------------------------------------------------------- text

const char *out_bytes(char buf[OUT_TEXT_MAX], double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = fabs(bytes);
  unsigned u = 0;
  while (v >= 1023.5 && u + 1 < sizeof units / sizeof units[0]) v /= 1024, u++;
  const char *sign = bytes < 0 && v >= 0.5 ? "-" : "";
  if (u == 0) snprintf(buf, OUT_TEXT_MAX, "%s%.0f B", sign, v);
  else snprintf(buf, OUT_TEXT_MAX, "%s%.*f %s", sign, v < 9.995 ? 2 : v < 99.95 ? 1 : 0, v, units[u]);
  return buf;
}

const char *out_duration(char buf[OUT_TEXT_MAX], double us) {
  if (isinf(us)) snprintf(buf, OUT_TEXT_MAX, "alive");
  else if (us < 999.5) snprintf(buf, OUT_TEXT_MAX, "%.0f us", us);
  else if (us < 999500) snprintf(buf, OUT_TEXT_MAX, "%.3g ms", us / 1e3);
  else if (us < 120e6) snprintf(buf, OUT_TEXT_MAX, "%.3g s", us / 1e6);
  else snprintf(buf, OUT_TEXT_MAX, "%.3g min", us / 60e6);
  return buf;
}

static void out_location(FILE *f, const TraceReaderLocation *l) {
  fprintf(f, "%s %s:%u:%u-%u", l->function, l->file, l->line, l->start_col, l->end_col);
}

void out_site(FILE *f, const ProfileSite *site) {
  if (site->located) out_location(f, &site->loc);
  else fprintf(f, "$%lld", (long long)ocaml_int(site->code));
}

void out_group_key(FILE *f, const Profile *p, ProfileBy by, ProfileStackId first) {
  const ProfileSite *site = profile_site(p, profile_stack_site(p, first));
  if (!site->located || by == PROFILE_BY_SITE || by == PROFILE_BY_STACK) out_site(f, site);
  else if (by == PROFILE_BY_FUNCTION) fprintf(f, "%s (%s)", site->loc.function, site->loc.file);
  else fputs(site->loc.file, f);
}

// ---------------------------------------------------------------- folded callers

static bool whole_stacks;

void out_set_whole_stacks(bool whole) { whole_stacks = whole; }

uint32_t out_fold_period(void) { return whole_stacks ? 0 : COLLAPSE_MAX_PERIOD; }

// A frame's identity: its locations (columns included, as printed), or its code.
static uint64_t caller_key(const Profile *p, ProfileNodeId n) {
  const TraceReaderLocation *locs;
  int count = profile_node_locations(p, n, &locs);
  if (count <= 0) return hash_combine(0xc0de, profile_node_code(p, n));
  uint64_t h = 0xca11;
  for (int i = 0; i < count; i++) {
    h = hash_combine(hash_combine(h, (uint64_t)(uintptr_t)locs[i].function), (uint64_t)(uintptr_t)locs[i].file);
    h = hash_combine(hash_combine(h, locs[i].line), (uint64_t)locs[i].start_col << 32 | locs[i].end_col);
  }
  return h;
}

// The callers of `leaf` (its path without it) folded into c: the last run.
static CollapseId fold_callers(Collapse *c, const Profile *p, ProfileNodeId leaf) {
  uint32_t n = 0, cap = 64;
  ProfileNodeId *path = xrealloc(NULL, cap * sizeof *path);
  for (ProfileNodeId id = profile_node_parent(p, leaf); id != 0 && id != PROFILE_NONE; id = profile_node_parent(p, id)) {
    if (n == cap) path = xrealloc(path, (cap *= 2) * sizeof *path);
    path[n++] = id;
  }
  CollapseId at = 0;
  while (n--) at = collapse_push(c, at, caller_key(p, path[n]), path[n]);
  free(path);
  return at;
}

// A node's locations innermost first, each "PREFIX location" on a line;
// `skip_innermost` leaves out the first. Counts lines in *printed / *left.
static void out_node(FILE *f, const Profile *p, ProfileNodeId n, const char *indent, const char *prefix,
                     bool skip_innermost, uint32_t max_frames, uint32_t *printed, uint32_t *left) {
  const TraceReaderLocation *locs;
  int count = profile_node_locations(p, n, &locs);
  if (count <= 0 && !skip_innermost) {
    if (*printed < max_frames) {
      fprintf(f, "%s%s $%lld\n", indent, prefix, (long long)ocaml_int(profile_node_code(p, n)));
      ++*printed;
    } else {
      ++*left;
    }
  }
  for (int i = skip_innermost ? count - 2 : count - 1; i >= 0; i--) {
    if (*printed >= max_frames) {
      ++*left;
      continue;
    }
    fprintf(f, "%s%s ", indent, prefix);
    out_location(f, &locs[i]);
    fputc('\n', f);
    ++*printed;
  }
}

// A folded run on one line: "called from LOCATION ×N", or for a cycle or an
// inlined frame "called from (f file:l:c-c → g file:l:c-c) ×N" (outermost first).
static void out_folded(FILE *f, const Profile *p, const Collapse *c, CollapseId r, const char *indent) {
  const CollapseRun *run = collapse_run(c, r);
  const uint32_t *reps;
  uint32_t len = collapse_unit(c, run->unit, &reps);
  const TraceReaderLocation *locs;
  bool one = len == 1 && profile_node_locations(p, reps[0], &locs) == 1;
  fprintf(f, "%scalled from %s", indent, one ? "" : "(");
  const char *sep = "";
  for (uint32_t k = 0; k < len; k++) {
    int count = profile_node_locations(p, reps[k], &locs);
    if (count <= 0) fprintf(f, "%s$%lld", sep, (long long)ocaml_int(profile_node_code(p, reps[k]))), sep = " \u2192 ";
    for (int i = 0; i < count; i++, sep = " \u2192 ") fputs(sep, f), out_location(f, &locs[i]);
  }
  fprintf(f, "%s \u00d7%u\n", one ? "" : ")", run->count);
}

struct OutFolds {
  const Profile *p;
  Collapse *c;
  CollapseId *run;   // per node: the run its path ends with (UINT32_MAX: not folded yet; the root's is 0)
};

OutFolds *out_folds_new(const Profile *p) {
  OutFolds *o = xrealloc(NULL, sizeof *o);
  uint32_t n = profile_n_nodes(p);
  o->p = p;
  o->c = collapse_new(out_fold_period());
  o->run = xrealloc(NULL, (n ? n : 1) * sizeof *o->run);
  for (uint32_t i = 0; i < n; i++) o->run[i] = UINT32_MAX;
  if (n) o->run[0] = 0;
  return o;
}

void out_folds_free(OutFolds *o) {
  if (!o) return;
  collapse_free(o->c);
  free(o->run);
  free(o);
}

// fold_callers with the runs of the nodes folded before: a push depends on
// the run it extends and the key alone (collapse.h), so extending a node's
// kept run folds its path as pushing it whole would. A unit first made by
// another stack names its frames by that stack's nodes: nodes of one key,
// whose lines print the same.
static CollapseId fold_callers_kept(OutFolds *o, ProfileNodeId leaf) {
  const Profile *p = o->p;
  uint32_t n = 0, cap = 64;
  ProfileNodeId *path = xrealloc(NULL, cap * sizeof *path);
  ProfileNodeId id = profile_node_parent(p, leaf);
  for (; id != PROFILE_NONE && o->run[id] == UINT32_MAX; id = profile_node_parent(p, id)) {
    if (n == cap) path = xrealloc(path, (cap *= 2) * sizeof *path);
    path[n++] = id;
  }
  CollapseId at = id == PROFILE_NONE ? 0 : o->run[id];
  while (n--) at = o->run[path[n]] = collapse_push(o->c, at, caller_key(p, path[n]), path[n]);
  free(path);
  return at;
}

static void print_callers(FILE *f, const Profile *p, Collapse *c, CollapseId last, const char *indent,
                          uint32_t max_frames, uint32_t printed, uint32_t left) {
  for (CollapseId r = last; r != 0; r = collapse_run(c, r)->parent) {
    const uint32_t *reps;
    collapse_unit(c, collapse_run(c, r)->unit, &reps);
    if (collapse_plain(c, r)) out_node(f, p, reps[0], indent, "called from", false, max_frames, &printed, &left);
    else if (printed < max_frames) out_folded(f, p, c, r, indent), printed++;
    else left++;
  }
  if (left) fprintf(f, "%s... %u more frames\n", indent, left);
}

void out_callers_folded(FILE *f, OutFolds *o, ProfileStackId s, const char *indent, uint32_t max_frames) {
  ProfileNodeId leaf = profile_stack_leaf(o->p, s);
  uint32_t printed = 0, left = 0;
  if (leaf == 0 || leaf == PROFILE_NONE) return;
  out_node(f, o->p, leaf, indent, "inlined in", true, max_frames, &printed, &left);
  print_callers(f, o->p, o->c, fold_callers_kept(o, leaf), indent, max_frames, printed, left);
}

void out_callers(FILE *f, const Profile *p, ProfileStackId s, const char *indent, uint32_t max_frames) {
  ProfileNodeId leaf = profile_stack_leaf(p, s);
  uint32_t printed = 0, left = 0;
  if (leaf == 0 || leaf == PROFILE_NONE) return;
  // The leaf's innermost location is the site itself: skip it.
  out_node(f, p, leaf, indent, "inlined in", true, max_frames, &printed, &left);
  Collapse *c = collapse_new(out_fold_period());
  print_callers(f, p, c, fold_callers(c, p, leaf), indent, max_frames, printed, left);
  collapse_free(c);
}

const char *out_by_name(ProfileBy by) {
  switch (by) {
    case PROFILE_BY_SITE: return "site";
    case PROFILE_BY_FUNCTION: return "function";
    case PROFILE_BY_FILE: return "file";
    case PROFILE_BY_STACK: break;
  }
  return "stack";
}

// ---------------------------------------------------------------- JSON

void json_init(Json *j, FILE *f) {
  j->f = f;
  j->depth = 0;
  j->first[0] = true;
}

// A JSON string of s: valid UTF-8 whatever s holds (RFC 8259 wants it): a
// byte that starts no valid character (text.h) is '?', as in every other
// output; quotes, backslashes and control characters escaped.
static void json_raw_string(FILE *f, const char *s) {
  fputc('"', f);
  const unsigned char *p = (const unsigned char *)s;
  for (size_t left = strlen(s), len; left; p += len, left -= len) {
    unsigned char c = *p;
    len = 1;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c == '\n') fputs("\\n", f);
    else if (c == '\t') fputs("\\t", f);
    else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
    else if ((len = text_utf8_char(p, left)) == 0) fputc('?', f), len = 1;
    else fwrite(p, 1, len, f);
  }
  fputc('"', f);
}

// The separator and key before a value.
static void json_member(Json *j, const char *key) {
  if (j->depth > 0 && !j->first[j->depth]) fputc(',', j->f);
  j->first[j->depth] = false;
  if (key) {
    json_raw_string(j->f, key);
    fputc(':', j->f);
  }
}

static void json_open(Json *j, const char *key, char c) {
  json_member(j, key);
  fputc(c, j->f);
  if (j->depth + 1 < sizeof j->first) j->depth++;
  j->first[j->depth] = true;
}

void json_object(Json *j, const char *key) { json_open(j, key, '{'); }
void json_array(Json *j, const char *key) { json_open(j, key, '['); }

void json_end_object(Json *j) {
  fputc('}', j->f);
  if (j->depth) j->depth--;
}

void json_end_array(Json *j) {
  fputc(']', j->f);
  if (j->depth) j->depth--;
}

void json_string(Json *j, const char *key, const char *value) {
  json_member(j, key);
  json_raw_string(j->f, value);
}

void json_number(Json *j, const char *key, double value) {
  json_member(j, key);
  if (isfinite(value)) fprintf(j->f, "%.17g", value);
  else fputs("null", j->f);
}

void json_uint(Json *j, const char *key, uint64_t value) {
  json_member(j, key);
  fprintf(j->f, "%llu", (unsigned long long)value);
}

void json_bool(Json *j, const char *key, bool value) {
  json_member(j, key);
  fputs(value ? "true" : "false", j->f);
}

void json_null(Json *j, const char *key) {
  json_member(j, key);
  fputs("null", j->f);
}

void json_finish(Json *j) { fputc('\n', j->f); }

void json_interval(Json *j, const char *key, double lo, double hi) {
  json_object(j, key);
  json_number(j, "lo", lo);
  json_number(j, "hi", hi);
  json_end_object(j);
}

static void json_location_fields(Json *j, const TraceReaderLocation *l) {
  json_string(j, "function", l->function);
  json_string(j, "file", l->file);
  json_uint(j, "line", l->line);
  json_uint(j, "start_col", l->start_col);
  json_uint(j, "end_col", l->end_col);
}

void json_site_fields(Json *j, const ProfileSite *site) {
  char text[64];
  if (!site->located) {
    snprintf(text, sizeof text, "$%lld", (long long)ocaml_int(site->code));
    json_string(j, "site", text);
    const char *names[] = {"function", "file", "line", "start_col", "end_col"};
    for (size_t i = 0; i < 5; i++) json_null(j, names[i]);
    return;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (m) {
    out_site(m, site);
    fclose(m);
  }
  json_string(j, "site", buf ? buf : "");
  free(buf);
  json_location_fields(j, &site->loc);
}

// A node's frames innermost first: {"code"} without location, else each location.
static void json_node(Json *j, const Profile *p, ProfileNodeId n) {
  const TraceReaderLocation *locs;
  int count = profile_node_locations(p, n, &locs);
  if (count <= 0) {
    json_object(j, NULL);
    json_number(j, "code", (double)ocaml_int(profile_node_code(p, n)));
    json_end_object(j);
  }
  for (int i = count - 1; i >= 0; i--) {
    json_object(j, NULL);
    json_location_fields(j, &locs[i]);
    json_end_object(j);
  }
}

// The entries json_node writes for a node.
static uint64_t node_entries(const Profile *p, ProfileNodeId n) {
  const TraceReaderLocation *locs;
  int count = profile_node_locations(p, n, &locs);
  return count <= 0 ? 1 : (uint64_t)count;
}

void json_stack(Json *j, const char *key, const Profile *p, ProfileStackId s) {
  json_array(j, key);
  ProfileNodeId leaf = profile_stack_leaf(p, s);
  if (leaf != 0 && leaf != PROFILE_NONE) {
    Collapse *c = collapse_new(out_fold_period());
    CollapseId last = fold_callers(c, p, leaf);
    uint64_t entries = node_entries(p, leaf);
    for (CollapseId r = last; r != 0; r = collapse_run(c, r)->parent) {
      const uint32_t *reps;
      collapse_unit(c, collapse_run(c, r)->unit, &reps);
      entries += collapse_plain(c, r) ? node_entries(p, reps[0]) : 1;
    }
    if (!stack_budget_take(entries, 0)) {
      json_object(j, NULL);
      json_uint(j, "frames_left_out", entries);
      json_end_object(j);
      last = 0;
    } else {
      json_node(j, p, leaf);
    }
    for (CollapseId r = last; r != 0; r = collapse_run(c, r)->parent) {
      const uint32_t *reps;
      uint32_t len = collapse_unit(c, collapse_run(c, r)->unit, &reps);
      if (collapse_plain(c, r)) {
        json_node(j, p, reps[0]);
        continue;
      }
      json_object(j, NULL);
      json_uint(j, "repeat", collapse_run(c, r)->count);
      json_array(j, "frames");
      for (uint32_t k = len; k-- > 0;) json_node(j, p, reps[k]);
      json_end_array(j);
      json_end_object(j);
    }
    collapse_free(c);
  }
  json_end_array(j);
}

void json_group_key(Json *j, const Profile *p, ProfileBy by, ProfileStackId first) {
  const ProfileSite *site = profile_site(p, profile_stack_site(p, first));
  json_object(j, "key");
  if (by == PROFILE_BY_SITE || by == PROFILE_BY_STACK || !site->located) json_site_fields(j, site);
  else if (by == PROFILE_BY_FUNCTION) {
    json_string(j, "function", site->loc.function);
    json_string(j, "file", site->loc.file);
  } else {
    json_string(j, "file", site->loc.file);
  }
  if (by == PROFILE_BY_STACK) json_stack(j, "stack", p, first);
  json_end_object(j);
}

void json_trace(Json *j, const char *path, const Profile *p) { json_trace_as(j, "trace", path, p); }

void json_trace_as(Json *j, const char *key, const char *path, const Profile *p) {
  const TraceReaderInfo *info = trace_reader_info(profile_reader(p));
  const ProfileSummary *s = profile_summary(p);
  json_object(j, key);
  json_string(j, "file", path);
  json_string(j, "executable", info->executable);
  json_uint(j, "format_version", info->version);
  json_number(j, "sample_rate", info->sample_rate);
  json_uint(j, "word_bytes", profile_word_bytes(p));
  json_number(j, "duration_s", (double)s->last_us / 1e6);
  json_uint(j, "events", s->allocs + s->promotes + s->collects);
  json_uint(j, "samples", profile_totals(p)->samples);
  json_end_object(j);
}
