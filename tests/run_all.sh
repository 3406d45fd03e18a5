#!/usr/bin/env bash
# run_all.sh - every test suite of `make test`, in order; ends with one line
# "N passed, N failed" summing all of them. Exit status 0 iff nothing failed.
# Suites: cmocka unit tests (release and ASan/UBSan builds), then the Minnow
# script tests on ./vm, ./vm-boehm, ./vm in GC stress mode, ./vm with the heap
# verifier after every collection, ./vm-asan and ./vm-debug (every ASSERT
# checked); then every tests/suites/*.sh, by name (docs_examples.sh runs the
# examples of docs/language.md and docs/design.md), each ending with its
# "N passed, N failed" line; tests/suites/lib.sh is their shared harness, not
# a suite.
set -u
cd "$(dirname "$0")/.."
total_pass=0
total_fail=0
failed_suites=()

add() {  # suite name, passed, failed
  total_pass=$((total_pass + $2))
  total_fail=$((total_fail + $3))
  [ "$3" -gt 0 ] && failed_suites+=("$1 ($3 failed)")
  printf '== %-40s %5d passed, %d failed\n' "$1" "$2" "$3"
}

# cmocka prints "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s), listed below:"
run_unit() {
  local bin=$1 out pass fail
  out=$("$bin" 2>&1)
  local status=$?
  pass=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  fail=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  pass=${pass:-0}
  fail=${fail:-0}
  if [ "$status" -ne 0 ] && [ "$fail" -eq 0 ]; then
    fail=1   # crashed before its summary
    printf '%s\n' "$out" | tail -20
  elif [ "$fail" -gt 0 ]; then
    printf '%s\n' "$out" | grep -E '^\[  (FAILED|ERROR) \]|error' | head -20
  fi
  add "unit $(basename "$(dirname "$(dirname "$bin")")")/$(basename "$bin")" "$pass" "$fail"
}

run_lang() {  # suite name, runner arguments...
  local name=$1 out last
  shift
  out=$(bash tests/run_lang.sh "$@" 2>&1)
  printf '%s\n' "$out" | grep -v -E '^[0-9]+ passed, [0-9]+ failed' | head -60
  last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
  if [ -z "$last" ]; then
    add "$name" 0 1
    return
  fi
  add "$name" "$(echo "$last" | awk '{print $1}')" "$(echo "$last" | awk '{print $3}')"
}

for bin in build/release/unit/test_* build/asan/unit/test_* build/debug/unit/debug_*; do
  [ -x "$bin" ] && run_unit "$bin"
done

run_lang "scripts on vm" --vm ./vm
run_lang "scripts on vm-boehm" --vm ./vm-boehm
run_lang "scripts on vm --gc-stress" --vm ./vm --flags "--gc-stress" --timeout 300
run_lang "scripts on vm --gc-verify" --vm ./vm --flags "--gc-verify" --timeout 300
run_lang "scripts on vm-asan" --vm ./vm-asan --timeout 300
run_lang "scripts on vm-debug" --vm ./vm-debug --timeout 300

for extra in tests/suites/*.sh; do
  [ -f "$extra" ] || continue
  [ "$extra" = tests/suites/lib.sh ] && continue
  out=$(bash "$extra" 2>&1)
  printf '%s\n' "$out" | grep -v -E '^[0-9]+ passed, [0-9]+ failed' | head -60
  last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
  if [ -z "$last" ]; then add "$(basename "$extra" .sh)" 0 1
  else add "$(basename "$extra" .sh)" "$(echo "$last" | awk '{print $1}')" "$(echo "$last" | awk '{print $3}')"
  fi
done

if [ ${#failed_suites[@]} -gt 0 ]; then
  echo "failing suites: ${failed_suites[*]}"
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
