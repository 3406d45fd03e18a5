#!/usr/bin/env bash
# deep_tools.sh (make bench-deep-tools): the trace tools on deep recursion
# (issue 22 item 4). Traces of bench/deep_tools/deep.mn made by ./vm:
#   deep100k  100,000-deep recursion x 25 rounds (and 10,000-deep ping/pong)
#             at rate 1e-3 (about 220 KB of trace);
#   deep80k   80,000-deep recursion (and 8,000-deep ping/pong) at rate 1.
# For each: the output size and the median wall time / peak RSS of
# BENCH_DEEP_RUNS runs of flamegraph (folded and SVG), report, pprof, merge
# (the trace twice), top --by stack; `go tool pprof -top` on the pprof output
# (time and peak RSS, when go is installed; its bytes column is the profile's size); pprof with --whole-stacks on
# deep80k, alternating with the default. Then callgrind instructions of
# pprof, default and --whole-stacks, at rate 1 on 5,000- and 10,000-deep
# recursions (deterministic: the growth with depth). Results:
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

[ -f "$work/deep100k.ctf" ] || ./vm --memtrace "$work/deep100k.ctf" --memtrace-rate 1e-3 bench/deep_tools/deep.mn 100000 25 >/dev/null
[ -f "$work/deep80k.ctf" ] || ./vm --memtrace "$work/deep80k.ctf" --memtrace-rate 1 bench/deep_tools/deep.mn 80000 >/dev/null

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

echo "trace,case,wall_s,cpu_s,peak_rss_kb,output_bytes" >"$out/deep_tools.csv"
for trace in deep100k deep80k; do
  t=$work/$trace.ctf
  cases=("flamegraph|-|$tool flamegraph $t"
         "flamegraph_svg|$work/f.svg|$tool flamegraph $t -o $work/f.svg"
         "report|$work/r.html|$tool report $t -o $work/r.html"
         "top_by_stack|-|$tool top --by stack -n 20 $t"
         "pprof|$work/p.pb.gz|$tool pprof $t -o $work/p.pb.gz"
         "merge|$work/m.pb.gz|$tool merge $t $t -o $work/m.pb.gz")
  [ "$trace" = deep80k ] && cases+=("pprof_whole_stacks|$work/w.pb.gz|$tool pprof --whole-stacks $t -o $work/w.pb.gz")
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

echo "depth,variant,instructions" >"$out/deep_tools_callgrind.csv"
for depth in 5000 10000; do
  t=$work/deep$depth-rate1.ctf
  [ -f "$t" ] || ./vm --memtrace "$t" --memtrace-rate 1 bench/deep_tools/deep.mn "$depth" >/dev/null
  for variant in default --whole-stacks; do
    flag=$([ "$variant" = default ] || echo "$variant")
    # shellcheck disable=SC2086
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$tool" pprof $flag "$t" -o "$work/cg.pb.gz" 2>&1 |
         sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    echo "$depth,$variant,$ir" >>"$out/deep_tools_callgrind.csv"
  done
done
column -s, -t "$out/deep_tools.csv"
column -s, -t "$out/deep_tools_callgrind.csv"
