// snapshot_file.c - what the snapshot writer and reader share (contract in
// snapshot_file.h): CRC-32, the kinds' names, the file's name beside a trace.
//
// 1. CRC-32 is the reflected IEEE polynomial 0xEDB88320 (the same bits as
//    zlib's crc32, which the VM does not link), four bits a step through a
//    16-entry table: CRC_NIBBLES[i] is the CRC register after shifting the
//    nibble i through it.
#include "snapshot_file.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t CRC_NIBBLES[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};

uint32_t retain_crc32(uint32_t crc, const void *bytes, size_t n) {
  const unsigned char *p = bytes;
  crc = ~crc;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    crc = CRC_NIBBLES[crc & 15] ^ (crc >> 4);
    crc = CRC_NIBBLES[crc & 15] ^ (crc >> 4);
  }
  return ~crc;
}

const char *retain_root_kind_name(RetainRootKind kind) {
  static const char *const names[RETAIN_ROOT_KINDS] = {"global", "stack", "C root", "exception", "profiler state"};
  return (unsigned)kind < RETAIN_ROOT_KINDS ? names[kind] : "?";
}

const char *retain_hop_kind_name(RetainHopKind kind) {
  static const char *const names[RETAIN_HOP_KINDS] = {"field", "tuple", "array", "list cell", "list element",
                                                      "capture", "Hashtbl value", "Hashtbl key", "Buffer storage",
                                                      "field", "...", "Hashtbl entry", "Hashtbl storage"};
  return (unsigned)kind < RETAIN_HOP_KINDS ? names[kind] : "?";
}

const char *retain_trigger_name(RetainTrigger trigger) {
  static const char *const names[RETAIN_TRIGGERS] = {"end", "call", "signal", "period", "peak"};
  return (unsigned)trigger < RETAIN_TRIGGERS ? names[trigger] : "?";
}

char *retain_file_name(const char *trace) {
  size_t n = strlen(trace);
  char *name = malloc(n + sizeof RETAIN_SUFFIX);
  if (!name) return NULL;
  memcpy(name, trace, n);
  memcpy(name + n, RETAIN_SUFFIX, sizeof RETAIN_SUFFIX);
  return name;
}
