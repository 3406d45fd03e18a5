// snapshot_synth.c - writes synthetic snapshot files (docs/trace-format.md
// section 12, version 2) with trace/snapshot_writer.c, for the reader's fuzz
// corpus (tests/fuzz/reader/seeds.sh) and the suites that read them.
//
//   snapshot_synth SCENARIO OUT.retain
//     kinds    three snapshots (a call, a signal, the end state): every root
//              and hop kind, paths repeated from one snapshot to the next,
//              a decision record of each action between them
//     killed   two whole snapshots (the period, a peak), a third begun with
//              some paths, its last record cut in the middle: what a run
//              killed by SIGKILL while writing leaves
//     series   six period snapshots of a list that grows by 20 blocks each
//              time beside a table of 30 that churns, then the end state
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../trace/snapshot_writer.h"

static const RetainHop EVERY_HOP[] = {
    {RETAIN_HOP_FIELD, 1, 0, "items"},    {RETAIN_HOP_TUPLE, 1, 1, ""},         {RETAIN_HOP_ARRAY, 1, 7, ""},
    {RETAIN_HOP_LIST_CELL, 42, 0, ""},    {RETAIN_HOP_LIST_ELEMENT, 1, 0, ""},  {RETAIN_HOP_CAPTURE, 1, 2, "buf"},
    {RETAIN_HOP_HASHTBL_VALUE, 1, 0, ""}, {RETAIN_HOP_HASHTBL_KEY, 1, 0, ""},   {RETAIN_HOP_BUFFER, 1, 0, ""},
    {RETAIN_HOP_OTHER, 1, 3, ""},         {RETAIN_HOP_ELIDED, 999, 0, ""},      {RETAIN_HOP_HASHTBL_ENTRY, 2, 0, ""},
    {RETAIN_HOP_HASHTBL_STORAGE, 1, 0, ""},
};
enum { N_HOPS = sizeof EVERY_HOP / sizeof EVERY_HOP[0] };

static SnapshotWriter *w;
static const char *out;

static void check(bool ok) {
  if (ok) return;
  fprintf(stderr, "snapshot_synth: %s\n", snapshot_writer_error(w));
  exit(1);
}

static void end(uint64_t live, uint64_t paths) {
  RetainSnapshotEnd e = {RETAIN_COLLECTED | (live == paths ? RETAIN_PATHS : 0), live, 100 + live, 900 + live,
                         4096, 40, 7, live == paths ? "" : "a sampled block without its path"};
  check(snapshot_writer_end(w, &e));
}

static void put_varint(unsigned char *b, size_t *n, uint64_t v) {
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    b[(*n)++] = c | (v ? 0x80 : 0);
  } while (v);
}

// A decision record appended by hand (the writer has none): names 0 and 1
// must be defined.
static void decision(uint64_t action, uint64_t allocs) {
  unsigned char body[128], rec[160];
  size_t n = 0;
  body[n++] = RETAIN_RECORD_DECISION;
  const uint64_t fields[] = {1795786330500000u + allocs, allocs, action, 0, 1, 12, 5, 40, 64, 60, 937500, 900000};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) put_varint(body, &n, fields[i]);
  uint32_t crc = retain_crc32(0, body, n);
  for (int i = 0; i < 4; i++) rec[i] = (unsigned char)(n >> (8 * i)), rec[4 + i] = (unsigned char)(crc >> (8 * i));
  memcpy(rec + 8, body, n);
  FILE *f = fopen(out, "ab");
  if (!f || fwrite(rec, 1, n + 8, f) != n + 8 || fclose(f) != 0) {
    fprintf(stderr, "snapshot_synth: cannot append to %s\n", out);
    exit(1);
  }
}

