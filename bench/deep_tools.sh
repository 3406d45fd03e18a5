#!/usr/bin/env bash
# deep_tools.sh (make bench-deep-tools): the trace tools on deep recursion
# (issue 22 item 4). Traces of bench/deep_tools/deep.mn made by ./vm:
#   deep100k  100,000-deep recursion x 25 rounds (and 10,000-deep ping/pong)
#             at rate 1e-3 (about 220 KB of trace);
#   deep80k   80,000-deep recursion (and 8,000-deep ping/pong) at rate 1;
#   cycle6_80k, cycle10_80k: bench/deep_tools/cycles.mn, an 80,000-deep
#             recursion whose cycle is f g g h g g (period 6), or c0 .. c9
#             (period 10), at rate 1 (issue 32).
# BENCH_DEEP_TRACES (default all four; empty: none) runs some only: their rows of the CSV
# are replaced, the others' kept.
# For each: the output size and the median wall time / peak RSS of
# BENCH_DEEP_RUNS runs of flamegraph (folded and SVG), report, pprof, merge
# (the trace twice), top --by stack; `go tool pprof -top` on the pprof output
# (time and peak RSS, when go is installed; its bytes column is the profile's size); pprof with --whole-stacks on
# deep80k, alternating with the default. Then callgrind instructions of
# pprof, default and --whole-stacks, at rate 1 on 5,000- and 10,000-deep
# recursions (deterministic: the growth with depth) of each shape of
# BENCH_DEEP_SHAPES (deep: deep.mn; cycle6, cycle10: cycles.mn; default all
# three; rows replaced the same way); with BENCH_DEEP_BASELINE=<a memtrace
# binary>, its pprof too (variant "baseline": before a change). Results:
# bench/results/deep_tools.csv and deep_tools_callgrind.csv; summary in
# bench/TOOLS.md ("Deep recursion").
set -eu
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-bench/results}
runs=${BENCH_DEEP_RUNS:-3}
work=build/bench-deep-tools
mkdir -p "$out" "$work"
export MEMTRACE_PROGRESS=0
tool=tools/memtrace

traces=${BENCH_DEEP_TRACES-deep100k deep80k cycle6_80k cycle10_80k}
shapes=${BENCH_DEEP_SHAPES-deep cycle6 cycle10}
baseline=${BENCH_DEEP_BASELINE:-}

# program SHAPE DEPTH: the program and arguments of a recursion of that shape.
program() {
  case $1 in
    deep) echo "bench/deep_tools/deep.mn $2" ;;
    cycle6) echo "bench/deep_tools/cycles.mn $2 1 6" ;;
    cycle10) echo "bench/deep_tools/cycles.mn $2 1 10" ;;
  esac
}
for trace in $traces; do
  [ -f "$work/$trace.ctf" ] && continue
  case $trace in
    deep100k) ./vm --memtrace "$work/$trace.ctf" --memtrace-rate 1e-3 bench/deep_tools/deep.mn 100000 25 >/dev/null ;;
    deep80k) ./vm --memtrace "$work/$trace.ctf" --memtrace-rate 1 bench/deep_tools/deep.mn 80000 >/dev/null ;;
    cycle6_80k | cycle10_80k)
      # shellcheck disable=SC2046
      ./vm --memtrace "$work/$trace.ctf" --memtrace-rate 1 $(program "${trace%_80k}" 80000) >/dev/null ;;
    *) echo "deep_tools.sh: no trace $trace" >&2; exit 2 ;;
  esac
done

# keep_rows FILE HEADER NAMES...: FILE with HEADER, without the rows whose
# first field is one of NAMES (they are about to be written again).
keep_rows() {
  local file=$1 header=$2
  shift 2
  echo "$header" >"$file.new"
  if [ -f "$file" ]; then tail -n +2 "$file" | awk -F, -v names=" $* " 'index(names, " " $1 " ") == 0' >>"$file.new"; fi
  mv "$file.new" "$file"
}

# run LABEL OUTFILE COMMAND...: one timed run; prints "wall_s,cpu_s,rss_kb,out_bytes"
# (cpu: user + system, the figure to judge by on a loaded machine).
run() {
  local label=$1 file=$2
  shift 2
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/stdout" 2>/dev/null || true
  [ "$file" = - ] && file=$work/stdout
  read -r wall user sys rss <"$work/time"
  echo "$wall,$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}'),$rss,$(wc -c <"$file")"
}

# The run of median CPU time.
median() { sort -t, -k2 -g | awk -F, '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}'; }

# shellcheck disable=SC2086
keep_rows "$out/deep_tools.csv" "trace,case,wall_s,cpu_s,peak_rss_kb,output_bytes" $traces
for trace in $traces; do
  t=$work/$trace.ctf
  cases=("flamegraph|-|$tool flamegraph $t"
         "flamegraph_svg|$work/f.svg|$tool flamegraph $t -o $work/f.svg"
         "report|$work/r.html|$tool report $t -o $work/r.html"
         "top_by_stack|-|$tool top --by stack -n 20 $t"
         "pprof|$work/p.pb.gz|$tool pprof $t -o $work/p.pb.gz"
         "merge|$work/m.pb.gz|$tool merge $t $t -o $work/m.pb.gz")
  [ "$trace" != deep100k ] && cases+=("pprof_whole_stacks|$work/w.pb.gz|$tool pprof --whole-stacks $t -o $work/w.pb.gz")
  declare -A results=()
  for ((i = 0; i < runs; i++)); do  # cases interleaved, run after run
    for c in "${cases[@]}"; do
      IFS='|' read -r label file cmd <<<"$c"
      # shellcheck disable=SC2086
      results[$label]+="$(run "$label" "$file" $cmd)"$'\n'
    done
  done
  for c in "${cases[@]}"; do
    label=${c%%|*}
    echo "$trace,$label,$(printf '%s' "${results[$label]}" | median)" >>"$out/deep_tools.csv"
  done
  if command -v go >/dev/null; then
    "$tool" pprof "$t" -o "$work/p.pb.gz"
    line=$(for ((i = 0; i < runs; i++)); do run go "$work/p.pb.gz" go tool pprof -top "$work/p.pb.gz"; done | median)
    echo "$trace,go_tool_pprof_top,$line" >>"$out/deep_tools.csv"
  fi
  unset results
done

# shellcheck disable=SC2086
keep_rows "$out/deep_tools_callgrind.csv" "shape,depth,variant,instructions" $shapes
for shape in $shapes; do
  for depth in 5000 10000; do
    t=$work/$shape$depth-rate1.ctf
    # shellcheck disable=SC2046
    [ -f "$t" ] || ./vm --memtrace "$t" --memtrace-rate 1 $(program "$shape" "$depth") >/dev/null
    for variant in default --whole-stacks ${baseline:+baseline}; do
      bin=$tool flag=
      case $variant in --whole-stacks) flag=$variant ;; baseline) bin=$baseline ;; esac
      # shellcheck disable=SC2086
      ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" pprof $flag "$t" -o "$work/cg.pb.gz" 2>&1 |
           sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
      echo "$shape,$depth,$variant,$ir" >>"$out/deep_tools_callgrind.csv"
    done
  done
done
column -s, -t "$out/deep_tools.csv"
column -s, -t "$out/deep_tools_callgrind.csv"
