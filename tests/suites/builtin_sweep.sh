#!/usr/bin/env bash
# builtin_sweep.sh - the builtin sweep (issue 17): generates the scripts
# (tests/sweep/gen_sweep.sh: every standard-library function and every C
# primitive, each argument position set to each of 55 values, and arity
# +-1, each call inside try) and runs each on ./vm, ./vm-boehm and
# ./vm-asan with --max-heap-words 4000000 (a call such as List.init(max_int,
# f) then ends in `out of memory` in a second, not after filling the
# machine). A script passes when it exits 0 with its summary line
# ("sweep M: N calls, K errors caught") last and nothing on stderr: no
# uncaught error, no signal, no sanitizer report. The scripts run in a
# temporary directory (Memtrace.start writes its file there).
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash tests/sweep/gen_sweep.sh "$tmp/scripts" > /dev/null || { echo "builtin_sweep: generation failed"; echo "0 passed, 1 failed"; exit 1; }
pass=0
fail=0
for vm in vm vm-boehm vm-asan; do
  if [ ! -x "$root/$vm" ]; then
    echo "builtin_sweep: ./$vm is not built: not run"
    fail=$((fail + 1))
    continue
  fi
  for script in "$tmp"/scripts/sweep_*.mn; do
    name=$(basename "$script" .mn)
    mkdir -p "$tmp/run"
    (cd "$tmp/run" && timeout 300 "$root/$vm" --max-heap-words 4000000 "$script" > "$tmp/out" 2> "$tmp/err")
    status=$?
    if [ "$status" -eq 0 ] && [ ! -s "$tmp/err" ] && tail -1 "$tmp/out" | grep -Eq '^sweep [A-Za-z]+: [0-9]+ calls, [0-9]+ errors caught$'; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      echo "FAIL $vm $name: status $status"
      head -5 "$tmp/err" | sed 's/^/    /'
    fi
  done
  echo "builtin_sweep ($vm): $(cat "$tmp/out" | tail -1)"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
