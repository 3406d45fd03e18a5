#!/usr/bin/env bash
# retention_bench.sh - what a trace's end state costs (make bench-retention;
# method and findings in bench/RETENTION.md). When a trace ends, ./vm runs a
# final major collection, walks the heap from the roots for the retaining
# paths and writes T.ctf.retain (docs/trace-format.md, section 12).
#
#   1. times  for each case, BENCH_RET_RUNS runs traced with the end state and
#             as many with --memtrace-no-end-state, alternating: wall time and
#             peak RSS (/usr/bin/time), and the end-state file's own figures
#             (the final collection's and the walk's microseconds, reachable
#             blocks and words, live samples, paths: build/bench/retain_stats)
#   2. instructions  callgrind, counting only inside the end state
#             (--toggle-collect=snapshots_end_trace), on smaller sizes: the
#             snapshot's collection (gc_major_paths), of which the paths
#             named and written from inside its mark (reached), and the rest
#             of the mark and sweep
# Floors (issue 22): the final collection and the walk take at most one full
# major collection plus one pass over the reachable heap, and at most 16 bytes
# of extra memory per reachable block (or a documented bound). Reported, not
# failed: walk/gc is the walk's and the paths' cost over the collection's.
# Writes $BENCH_RET_OUT/retention.csv and retention_callgrind.csv.
#
# Environment (all optional):
#   BENCH_RET_RUNS=5   BENCH_RET_RATE=1e-4   BENCH_RET_OUT=bench/results
#   BENCH_RET_CASES="programs/binary_trees 16;leaks/global_list 120000"
#   BENCH_RET_CG_CASES="..." (callgrind; "" skips step 2)
#   BENCH_RET_STATS=build/bench/retain_stats   BENCH_RET_VM=./vm
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root" || exit 1
# shellcheck source=bench/common.sh
. "$here/common.sh"

runs=${BENCH_RET_RUNS:-5}
rate=${BENCH_RET_RATE:-1e-4}
out=${BENCH_RET_OUT:-bench/results}
stats=${BENCH_RET_STATS:-build/bench/retain_stats}
vm=${BENCH_RET_VM:-./vm}
default_ret_cases="programs/binary_trees 16
programs/binary_trees 18
programs/list_pipeline 10000 600
programs/deep_map 10000 400
programs/word_count 1000000
programs/string_build 20000 80
leaks/global_list 400000
leaks/every_fourth 1600000
leaks/memo_table 300000
leaks/closures 20000
leaks/request_log 120000
leaks/steady_churn 300000
leaks/build_once 300000
leaks/queue_drain 600000
leaks/periodic_buffers 100000
leaks/bounded_cache 200000"
default_cg_cases="programs/binary_trees 13
programs/list_pipeline 10000 20
programs/deep_map 10000 20
programs/word_count 50000
programs/string_build 2000 10
leaks/global_list 60000
leaks/memo_table 40000
leaks/closures 3000
leaks/request_log 15000"
cases=$(printf '%s\n' "${BENCH_RET_CASES:-$default_ret_cases}" | tr ';' '\n' | sed '/^ *$/d')
cg_cases=$(printf '%s\n' "${BENCH_RET_CG_CASES-$default_cg_cases}" | tr ';' '\n' | sed '/^ *$/d')

for need in "$vm" "$stats"; do
  [ -x "$need" ] || { echo "retention_bench: $need is missing (run through make bench-retention)" >&2; exit 2; }
