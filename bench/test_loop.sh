#!/usr/bin/env bash
# test_loop.sh - `make test` again and again from clones whose directory names
# hold "MB", spaces and non-ASCII letters, to find checks that depend on where
# the tree lives, on the temporary directory's random name, on the machine's
# load or on addresses (issue 34: a check that grepped a path for "MB" failed
# one run in many). Not a test: it takes hours, and its answer is a count.
#
# usage: bench/test_loop.sh [-n RUNS] [--rev REV] [--dir DIR] [--keep-going]
#   -n RUNS       runs of `make test` (default 20), spread over the clones in turn
#   --rev REV     the commit to test (default HEAD of this checkout)
#   --dir DIR     where the clones go (default a new directory under $TMPDIR)
#   --keep-going  go on after a failed run (default: stop at the first)
#
# 1. Three clones of REV, in directories named "MB 1 MB", "with spaces" and
#    "ünïcödé Ωμέγα" under DIR, which itself is named "loop MB ü"; each is
#    built by its first `make test`.
# 2. Every run sets TMPDIR to DIR/tmp-MB-ü, so that every mktemp path holds
#    "MB" and non-ASCII letters. Spaces stay out of TMPDIR: the suites put
#    temporary paths in command lines split on purpose (tests/suites/
#    memtrace_cli.sh's "$tool" $args).
# 3. One line a run in DIR/runs.csv (run, clone, seconds, passed, failed,
#    status) and the run's whole output in DIR/logs/run-N.log; the summary at
#    the end: runs, passes, the longest streak of passes in a row, and each
#    failing run's failed checks.
# Results: bench/results/test_loop.csv gets a copy of runs.csv; the issue's
# floor is 20 passes in a row.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
runs=20
rev=HEAD
base=""
keep_going=false
usage() { sed -n 's/^# usage: //p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    -n) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
    -n*) runs=${1#-n}; shift ;;
    --rev) [ $# -ge 2 ] || usage; rev=$2; shift 2 ;;
    --rev=*) rev=${1#--rev=}; shift ;;
    --dir) [ $# -ge 2 ] || usage; base=$2; shift 2 ;;
    --dir=*) base=${1#--dir=}; shift ;;
    --keep-going) keep_going=true; shift ;;
    *) usage ;;
  esac
done
case "$runs" in '' | *[!0-9]*) echo "test_loop: -n wants a count, got '$runs'" >&2; exit 2 ;; esac
commit=$(git -C "$here" rev-parse --verify "$rev^{commit}") || { echo "test_loop: no commit '$rev'" >&2; exit 2; }
[ -n "$base" ] || base=$(mktemp -d "${TMPDIR:-/tmp}/minnow-test-loop.XXXXXX") || exit 1
root="$base/loop MB ü"
mkdir -p "$root/logs" || exit 1
names=("MB 1 MB" "with spaces" "ünïcödé Ωμέγα")
for n in "${names[@]}"; do
  if [ ! -d "$root/$n/.git" ]; then
    git clone --quiet "$here" "$root/$n" && git -C "$root/$n" checkout --quiet --detach "$commit" || exit 1
  fi
done
tmpdir="$base/tmp-MB-ü"
mkdir -p "$tmpdir" || exit 1
echo "test_loop: $runs runs of make test at ${commit:0:12} in $root" >&2

csv="$root/runs.csv"
[ -s "$csv" ] || echo "run,clone,seconds,passed,failed,status" > "$csv"
passes=0 streak=0 best=0 done_runs=0
for ((i = 1; i <= runs; i++)); do
  n=${names[$(((i - 1) % ${#names[@]}))]}
  log="$root/logs/run-$i.log"
  start=$(date +%s)
  (cd "$root/$n" && TMPDIR="$tmpdir" make -j2 test) > "$log" 2>&1
  status=$?
  secs=$(($(date +%s) - start))
  last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  p=$(echo "${last:-0 passed, 1 failed}" | awk '{print $1}')
  f=$(echo "${last:-0 passed, 1 failed}" | awk '{print $3}')
  echo "$i,\"$n\",$secs,$p,$f,$status" >> "$csv"
  done_runs=$i
  if [ "$status" -eq 0 ] && [ "$f" -eq 0 ]; then
    passes=$((passes + 1)); streak=$((streak + 1))
    [ "$streak" -gt "$best" ] && best=$streak
    echo "test_loop: run $i ($n): $last in ${secs}s; $streak in a row" >&2
  else
    streak=0
    echo "test_loop: run $i ($n): FAILED (status $status, ${last:-no summary}); log $log" >&2
    grep -E '^FAIL|^failing suites' "$log" | head -20 >&2
    $keep_going || break
  fi
done
mkdir -p "$here/bench/results"
cp "$csv" "$here/bench/results/test_loop.csv"
echo "test_loop: $passes of $done_runs runs passed; longest streak $best in a row (floor 20); $csv"
[ "$passes" -eq "$done_runs" ]
