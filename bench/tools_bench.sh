#!/usr/bin/env bash
# tools_bench.sh - the trace tools' time and memory (make bench-tools).
# Traces, made once in build/bench-tools/ by ./vm --memtrace (each checked to
# hold at least 10 M events):
#   bintrees    bench/programs/binary_trees.mn at rate 0.13: 10.3 M events, and
#               277,000 distinct callstacks (each path down the recursion is a
#               stack of its own): the trie and the live table at their worst
#   bintrees2   the same with MINNOW_SEED=2 (diff's second trace)
#   pipeline    bench/programs/list_pipeline.mn at rate 0.35: 11 M events,
#               stacks of up to 10,001 frames (List.map's recursion), few
#               distinct ones
# Each line of COMMANDS below is a case: its name, the trace(s) it reads, and
# the arguments of tools/memtrace (TRACE, TRACE2 stand for the traces' paths).
# Other commands join the bench by adding a line. Each case runs
# BENCH_TOOLS_RUNS times (cases interleaved, run by run); /usr/bin/time gives
# wall time, CPU time (user + system) and peak RSS; reported: the medians and
# the largest RSS, against the floors of issue 13 (top, leaks, lifetimes, diff
# under 2 s; every command under 10 s; peak memory under 200 MB). On a loaded
# machine wall time stretches: CPU time is the figure to compare.
# Then the known-mix coverage (tests/tools/known_mix.mn, rates 1e-3 and 1e-2,
# seeds 1-20): per site and measure, in how many seeds the 95 % interval holds
# the truth; the floor is 19 of 20.
# Results: bench/results/tools.csv, bench/results/tools_coverage.csv; the
# findings are in bench/TOOLS.md.
set -eu
cd "$(dirname "$0")/.."
runs=${BENCH_TOOLS_RUNS:-3}
dir=build/bench-tools
tool=tools/memtrace
mkdir -p "$dir" bench/results
. bench/common.sh

# name|traces|arguments
COMMANDS="info|bintrees|info TRACE
top|bintrees|top TRACE
top-live-at|bintrees|top --live --at 50% TRACE
top-stack|bintrees|top --by stack TRACE
top-json|bintrees|top -n 0 --json TRACE
lifetimes|bintrees|lifetimes TRACE
leaks|bintrees|leaks TRACE
diff|bintrees,bintrees2|diff TRACE TRACE2
top|pipeline|top TRACE
top-stack|pipeline|top --by stack TRACE
lifetimes|pipeline|lifetimes TRACE
leaks|pipeline|leaks TRACE
timeline|bintrees|timeline TRACE
timeline-png|bintrees|timeline -o build/bench-tools/timeline.png TRACE
flamegraph|bintrees|flamegraph TRACE
flame-svg|bintrees|flamegraph -o build/bench-tools/flame.svg TRACE
pprof|bintrees|pprof TRACE -o build/bench-tools/profile.pb.gz
merge|bintrees,bintrees2|merge TRACE TRACE2 -o build/bench-tools/merged.pb.gz
timeline|pipeline|timeline TRACE
flamegraph|pipeline|flamegraph TRACE
flame-svg|pipeline|flamegraph -o build/bench-tools/flame.svg TRACE
pprof|pipeline|pprof TRACE -o build/bench-tools/profile.pb.gz
report|bintrees|report TRACE -o build/bench-tools/report.html
report|pipeline|report TRACE -o build/bench-tools/report.html"

# Floors in seconds (wall) for the commands that have one of their own.
floor_of() {
  case $1 in
    top | top-* | leaks | lifetimes | diff) echo 2 ;;
    *) echo 10 ;;
  esac
}

make_trace() {  # name rate seed program args...
  local name=$1 rate=$2 seed=$3
  shift 3
  if [ ! -s "$dir/$name.ctf" ]; then
    echo "making $dir/$name.ctf: ./vm --memtrace --memtrace-rate $rate $*" >&2
    MINNOW_SEED=$seed ./vm --memtrace "$dir/$name.ctf.tmp" --memtrace-rate "$rate" "$@" >/dev/null
    mv "$dir/$name.ctf.tmp" "$dir/$name.ctf"
  fi
  local events
  events=$("$tool" info "$dir/$name.ctf" | sed -n 's/^events *\([0-9]*\):.*/\1/p')
  if [ "${events:-0}" -lt 10000000 ]; then
    echo "tools_bench: $dir/$name.ctf has $events events, fewer than 10 M: delete it and raise its rate" >&2
    exit 1
  fi
  echo "$events" >"$dir/$name.events"
}
make_trace bintrees 0.13 1 bench/programs/binary_trees.mn
make_trace bintrees2 0.13 2 bench/programs/binary_trees.mn
make_trace pipeline 0.35 1 bench/programs/list_pipeline.mn

