// locations.h - the decoding side of memtrace's location codec, for
// trace/reader.c (which includes it; it includes only format.h): the move-to-front name tables (one set per domain) and the
// table from frame code to locations (one per trace), names interned.
// Encoding: trace/format.h ("A location: 48 bits") and docs/trace-format.md.
#ifndef MINNOW_TRACE_LOCATIONS_H
#define MINNOW_TRACE_LOCATIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "format.h"

enum { LOC_MTF_SIZE = TRACE_MTF_ENTRIES, LOC_MTF_NEW = TRACE_MTF_ENTRIES };

// One file entry of the move-to-front tables: its name and its own table of
// function names (funcs[0] most recent; n_funcs entries are filled).
typedef struct LocFileSlot {
  const char *file;
  const char *funcs[LOC_MTF_SIZE];
  uint8_t n_funcs;
} LocFileSlot;

// The file table: order[0 .. n_files) are slot numbers, most recent first.
// Slots are never freed: a new name, once the table is full, takes the slot
// of the entry it evicts and keeps that slot's function table (memtrace's
// reader does the same: the v1 encoder relied on it).
typedef struct LocNames {
  uint8_t order[LOC_MTF_SIZE];
  uint8_t n_files;
  LocFileSlot slots[LOC_MTF_SIZE];
} LocNames;

typedef struct LocTable LocTable;

// Why a location event failed: `at` points at the offending byte.
typedef struct LocError {
  const uint8_t *at;
  bool out_of_memory;
  char text[160];
} LocError;

void loc_names_init(LocNames *names);

// NULL when out of memory.
LocTable *loc_table_new(void);
void loc_table_free(LocTable *t);

// Decodes the payload of one location event at p (u64 code, u8 count,
// count locations with their new names) reading nothing at or past `end`;
// records the code's locations (checking that a code defined again gets the
// same ones). Returns the position after the payload, or NULL with *err set.
const uint8_t *loc_table_read_event(LocTable *t, LocNames *names, const uint8_t *p,
                                    const uint8_t *end, LocError *err);

// The locations of `code` as trace_reader_locations describes them.
int loc_table_find(const LocTable *t, uint64_t code, const TraceReaderLocation **locs);

// Distinct codes defined so far.
uint64_t loc_table_codes(const LocTable *t);

#endif
