#!/usr/bin/env bash
# hostile.sh (make bench-hostile): compile time and memory on big programs
# (issue 17, class 4). Generates each program with awk, runs it on ./vm
# BENCH_RUNS times (default 3) and reports the median wall time and the
# largest peak RSS (GNU time). The floor cases must stay under 2 s and
# 500 MB: a 1,000,000-item list literal and 100,000 top-level lets. The
# other cases show the constants of the linear bounds (lang/README.md,
# "Limits"; docs/language.md, "Limits"). Results: bench/results/hostile.csv. Timing on a shared machine
# is noisy; the floors have a wide margin. BENCH_HOSTILE_PART=tools: the
# trace tool's part only (below), =vm: the VM's only.
set -u
cd "$(dirname "$0")/.." || exit 2
runs=${BENCH_RUNS:-3}
out=${BENCH_OUT:-bench/results}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
if [ ! -x /usr/bin/time ]; then
  echo "bench-hostile: /usr/bin/time (GNU time) is missing: nothing measured"
  exit 1
fi

gen_list() {   # N: one list literal of N ints, then its length and sum
  awk -v n="$1" 'BEGIN { printf "let xs = ["; for (i = 0; i < n; i++) printf "%s%d", (i ? ", " : ""), i % 1000;
    print "]"; print "println(List.length(xs))"; print "println(List.fold_left(fn(a, x) { a + x }, 0, xs))" }'
}
gen_lets() {   # N: N top-level lets, each reading the previous one
  awk -v n="$1" 'BEGIN { print "let x0 = 0"; for (i = 1; i < n; i++) printf "let x%d = x%d + 1\n", i, i - 1;
    printf "println(x%d)\n", n - 1 }'
}
gen_tuples() {   # N: a list literal of N pairs
  awk -v n="$1" 'BEGIN { printf "let xs = ["; for (i = 0; i < n; i++) printf "%s(%d, %d)", (i ? ", " : ""), i % 1000, i % 7;
    print "]"; print "println(List.length(xs))" }'
}
gen_locals() {   # N: one function with 4000 locals, then N calls
  awk -v n="$1" 'BEGIN { print "fn g() {"; for (i = 0; i < 4000; i++) printf "  let a%d = (%d, %d)\n", i, i, i;
    print "  var s = 0"; for (i = 0; i < n; i++) printf "  s = s + Int.abs(%d)\n", i % 4000;
    print "  s"; print "}"; print "println(g())" }'
}

# case NAME FLOOR(yes/no) GENERATOR ARG
fails=0
measure() {
  local name=$1 floor=$2 gen=$3 arg=$4 file="$tmp/$1.mn" times=() rss=0
  "$gen" "$arg" > "$file"
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %M' -o "$tmp/time" ./vm "$file" > /dev/null 2> "$tmp/err" || { echo "$name: ./vm failed:"; head -3 "$tmp/err"; }
    read -r t m < "$tmp/time"
    times+=("$t")
    [ "$m" -gt "$rss" ] && rss=$m
  done
  local med
  med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  local verdict=info
  if [ "$floor" = yes ]; then
    verdict=ok
    if awk -v t="$med" -v m="$rss" 'BEGIN { exit !(t >= 2 || m >= 500 * 1024) }'; then verdict=OVER; fails=$((fails + 1)); fi
  fi
  printf '%-28s %9d bytes %6.2f s %7d KB  %s\n' "$name" "$(stat -c %s "$file")" "$med" "$rss" "$verdict"
  printf '%s,%d,%s,%d,%s,%s\n' "$name" "$(stat -c %s "$file")" "$med" "$rss" "$floor" "$verdict" >> "$out/hostile.csv"
}

part=${BENCH_HOSTILE_PART:-all}   # vm, tools or all
if [ "$part" != tools ]; then
  # (here: a run of the tools' part alone leaves the VM's results as they were)
  printf 'case,source_bytes,median_s,max_rss_kb,floor,verdict\n' > "$out/hostile.csv"
  echo "bench-hostile: ./vm, median of $runs runs, peak RSS (floor cases: < 2 s and < 500 MB)"
  measure list_literal_1000000 yes gen_list 1000000
  measure toplevel_lets_100000 yes gen_lets 100000
  measure pair_list_literal_1000000 no gen_tuples 1000000
  measure locals_4000_calls_100000 no gen_locals 100000
  echo "results: $out/hostile.csv"
fi

