// test_tool_render.c - cmocka tests of the trace tool's output modules
// (tools/memtrace_cli): the pprof encoder (trace/pprof_writer.c, gzipped by
// render/pprof_file.c; its labels, its sink's failures), read back by a
// protobuf decoder written here from the wire format's description (varints,
// length-delimited fields, packed repeated fields); the flame graph SVG
// (flame_svg.c): layout, pruning, escaping, its HTML form; the report's own
// stacked charts (svg_chart.c): round ticks, stacking, escaping; text
// cleaning (text.c); the gnuplot driver's checks that run before gnuplot
// (gnuplot.c). gnuplot
// itself, go tool pprof and Chromium are exercised by
// tests/suites/memtrace_render.sh.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "render/flame_svg.h"
#include "render/gnuplot.h"
#include "render/pprof_file.h"
#include "render/svg_chart.h"
#include "base/text.h"

// ================================================================ protobuf decoding

typedef struct Bytes {
  const uint8_t *p;
  size_t n;
} Bytes;

static uint64_t get_varint(Bytes *b) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    assert_true(b->n > 0);
    uint8_t byte = *b->p++;
    b->n--;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
  fail_msg("varint longer than 10 bytes");
  return 0;
}

// The next field: its number, and its value (varint) or bytes (length-delimited).
typedef struct Field {
  unsigned number, wire;
  uint64_t value;
  Bytes bytes;
} Field;

static int next_field(Bytes *b, Field *f) {
  if (b->n == 0) return 0;
  uint64_t key = get_varint(b);
  f->number = (unsigned)(key >> 3);
  f->wire = key & 7;
  if (f->wire == 0) {
    f->value = get_varint(b);
  } else {
    assert_int_equal(f->wire, 2);
    uint64_t len = get_varint(b);
    assert_true(len <= b->n);
    f->bytes = (Bytes){b->p, (size_t)len};
    b->p += len;
    b->n -= len;
  }
  return 1;
}

// A decoded profile: the fields this test looks at.
typedef struct Profile {
  uint8_t *raw;
  size_t raw_len;
  char *strings[64];
  size_t n_strings;
  int64_t sample_types[8][2];
  size_t n_sample_types;
  Bytes samples[16], locations[16], functions[16], mappings[4];
  size_t n_samples, n_locations, n_functions, n_mappings;
  uint64_t period, time_nanos, duration_nanos, default_type, comments[4];
  size_t n_comments;
  int64_t period_type[2];
} Profile;

static uint8_t *gunzip_file(const char *path, size_t *len) {
  gzFile gz = gzopen(path, "rb");
  assert_non_null(gz);
  size_t cap = 1 << 16;
  uint8_t *data = malloc(cap);
  *len = 0;
  int got;
  while ((got = gzread(gz, data + *len, (unsigned)(cap - *len))) > 0) {
    *len += (size_t)got;
    if (*len == cap) data = realloc(data, cap *= 2);
  }
  assert_int_equal(got, 0);
  gzclose(gz);
  return data;
}

static void value_type(Bytes b, int64_t out[2]) {
  Field f;
  out[0] = out[1] = 0;
  while (next_field(&b, &f)) out[f.number - 1] = (int64_t)f.value;
}

static void read_profile(const char *path, Profile *p) {
  memset(p, 0, sizeof *p);
  p->raw = gunzip_file(path, &p->raw_len);
  Bytes b = {p->raw, p->raw_len};
  Field f;
  while (next_field(&b, &f)) {
    switch (f.number) {
      case 1: value_type(f.bytes, p->sample_types[p->n_sample_types++]); break;
      case 2: p->samples[p->n_samples++] = f.bytes; break;
      case 3: p->mappings[p->n_mappings++] = f.bytes; break;
      case 4: p->locations[p->n_locations++] = f.bytes; break;
      case 5: p->functions[p->n_functions++] = f.bytes; break;
      case 6:
        p->strings[p->n_strings] = strndup((const char *)f.bytes.p, f.bytes.n);
        p->n_strings++;
        break;
      case 9: p->time_nanos = f.value; break;
      case 10: p->duration_nanos = f.value; break;
      case 11: value_type(f.bytes, p->period_type); break;
      case 12: p->period = f.value; break;
      case 13: p->comments[p->n_comments++] = f.value; break;
      case 14: p->default_type = f.value; break;
      default: fail_msg("unexpected profile field %u", f.number);
    }
  }
}

