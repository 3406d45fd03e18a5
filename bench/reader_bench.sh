#!/usr/bin/env bash
# reader_bench.sh - the trace reader's speed (make bench-reader).
# Traces, made once in build/bench-reader/ (page-cached when read):
#   hashtbl, bintrees   memtrace's fixtures repeated (build/release/trace_repeat)
#                       1,000 and 2,000 times: real traces, about 50 MB each
#   listmap             the listmap fixture repeated 100 times: stacks of up to
#                       10,000 frames that share little with the previous one,
#                       so each allocation decodes about 3,000 frames
#   shallow             synthetic, 5 M events, stacks of 1-40 frames
#   deep                synthetic, 1 M events, stacks of 3,000-4,000 frames that
#                       change a few frames at the leaf
#   recursive           synthetic, 100 K events, 9,000-10,000 frames of a
#                       recursion (7 codes in a cycle) changing at the leaf
# Each trace is read BENCH_READER_RUNS times, alternating between traces
# (build/release/reader_bench: open, every event, the new frames of each
# backtrace, close). Reported: medians of wall time and of the process's CPU
# time, as events/s and MB/s; on a loaded machine the CPU-time figures are
# the ones to compare. With BENCH_READER_CALLGRIND=1, also callgrind's
# instructions per event (the whole process, on a 1/10 copy of each trace).
# Table on stdout, CSV in bench/results/reader.csv.
set -eu
cd "$(dirname "$0")/.."
runs=${BENCH_READER_RUNS:-5}
callgrind=${BENCH_READER_CALLGRIND:-1}
dir=build/bench-reader
mkdir -p "$dir" bench/results
fx=tests/fixtures/memtrace

make_trace() {  # name, command making $dir/name.ctf (run once)
  local name=$1
  shift
  [ -s "$dir/$name.ctf" ] || "$@"
}
make_trace hashtbl build/release/trace_repeat $fx/hashtbl_str-1e-4.ctf 1000 $dir/hashtbl.ctf
make_trace bintrees build/release/trace_repeat $fx/bintrees-1e-5.ctf 2000 $dir/bintrees.ctf
make_trace listmap build/release/trace_repeat $fx/listmap-1e-6.ctf 100 $dir/listmap.ctf
make_trace shallow build/release/trace_gen --shape shallow --events 5000000 $dir/shallow.ctf
make_trace deep build/release/trace_gen --shape deep --events 1000000 $dir/deep.ctf
make_trace recursive build/release/trace_gen --shape recursive --events 100000 $dir/recursive.ctf
make_trace hashtbl-small build/release/trace_repeat $fx/hashtbl_str-1e-4.ctf 100 $dir/hashtbl-small.ctf
make_trace bintrees-small build/release/trace_repeat $fx/bintrees-1e-5.ctf 200 $dir/bintrees-small.ctf
make_trace listmap-small build/release/trace_repeat $fx/listmap-1e-6.ctf 10 $dir/listmap-small.ctf
make_trace shallow-small build/release/trace_gen --shape shallow --events 500000 $dir/shallow-small.ctf
make_trace deep-small build/release/trace_gen --shape deep --events 100000 $dir/deep-small.ctf
make_trace recursive-small build/release/trace_gen --shape recursive --events 10000 $dir/recursive-small.ctf

traces="hashtbl bintrees listmap shallow deep recursive"
for run in $(seq "$runs"); do
  for t in $traces; do
    build/release/reader_bench "$dir/$t.ctf" >> "$dir/$t.runs.tmp"
  done
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

csv=bench/results/reader.csv
echo "trace,events,bytes,mean_frames,wall_s,cpu_s,events_per_s_wall,events_per_s_cpu,mb_per_s_cpu,instructions_per_event" > "$csv"
printf '%-10s %10s %10s %7s %13s %13s %9s %9s\n' trace events MB frames "Mev/s wall" "Mev/s cpu" "MB/s cpu" "instr/ev"
for t in $traces; do
  read -r events bytes frames _ < "$dir/$t.runs.tmp"
  wall=$(awk '{print $4}' "$dir/$t.runs.tmp" | median)
  cpu=$(awk '{print $5}' "$dir/$t.runs.tmp" | median)
  rm -f "$dir/$t.runs.tmp"
  ipe=-
  if [ "$callgrind" = 1 ] && command -v valgrind > /dev/null; then
    small_events=$(build/release/reader_bench "$dir/$t-small.ctf" | awk '{print $1}')
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null build/release/reader_bench "$dir/$t-small.ctf" 2>&1 |
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    ipe=$(awk -v i="$ir" -v e="$small_events" 'BEGIN {printf "%.0f", i / e}')
  fi
  awk -v t="$t" -v e="$events" -v b="$bytes" -v f="$frames" -v w="$wall" -v c="$cpu" -v i="$ipe" 'BEGIN {
    printf "%-10s %10d %10.1f %7.0f %13.1f %13.1f %9.0f %9s\n", t, e, b / 1e6, f / e, e / w / 1e6, e / c / 1e6, b / c / 1e6, i
    printf "%s,%d,%d,%.1f,%.6f,%.6f,%.0f,%.0f,%.1f,%s\n", t, e, b, f / e, w, c, e / w, e / c, b / c / 1e6, i >> "'"$csv"'"
  }'
done
echo "frames: mean backtrace length per event (promotions and collections count 0)."
echo "CSV: $csv"
