// seed_head.c - a small valid trace from a large one, for the fuzz corpus:
// IN's packets up to its first event packet, that packet cut to its first
// K events (size, last time and allocation ids patched to match).
//   seed_head IN K OUT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../trace/reader.h"

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  FILE *f = fopen(argv[1], "rb");
  static uint8_t in[1 << 20];
  size_t n = f ? fread(in, 1, sizeof in, f) : 0;
  if (f) fclose(f);
  TraceReader *r = trace_reader_open(argv[1], NULL);
  if (!r || n == 0) return 1;
  long k = atol(argv[2]);
  TraceEvent ev;
  uint64_t start = 0, last_time = 0, allocs = 0, end = 0;
  while (k-- > 0 && trace_reader_next(r, &ev) == TRACE_READER_EVENT) {
    if (!start) {
      // The packet holding the first event: walk the headers up to it.
      for (uint64_t off = 0; off <= ev.offset; ) {
        uint32_t bits;
        memcpy(&bits, in + off + 4, 4);
        start = off;
        off += bits / 8;
      }
    }
    allocs += ev.kind == TRACE_EVENT_ALLOC;
    last_time = ev.time_us;
  }
  // The end of the last event kept: the next event's offset, or the packet's end.
  TraceReaderStatus s = trace_reader_next(r, &ev);
  uint16_t version;
  memcpy(&version, in + 28, 2);
  uint32_t v3 = version >= 3 ? 2 : 0, bits;
  memcpy(&bits, in + start + 4, 4);
  end = s == TRACE_READER_EVENT && ev.offset < start + bits / 8 ? ev.offset : start + bits / 8;
  trace_reader_close(r);
  uint64_t id0;
  memcpy(&id0, in + start + 50 + v3, 8);
  uint64_t id1 = id0 + allocs;
  bits = (uint32_t)(end - start) * 8;
  memcpy(in + start + 4, &bits, 4);
  memcpy(in + start + 16, &last_time, 8);
  memcpy(in + start + 58 + v3, &id1, 8);
  FILE *out = fopen(argv[3], "wb");
  if (!out || fwrite(in, 1, end, out) != end) return 1;
  return fclose(out) == 0 ? 0 : 1;
}