static void free_profile(Profile *p) {
  for (size_t i = 0; i < p->n_strings; i++) free(p->strings[i]);
  free(p->raw);
}

static const char *str(const Profile *p, uint64_t index) {
  assert_true(index < p->n_strings);
  return p->strings[index];
}

// The varints of a packed repeated field.
static size_t unpack(Bytes b, uint64_t *out, size_t max) {
  size_t n = 0;
  while (b.n) {
    assert_true(n < max);
    out[n++] = get_varint(&b);
  }
  return n;
}

// ================================================================ pprof

static char *temp_path(const char *suffix) {
  static unsigned counter;
  char *path = malloc(256);
  snprintf(path, 256, "/tmp/test_tool_render.%d.%u%s", (int)getpid(), counter++, suffix);
  return path;
}

// A profile with two sample types, a period, times, a comment, one mapping,
// three functions (one asked for twice), two locations (one with an inlined
// frame) and two samples.
static void write_example(const char *path) {
  char err[256];
  PprofWriter *w = pprof_file_open(path, err, sizeof err);
  assert_non_null(w);
  pprof_writer_sample_type(w, "alloc_objects", "count");
  pprof_writer_sample_type(w, "alloc_space", "bytes");
  pprof_writer_period(w, "space", "bytes", 8000);
  pprof_writer_times(w, 1795621546509169000LL, 52501000);
  pprof_writer_comment(w, "rate 0.001");
  uint64_t m = pprof_writer_mapping(w, "/bin/vm");
  uint64_t f_main = pprof_writer_function(w, "main", "a.mn", 0);
  uint64_t f_map = pprof_writer_function(w, "List.map", "stdlib/list.mn", 0);
  uint64_t f_inl = pprof_writer_function(w, "inl", "stdlib/list.mn", 0);
  assert_int_equal(pprof_writer_function(w, "main", "a.mn", 0), f_main);
  assert_int_equal(f_main, 1);
  assert_int_equal(f_inl, 3);
  PprofLine outer = {f_main, 3}, inner[2] = {{f_inl, 9}, {f_map, 7}};
  uint64_t a = pprof_writer_location(w, m, &outer, 1), b = pprof_writer_location(w, m, inner, 2);
  uint64_t stack1[2] = {b, a}, stack2[1] = {a};
  int64_t values1[2] = {10, 8000}, values2[2] = {-1, (int64_t)1 << 62};
  pprof_writer_sample(w, stack1, 2, values1, 2);
  pprof_writer_sample(w, stack2, 1, values2, 2);
  pprof_writer_default_sample_type(w, "alloc_space");
  assert_int_equal(pprof_file_close(w, err, sizeof err), 0);
}

static void test_pprof_header_fields(void **state) {
  (void)state;
  char *path = temp_path(".pb.gz");
  write_example(path);
  Profile p;
  read_profile(path, &p);
  assert_string_equal(str(&p, 0), "");
  assert_int_equal(p.n_sample_types, 2);
  assert_string_equal(str(&p, (uint64_t)p.sample_types[0][0]), "alloc_objects");
  assert_string_equal(str(&p, (uint64_t)p.sample_types[0][1]), "count");
  assert_string_equal(str(&p, (uint64_t)p.sample_types[1][0]), "alloc_space");
  assert_string_equal(str(&p, (uint64_t)p.sample_types[1][1]), "bytes");
  assert_string_equal(str(&p, (uint64_t)p.period_type[0]), "space");
  assert_int_equal(p.period, 8000);
  assert_int_equal(p.time_nanos, 1795621546509169000ull);
  assert_int_equal(p.duration_nanos, 52501000);
  assert_int_equal(p.n_comments, 1);
  assert_string_equal(str(&p, p.comments[0]), "rate 0.001");
  assert_string_equal(str(&p, p.default_type), "alloc_space");
  // Every string once: "alloc_space" was asked for three times.
  for (size_t i = 0; i < p.n_strings; i++)
    for (size_t j = i + 1; j < p.n_strings; j++) assert_string_not_equal(p.strings[i], p.strings[j]);
  free_profile(&p);
  unlink(path);
  free(path);
}

