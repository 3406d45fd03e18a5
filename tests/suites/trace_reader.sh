#!/usr/bin/env bash
# trace_reader.sh - tools/memtrace (dump, info, usage) on memtrace's own traces,
# on damaged ones, and on the fuzz corpus and saved crashes, with the release
# and the ASan+UBSan builds (build/asan/memtrace):
#   1. `memtrace dump X.ctf` prints exactly tests/fixtures/memtrace/X.dump.gz
#      (memtrace 0.2.3's dump_trace output); the v3 trace its v2 twin's dump.
#   2. `memtrace info` counts the events the dump shows.
#   3. Cut at every packet boundary, 1 byte either side, and 9 points inside
#      each packet: the output is a prefix of the full dump, the exit status
#      0 at a boundary and 1 inside a packet, with "FILE: byte N:" and
#      "truncated" on stderr.
#   4. Empty, garbage and header-only files: exit 1, a message naming the
#      file and byte, no sanitizer report.
#   5. The fuzz corpus and tests/fuzz/reader/crashes/* on the ASan builds of
#      memtrace and of the fuzz harness (build/asan/fuzz_reader_replay).
#      The pair target's corpus (tests/fuzz/reader/pairs/*, and saved
#      crashes/*.pair: a trace and its snapshot file in one input) through
#      its ASan+UBSan harness (build/asan/fuzz_pair_replay: info, leaks,
#      paths, paths --by holder, top --live --by holder, diff --by holder,
#      pprof --at, then the follow-mode reading), in one process; on a
#      failure each input again alone, to name it. The generator's lying
#      pairs (a block the trace does not have alive, an end state of another
#      count, a snapshot past the trace's end) unpacked: refused, naming
#      what disagrees, or the snapshot said not usable.
#      The issue-23 examples (tests/fuzz/trace_gen.c's gen-span-40s,
#      gen-frames-limit, gen-frames-repeat): refused at the right byte, or
#      read whole.
#   6. Usage errors exit 2, --help exits 0.
#   7. If memtrace's own dump_trace.exe is at hand (MEMTRACE_REFERENCE: see
#      tests/trace/reference.sh), synthetic traces
#      (build/release/trace_gen) and cut ones dump the same with both;
#      otherwise says so and counts nothing.
#   8. Our writer's synthetic scenarios (build/release/tests/trace_synth,
#      trace/writer.c: deep, evicting, long names, frame code 0...) in
#      versions 1 to 3 dump to exactly the text the synth expects.
# Last line: "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init trace_reader

fixtures=tests/fixtures/memtrace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tools=()
for t in tools/memtrace build/asan/memtrace; do
  if [ -x "$t" ]; then tools+=("$t"); else bad "$t is not built"; fi
done

# A clean exit: status 0 or 1 and no sanitizer report on stderr.
clean_exit() {  # status, stderr file
  [ "$1" -le 1 ] && ! grep -q -E 'Sanitizer|runtime error' "$2"
}

