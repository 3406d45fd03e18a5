#!/usr/bin/env bash
# fuzz.sh - runs afl-fuzz on build/fuzz/fuzz_reader for FUZZ_SECONDS (make
# fuzz-reader), then prints its statistics and copies what it found (crashes,
# hangs) into tests/fuzz/reader/crashes/, named by content hash. make
# fuzz-pair runs it on FUZZ_TARGET=build/fuzz/fuzz_pair from
# FUZZ_CORPUS=tests/fuzz/reader/pairs (what it finds: *.pair). At nice 19:
# the machine is shared.
set -u
cd "$(dirname "$0")/../../.."
seconds=${FUZZ_SECONDS:-600}
out=${FUZZ_OUT:-build/fuzz/reader-out}
target=${FUZZ_TARGET:-build/fuzz/fuzz_reader}
corpus=${FUZZ_CORPUS:-tests/fuzz/reader/corpus}
ext=ctf
[ "$target" = build/fuzz/fuzz_pair ] && ext=pair
rm -rf "$out"
mkdir -p tests/fuzz/reader/crashes
mkdir -p "$out"
export AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1
# ASan needs no memory limit (-m none); a test case gets FUZZ_TIMEOUT ms (-t):
# 1 s for the reader; 3 s for a pair (seven commands, each reading both
# files: about 0.1 s of CPU under ASan, and several times that in wall-clock
# time on a loaded machine, which afl++ would otherwise save as hangs).
timeout_ms=${FUZZ_TIMEOUT:-1000}
[ -z "${FUZZ_TIMEOUT:-}" ] && [ "$ext" = pair ] && timeout_ms=3000
nice -n 19 afl-fuzz -i "$corpus" -o "$out" -m none -t "$timeout_ms" -V "$seconds" -- "$target" \
  > "$out/afl.log" 2>&1
status=$?
stats=$(find "$out" -name fuzzer_stats | head -1)
if [ -z "$stats" ]; then
  echo "fuzz-reader: afl-fuzz did not start (status $status); its log:"
  tail -30 "$out/afl.log"
  exit 1
fi
grep -E '^(run_time|execs_done|execs_per_sec|corpus_count|bitmap_cvg|edges_found|total_edges|saved_crashes|saved_hangs|stability)' "$stats"
found=0
for f in "$(dirname "$stats")"/crashes/id:* "$(dirname "$stats")"/hangs/id:*; do
  [ -f "$f" ] || continue
  kind=$(basename "$(dirname "$f")")
  name="tests/fuzz/reader/crashes/${kind%s}-$(sha1sum "$f" | cut -c1-12).$ext"
  cp "$f" "$name"
  echo "found: $name"
  found=$((found + 1))
done
echo "fuzz-reader: $found crashes or hangs saved in tests/fuzz/reader/crashes/"
