// fuzz_reader.c - afl++ target for trace/reader.c and trace/snapshot_reader.c
// (make fuzz-reader): the input is a trace file or, when it starts with the
// magic "MNRETAIN", the snapshot file that travels beside one.
// A trace is read to its end or first error, every frame of every
// allocation is looked up in the location table, the statistics are taken,
// and the reader is closed; the same again in follow mode with the input
// arriving in two halves. A snapshot file is read whole, then again as a
// growing file (its first half, then the rest appended, then updated);
// every path of every snapshot is found again by its id and its root and
// hops are walked, names included, and so are the decisions and the tail.
// Built with ASan+UBSan: any out-of-bounds
// access, leak or undefined behaviour is a crash. Persistent mode under
// afl-clang-fast; built with a plain compiler it reads the files named on
// its command line (to replay crashes).
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string.h>

#include "../../../trace/reader.h"
#include "../../../trace/snapshot_reader.h"
#include "fuzz_main.h"

static void consume(TraceReader *r) {
  TraceEvent ev;
  uint64_t sink = 0;
  while (trace_reader_next(r, &ev) == TRACE_READER_EVENT)
    for (uint32_t i = 0; i < ev.backtrace_len; i++) {
      const TraceReaderLocation *locs;
      int n = trace_reader_locations(r, ev.backtrace[i], &locs);
      for (int k = 0; k < n; k++) sink += locs[k].line + (uint8_t)locs[k].function[0] + (uint8_t)locs[k].file[0];
    }
  TraceReaderStats st;
  trace_reader_stats(r, &st);
  if (sink == 1 && st.bytes == 2) puts("");  // keep the loop's reads
}

static int memory_file(const unsigned char *data, size_t len) {
  int fd = memfd_create("trace", 0);
  if (fd < 0 || write(fd, data, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0) abort();
  return fd;
}

static size_t name_bytes(const char *s) { return s ? strlen(s) : 0; }

static void walk_snapshots(const SnapshotReader *r) {
  uint64_t sink = 0;
  for (uint32_t k = 0; k < snapshot_count(r); k++) {
    const Snapshot *s = snapshot_get(r, k);
    sink += name_bytes(s->end.reason) + name_bytes(retain_trigger_name(s->trigger));
    for (uint64_t i = 0; i < s->paths; i++) {
      const RetainPath *p = snapshot_path(r, k, i);
      if (snapshot_find(r, k, p->alloc_id) != p || p->alloc_id >= s->alloc_count) abort();  // sorted, distinct
      sink += name_bytes(p->root.name) + name_bytes(p->root.file) + name_bytes(p->root.local) +
              name_bytes(retain_root_kind_name(p->root.kind));
      for (uint32_t h = 0; h < p->hop_count; h++)
        sink += p->hops[h].count + name_bytes(p->hops[h].name) + name_bytes(retain_hop_kind_name(p->hops[h].kind));
    }
  }
  for (uint32_t i = 0; i < snapshot_decision_count(r); i++)
    sink += name_bytes(snapshot_decision(r, i)->function) + name_bytes(snapshot_decision(r, i)->file);
  char text[512];
  snapshot_tail_text(snapshot_reader_tail(r), text, sizeof text);
  sink += name_bytes(text);
  if (sink == 1) puts("");  // keep the loop's reads
}

static void run_snapshots(const unsigned char *data, size_t len) {
  char err[SNAPSHOT_READER_ERROR_MAX];
  SnapshotReader *r = snapshot_reader_open_bytes(data, len, "fuzz.retain", err, sizeof err);
  if (r) {
    walk_snapshots(r);
    snapshot_reader_close(r);
  } else if (!memchr(err, '\0', sizeof err)) {
    abort();  // the message is a string
  }
  // A growing file: the first half, then the rest appended.
  int fd = memory_file(data, len / 2);
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  r = snapshot_reader_open(path, err, sizeof err);
  if (r) {
    if (pwrite(fd, data + len / 2, len - len / 2, (off_t)(len / 2)) != (ssize_t)(len - len / 2)) abort();
    snapshot_reader_update(r, err, sizeof err);
    walk_snapshots(r);
    snapshot_reader_close(r);
  }
  close(fd);
}

static void run(const unsigned char *data, size_t len) {
  if (len >= 8 && memcmp(data, "MNRETAIN", 8) == 0) {
    run_snapshots(data, len);
    return;
  }
  TraceReader *r = trace_reader_open_fd(memory_file(data, len), NULL);
  if (r) {
    consume(r);
    trace_reader_close(r);
  }
  // Follow mode: the first half, then the rest appended.
  int fd = memory_file(data, len / 2);
  int writer = dup(fd);
  r = trace_reader_open_fd(fd, NULL);
  if (r) {
    trace_reader_follow(r, true);
    consume(r);
    if (pwrite(writer, data + len / 2, len - len / 2, (off_t)(len / 2)) != (ssize_t)(len - len / 2)) abort();
    consume(r);
    trace_reader_close(r);
  }
  close(writer);
}

static void no_setup(void) {}

FUZZ_MAIN(no_setup, run)