static void test_pprof_samples_packed_leaf_first(void **state) {
  (void)state;
  char *path = temp_path(".pb.gz");
  write_example(path);
  Profile p;
  read_profile(path, &p);
  assert_int_equal(p.n_samples, 2);
  uint64_t ids[8], values[8];
  size_t n_ids = 0, n_values = 0;
  Field f;
  Bytes b = p.samples[0];
  while (next_field(&b, &f)) {
    assert_int_equal(f.wire, 2);  // packed
    if (f.number == 1) n_ids = unpack(f.bytes, ids, 8);
    if (f.number == 2) n_values = unpack(f.bytes, values, 8);
  }
  assert_int_equal(n_ids, 2);
  assert_int_equal(ids[0], 2);
  assert_int_equal(ids[1], 1);
  assert_int_equal(n_values, 2);
  assert_int_equal(values[0], 10);
  assert_int_equal(values[1], 8000);
  b = p.samples[1];
  while (next_field(&b, &f))
    if (f.number == 2) n_values = unpack(f.bytes, values, 8);
  assert_int_equal(values[0], UINT64_MAX);  // -1: ten bytes of two's complement
  assert_int_equal(values[1], (uint64_t)1 << 62);
  free_profile(&p);
  unlink(path);
  free(path);
}

static void test_pprof_functions_locations_mapping(void **state) {
  (void)state;
  char *path = temp_path(".pb.gz");
  write_example(path);
  Profile p;
  read_profile(path, &p);
  assert_int_equal(p.n_functions, 3);
  uint64_t fn[4][6] = {{0}};
  for (size_t i = 0; i < 3; i++) {
    Bytes b = p.functions[i];
    Field f;
    while (next_field(&b, &f)) fn[i][f.number] = f.value;
  }
  assert_int_equal(fn[1][1], 2);
  assert_string_equal(str(&p, fn[1][2]), "List.map");
  assert_int_equal(fn[1][3], 0);  // no system name: pprof would demangle it
  assert_string_equal(str(&p, fn[1][4]), "stdlib/list.mn");
  assert_int_equal(p.n_locations, 2);
  // Location 2: id, mapping 1, lines (inl:9, then its caller List.map:7).
  Bytes b = p.locations[1];
  Field f;
  uint64_t lines[2][3] = {{0}};
  size_t n_lines = 0;
  uint64_t id = 0, mapping = 0;
  while (next_field(&b, &f)) {
    if (f.number == 1) id = f.value;
    if (f.number == 2) mapping = f.value;
    if (f.number != 4) continue;
    Field lf;
    Bytes lb = f.bytes;
    while (next_field(&lb, &lf)) lines[n_lines][lf.number] = lf.value;
    n_lines++;
  }
  assert_int_equal(id, 2);
  assert_int_equal(mapping, 1);
  assert_int_equal(n_lines, 2);
  assert_int_equal(lines[0][1], 3);
  assert_int_equal(lines[0][2], 9);
  assert_int_equal(lines[1][1], 2);
  assert_int_equal(lines[1][2], 7);
  assert_int_equal(p.n_mappings, 1);
  uint64_t mp[11] = {0};
  b = p.mappings[0];
  while (next_field(&b, &f)) mp[f.number] = f.wire == 0 ? f.value : 0;
  assert_int_equal(mp[1], 1);
  assert_string_equal(str(&p, mp[5]), "/bin/vm");
  for (int k = 7; k <= 10; k++) assert_int_equal(mp[k], 1);
  free_profile(&p);
  unlink(path);
  free(path);
}

