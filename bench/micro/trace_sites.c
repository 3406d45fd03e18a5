// trace_sites.c - what the samples of a ./vm --memtrace trace name: for each
// allocation, whether its innermost frame is the allocating Minnow
// expression. ./vm --memtrace writes an allocation site as the odd code
// 2 * id + 1 and a caller as its return address, which is even
// (memprof/memtrace.c); a site's location is a line of a Minnow source file.
// Used by bench/trace_bench.sh (make bench-trace); the reader's speed is
// make bench-reader's build/release/reader_bench.
//
//   build/bench/trace_sites FILE...
// prints "file,allocs,new_frames,sites" per file: allocations, the frames
// decoded past their common prefixes, and the allocations whose innermost
// frame has an odd code and a location in a file named *.mn.
// Exit status 1 if a trace cannot be read to its end.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../trace/reader.h"

static bool is_minnow_file(const char *file) {
  size_t n = strlen(file);
  return n > 3 && strcmp(file + n - 3, ".mn") == 0;
}

static bool count_sites(const char *path) {
  TraceReaderError err;
  TraceReader *r = trace_reader_open(path, &err);
  if (!r) {
    fprintf(stderr, "trace_sites: %s: %s\n", path, err.message);
    return false;
  }
  uint64_t allocs = 0, new_frames = 0, sites = 0;
  TraceEvent ev;
  TraceReaderStatus s;
  while ((s = trace_reader_next(r, &ev)) == TRACE_READER_EVENT) {
    if (ev.kind != TRACE_EVENT_ALLOC) continue;
    allocs++;
    new_frames += ev.backtrace_len - ev.common;
    if (!ev.backtrace_len) continue;
    uint64_t code = ev.backtrace[ev.backtrace_len - 1];
    const TraceReaderLocation *locs;
    int n = trace_reader_locations(r, code, &locs);
    if ((code & 1) && n > 0 && is_minnow_file(locs[n - 1].file)) sites++;
  }
  bool ok = s == TRACE_READER_END;
  if (ok) printf("%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", path, allocs, new_frames, sites);
  else fprintf(stderr, "trace_sites: %s: %s\n", path, trace_reader_error(r)->message);
  trace_reader_close(r);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: trace_sites FILE...\n");
    return 2;
  }
  bool ok = true;
  for (int i = 1; i < argc; i++) ok = count_sites(argv[i]) && ok;
  return ok ? 0 : 1;
}