done
command -v /usr/bin/time >/dev/null || { echo "retention_bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ------------------------------------------------------------------ 1. times
csv=$out/retention.csv
echo "case,rate,runs,reachable_blocks,reachable_words,live_samples,paths,gc_ms,walk_ms,walk_over_gc,wall_with_s,wall_without_s,rss_with_mib,rss_without_mib,extra_bytes_per_block" >"$csv"
printf '%-34s %10s %8s %8s %8s %7s %9s %9s %7s\n' case blocks paths gc_ms walk_ms walk/gc rss+ rss- B/block
while IFS= read -r c; do
  prog=${c%% *}
  args=${c#"$prog"}
  : >"$tmp/with" ; : >"$tmp/without" ; : >"$tmp/stats"
  for ((k = 0; k < runs; k++)); do
    # shellcheck disable=SC2086
    /usr/bin/time -f '%e %M' -o "$tmp/t" "$vm" --memtrace "$tmp/t.ctf" --memtrace-rate "$rate" "bench/$prog.mn" $args >/dev/null \
      || { echo "retention_bench: $c failed" >&2; continue 2; }
    cat "$tmp/t" >>"$tmp/with"
    "$stats" "$tmp/t.ctf.retain" >>"$tmp/stats" || continue 2
    # shellcheck disable=SC2086
    /usr/bin/time -f '%e %M' -o "$tmp/t" "$vm" --memtrace "$tmp/u.ctf" --memtrace-no-end-state --memtrace-rate "$rate" \
      "bench/$prog.mn" $args >/dev/null || { echo "retention_bench: $c failed" >&2; continue 2; }
    cat "$tmp/t" >>"$tmp/without"
  done
  read -r live paths blocks words _ _ _ <"$tmp/stats"
  gc_ms=$(awk '{ print $5 / 1000 }' "$tmp/stats" | median)
  walk_ms=$(awk '{ print $6 / 1000 }' "$tmp/stats" | median)
  wall_w=$(awk '{ print $1 }' "$tmp/with" | median)
  wall_wo=$(awk '{ print $1 }' "$tmp/without" | median)
  rss_w=$(awk '{ print $2 / 1024 }' "$tmp/with" | median)
  rss_wo=$(awk '{ print $2 / 1024 }' "$tmp/without" | median)
  ratio=$(awk -v w="$walk_ms" -v g="$gc_ms" 'BEGIN { printf "%.2f", (g > 0 ? w / g : 0) }')
  per_block=$(awk -v a="$rss_w" -v b="$rss_wo" -v n="$blocks" 'BEGIN { printf "%.1f", (n > 0 ? (a - b) * 1048576 / n : 0) }')
  echo "$c,$rate,$runs,$blocks,$words,$live,$paths,$gc_ms,$walk_ms,$ratio,$wall_w,$wall_wo,$rss_w,$rss_wo,$per_block" >>"$csv"
  printf '%-34s %10s %8s %8.1f %8.1f %7s %8.1fM %8.1fM %7s\n' "$c" "$blocks" "$paths" "$gc_ms" "$walk_ms" "$ratio" \
    "$rss_w" "$rss_wo" "$per_block"
done <<<"$cases"
echo "wrote $csv"

# ------------------------------------------------------------ 2. instructions
[ -n "$cg_cases" ] || exit 0
command -v valgrind >/dev/null || { echo "retention_bench: valgrind is missing: step 2 skipped" >&2; exit 0; }
cg_csv=$out/retention_callgrind.csv
echo "case,rate,end_state_ir,collection_ir,mark_and_sweep_ir,paths_ir,paths_over_collection" >"$cg_csv"
printf '\n%-34s %12s %12s %12s %12s %9s\n' case end_state collection mark+sweep paths paths/coll
# Inclusive instructions of function $2 in callgrind output $1.
incl() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | awk -v f="$2" '$0 ~ (":" f " ") || $0 ~ (":" f "$") { gsub(",", "", $1); print $1; exit }'
}
while IFS= read -r c; do
  prog=${c%% *}
  args=${c#"$prog"}
  # shellcheck disable=SC2086
  valgrind --tool=callgrind --toggle-collect=snapshots_end_trace --callgrind-out-file="$tmp/cg.out" \
    "$vm" --memtrace "$tmp/c.ctf" --memtrace-rate "$rate" "bench/$prog.mn" $args >/dev/null 2>"$tmp/cg.err" \
    || { echo "retention_bench: callgrind $c failed" >&2; continue; }
  total=$(incl "$tmp/cg.out" snapshots_end_trace)
  gc=$(incl "$tmp/cg.out" gc_major_paths)
  # Naming and writing the paths, called from inside the mark.
  paths=$(incl "$tmp/cg.out" reached)
  mark=$(( ${gc:-0} - ${paths:-0} ))
  ratio=$(awk -v p="${paths:-0}" -v g="${gc:-0}" 'BEGIN { printf "%.2f", (g > 0 ? p / g : 0) }')
  echo "$c,$rate,${total:-0},${gc:-0},$mark,${paths:-0},$ratio" >>"$cg_csv"
  printf '%-34s %12s %12s %12s %12s %9s\n' "$c" "${total:-0}" "${gc:-0}" "$mark" "${paths:-0}" "$ratio"
done <<<"$cg_cases"
echo "wrote $cg_csv"