// The encoder alone (trace/pprof_writer.c, as the VM uses it): uncompressed
// bytes through a file descriptor; a sample's labels, a string and a number
// with its unit; a sink that refuses makes every later call a no-op and
// the failure is reported.
static void test_pprof_labels_uncompressed(void **state) {
  (void)state;
  char *path = temp_path(".pb");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  PprofWriter *w = pprof_writer_new(pprof_sink_fd, &fd);
  assert_non_null(w);
  pprof_writer_sample_type(w, "inuse_space", "bytes");
  uint64_t m = pprof_writer_mapping(w, "[vm]");
  PprofLine line = {pprof_writer_function(w, "main", "a.mn", 0), 3};
  uint64_t loc = pprof_writer_location(w, m, &line, 1);
  int64_t value = 4096;
  PprofLabel labels[] = {{"holder", "global log -> list cell xn", 0, NULL}, {"snapshot", NULL, 7, "count"}};
  pprof_writer_sample_labels(w, &loc, 1, &value, 1, labels, 2);
  assert_string_equal(pprof_writer_error(w), "");
  assert_int_equal(pprof_writer_free(w), 0);
  close(fd);
  Profile p;
  read_profile(path, &p);   // gzread reads a plain file as it is
  assert_int_equal(p.n_samples, 1);
  Bytes b = p.samples[0];
  Field f;
  uint64_t label[2][5] = {{0}};
  size_t n_labels = 0;
  while (next_field(&b, &f)) {
    if (f.number != 3) continue;
    Field lf;
    Bytes lb = f.bytes;
    while (next_field(&lb, &lf)) label[n_labels][lf.number] = lf.value;
    n_labels++;
  }
  assert_int_equal(n_labels, 2);
  assert_string_equal(str(&p, label[0][1]), "holder");
  assert_string_equal(str(&p, label[0][2]), "global log -> list cell xn");
  assert_int_equal(label[0][3], 0);
  assert_string_equal(str(&p, label[1][1]), "snapshot");
  assert_int_equal(label[1][2], 0);
  assert_int_equal(label[1][3], 7);
  assert_string_equal(str(&p, label[1][4]), "count");
  free_profile(&p);
  unlink(path);
  free(path);
}

static bool refusing_sink(void *ctx, const void *bytes, size_t n) {
  (void)bytes;
  size_t *calls = ctx;
  (*calls)++;
  errno = ENOSPC;
  return n == 0;
}

static void test_pprof_sink_refuses(void **state) {
  (void)state;
  size_t calls = 0;
  PprofWriter *w = pprof_writer_new(refusing_sink, &calls);
  assert_non_null(w);   // the first string was refused already
  assert_int_equal(calls, 1);
  assert_non_null(strstr(pprof_writer_error(w), "write failed"));
  pprof_writer_sample_type(w, "x", "y");
  assert_int_equal(pprof_writer_function(w, "f", "g", 0), 0);
  assert_int_equal(calls, 1);   // nothing more handed over
  assert_int_equal(pprof_writer_free(w), -1);
}

static void test_pprof_open_failure(void **state) {
  (void)state;
  char err[256];
  assert_null(pprof_file_open("/nonexistent-dir/x.pb.gz", err, sizeof err));
  assert_non_null(strstr(err, "/nonexistent-dir/x.pb.gz"));
}

static void test_pprof_write_failure(void **state) {
  (void)state;
  if (access("/dev/full", W_OK) != 0) {
    print_message("/dev/full is absent: write errors not tested\n");
    return;
  }
  char err[256];
  PprofWriter *w = pprof_file_open("/dev/full", err, sizeof err);
  assert_non_null(w);
  char name[64];
  for (int i = 0; i < 20000; i++) {  // more than zlib buffers
    snprintf(name, sizeof name, "function number %d", i);
    pprof_writer_function(w, name, "f.mn", 0);
  }
  assert_int_equal(pprof_file_close(w, err, sizeof err), -1);
  assert_true(strstr(err, "No space") != NULL);
}

// ================================================================ flame graph

static char *render(FlameSvg *f) {
  char *text;
  size_t len;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(flame_svg_write(f, out), 0);
  fclose(out);
  flame_svg_free(f);
  return text;
}

// The frame whose <title> starts with `name`: its data-x, data-w, data-l.
static int find_frame(const char *svg, const char *name, double *x, double *w, unsigned *l) {
  char needle[256];
  snprintf(needle, sizeof needle, "<title>%s\n", name);
  const char *t = strstr(svg, needle);
  if (!t) return 0;
  const char *g = t;
  while (g > svg && strncmp(g, "<g class=\"f\"", 12) != 0) g--;
  assert_int_equal(sscanf(g, "<g class=\"f\" data-x=\"%lf\" data-w=\"%lf\" data-l=\"%u\"", x, w, l), 3);
  return 1;
}