# ---------------------------------------------------------------- timing

raw="$dir/raw.txt"
: >"$raw"
for run in $(seq 1 "$runs"); do
  while IFS='|' read -r name traces args; do
    t1=${traces%%,*}
    t2=${traces#*,}
    a=${args//TRACE2/$dir/$t2.ctf}
    a=${a//TRACE/$dir/$t1.ctf}
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S %M" -o "$dir/time.txt" "$tool" $a >/dev/null 2>"$dir/stderr.txt" || {
      echo "tools_bench: memtrace $a failed: $(head -c 300 "$dir/stderr.txt")" >&2
      exit 1
    }
    progress=$(grep -c "events, [0-9]* s$" "$dir/stderr.txt" || true)
    read -r wall user sys rss <"$dir/time.txt"
    echo "$name $traces $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $rss $progress" >>"$raw"
  done <<<"$COMMANDS"
done

csv=bench/results/tools.csv
echo "command,trace,events,runs,wall_median_s,cpu_median_s,peak_rss_mb,floor_s,within_floor,progress_lines" >"$csv"
printf '%-12s %-20s %9s %9s %9s %8s %6s  %s\n' command trace events "wall s" "cpu s" "RSS MB" floor verdict
while IFS='|' read -r name traces args; do
  rows=$(awk -v n="$name" -v t="$traces" '$1 == n && $2 == t' "$raw")
  wall=$(echo "$rows" | awk '{print $3}' | median)
  cpu=$(echo "$rows" | awk '{print $4}' | median)
  rss=$(echo "$rows" | awk '{ if ($5 > m) m = $5 } END { printf "%.1f", m / 1024 }')
  progress=$(echo "$rows" | awk '{ if ($6 > m) m = $6 } END { print m + 0 }')
  floor=$(floor_of "$name")
  events=0
  for t in ${traces//,/ }; do events=$((events + $(cat "$dir/$t.events"))); done
  verdict=$(awk -v w="$wall" -v f="$floor" -v r="$rss" 'BEGIN { print (w < f && r < 200) ? "yes" : "no" }')
  echo "$name,${traces//,/+},$events,$runs,$wall,$cpu,$rss,$floor,$verdict,$progress" >>"$csv"
  printf '%-12s %-20s %9s %9s %9s %8s %6s  %s\n' "$name" "$traces" "$events" "$wall" "$cpu" "$rss" "$floor" \
    "$([ "$verdict" = yes ] && echo within || echo OVER)"
done <<<"$COMMANDS"

# ---------------------------------------------------------------- coverage

cov=bench/results/tools_coverage.csv
: >"$dir/coverage.txt"
for rate in 1e-3 1e-2; do
  for seed in $(seq 1 20); do
    MINNOW_SEED=$seed ./vm --memtrace "$dir/mix.ctf" --memtrace-rate $rate tests/tools/known_mix.mn
    "$tool" top -n 0 --json "$dir/mix.ctf" >"$dir/mix.alloc.json"
    "$tool" top --live -n 0 --json "$dir/mix.ctf" >"$dir/mix.live.json"
    "$tool" top --promoted -n 0 --json "$dir/mix.ctf" >"$dir/mix.promoted.json"
    python3 tests/tools/tools_check.py mix "$dir/mix.alloc.json" "$dir/mix.live.json" "$dir/mix.promoted.json" \
      20000 1 | sed "s/^/$rate /" >>"$dir/coverage.txt"
  done
done
echo "rate,line,measure,seeds_in,seeds,at_least_19" >"$cov"
awk '{ k = $1 "," $4 "," $5; sub(":", "", k); n[k]++; if ($2 == "in") i[k]++ }
     END { for (k in n) print k "," i[k] + 0 "," n[k] "," ((i[k] + 0 >= 19) ? "yes" : "no") }' "$dir/coverage.txt" |
  sort -t, -k1,1 -k2,2n -k3,3 >>"$cov"
echo
echo "known mix: truth inside the 95% interval, seeds of 20 (rate, line, measure):"
column -s, -t "$cov"
echo "cells at 19 of 20 or better: $(grep -c ',yes$' "$cov") of $(($(wc -l <"$cov") - 1))"
echo "results: $csv, $cov"