# The trace tool (issue 23, class 3): every command on every trace of the
# fuzz corpus (tests/fuzz/reader/corpus: trace_gen's mutants and the
# crafted examples; one run each, they are small) and on the crafted traces
# of bench/hostile_traces.c (each under 1 MB, made to maximise the tool's
# work: median of $runs runs). Floor: under 10 s and 500 MB each. What a
# command writes on stdout is counted too (output_bytes: whole-stack outputs
# are bounded by --max-frames, README "Limits"). Time is
# CPU time (user + system): the machine is shared, and wall time there
# measures the neighbours (the wall time of the median run is kept too).
# Results: bench/results/hostile_tools.csv (the crafted traces' rows, and
# one row per command with the corpus's worst time and memory).
tool_commands=("info" "dump -o /dev/null" "top" "top --by stack" "top --live" "lifetimes" "leaks" "timeline"
               "flamegraph" "flamegraph -o $tmp/o.svg" "pprof -o $tmp/o.pb.gz" "report -o $tmp/o.html" "diff SELF"
               "merge SELF -o $tmp/m.pb.gz" "flamegraph --json" "flamegraph --whole-stacks"
               "flamegraph --json --whole-stacks" "top --by stack --json --whole-stacks")
tool_run() {   # CMD TRACE: "cpu_seconds kb status wall_seconds output_bytes" of one run
  local c=${1//SELF/$2}
  # shellcheck disable=SC2086
  /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" tools/memtrace $c "$2" 2> /dev/null | wc -c > "$tmp/bytes"
  local s=${PIPESTATUS[0]}
  read -r e m u k < <(tail -1 "$tmp/time")   # after "Command exited with non-zero status N"
  echo "$(awk -v u="$u" -v k="$k" 'BEGIN { printf "%.2f", u + k }') $m $s $e $(cat "$tmp/bytes")"
}
if [ "$part" != vm ]; then
  [ -x tools/memtrace ] && [ -x build/release/hostile_traces ] || { echo "bench-hostile: make tools/memtrace build/release/hostile_traces first"; exit 1; }
  mkdir -p "$tmp/traces"
  build/release/hostile_traces "$tmp/traces" > /dev/null
  printf 'trace,trace_bytes,command,median_cpu_s,max_rss_kb,status,wall_s,output_bytes,verdict\n' > "$out/hostile_tools.csv"
  echo "bench-hostile: tools/memtrace on crafted traces, median of $runs runs (floor: < 10 s and < 500 MB)"
  for f in "$tmp"/traces/*.ctf; do
    for c in "${tool_commands[@]}"; do
      times=() rss=0 st=0 walls=()
      for _ in $(seq "$runs"); do
        read -r t m st w ob < <(tool_run "$c" "$f")
        times+=("$t") walls+=("$w")
        [ "$m" -gt "$rss" ] && rss=$m
      done
      med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
      verdict=ok
      if awk -v t="$med" -v m="$rss" 'BEGIN { exit !(t >= 10 || m >= 500 * 1024) }'; then verdict=OVER; fails=$((fails + 1)); fi
      name=$(basename "$f")
      label=${c//$tmp\//}
      wall=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
      printf '%-16s %-36s %6.2f s cpu %8d KB  status %d  %10d B out  (wall %s s)  %s\n' "$name" "$label" "$med" "$rss" "$st" "$ob" "$wall" "$verdict"
      printf '%s,%d,%s,%s,%d,%d,%s,%d,%s\n' "$name" "$(stat -c %s "$f")" "$label" "$med" "$rss" "$st" "$wall" "$ob" "$verdict" >> "$out/hostile_tools.csv"
    done
  done
  echo "bench-hostile: tools/memtrace on the fuzz corpus ($(ls tests/fuzz/reader/corpus/*.ctf | wc -l) traces), worst per command"
  for c in "${tool_commands[@]}"; do
    worst_t=0 worst_m=0 worst_f= worst_b=0
    for f in tests/fuzz/reader/corpus/*.ctf; do
      read -r t m st _ ob < <(tool_run "$c" "$f")
      [ "$ob" -gt "$worst_b" ] && worst_b=$ob
      awk -v a="$t" -v b="$worst_t" 'BEGIN { exit !(a > b) }' && worst_t=$t worst_f=$(basename "$f")
      [ "$m" -gt "$worst_m" ] && worst_m=$m
    done
    verdict=ok
    if awk -v t="$worst_t" -v m="$worst_m" 'BEGIN { exit !(t >= 10 || m >= 500 * 1024) }'; then verdict=OVER; fails=$((fails + 1)); fi
    label=${c//$tmp\//}
    printf '%-16s %-36s %6.2f s cpu %8d KB  %10d B out  (slowest: %s)  %s\n' corpus "$label" "$worst_t" "$worst_m" "$worst_b" "$worst_f" "$verdict"
    printf 'corpus-worst,0,%s,%s,%d,,,%d,%s\n' "$label" "$worst_t" "$worst_m" "$worst_b" "$verdict" >> "$out/hostile_tools.csv"
  done
  echo "results: $out/hostile_tools.csv"
fi
[ "$fails" -eq 0 ]
