#!/usr/bin/env bash
# fuzz_speed.sh (make bench-fuzz-speed): executions per second of afl++ on
# the in-process target (build/fuzz/fuzz_vm: persistent mode, vm_reset
# between inputs) against afl++ on the VM's own program built the same way
# (build/fuzz/vm-afl: ASan+UBSan, one process per input through afl's fork
# server, the input as a file) - the way afl++ ran on vm-asan before. Same
# corpus, dictionary, timeout and flags; PAIRS alternating pairs of
# SECONDS-second runs (defaults 2 and 60), since the machine is shared:
# each pair's ratio is reported, and their median. Results in
# bench/results/fuzz_speed.csv.
set -u
cd "$(dirname "$0")/.." || exit 2
seconds=${FUZZ_SPEED_SECONDS:-60}
pairs=${FUZZ_SPEED_PAIRS:-2}
out=bench/results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
command -v afl-fuzz >/dev/null || { echo "bench-fuzz-speed: afl-fuzz is not installed: nothing measured"; exit 1; }
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_QUIET=1
export ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1:malloc_context_size=0
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1

root=$(pwd)
rate() {   # NAME TARGET...: one afl run, prints execs_per_sec; inputs run in a scratch directory
  rm -rf "$tmp/$1"
  mkdir -p "$tmp/cwd"
  (cd "$tmp/cwd" && afl-fuzz -i "$root/tests/fuzz/corpus" -o "$tmp/$1" -x "$root/tests/fuzz/minnow.dict" -t 1000 \
    -m none -V "$seconds" -- "${@:2}" > "$tmp/$1.log" 2>&1)
  awk -F: '/^execs_done/ { e = $2 } /^run_time/ { t = $2 } END { if (t > 0) printf "%.1f\n", e / t; else print 0 }' \
    "$tmp/$1/default/fuzzer_stats" 2>/dev/null || echo 0
}

printf 'pair,fork_server_execs_per_s,in_process_execs_per_s,ratio\n' > "$out/fuzz_speed.csv"
ratios=()
for p in $(seq "$pairs"); do
  base=$(rate base "$root/build/fuzz/vm-afl" @@)
  fast=$(rate fast "$root/build/fuzz/fuzz_vm")
  ratio=$(awk -v a="$fast" -v b="$base" 'BEGIN { r = (b > 0) ? a / b : 0; printf "%.1f", r }')
  ratios+=("$ratio")
  printf 'pair %d: fork server %s execs/s, in-process %s execs/s: %sx\n' "$p" "$base" "$fast" "$ratio"
  printf '%d,%s,%s,%s\n' "$p" "$base" "$fast" "$ratio" >> "$out/fuzz_speed.csv"
done
printf 'median ratio: %s\n' "$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
