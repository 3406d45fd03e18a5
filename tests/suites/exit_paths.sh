#!/usr/bin/env bash
# exit_paths.sh - every way out of the VM finishes its trackers (core/vm_state.h,
# vm_exit): each script of tests/exit/ runs under --memprof-count, whose
# tracker prints one line "memprof: rate ..." on stderr only when finished,
# and the exit status and message are those of the cause:
#   end of script 0, Sys.exit(n) n, uncaught error 1, out of memory 1,
#   syntax error 2 (before any tracker starts: no line), SIGINT and SIGTERM:
#   death by the signal (128 + n), the line printed first.
# On ./vm and, if built, ./vm-asan. Run by tests/run_all.sh, which reads the
# last line "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init exit_paths
# No EXIT trap: the guard processes of run_signalled (lib.sh) would inherit it between their
# fork and exec, and a guard killed then would remove $tmp.
tmp=$(mktemp -d)

# check_exit NAME WANT_STATUS WANT_REPORT(yes|no) STDERR_REGEX STATUS
check_exit() {
  local name=$1 want=$2 report=$3 re=$4 got=$5 why=""
  [ "$got" -eq "$want" ] || why="exit $got, expected $want"
  if [ "$report" = yes ]; then
    grep -q '^memprof: rate 0.01: ' "$tmp/err" || why="$why${why:+; }no --memprof-count line"
  else
    grep -q '^memprof: rate' "$tmp/err" && why="$why${why:+; }unexpected --memprof-count line"
  fi
  [ -z "$re" ] || grep -Eq "$re" "$tmp/err" || why="$why${why:+; }stderr lacks /$re/"
  if [ -z "$why" ]; then
    ok
  else
    bad "exit path $name ($vm): $why"
    sed 's/^/    /' "$tmp/err" | head -8
  fi
}

run() {  # NAME WANT REPORT REGEX SCRIPT [VM ARGS...]
  local name=$1 want=$2 report=$3 re=$4 script=$5
  shift 5
  timeout 60 "$vm" --memprof-count 0.01 "$@" "tests/exit/$script" > "$tmp/out" 2> "$tmp/err" < /dev/null
  check_exit "$name" "$want" "$report" "$re" $?
}

# signal NAME SIG SCRIPT: starts the script, signals it once it runs, waits.
signal() {
  local name=$1 sig=$2 script=$3 status
  run_signalled 0.3 "$sig" "$tmp/out" "$tmp/err" "$vm" --memprof-count 0.01 "tests/exit/$script"
  status=$?
  check_exit "$name" "$((128 + $(kill -l "$sig")))" yes "" "$status"
}

for vm in ./vm ./vm-asan; do
  [ -x "$vm" ] || continue
  run "end of script" 0 yes "" normal.mn
  run "Sys.exit(3)" 3 yes "" sys_exit.mn
  run "uncaught error" 1 yes '^tests/exit/uncaught.mn:[0-9]+:[0-9]+: error: List.nth: index 5000 out of bounds \(length 1000\)' uncaught.mn
  run "out of memory" 1 yes 'error: out of memory' oom.mn --max-heap-words 200000
  printf 'let x = (\n' > "$tmp/syntax.mn"
  timeout 60 "$vm" --memprof-count 0.01 "$tmp/syntax.mn" > "$tmp/out" 2> "$tmp/err" < /dev/null
  check_exit "syntax error" 2 no 'syntax error' $?
  signal "SIGINT in a while loop" INT spin.mn
  signal "SIGTERM in a while loop" TERM spin.mn
  signal "SIGINT in a for loop" INT spin_for.mn
  signal "SIGTERM while allocating" TERM churn.mn

  # A second signal before the first is handled ends the process at once: here
  # the first one is still pending because the script is stopped (SIGSTOP).
  "$vm" --memprof-count 0.01 tests/exit/spin.mn > "$tmp/out" 2> "$tmp/err" < /dev/null &
  pid=$!
  # CPU time, not a sleep: a background job of a non-interactive shell starts
  # with SIGINT ignored until the VM installs its handler, and vm-asan on a
  # loaded machine took longer than a 0.3 s sleep to get there (the signals
  # were ignored and the loop spun for ever). The guard makes a hang a failure.
  cpu_wait "$pid" 0.3
  kill -STOP "$pid"; kill -INT "$pid"; kill -INT "$pid"; kill -CONT "$pid"
  ( sleep 20; kill -KILL "$pid" 2> /dev/null ) &
  guard=$!
  wait "$pid"
  status=$?
  kill "$guard" 2> /dev/null
  wait "$guard" 2> /dev/null
  # Either the first signal was handled (report, 130) or the second killed it
  # (130, maybe no report): both end by SIGINT, neither hangs.
  if [ "$status" -eq 130 ]; then ok; else bad "exit path second SIGINT: exit $status"; fi
done
rm -rf "$tmp"
suite_end
