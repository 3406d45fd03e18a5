#!/usr/bin/env bash
# trace_writer.sh - the trace encoder (trace/writer.c) against memtrace's own
# tools. build/*/tests/trace_synth writes synthetic event streams (scenarios:
# tests/trace/trace_synth.c) and the text memtrace's dump_trace must print
# for them; for each scenario, seed and format version:
#   1. the synth runs (release and ASan/UBSan builds) and exits 0;
#   2. dump_trace.exe decodes the trace to exactly the expected text;
#   3. subsample.exe (factor 1: every event kept), which re-encodes the
#      decoded events with memtrace's writer, writes the same bytes as our
#      writer given the same events (--copy; not for `zero`, where memtrace
#      would mis-code frame code 0).
# 2 and 3 need memtrace 0.2.3's prebuilt tools, which are not part of the
# repository: set MEMTRACE_REFERENCE to their directory (tests/trace/reference.sh);
# without them the suite says so and counts only 1.
# Last line: "N passed, N failed". Exit status 0 iff none failed.
set -u
cd "$(dirname "$0")/../.." || exit 2

synth=build/release/tests/trace_synth
asan_synth=build/asan/tests/trace_synth
. tests/suites/lib.sh
suite_init trace_writer
require_built "$synth"

. tests/trace/reference.sh
tools=$(memtrace_reference_dir) || tools=""
[ -n "$tools" ] && [ ! -x "$tools/subsample.exe" ] && tools=""

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
skipped=0

# scenario events seed version
run_case() {
  local sc=$1 events=$2 seed=$3 version=$4 label="$1 seed $3 v$4"
  local args=(--scenario "$sc" --events "$events" --seed "$seed" --version "$version")
  local copy=()
  [ "$sc" != zero ] && [ "$version" = 2 ] && copy=(--copy "$tmp/copy.ctf")
  if "$synth" "${args[@]}" "${copy[@]}" "$tmp/t.ctf" "$tmp/t.expect" 2>"$tmp/err"; then ok
  else bad "$label: trace_synth failed: $(head -3 "$tmp/err")"; return; fi
  if [ -z "$tools" ]; then
    skipped=$((skipped + 1 + ${#copy[@]} / 2))
    return
  fi
  if "$tools/dump_trace.exe" "$tmp/t.ctf" >"$tmp/t.dump" 2>"$tmp/err" && cmp -s "$tmp/t.dump" "$tmp/t.expect"; then ok
  else
    bad "$label: dump_trace's text differs from the events written"
    head -3 "$tmp/err"
    diff "$tmp/t.dump" "$tmp/t.expect" | head -4 | cut -c1-300
  fi
  [ ${#copy[@]} -eq 0 ] && return
  if "$tools/subsample.exe" "$tmp/t.ctf" "$tmp/sub.ctf" 1 2>"$tmp/err" && cmp -s "$tmp/sub.ctf" "$tmp/copy.ctf"; then ok
  else bad "$label: memtrace's writer wrote other bytes than ours: $(cmp "$tmp/sub.ctf" "$tmp/copy.ctf" 2>&1 | head -1)"; fi
}

for seed in 1 2; do
  run_case random 3000 "$seed" 2
  run_case deep 60 "$seed" 2
  run_case long 150 "$seed" 2
  run_case evict 3000 "$seed" 2
  run_case names 3000 "$seed" 2
  run_case big 150 "$seed" 2
  run_case mixed 400 "$seed" 2
  run_case zero 1000 "$seed" 2
done
run_case random 1000 3 1
run_case mixed 300 3 1

# The ASan/UBSan build of the writer on the heaviest scenarios.
if [ -x "$asan_synth" ]; then
  for sc in deep long evict names mixed; do
    if "$asan_synth" --scenario "$sc" --events 100 --seed 5 --copy "$tmp/a2.ctf" "$tmp/a.ctf" "$tmp/a.expect" 2>"$tmp/err"; then ok
    else bad "$sc under ASan/UBSan: $(head -5 "$tmp/err")"; fi
  done
else
  skip "$asan_synth is not built: the ASan/UBSan runs did not run"
fi

if [ -z "$tools" ]; then
  skip "memtrace 0.2.3's dump_trace.exe/subsample.exe not found (set MEMTRACE_TOOLS):" \
       "$skipped decoding checks did not run and are not counted"
fi
suite_end
