#!/usr/bin/env bash
# memprof_rates.sh - the callstack tests of tests/memprof/rates/ at several
# sampling rates. Each script takes the rate as its first argument, checks
# every sample's whole callstack against what the program's shape implies,
# and prints the same lines whatever the rate. Runs:
#   1. ./vm at 1, 0.1, 0.01 and 0.001;
#   2. ./vm --gc-stress at 0.01 (a collection at every allocation: the
#      callbacks' own allocations make rate 1 too slow there);
#   3. ./vm-asan at the four rates, if built;
#   4. ./vm-debug (every ASSERT checked, if built) and ./vm-asan at 0.1 and
#      0.001 with a trace written at rate 1 beside the scripts' profile: the
#      trace reads its callers as runs and memprof lists them one by one
#      only for the profile's samples, many captures behind
#      (memprof/callstack.c part 1).
# MINNOW_SEED is fixed here unless the caller chose one. Run by
# tests/run_all.sh, which reads the last line: "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
export MINNOW_SEED="${MINNOW_SEED:-20250101}"
rates="1.0 0.1 0.01 0.001"
. tests/suites/lib.sh
suite_init memprof_rates
require_built ./vm
for r in $rates; do lang_run "vm, rate $r" --vm ./vm --args "$r" --timeout 120 tests/memprof/rates; done
lang_run "vm --gc-stress, rate 0.01" --vm ./vm --flags "--gc-stress" --args 0.01 --timeout 300 tests/memprof/rates
if [ -x ./vm-asan ]; then
  for r in $rates; do lang_run "vm-asan, rate $r" --vm ./vm-asan --args "$r" --timeout 300 tests/memprof/rates; done
fi
trace=$(mktemp) || exit 2
trap 'rm -f "$trace"' EXIT
for v in ./vm-debug ./vm-asan; do
  [ -x "$v" ] || continue
  for r in 0.1 0.001; do
    lang_run "$v traced at 1, rate $r" --vm "$v" --flags "--memtrace $trace --memtrace-no-end-state --memtrace-rate 1" \
      --args "$r" --timeout 300 tests/memprof/rates
  done
done
suite_end
