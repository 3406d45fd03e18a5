#!/usr/bin/env bash
# trace_babeltrace.sh - the CTF metadata trace/memtrace-v2.tsdl and
# memtrace-v3.tsdl, read by babeltrace2 (a generic CTF reader) on memtrace's
# own traces (tests/fixtures/memtrace) and on traces of our writer
# (build/release/tests/trace_synth). For each trace, babeltrace2 must decode
# every packet, and its events, reduced to "time-since-start kind [samples
# words]", must be exactly the events of the trace's dump (memtrace's
# dump_trace text, or the synth's expected text), in order. Also checks
# trace-info field values, and that the v2 metadata does not decode a v3
# trace (the header field the two differ by matters).
# Without babeltrace2 the suite says so and counts nothing.
# Last line: "N passed, N failed". Exit status 0 iff none failed.
set -u
cd "$(dirname "$0")/../.." || exit 2

. tests/suites/lib.sh
suite_init trace_babeltrace

if ! command -v babeltrace2 >/dev/null; then
  skip "babeltrace2 is not installed (Debian package babeltrace2): no check ran"
  suite_end
fi
synth=build/release/tests/trace_synth
fixtures=tests/fixtures/memtrace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# babeltrace2 --clock-cycles text -> "dt kind samples words" / "dt kind"
reduce_babeltrace() {
  awk '
    function vint(name,   s, i) {
      i = index($0, name " = { len = ( \"")
      if (i == 0) return "?"
      s = substr($0, i + length(name) + 14)
      if (substr(s, 1, 4) == "byte") { sub(/^byte" : container = /, "", s); return s + 0 }
      sub(/^[a-z]*" : container = [0-9]+ \), rest = \{ /, "", s)
      return s + 0
    }
    {
      t = substr($1, 2, length($1) - 2) + 0
      name = $2
      sub(/:$/, "", name)
      if (name == "trace_info") { start = t; next }
      if (name == "location") next
      dt = t - start
      if (name ~ /^alloc_w[0-9]+$/) { printf "%.0f alloc 1 %s\n", dt, substr(name, 8); next }
      if (name == "alloc") {
        kind = "alloc"
        if (index($0, "source = ( \"major\"")) kind = "alloc_major"
        if (index($0, "source = ( \"external\"")) kind = "alloc_ext"
        printf "%.0f %s %.0f %.0f\n", dt, kind, vint("samples"), vint("wosize")
        next
      }
      printf "%.0f %s\n", dt, name
    }'
}

# dump_trace text -> the same
reduce_dump() {
  awk '{
    if ($3 ~ /^alloc/) { len = $5; sub(/^len=/, "", len); printf "%.0f %s %s %s\n", $1 + 0, $3, $4, len }
    else printf "%.0f %s\n", $1 + 0, $3
  }'
}

# label ctf-file metadata-file expected-dump-text-file
check_trace() {
  local label=$1 dir="$tmp/ctf"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$2" "$dir/stream"
  cp "$3" "$dir/metadata"
  if ! babeltrace2 --clock-cycles --no-delta "$dir" >"$tmp/bt.txt" 2>"$tmp/bt.err"; then
    bad "$label: babeltrace2 failed: $(grep -m2 -E 'ERROR|error' "$tmp/bt.err")"
    return
  fi
  reduce_babeltrace <"$tmp/bt.txt" >"$tmp/got"
  reduce_dump <"$4" >"$tmp/want"
  if [ -s "$tmp/want" ] && cmp -s "$tmp/got" "$tmp/want"; then ok
  else
    bad "$label: babeltrace2's events differ from the dump ($(wc -l <"$tmp/got") against $(wc -l <"$tmp/want") lines)"
    diff "$tmp/got" "$tmp/want" | head -4
  fi
}

v2=trace/memtrace-v2.tsdl
v3=trace/memtrace-v3.tsdl
gunzip -c "$fixtures/bintrees-1e-5.dump.gz" >"$tmp/bintrees.dump"
gunzip -c "$fixtures/listmap-1e-6.dump.gz" >"$tmp/listmap.dump"
check_trace "memtrace's bintrees (v2)" "$fixtures/bintrees-1e-5.ctf" "$v2" "$tmp/bintrees.dump"
check_trace "memtrace's bintrees (v3)" "$fixtures/bintrees-1e-5.v3.ctf" "$v3" "$tmp/bintrees.dump"
check_trace "memtrace's listmap (v2)" "$fixtures/listmap-1e-6.ctf" "$v2" "$tmp/listmap.dump"

# trace info fields, as memtrace wrote them
grep -m1 'trace_info' "$tmp/bt.txt" >"$tmp/info" 2>/dev/null
if grep -q 'sample_rate = 1e-06, word_size = 64, executable = "bench/listmap.exe"' "$tmp/info" 2>/dev/null; then ok
else bad "listmap's trace_info fields: $(cut -c1-300 "$tmp/info")"; fi

if [ -x "$synth" ]; then
  for spec in "random 2" "big 2" "mixed 2" "big 3" "names 3"; do
    set -- $spec
    "$synth" --scenario "$1" --events 400 --seed 11 --version "$2" "$tmp/s.ctf" "$tmp/s.expect" || { bad "trace_synth $1 v$2 failed"; continue; }
    meta=$v2
    [ "$2" = 3 ] && meta=$v3
    check_trace "our writer, $1 (v$2)" "$tmp/s.ctf" "$meta" "$tmp/s.expect"
    if grep -m1 trace_info "$tmp/bt.txt" | grep -q "version = $2, pid = 4242,.*executable = \"trace_synth\", host = \"synth\", runtime_params = \"$1\", pid = 4242, context = \"\""; then ok
    else bad "our writer, $1 (v$2): trace_info fields: $(grep -m1 trace_info "$tmp/bt.txt" | cut -c1-300)"; fi
  done
else
  bad "$synth is not built"
fi

# the wrong metadata must not pass: v2's on a v3 trace
mkdir -p "$tmp/wrong"
cp "$fixtures/bintrees-1e-5.v3.ctf" "$tmp/wrong/stream"
cp "$v2" "$tmp/wrong/metadata"
if babeltrace2 --clock-cycles --no-delta "$tmp/wrong" 2>/dev/null | reduce_babeltrace | cmp -s - <(reduce_dump <"$tmp/bintrees.dump"); then
  bad "the v2 metadata decoded a v3 trace as if it were right"
else ok; fi

suite_end
