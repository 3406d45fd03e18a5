#!/usr/bin/env bash
# run_afl.sh SECONDS OUT (make fuzz): afl++ on build/fuzz/fuzz_vm in
# persistent mode for SECONDS, corpus tests/fuzz/corpus, dictionary
# tests/fuzz/minnow.dict, findings under OUT/default/{crashes,hangs}. Prints
# afl's final statistics (executions, speed, edges, findings) and lists the
# findings; each becomes a test (tests/fuzz/README.md).
set -u
cd "$(dirname "$0")/../.." || exit 2
seconds=${1:-600}
out=${2:-build/fuzz/out}
command -v afl-fuzz >/dev/null || { echo "make fuzz: afl-fuzz is not installed (Debian package afl++): not run"; exit 1; }
mkdir -p "$out"
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_QUIET=1
export ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1:malloc_context_size=0
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1
root=$(pwd)
out=$(cd "$out" && pwd)
input=$root/tests/fuzz/corpus
[ -f "$out/default/fuzzer_stats" ] && input=-   # continue an earlier run
# Inputs may write files (Memtrace.start): they run in a scratch directory.
mkdir -p "$out/cwd"
cd "$out/cwd" || exit 2
# -t: a run longer than 1 s is a hang (the step budget ends every loop long before).
afl-fuzz -i "$input" -o "$out" -x "$root/tests/fuzz/minnow.dict" -t 1000 -m none -V "$seconds" -- "$root/build/fuzz/fuzz_vm" \
  > "$out/afl.log" 2>&1
status=$?
stats="$out/default/fuzzer_stats"
if [ ! -f "$stats" ]; then
  echo "make fuzz: afl-fuzz did not start (status $status):"
  tail -20 "$out/afl.log"
  exit 1
fi
grep -E '^(run_time|execs_done|execs_per_sec|corpus_count|edges_found|total_edges|bitmap_cvg|saved_crashes|saved_hangs)' "$stats"
found=$(find "$out/default/crashes" "$out/default/hangs" -type f -name 'id:*' 2>/dev/null)
if [ -n "$found" ]; then
  echo "findings (replay with build/fuzzreplay/fuzz_replay FILE):"
  printf '  %s\n' $found
  exit 1
fi
echo "no crash, no hang"
