// trace_repeat.c - a large real-looking trace from a small one: writes
// IN's trace-info packet, then IN's other packets N times over, for
// bench-reader. Each pass after the first leaves out the location packets
// (the codes are defined already), shifts packet times by a multiple of
// 2^25 us (events keep their low time bits) and allocation ids by the
// allocations of a pass, and drops the cache checks (the cache state at the
// start of a pass differs from the first pass's). The codewords are IN's,
// so decoding costs what IN's does; the frames of later passes differ.
//
//   trace_repeat IN N OUT
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/format.h"

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*n);
  if (b && fread(b, 1, *n, f) != *n) b = NULL;
  fclose(f);
  return b;
}

static uint32_t packet_size(const uint8_t *p) {
  uint32_t bits;
  memcpy(&bits, p + 4, 4);
  return bits / 8;
}

// A packet whose events are all locations (or that has none).
static bool only_locations(const uint8_t *p, uint32_t header) {
  uint32_t first;
  if (packet_size(p) == header) return false;
  memcpy(&first, p + header, 4);
  return first >> TRACE_TIME_BITS == TRACE_EV_LOCATION;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fputs("usage: trace_repeat IN N OUT\n", stderr);
    return 2;
  }
  size_t n;
  uint8_t *in = slurp(argv[1], &n);
  long passes = atol(argv[2]);
  FILE *out = fopen(argv[3], "wb");
  if (!in || !out || passes < 1) {
    fputs("trace_repeat: cannot read IN or write OUT\n", stderr);
    return 1;
  }
  uint16_t version;
  memcpy(&version, in + 28, 2);
  uint32_t v3 = version >= 3 ? 2 : 0, header = v3 ? TRACE_HEADER_V3 : TRACE_HEADER_V2, info = packet_size(in);
  uint64_t first, last = 0, allocs = 0;
  memcpy(&first, in + 8, 8);
  for (size_t off = info; off + header <= n; off += packet_size(in + off)) {
    uint64_t t, id;
    memcpy(&t, in + off + 16, 8);
    memcpy(&id, in + off + 58 + v3, 8);
    last = t > last ? t : last;
    allocs = id > allocs ? id : allocs;
  }
  uint64_t shift = ((last - first) / (1u << TRACE_TIME_BITS) + 2) << TRACE_TIME_BITS;
  fwrite(in, 1, info, out);
  uint8_t packet[TRACE_MAX_PACKET];
  for (long pass = 0; pass < passes; pass++)
    for (size_t off = info; off + header <= n; off += packet_size(in + off)) {
      uint32_t size = packet_size(in + off);
      if (pass > 0 && only_locations(in + off, header)) continue;
      memcpy(packet, in + off, size);
      for (int k = 0; k < 2; k++) {  // times at 8 and 16, ids at 50 and 58 (+2 in v3)
        uint64_t t, id;
        memcpy(&t, packet + 8 + 8 * k, 8);
        memcpy(&id, packet + 50 + v3 + 8 * k, 8);
        t += (uint64_t)pass * shift;
        id += (uint64_t)pass * allocs;
        memcpy(packet + 8 + 8 * k, &t, 8);
        memcpy(packet + 50 + v3 + 8 * k, &id, 8);
      }
      if (pass > 0) memcpy(packet + 38 + v3, &(uint16_t){TRACE_CACHE_CHECK_NONE}, 2);
      fwrite(packet, 1, size, out);
    }
  free(in);
  return fclose(out) == 0 ? 0 : 1;
}