# ---------------------------------------------------------------- 1, 2: fixtures
for tool in "${tools[@]}"; do
  for f in "$fixtures"/*.ctf; do
    base=${f%.ctf}
    want=$base.dump.gz
    [ -f "$want" ] || want=${base%.v3}.dump.gz
    "$tool" dump "$f" > "$tmp/out" 2> "$tmp/err"
    status=$?
    check "$tool dump $f: exit $status, $(head -c 200 "$tmp/err")" '[ $status -eq 0 ] && [ ! -s "$tmp/err" ]'
    check "$tool dump $f differs from $want" 'zcat "$want" | cmp -s - "$tmp/out"'
  done
done
for f in "$fixtures"/*.ctf; do
  base=${f%.ctf}
  want=$base.dump.gz
  [ -f "$want" ] || want=${base%.v3}.dump.gz
  allocs=$(zcat "$want" | grep -c ' alloc')
  promotes=$(zcat "$want" | grep -c ' promote$')
  collects=$(zcat "$want" | grep -c ' collect$')
  tools/memtrace info "$f" > "$tmp/info" 2>&1
  status=$?
  check "memtrace info $f: exit $status" '[ $status -eq 0 ]'
  check "memtrace info $f: counts" \
    'grep -q "^events *$((allocs + promotes + collects)): $allocs allocations, $promotes promotions, $collects collections$" "$tmp/info"'
  check "memtrace info $f: bytes" 'grep -q "^bytes *$(stat -c %s "$f"): " "$tmp/info"'
done

# ---------------------------------------------------------------- 3: truncation
# Packet boundaries of a well-formed trace, from its size fields.
packet_ends() {
  local f=$1 off=0 size bits
  size=$(stat -c %s "$f")
  while [ "$off" -lt "$size" ]; do
    bits=$(od -An -tu4 -j $((off + 4)) -N4 "$f" | tr -d ' ')
    off=$((off + bits / 8))
    echo "$off"
  done
}

# Cuts f after `cut` bytes and dumps it with `tool`; checks the contract.
check_cut() {  # tool, file, full dump, cut, at a boundary (1/0)
  local tool=$1 f=$2 full=$3 cut=$4 boundary=$5 status n
  head -c "$cut" "$f" > "$tmp/cut.ctf"
  "$tool" dump "$tmp/cut.ctf" > "$tmp/cut.out" 2> "$tmp/cut.err"
  status=$?
  n=$(stat -c %s "$tmp/cut.out")
  if ! head -c "$n" "$full" | cmp -s - "$tmp/cut.out"; then
    bad "$tool dump of $f cut at $cut is not a prefix of its full dump"
  elif [ "$boundary" = 1 ] && [ "$status" -ne 0 ]; then
    bad "$tool dump of $f cut at packet boundary $cut: exit $status, $(cat "$tmp/cut.err")"
  elif [ "$boundary" = 0 ] && ! { [ "$status" -eq 1 ] && grep -q "cut.ctf: byte [0-9]*: .*truncated" "$tmp/cut.err"; }; then
    bad "$tool dump of $f cut at $cut: exit $status, stderr: $(head -c 300 "$tmp/cut.err")"
  elif ! clean_exit "$status" "$tmp/cut.err"; then
    bad "$tool dump of $f cut at $cut: sanitizer report"
  else
    ok
  fi
}

for tool in "${tools[@]}"; do
  for f in "$fixtures"/bintrees-1e-5.ctf "$fixtures"/hashtbl_str-1e-4.ctf "$fixtures"/listmap-1e-6.ctf; do
    "$tool" dump "$f" > "$tmp/full"
    prev=0
    for end in $(packet_ends "$f"); do
      check_cut "$tool" "$f" "$tmp/full" "$end" 1
      [ "$prev" -gt 0 ] && check_cut "$tool" "$f" "$tmp/full" $((prev + 1)) 0
      check_cut "$tool" "$f" "$tmp/full" $((end - 1)) 0
      for k in 1 2 3 4 5 6 7 8 9; do
        check_cut "$tool" "$f" "$tmp/full" $((prev + (end - prev) * k / 10)) 0
      done
      prev=$end
    done
  done
done

# ---------------------------------------------------------------- 4: garbage
: > "$tmp/empty.ctf"
head -c 1 "$fixtures/bintrees-1e-5.ctf" > "$tmp/one-byte.ctf"
head -c 66 "$fixtures/bintrees-1e-5.ctf" > "$tmp/header-only.ctf"
head -c 4096 /dev/zero > "$tmp/zeros.ctf"
tail -c +2 "$fixtures/bintrees-1e-5.ctf" > "$tmp/shifted.ctf"
printf 'this is not a trace\n' > "$tmp/text.ctf"
for tool in "${tools[@]}"; do
  for f in "$tmp"/empty.ctf "$tmp"/one-byte.ctf "$tmp"/header-only.ctf "$tmp"/zeros.ctf "$tmp"/shifted.ctf "$tmp"/text.ctf; do
    for cmd in dump info; do
      "$tool" $cmd "$f" > /dev/null 2> "$tmp/err"
      status=$?
      check "$tool $cmd $(basename "$f"): exit $status, $(head -c 200 "$tmp/err")" \
        '[ $status -eq 1 ] && grep -q "^memtrace $cmd: $f: byte [0-9]*: " "$tmp/err" && clean_exit $status "$tmp/err"'
    done
  done
done
"${tools[0]}" dump "$tmp/zeros.ctf" 2> "$tmp/err" > /dev/null
check "zeros: bad magic at byte 0" 'grep -q "byte 0: bad magic 0x00000000" "$tmp/err"'
"${tools[0]}" dump "$tmp/empty.ctf" 2> "$tmp/err" > /dev/null
check "empty file: named as such" 'grep -q "byte 0: the file is empty" "$tmp/err"'
"${tools[0]}" dump "$tmp/header-only.ctf" 2> "$tmp/err" > /dev/null
check "header only: truncated" 'grep -q "byte 0: the trace is truncated: the file ends 66 bytes into a 187-byte packet" "$tmp/err"'
tools/memtrace dump /nonexistent.ctf 2> "$tmp/err"
status=$?
check "missing file: exit 1 and errno text" '[ $status -eq 1 ] && grep -q "/nonexistent.ctf: cannot open: No such file" "$tmp/err"'

# ---------------------------------------------------------------- 5: corpus and crashes
inputs=(tests/fuzz/reader/corpus/* tests/fuzz/reader/crashes/*)
if [ -x build/asan/memtrace ]; then
  for f in "${inputs[@]}"; do
    [ -f "$f" ] || continue
    build/asan/memtrace dump "$f" > /dev/null 2> "$tmp/err"
    status=$?
    check "asan memtrace dump $f: exit $status $(grep -m1 -E 'Sanitizer|runtime error' "$tmp/err")" \
      'clean_exit $status "$tmp/err"'
  done
fi
if [ -x build/asan/fuzz_reader_replay ]; then
  for f in "${inputs[@]}"; do
    [ -f "$f" ] || continue
    build/asan/fuzz_reader_replay "$f" > /dev/null 2> "$tmp/err"
    status=$?
    check "fuzz harness (ASan) on $f: exit $status $(grep -m1 -E 'Sanitizer|runtime error' "$tmp/err")" \
      '[ $status -eq 0 ] && [ ! -s "$tmp/err" ]'
  done
else
  bad "build/asan/fuzz_reader_replay is not built"
fi

pairs=()
for f in tests/fuzz/reader/pairs/* tests/fuzz/reader/crashes/*.pair; do [ -f "$f" ] && pairs+=("$f"); done
if [ ! -x build/asan/fuzz_pair_replay ]; then
  bad "build/asan/fuzz_pair_replay is not built"
elif [ ${#pairs[@]} -lt 100 ]; then
  bad "tests/fuzz/reader/pairs holds ${#pairs[@]} inputs (make fuzz-pair-seeds)"
else
  timeout 300 build/asan/fuzz_pair_replay "${pairs[@]}" > /dev/null 2> "$tmp/err"
  status=$?
  if [ $status -eq 0 ] && [ ! -s "$tmp/err" ]; then
    for f in "${pairs[@]}"; do ok; done
  else
    before=$fail
    head -c 2000 "$tmp/err" > "$tmp/batch.err"
    for f in "${pairs[@]}"; do
      timeout 60 build/asan/fuzz_pair_replay "$f" > /dev/null 2> "$tmp/err"
      status=$?
      check "pair harness (ASan) on $f: exit $status $(grep -m1 -E 'Sanitizer|runtime error' "$tmp/err")" \
        '[ $status -eq 0 ] && [ ! -s "$tmp/err" ]'
    done
    # Each alone clean, together not: state carried from one input to the next.
    [ $fail -eq $before ] && bad "pair harness (ASan) on all pairs in one process: exit $status, each alone clean: $(cat "$tmp/batch.err")"
  fi
fi

# The generator's lying pairs (trace_gen --lies), unpacked: what the tools
# make of a snapshot file that is well formed but not the trace's story.
unpack_pair() {  # pair, trace out (its snapshot file: out.retain)
  local t
  t=$(od -An -tu4 -j8 -N4 "$1" | tr -d ' ')
  tail -c +17 "$1" | head -c "$t" > "$2"
  tail -c +$((17 + t)) "$1" > "$2.retain"
}
lie_case() {  # lie, command, wanted status, pattern wanted on stderr and stdout
  local f=tests/fuzz/reader/pairs/gen-lie-$1.pair
  if [ ! -f "$f" ]; then
    bad "$f is missing (make fuzz-pair-seeds)"
    return
  fi
  unpack_pair "$f" "$tmp/lie.ctf"
  tools/memtrace $2 "$tmp/lie.ctf" > "$tmp/lie.out" 2> "$tmp/lie.err"
  local status=$? want=$3 pattern=$4
  check "memtrace $2 on the pair gen-lie-$1: exit $status (want $want), $(head -c 300 "$tmp/lie.err")" \
    '[ $status -eq $want ] && cat "$tmp/lie.err" "$tmp/lie.out" | grep -q "$pattern"'
}
lie_case unknown-id leaks 1 "lists allocation [0-9]*, which the trace does not have alive then"
lie_case collected leaks 1 "snapshot 0 lists allocation [0-9]*, which the trace does not have alive then"
lie_case end-count leaks 1 "its end state was made for a trace of [0-9]* allocations; this one has [0-9]*"
lie_case end-count paths 1 "its end state was made for a trace of [0-9]* allocations"
lie_case count-past info 0 "snapshot 2 .*not usable: the trace read stops before it"
lie_case count-back info 0 "snapshot 1 .*not usable: it counts [0-9]* allocations, fewer than the [0-9]* of the snapshot before it"

# The issue's examples (tests/fuzz/trace_gen.c writes them): a packet
# spanning 40 s is refused at its last time's field, not read as 6.4 s; a
# backtrace one frame past issue 23's limit of 2^20 frames reads whole now
# (issue 32: the limit is what a writer writes, format.h TRACE_MAX_FRAMES);
# 17 events of a million frames each read whole.
for tool in "${tools[@]}"; do
  f=tests/fuzz/reader/corpus/gen-span-40s.ctf
  "$tool" dump "$f" > "$tmp/out" 2> "$tmp/err"
  status=$?
  check "$tool dump $f: exit $status, $(head -c 200 "$tmp/err")" \
    '[ $status -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q "^memtrace dump: $f: byte 217: packet spans 40000000 us" "$tmp/err"'
  f=tests/fuzz/reader/corpus/gen-frames-limit.ctf
  timeout 10 "$tool" info "$f" > "$tmp/out" 2> "$tmp/err"
  status=$?
  check "$tool info $f: exit $status, $(head -c 200 "$tmp/err")" \
    '[ $status -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q "^backtraces *deepest 1048577 frames" "$tmp/out"'
  f=tests/fuzz/reader/corpus/gen-frames-repeat.ctf
  timeout 20 "$tool" info "$f" > "$tmp/out" 2> "$tmp/err"
  status=$?
  check "$tool info $f: exit $status, $(head -c 200 "$tmp/err")" \
    '[ $status -eq 0 ] && grep -q "^events *17: 17 allocations" "$tmp/out"'
done

# ---------------------------------------------------------------- 6: usage
usage_case() {  # wanted status, stream that must hold "usage:" (out/err), args...
  local want=$1 stream=$2
  shift 2
  tools/memtrace "$@" > "$tmp/u.out" 2> "$tmp/u.err"
  local status=$?
  check "memtrace $*: exit $status, want $want" '[ $status -eq $want ] && grep -q "usage: memtrace" "$tmp/u.$stream"'
}
usage_case 2 err
usage_case 2 err frobnicate x.ctf
usage_case 0 out --help
usage_case 0 out dump --help
usage_case 0 out info --help
usage_case 2 err dump
usage_case 2 err dump a.ctf b.ctf
usage_case 2 err dump --frobnicate a.ctf
usage_case 2 err info -x

# ---------------------------------------------------------------- 7: memtrace's own reader
. tests/trace/reference.sh
ref=$(memtrace_reference_dir) && ref=$ref/dump_trace.exe || ref=""
if [ -n "$ref" ] && [ -x "$ref" ] && [ -x build/release/trace_gen ]; then
  for shape in shallow deep recursive cut; do
    for v in 1 2; do
      events=3000
      [ "$shape" = cut ] && events=30
      build/release/trace_gen --version $v --shape $shape --events $events --seed 7 "$tmp/s.ctf"
      "$ref" "$tmp/s.ctf" > "$tmp/ref.out" 2> /dev/null
      tools/memtrace dump "$tmp/s.ctf" > "$tmp/ours.out" 2> "$tmp/err"
      check "synthetic $shape v$v: our dump differs from memtrace's dump_trace" \
        '[ -s "$tmp/ref.out" ] && cmp -s "$tmp/ref.out" "$tmp/ours.out"'
      size=$(stat -c %s "$tmp/s.ctf")
      head -c $((size * 2 / 3)) "$tmp/s.ctf" > "$tmp/cut.ctf"  # memtrace skips the cut packet too
      "$ref" "$tmp/cut.ctf" > "$tmp/ref.out" 2> /dev/null
      tools/memtrace dump "$tmp/cut.ctf" > "$tmp/ours.out" 2> /dev/null
      check "synthetic $shape v$v cut: our dump differs from memtrace's" 'cmp -s "$tmp/ref.out" "$tmp/ours.out"'
    done
  done
else
  skip "memtrace's dump_trace.exe not found (set MEMTRACE_REFERENCE): cross-check not run, not counted"
fi

# ---------------------------------------------------------------- 8: our writer
if [ -x build/release/tests/trace_synth ]; then
  for sc in random deep long evict names big mixed zero; do
    for v in 1 2 3; do
      build/release/tests/trace_synth --scenario $sc --events 400 --seed 3 --version $v "$tmp/w.ctf" "$tmp/w.expect"
      tools/memtrace dump "$tmp/w.ctf" > "$tmp/w.out" 2> "$tmp/err"
      status=$?
      check "writer's $sc v$v: exit $status $(head -c 200 "$tmp/err"), dump differs from the events written" \
        '[ $status -eq 0 ] && cmp -s "$tmp/w.expect" "$tmp/w.out"'
    done
  done
else
  bad "build/release/tests/trace_synth is not built"
fi

suite_end