static void test_flame_layout(void **state) {
  (void)state;
  FlameSvgOptions o = {"title", "sub", "bytes", 1000, 1000, 0, false};
  FlameSvg *f = flame_svg_new(&o);
  assert_true(flame_svg_frame(f, 0, "main", "a.mn:1", 1000));
  assert_true(flame_svg_frame(f, 1, "left", "a.mn:2", 600));
  assert_true(flame_svg_frame(f, 2, "leftchild", "a.mn:3", 500));
  assert_true(flame_svg_frame(f, 1, "right", "a.mn:4", 300));
  assert_true(flame_svg_frame(f, 2, "rightchild", "a.mn:5", 100));
  char *svg = render(f);
  double x, w;
  unsigned l;
  assert_true(find_frame(svg, "all", &x, &w, &l));
  assert_true(x == 0 && w == 1 && l == 0);
  assert_true(find_frame(svg, "main", &x, &w, &l));
  assert_true(x == 0 && w == 1 && l == 1);
  assert_true(find_frame(svg, "left", &x, &w, &l));
  assert_true(x == 0 && w == 0.6 && l == 2);
  assert_true(find_frame(svg, "leftchild", &x, &w, &l));
  assert_true(x == 0 && w == 0.5 && l == 3);
  assert_true(find_frame(svg, "right", &x, &w, &l));
  assert_true(x == 0.6 && w == 0.3 && l == 2);
  assert_true(find_frame(svg, "rightchild", &x, &w, &l));
  assert_true(x == 0.6 && w == 0.1 && l == 3);
  assert_non_null(strstr(svg, "600 bytes, 60.00%"));
  assert_non_null(strstr(svg, "<script><![CDATA["));
  assert_null(strstr(svg, "http://www.w3.org/1999/xlink"));  // nothing fetched
  assert_null(strstr(svg, "href"));
  free(svg);
}

static void test_flame_prunes_narrow_frames(void **state) {
  (void)state;
  FlameSvgOptions o = {"t", NULL, "bytes", 1e6, 1020, 1.0, false};  // 1000 px of frames: 1 px is 1,000
  FlameSvg *f = flame_svg_new(&o);
  assert_true(flame_svg_frame(f, 0, "wide", "", 999000));
  assert_true(flame_svg_frame(f, 1, "wide2", "", 1000));
  assert_false(flame_svg_frame(f, 0, "narrow", "", 999));
  assert_false(flame_svg_frame(f, 1, "narrowchild", "", 999));
  char *svg = render(f);
  double x, w;
  unsigned l;
  assert_true(find_frame(svg, "wide2", &x, &w, &l));
  assert_false(find_frame(svg, "narrow", &x, &w, &l));
  assert_false(find_frame(svg, "narrowchild", &x, &w, &l));
  free(svg);
}

static void test_flame_escapes_and_cleans(void **state) {
  (void)state;
  FlameSvgOptions o = {"a<b", NULL, "bytes", 10, 0, 0, false};
  FlameSvg *f = flame_svg_new(&o);
  flame_svg_frame(f, 0, "f<&>\"'", "x.mn:1", 10);
  flame_svg_frame(f, 1, "bad\xff\x01\xc0\xafok\xc3\xa9", "y.mn:2", 5);
  char *svg = render(f);
  assert_non_null(strstr(svg, ">a&lt;b</text>"));
  assert_non_null(strstr(svg, "<title>f&lt;&amp;&gt;&quot;&#39;\nx.mn:1\n"));
  assert_non_null(strstr(svg, "<title>bad????ok\xc3\xa9\ny.mn:2\n"));
  // The script is the last element and holds no CDATA end before its own.
  const char *script = strstr(svg, "<script><![CDATA[");
  assert_non_null(script);
  const char *end = strstr(script, "]]>");
  assert_non_null(end);
  assert_string_equal(end, "]]></script>\n</svg>\n");
  free(svg);
}

static void test_flame_long_names_are_cut(void **state) {
  (void)state;
  FlameSvgOptions o = {"t", NULL, "bytes", 100, 220, 0, false};  // 200 px of frames
  FlameSvg *f = flame_svg_new(&o);
  const char *name = "a_function_name_much_longer_than_the_frame_is_wide_really";
  flame_svg_frame(f, 0, name, "", 50);  // 100 px: (100 - 6) / 7.2 = 13 characters
  char *svg = render(f);
  assert_non_null(strstr(svg, ">a_function_..</text>"));
  free(svg);
}

