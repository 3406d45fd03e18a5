#!/usr/bin/env bash
# trace_writer_bench.sh - instructions (callgrind Ir) per allocation event in
# the trace encoder, for each stream of bench/micro/trace_writer_micro.c.
# Only the instructions executed inside trace_writer_alloc count
# (--toggle-collect), flushes and location events included, the write(2)
# system calls' kernel time not. Writes $BENCH_TW_OUT/trace_writer_cost.csv.
set -eu
micro=${BENCH_TW_MICRO:-build/bench/trace_writer_micro}
events=${BENCH_TW_EVENTS:-200000}
out=${BENCH_TW_OUT:-bench/results}
command -v valgrind >/dev/null || { echo "bench-trace-writer: valgrind is not installed"; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv="$out/trace_writer_cost.csv"
echo "stream,events,ir_per_alloc,bytes_per_alloc" >"$csv"
printf '%-12s %10s %14s %16s\n' stream events "Ir/alloc" "trace B/alloc"
for stream in shallow deep deep-nohint deep-fresh; do
  line=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect=trace_writer_alloc \
           "$micro" "$stream" "$events" 2>"$tmp/err")
  ir=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$tmp/err")
  bytes=$(printf '%s\n' "$line" | sed -n 's/.*bytes_per_alloc=\([0-9.]*\).*/\1/p')
  per=$(awk -v ir="$ir" -v n="$events" 'BEGIN { printf "%.1f", ir / n }')
  printf '%-12s %10s %14s %16s\n' "$stream" "$events" "$per" "$bytes"
  echo "$stream,$events,$per,$bytes" >>"$csv"
done
echo "written: $csv"
