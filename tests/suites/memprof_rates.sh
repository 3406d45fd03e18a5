#!/usr/bin/env bash
# memprof_rates.sh - the callstack tests of tests/memprof/rates/ at several
# sampling rates. Each script takes the rate as its first argument, checks
# every sample's whole callstack against what the program's shape implies,
# and prints the same lines whatever the rate. Runs:
#   1. ./vm at 1, 0.1, 0.01 and 0.001;
#   2. ./vm --gc-stress at 0.01 (a collection at every allocation: the
#      callbacks' own allocations make rate 1 too slow there);
#   3. ./vm-asan at the four rates, if built.
# MINNOW_SEED is fixed here unless the caller chose one. Run by
# tests/run_all.sh, which reads the last line: "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
export MINNOW_SEED="${MINNOW_SEED:-20250101}"
rates="1.0 0.1 0.01 0.001"
total_pass=0
total_fail=0

run() {  # label, runner arguments...
  local label=$1 out last
  shift
  out=$(bash tests/run_lang.sh "$@" tests/memprof/rates 2>&1)
  last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
  printf '%s\n' "$out" | grep -v -E '^[0-9]+ passed, [0-9]+ failed$'
  if [ -z "$last" ]; then
    echo "memprof rates ($label): the runner printed no summary"
    total_fail=$((total_fail + 1))
    return
  fi
  echo "memprof rates ($label): $last"
  total_pass=$((total_pass + $(echo "$last" | awk '{print $1}')))
  total_fail=$((total_fail + $(echo "$last" | awk '{print $3}')))
}

if [ ! -x ./vm ]; then
  echo "memprof rates: ./vm is not built"
  echo "0 passed, 1 failed"
  exit 1
fi
for r in $rates; do run "vm, rate $r" --vm ./vm --args "$r" --timeout 120; done
run "vm --gc-stress, rate 0.01" --vm ./vm --flags "--gc-stress" --args 0.01 --timeout 300
if [ -x ./vm-asan ]; then
  for r in $rates; do run "vm-asan, rate $r" --vm ./vm-asan --args "$r" --timeout 300; done
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