static void kinds(void) {
  RetainPath paths[] = {
      {10, {RETAIN_ROOT_STACK, "main", "x.mn", 12, "acc", 3}, 2, EVERY_HOP},
      {30, {RETAIN_ROOT_GLOBAL, "log", "", 0, "", 0}, N_HOPS, EVERY_HOP},
      {20, {RETAIN_ROOT_C, "", "", 0, "", 5}, 0, NULL},
      {25, {RETAIN_ROOT_EXCEPTION, "", "", 0, "", 0}, 1, EVERY_HOP + 4},
      {26, {RETAIN_ROOT_PROFILER, "", "", 0, "", 0}, 1, EVERY_HOP + 8},
      {31, {RETAIN_ROOT_STACK, "serve", "x.mn", 40, "", 1}, 3, EVERY_HOP + 5},
  };
  check(snapshot_writer_begin(w, RETAIN_TRIGGER_CALL, 1795786330400000u, 100));
  for (int i = 0; i < 6; i++) check(snapshot_writer_path(w, &paths[i]));
  end(6, 6);
  decision(1, 120);
  check(snapshot_writer_begin(w, RETAIN_TRIGGER_SIGNAL, 1795786330600000u, 150));
  for (int i = 5; i >= 0; i--) check(snapshot_writer_path(w, &paths[i]));
  end(7, 6);
  decision(0, 170);
  check(snapshot_writer_begin(w, RETAIN_TRIGGER_END, 1795786331000000u, 200));
  check(snapshot_writer_path(w, &paths[1]));
  end(1, 1);
}

static void killed(void) {
  RetainHop hop[2] = {{RETAIN_HOP_FIELD, 1, 0, "sessions"}, {RETAIN_HOP_LIST_CELL, 1, 0, ""}};
  for (uint64_t s = 0; s < 3; s++) {
    check(snapshot_writer_begin(w, s == 1 ? RETAIN_TRIGGER_PEAK : RETAIN_TRIGGER_PERIOD, 1795786330000000u + s * 1000000,
                                1000 * (s + 1)));
    for (uint64_t i = 0; i < 10 * (s + 1); i++) {
      hop[1].count = i + 1;
      RetainPath p = {i * 50, {RETAIN_ROOT_GLOBAL, "server", "", 0, "", 0}, 2, hop};
      check(snapshot_writer_path(w, &p));
    }
    if (s < 2) end(10 * (s + 1), 10 * (s + 1));
  }
  // The third snapshot's paths reach the file with its end record in one
  // write: write them (as the writer would before dying), then cut the
  // file inside its end record.
  end(30, 30);
  snapshot_writer_close(w);
  w = NULL;
  FILE *f = fopen(out, "rb+");
  if (!f || fseek(f, 0, SEEK_END) != 0) exit(1);
  long len = ftell(f);
  fclose(f);
  if (truncate(out, len - 9) != 0) exit(1);
}

static void series(void) {
  RetainHop list[2] = {{RETAIN_HOP_LIST_CELL, 1, 0, ""}, {RETAIN_HOP_LIST_ELEMENT, 1, 0, ""}};
  RetainHop table[1] = {{RETAIN_HOP_HASHTBL_VALUE, 1, 0, ""}};
  for (uint64_t s = 0; s < 7; s++) {
    uint64_t allocs = 1000 * (s + 1);
    check(snapshot_writer_begin(w, s == 6 ? RETAIN_TRIGGER_END : RETAIN_TRIGGER_PERIOD,
                                1795786330000000u + s * 1000000, allocs));
    uint64_t n = 0;
    for (uint64_t i = 0; i < 20 * (s + 1); i++, n++) {   // the leak: 20 blocks a period, each kept
      list[0].count = 20 * (s + 1) - i;
      RetainPath p = {(i / 20) * 1000 + (i % 20) * 7, {RETAIN_ROOT_GLOBAL, "history", "", 0, "", 0}, 2, list};
      check(snapshot_writer_path(w, &p));
    }
    for (uint64_t i = 0; i < 30; i++, n++) {   // the cache: 30 blocks of the last period
      RetainPath p = {allocs - 1 - i * 11, {RETAIN_ROOT_GLOBAL, "cache", "", 0, "", 0}, 1, table};
      check(snapshot_writer_path(w, &p));
    }
    end(n, n);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: snapshot_synth kinds|killed|series OUT.retain\n");
    return 2;
  }
  out = argv[2];
  char err[256];
  remove(out);
  w = snapshot_writer_open(out, 4242, 1795786330005883u, err, sizeof err);
  if (!w) {
    fprintf(stderr, "snapshot_synth: %s\n", err);
    return 1;
  }
  if (strcmp(argv[1], "kinds") == 0) kinds();
  else if (strcmp(argv[1], "killed") == 0) killed();
  else if (strcmp(argv[1], "series") == 0) series();
  else {
    fprintf(stderr, "snapshot_synth: unknown scenario %s\n", argv[1]);
    return 2;
  }
  snapshot_writer_close(w);
  return 0;
}