static void test_flame_inline_html(void **state) {
  (void)state;
  FlameSvgOptions o = {"t", NULL, "bytes", 10, 0, 0, true};
  FlameSvg *f = flame_svg_new(&o);
  flame_svg_frame(f, 0, "main", "m.mn:1", 10);
  char *svg = render(f);
  const char *start = "<svg version=\"1.1\" xmlns=";
  assert_true(strncmp(svg, start, strlen(start)) == 0);  // no XML declaration in a page
  assert_null(strstr(svg, "<?xml"));
  free(svg);
}

// ================================================================ svg_chart

static char *chart(const StackedChart *c, const SvgChartOptions *o) {
  char *text;
  size_t len;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(svg_chart_write(c, o, out), 0);
  fclose(out);
  return text;
}

static size_t count(const char *s, const char *what) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, what)); p++) n++;
  return n;
}

static void test_svg_chart_axes_and_bands(void **state) {
  (void)state;
  // Two bands over three moments; the stack peaks at 3.5 MiB at x = 1 s.
  double x[3] = {0, 1, 2}, mib = 1024.0 * 1024;
  double y[6] = {1 * mib, 0.5 * mib, 2 * mib, 1.5 * mib, 1 * mib, 0};
  const char *names[2] = {"site a", "rest"};
  StackedChart c = {"Live", "time", "bytes", 3, 2, x, y, names, true};
  double ticks[3] = {0.5, 1.5, 7};   // the last outside the plot: not drawn
  const char *tick_labels[3] = {"snapshot 0", "snapshot <1>", "snapshot 2"};
  double floor_x[2] = {0.5, 1.5}, floor_y[2] = {1 * mib, 9 * mib};   // the second above the axis: drawn at its top
  SvgChartOptions o = {1000, 200, "chart", true, 1, "peak here", ticks, tick_labels, 3, floor_x, floor_y, 2, "floor <a>"};
  char *svg = chart(&c, &o);
  const char *start = "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"1000\"";
  assert_true(strncmp(svg, start, strlen(start)) == 0);
  // Ticks: 0 to 4 MiB by 1 MiB (round steps in the axis' unit; the top one above the peak); x in seconds.
  for (int i = 0; i <= 4; i++) {
    char tick[32];
    snprintf(tick, sizeof tick, ">%d MiB</text>", i);
    assert_non_null(strstr(svg, tick));
  }
  assert_null(strstr(svg, ">5 MiB</text>"));
  assert_non_null(strstr(svg, ">2 s</text>"));
  // A path per band, each named with its peak; the rest grey; the marker.
  assert_int_equal(count(svg, "<path "), 2);
  assert_non_null(strstr(svg, "<title>site a: peak 2 MiB</title>"));
  assert_non_null(strstr(svg, "fill=\"#bab0ac\""));
  assert_non_null(strstr(svg, ">peak here</text>"));
  // Ticked moments: a dotted line each within the plot, the label a tooltip, escaped.
  assert_int_equal(count(svg, "<line class=\"tick\""), 2);
  assert_non_null(strstr(svg, "<title>snapshot 0</title></line>"));
  assert_non_null(strstr(svg, "<title>snapshot &lt;1&gt;</title></line>"));
  assert_null(strstr(svg, "snapshot 2"));
  // The line of points: a dashed polyline and a dot a point, each dot's value
  // a tooltip (its label escaped), clipped to the plot; its legend line.
  assert_int_equal(count(svg, "<circle "), 2);
  assert_non_null(strstr(svg, "<g class=\"floor\"><polyline "));
  assert_non_null(strstr(svg, "<title>floor &lt;a&gt;: 1 MiB</title></circle>"));
  assert_non_null(strstr(svg, "<title>floor &lt;a&gt;: 9 MiB</title></circle>"));
  assert_non_null(strstr(svg, "cy=\"34.0\""));   // 9 MiB drawn at the axis' top (4 MiB: y = 34)
  assert_non_null(strstr(svg, ">floor &lt;a&gt;</text>"));
  // Band 0 starts at its own top (1 MiB of 4: y = 34 + 200 - 50); the stack's top reaches 3.5 MiB.
  assert_non_null(strstr(svg, "d=\"M92.0,184.0"));
  assert_non_null(strstr(svg, "points=\"92.0,159.0 "));
  // It ends with its closing tag, no newline (contract 2), and has no id.
  size_t n = strlen(svg);
  assert_true(n > 6 && strcmp(svg + n - 6, "</svg>") == 0);
  assert_null(strstr(svg, " id="));
  free(svg);
}

