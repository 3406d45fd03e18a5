// dump.c - `memtrace dump FILE`: every event, one line each, byte for byte
// the output of memtrace 0.2.3's dump_trace (bin/dump_trace.ml):
//   TTTTTTTTTT IIIIIIIIII alloc N len=L    P: F1 F2 ...
//   TTTTTTTTTT IIIIIIIIII promote | collect
// T: us since the trace's start, I: allocation id (both %010d), "alloc" is
// alloc_major / alloc_ext for the other sources, P the common prefix as
// coded ("% 4d"), each frame `function@file:line:start-end` per location or
// `$code` for a code with none. A frame's text is built once per code.
// Every frame of every event is printed, so the output grows with depth x
// events (a 960 KB trace can hold 47,000 stacks of 300,000 frames): at most
// DUMP_MAX_FRAMES frames in all, or DUMP_FRAMES_PER_BYTE for each byte of
// the trace if that is more, are printed, then the dump stops as at damage,
// naming the byte (memtrace's dump_trace has no such limit). The second
// bound lets a real trace through whole (binary_trees 19 traced at 0.1, 759
// MB, prints 870 M frames: 1.1 a byte), a crafted one's output stays linear
// in its size.
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/ocaml_int.h"
#include "../base/xalloc.h"
#include "../cli/options.h"
#include "commands.h"

static const ToolUsage usage = {
    "dump",
    "usage: memtrace dump [-o OUT] FILE\n"
    "Prints every event of the trace FILE (\"-\": stdin), one per line, exactly as\n"
    "memtrace's dump_trace prints them. On a damaged or truncated trace: the events\n"
    "before the damage, then the error on stderr with its byte offset; exit status 1.\n"
    "  -o OUT   write to OUT instead of stdout\n",
};

// ---------------------------------------------------------------- output

typedef struct Out {
  size_t len;
  char buf[1 << 16];
} Out;

static void out_flush(Out *o) {
  fwrite(o->buf, 1, o->len, stdout);
  o->len = 0;
}

// Room for n more bytes (n at most the buffer's size).
static char *out_room(Out *o, size_t n) {
  if (sizeof o->buf - o->len < n) out_flush(o);
  return o->buf + o->len;
}

static void out_bytes(Out *o, const char *s, size_t n) {
  if (n > sizeof o->buf) {
    out_flush(o);
    fwrite(s, 1, n, stdout);
    return;
  }
  memcpy(out_room(o, n), s, n);
  o->len += n;
}

typedef enum Pad { PAD_NONE, PAD_ZEROS, PAD_SPACE_FLAG } Pad;

// printf's %d (PAD_NONE), %0Wd (PAD_ZEROS) or % Wd (PAD_SPACE_FLAG).
static void out_int(Out *o, int64_t v, unsigned width, Pad pad) {
  char digits[24];
  unsigned n = 0;
  uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
  do digits[n++] = (char)('0' + u % 10); while ((u /= 10));
  char sign = v < 0 ? '-' : pad == PAD_SPACE_FLAG ? ' ' : 0;
  unsigned used = n + (sign != 0);
  unsigned fill = width > used ? width - used : 0;
  char *d = out_room(o, used + fill);
  char *start = d;
  if (pad != PAD_ZEROS) for (unsigned i = 0; i < fill; i++) *d++ = ' ';
  if (sign) *d++ = sign;
  if (pad == PAD_ZEROS) for (unsigned i = 0; i < fill; i++) *d++ = '0';
  while (n) *d++ = digits[--n];
  o->len += (size_t)(d - start);
}

// ---------------------------------------------------------------- frame texts

// Invariant: slots is a power of two, at most half used.
typedef struct FrameTexts {
  struct FrameText { uint64_t code; size_t offset; uint32_t len; bool used; } *slots;
  size_t n_slots, n_used;
  char *pool;
  size_t pool_len, pool_cap;
} FrameTexts;

static size_t text_slot(uint64_t code, size_t n_slots) { return (code * 0x9E3779B97F4A7C15ull >> 17) & (n_slots - 1); }

static void pool_add(FrameTexts *t, const char *s, size_t n) {
  if (t->pool_cap - t->pool_len < n) {
    t->pool_cap = 2 * t->pool_cap + n + 4096;
    t->pool = xrealloc(t->pool, t->pool_cap);
  }
  memcpy(t->pool + t->pool_len, s, n);
  t->pool_len += n;
}

static void pool_add_str(FrameTexts *t, const char *s) { pool_add(t, s, strlen(s)); }

static void pool_add_int(FrameTexts *t, int64_t v) {
  char s[24];
  pool_add(t, s, (size_t)snprintf(s, sizeof s, "%lld", (long long)v));
}

// Appends the text of `code` to the pool: " f@file:line:start-end" for each
// of its locations, or " $code".
static void render(FrameTexts *t, const TraceReader *r, uint64_t code) {
  const TraceReaderLocation *locs;
  int n = trace_reader_locations(r, code, &locs);
  if (n <= 0) {
    pool_add_str(t, " $");
    pool_add_int(t, ocaml_int(code));
  }
  for (int i = 0; i < n; i++) {
    pool_add_str(t, " ");
    pool_add_str(t, locs[i].function);
    pool_add_str(t, "@");
    pool_add_str(t, locs[i].file);
    pool_add_str(t, ":");
    pool_add_int(t, locs[i].line);
    pool_add_str(t, ":");
    pool_add_int(t, locs[i].start_col);
    pool_add_str(t, "-");
    pool_add_int(t, locs[i].end_col);
  }
}

