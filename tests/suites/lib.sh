# shellcheck shell=bash
# lib.sh - the harness every tests/suites/*.sh shares. Sourced, never run
# (tests/run_all.sh passes it over): a suite does
#     cd "$(dirname "$0")/../.." || exit 2
#     . tests/suites/lib.sh
#     suite_init NAME
# and ends with `suite_end`.
#
# Functions:
#   suite_init NAME       names the suite (messages start with it), zeroes the counts.
#   ok                    one check passed.
#   bad MSG...            one check failed: prints "FAIL NAME: MSG...".
#   check MSG CONDITION   evals CONDITION (a shell command, in the caller's
#                         scope: check declares no variables of its own, so the
#                         condition sees the caller's locals); ok if it
#                         succeeds, else bad MSG.
#   skip MSG...           a check that could not run here (a tool absent):
#                         not counted; suite_end prints "NAME: skipped: MSG...".
#   suite_abort MSG...    the suite cannot run at all: prints "NAME: MSG...",
#                         then "0 passed, 1 failed", exits 1.
#   require_built PATH... suite_abort with "PATH is not built" for the first
#                         PATH that is not an executable file.
#   lang_run LABEL ARGS...  runs tests/run_lang.sh ARGS..., prints its output
#                         but its summary, then "NAME (LABEL): N passed, N
#                         failed", and adds its counts to ours (a runner that
#                         prints no summary counts as one failure).
#   run_signalled CPU SIGNAL OUT ERR COMMAND...  runs COMMAND in the
#                         background (stdout to OUT, stderr to ERR, stdin
#                         /dev/null), sends it SIGNAL once it has used CPU
#                         seconds of processor time (/proc/PID/stat: past its
#                         start however loaded the machine; 120 s of wall
#                         clock at most), SIGKILLs it if it still runs 20 s
#                         later; returns its exit status. A suite using it sets no EXIT trap: the
#                         guard process would inherit it between fork and
#                         exec, and a guard killed then would run it.
#   suite_end             prints the skips, then "N passed, N failed" as the
#                         last line; exits 1 iff a check failed, else 0.
# Variables it owns: SUITE (the name), pass and fail (the counts; a suite that
# counts otherwise, e.g. from a sub-run, may add to them), suite_skips.
# tests/run_all.sh relies on the last line of a suite's output only:
# "N passed, N failed".

suite_init() {
  SUITE=$1
  pass=0
  fail=0
  suite_skips=()
}

ok() { pass=$((pass + 1)); }

bad() {
  fail=$((fail + 1))
  echo "FAIL $SUITE: $*"
}

check() { if eval "$2"; then ok; else bad "$1"; fi; }

skip() { suite_skips+=("$*"); }

suite_abort() {
  echo "$SUITE: $*"
  echo "0 passed, 1 failed"
  exit 1
}

require_built() {
  local path
  for path in "$@"; do
    [ -x "$path" ] || suite_abort "$path is not built"
  done
}

lang_run() {
  local label=$1 out last
  shift
  out=$(bash tests/run_lang.sh "$@" 2>&1)
  last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
  printf '%s\n' "$out" | grep -v -E '^[0-9]+ passed, [0-9]+ failed$'
  if [ -z "$last" ]; then
    bad "$label: the runner printed no summary"
    return
  fi
  echo "$SUITE ($label): $last"
  pass=$((pass + $(echo "$last" | awk '{print $1}')))
  fail=$((fail + $(echo "$last" | awk '{print $3}')))
}

# cpu_wait PID SECONDS: returns once process PID has used SECONDS of CPU time
# (user + system), has ended, or 120 s of wall clock have passed.
cpu_wait() {
  local pid=$1 want hz used i
  hz=$(getconf CLK_TCK)
  want=$(awk -v s="$2" -v hz="$hz" 'BEGIN { printf "%d", s * hz + 0.5 }')
  for ((i = 0; i < 2400; i++)); do
    # Fields after "PID (COMM) ": the state is the 1st, utime the 12th, stime the 13th.
    used=$(sed 's/^.*) //' "/proc/$pid/stat" 2> /dev/null | awk '$1 != "Z" { print $12 + $13 }')
    [ -z "$used" ] && return   # ended (gone, or a zombie not yet waited for)
    [ "$used" -ge "$want" ] && return
    sleep 0.05
  done
}

run_signalled() {
  local delay=$1 sig=$2 out=$3 err=$4 pid guard status
  shift 4
  "$@" > "$out" 2> "$err" < /dev/null &
  pid=$!
  cpu_wait "$pid" "$delay"
  kill -s "$sig" "$pid"
  ( sleep 20; kill -KILL "$pid" 2> /dev/null ) &
  guard=$!
  wait "$pid"
  status=$?
  kill "$guard" 2> /dev/null
  wait "$guard" 2> /dev/null
  return "$status"
}

suite_end() {
  local s
  for s in "${suite_skips[@]+"${suite_skips[@]}"}"; do echo "$SUITE: skipped: $s"; done
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ] && exit 0
  exit 1
}
