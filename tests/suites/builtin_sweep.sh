#!/usr/bin/env bash
# builtin_sweep.sh - the builtin sweep (issue 17): generates the scripts
# (tests/sweep/gen_sweep.sh: every standard-library function and every C
# primitive, each argument position set to each of 59 values, every two
# int-taking positions at every pair of the int edges, and arity +-1, each
# call inside try; compare on every pair of values and every value as a
# Hashtbl key) and runs each on ./vm, ./vm-boehm and
# ./vm-asan with --max-heap-words 4000000 (a call such as List.init(max_int,
# f) then ends in `out of memory` in a second, not after filling the
# machine). A script passes when it exits 0 with its summary line
# ("sweep M: N calls, K errors caught") last and nothing on stderr: no
# uncaught error, no signal, no sanitizer report. The scripts run in a
# temporary directory (Memtrace.start writes its file there).
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init builtin_sweep
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash tests/sweep/gen_sweep.sh "$tmp/scripts" > /dev/null || suite_abort "generation failed"
for vm in vm vm-boehm vm-asan; do
  if [ ! -x "$root/$vm" ]; then
    bad "./$vm is not built: not run"
    continue
  fi
  for script in "$tmp"/scripts/sweep_*.mn; do
    name=$(basename "$script" .mn)
    mkdir -p "$tmp/run"
    (cd "$tmp/run" && timeout 300 "$root/$vm" --max-heap-words 4000000 "$script" < /dev/null > "$tmp/out" 2> "$tmp/err")
    status=$?
    if [ "$status" -eq 0 ] && [ ! -s "$tmp/err" ] && tail -1 "$tmp/out" | grep -Eq '^sweep [A-Za-z]+: [0-9]+ calls, [0-9]+ errors caught$'; then
      ok
    else
      bad "$vm $name: status $status"
      head -5 "$tmp/err" | sed 's/^/    /'
    fi
  done
  echo "builtin_sweep ($vm): $(cat "$tmp/out" | tail -1)"
done
suite_end