static void grow_texts(FrameTexts *t) {
  size_t n_slots = t->n_slots ? 2 * t->n_slots : 1024;
  struct FrameText *slots = xrealloc(NULL, n_slots * sizeof *slots);
  memset(slots, 0, n_slots * sizeof *slots);
  for (size_t i = 0; i < t->n_slots; i++) {
    if (!t->slots[i].used) continue;
    size_t j = text_slot(t->slots[i].code, n_slots);
    while (slots[j].used) j = (j + 1) & (n_slots - 1);
    slots[j] = t->slots[i];
  }
  free(t->slots);
  t->slots = slots;
  t->n_slots = n_slots;
}

static const struct FrameText *frame_text(FrameTexts *t, const TraceReader *r, uint64_t code) {
  if (2 * (t->n_used + 1) > t->n_slots) grow_texts(t);
  size_t j = text_slot(code, t->n_slots);
  for (; t->slots[j].used; j = (j + 1) & (t->n_slots - 1))
    if (t->slots[j].code == code) return &t->slots[j];
  size_t start = t->pool_len;
  render(t, r, code);
  t->slots[j] = (struct FrameText){code, start, (uint32_t)(t->pool_len - start), true};
  t->n_used++;
  return &t->slots[j];
}

// ---------------------------------------------------------------- events

static const char *alloc_word(TraceSource source) {
  return source == TRACE_SOURCE_MAJOR ? " alloc_major " : source == TRACE_SOURCE_EXTERNAL ? " alloc_ext " : " alloc ";
}

static void dump_event(Out *o, FrameTexts *texts, const TraceReader *r, const TraceEvent *ev) {
  out_int(o, (int64_t)ev->dtime_us, 10, PAD_ZEROS);
  out_bytes(o, " ", 1);
  out_int(o, (int64_t)ev->id, 10, PAD_ZEROS);
  if (ev->kind != TRACE_EVENT_ALLOC) {
    const char *what = ev->kind == TRACE_EVENT_PROMOTE ? " promote\n" : " collect\n";
    out_bytes(o, what, strlen(what));
    return;
  }
  const char *word = alloc_word(ev->source);
  out_bytes(o, word, strlen(word));
  out_int(o, (int64_t)ev->n_samples, 0, PAD_NONE);
  out_bytes(o, " len=", 5);
  out_int(o, (int64_t)ev->length, 0, PAD_NONE);
  out_bytes(o, " ", 1);
  out_int(o, (int64_t)ev->coded_prefix, 4, PAD_SPACE_FLAG);
  out_bytes(o, ":", 1);
  for (uint32_t i = 0; i < ev->backtrace_len; i++) {
    const struct FrameText *f = frame_text(texts, r, ev->backtrace[i]);
    out_bytes(o, texts->pool + f->offset, f->len);
  }
  out_bytes(o, "\n", 1);
}

enum { DUMP_MAX_FRAMES = 1u << 28, DUMP_FRAMES_PER_BYTE = 64 };

int cmd_dump(int argc, char **argv) {
  const char *out_path = NULL;
  const ToolOption options[] = {TOOL_OPTION_OUTPUT(&out_path)};
  ToolArgs args = {&usage, options, 1, 1, 1, NULL, 0};
  TraceReader *r;
  int status = tool_parse_and_open(&args, argc, argv, &out_path, &r);
  if (status != TOOL_CONTINUE) return status;
  const char *path = args.files[0];
  static Out out;
  FrameTexts texts = {0};
  TraceEvent ev;
  TraceReaderStatus s;
  uint64_t frames = 0, max_frames = DUMP_MAX_FRAMES;
  struct stat st;
  if (stat(path, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size > max_frames / DUMP_FRAMES_PER_BYTE)
    max_frames = (uint64_t)st.st_size * DUMP_FRAMES_PER_BYTE;
  while ((s = trace_reader_next(r, &ev)) == TRACE_READER_EVENT) {
    if ((frames += ev.backtrace_len) > max_frames) break;
    dump_event(&out, &texts, r, &ev);
  }
  out_flush(&out);
  status = s == TRACE_READER_ERROR ? tool_trace_error(&usage, path, r) : 0;
  if (s == TRACE_READER_EVENT) {
    fprintf(stderr, "memtrace dump: %s: byte %llu: more than %llu frames to print, the dump's limit; the events "
            "before it are printed\n", path, (unsigned long long)ev.offset, (unsigned long long)max_frames);
    status = 1;
  }
  TraceReaderStats stats;
  trace_reader_stats(r, &stats);
  if (stats.skipped_packets)
    fprintf(stderr, "memtrace dump: %s: skipped %llu packets of other processes than pid %llu\n", path,
            (unsigned long long)stats.skipped_packets, (unsigned long long)trace_reader_info(r)->pid);
  if (tool_finish_output(&usage) != 0) status = 1;
  free(texts.slots);
  free(texts.pool);
  trace_reader_close(r);
  return status;
}