static void test_svg_chart_escapes_and_empty(void **state) {
  (void)state;
  double x[2] = {0, 1}, y[2] = {8, 16};
  const char *names[1] = {"f </title><script>alert('x')</script> & \"q\""};
  StackedChart c = {"t<i>", "a&b", "y", 2, 1, x, y, names, false};
  SvgChartOptions o = {0, 0, NULL, false, 0, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL};
  char *svg = chart(&c, &o);
  assert_null(strstr(svg, "<script"));
  assert_null(strstr(svg, "<i>"));
  assert_non_null(strstr(svg, "f &lt;/title&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"));
  assert_non_null(strstr(svg, ">t&lt;i&gt;</text>"));
  assert_non_null(strstr(svg, ">a&amp;b</text>"));
  free(svg);
  StackedChart one = {"t", "x", "y", 1, 1, x, y, names, true};
  svg = chart(&one, &o);
  assert_non_null(strstr(svg, "nothing to draw: 1 moment in the series"));
  free(svg);
}

// ================================================================ text and gnuplot

static void test_text_clean(void **state) {
  (void)state;
  char out[16];
  assert_string_equal(text_clean(out, sizeof out, "plain"), "plain");
  assert_string_equal(text_clean(out, sizeof out, "a\nb\tc\x7f"), "a?b?c?");
  assert_string_equal(text_clean(out, sizeof out, "\xed\xa0\x80"), "???");        // a surrogate
  assert_string_equal(text_clean(out, sizeof out, "\xe2\x82\xac!"), "\xe2\x82\xac!");  // euro sign
  assert_string_equal(text_clean(out, sizeof out, "\xf4\x90\x80\x80"), "????");  // past U+10FFFF
  assert_string_equal(text_clean(out, sizeof out, "0123456789abcdef"), "0123456789abc..");
  assert_string_equal(text_clean(out, 8, "abcd\xe2\x82\xac"), "abcd\xe2\x82\xac");  // fits exactly
  assert_string_equal(text_clean(out, 8, "abcd\xe2\x82\xacz"), "abcd..");  // no character cut in half
}

static void test_gnuplot_checks(void **state) {
  (void)state;
  assert_string_equal(gnuplot_format("a.svg"), "svg");
  assert_string_equal(gnuplot_format("dir/a.png"), "png");
  assert_null(gnuplot_format("a.pdf"));
  assert_null(gnuplot_format(".png"));
  double x[1] = {0}, y[1] = {1};
  const char *names[1] = {"a"};
  StackedChart c = {"t", "x", "y", 1, 1, x, y, names, true};
  char err[256];
  assert_int_equal(gnuplot_stacked(&c, "/tmp/never.png", err, sizeof err), -1);
  assert_non_null(strstr(err, "1 time points"));
  assert_int_equal(gnuplot_stacked(&c, "/tmp/never.gif", err, sizeof err), -1);
  assert_non_null(strstr(err, ".svg or .png"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pprof_header_fields),
      cmocka_unit_test(test_pprof_samples_packed_leaf_first),
      cmocka_unit_test(test_pprof_functions_locations_mapping),
      cmocka_unit_test(test_pprof_labels_uncompressed),
      cmocka_unit_test(test_pprof_sink_refuses),
      cmocka_unit_test(test_pprof_open_failure),
      cmocka_unit_test(test_pprof_write_failure),
      cmocka_unit_test(test_flame_layout),
      cmocka_unit_test(test_flame_prunes_narrow_frames),
      cmocka_unit_test(test_flame_escapes_and_cleans),
      cmocka_unit_test(test_flame_inline_html),
      cmocka_unit_test(test_svg_chart_axes_and_bands),
      cmocka_unit_test(test_svg_chart_escapes_and_empty),
      cmocka_unit_test(test_flame_long_names_are_cut),
      cmocka_unit_test(test_text_clean),
      cmocka_unit_test(test_gnuplot_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
