#!/usr/bin/env bash
# trace_pairs.sh - what ./vm --memtrace costs in time on the deep programs:
# paired runs, the profiler off and traced, alternating (make bench-trace-pairs;
# bench/TRACE.md, "In time"). Each round runs every configuration once, in an
# order rotated each round; a configuration's figure is the median over the
# rounds of its CPU time (user + sys) over the profiler-off run of the same
# round, with the range of those ratios. Traced runs pass
# --memtrace-no-end-state (the running cost; bench/RETENTION.md measures the end).
#
# Environment (all optional):
#   BENCH_PAIRS_RUNS=11                           rounds
#   BENCH_PAIRS_RATE=1e-4                         memtrace rate
#   BENCH_PAIRS_CASES="prog args;..."             default: the deep programs at bench-trace's sizes
#   BENCH_PAIRS_VM=./vm
#   BENCH_PAIRS_VM_BEFORE=                        another ./vm to trace in the same rounds (a
#                                                 build of an earlier commit): configuration "before"
#   BENCH_PAIRS_OUT=bench/results/trace_pairs.csv
# Exit status 1 if a run failed or printed another checksum than the off run.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$here")" || exit 1

runs=${BENCH_PAIRS_RUNS:-11}
rate=${BENCH_PAIRS_RATE:-1e-4}
vm=${BENCH_PAIRS_VM:-./vm}
before=${BENCH_PAIRS_VM_BEFORE:-}
out=${BENCH_PAIRS_OUT:-bench/results/trace_pairs.csv}
cases=$(printf '%s\n' "${BENCH_PAIRS_CASES:-list_pipeline 10000 600;deep_map 10000 400}" | tr ';' '\n' | sed 's/^ *//; s/ *$//; /^$/d')

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cp "$vm" "$tmp/vm" || exit 1
configs="off traced"
if [ -n "$before" ]; then
  cp "$before" "$tmp/vm-before" || exit 1
  configs="$configs before"
fi
read -r -a cfg <<<"$configs"
n=${#cfg[@]}
failed=0
echo "trace_pairs: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $runs rounds, rate $rate"
: >"$tmp/raw"   # case config round cpu
ci=0
while read -r prog args; do
  ci=$((ci + 1))
  ref=""
  for round in $(seq 1 "$runs"); do
    rot=$(((round - 1) % n))
    for c in "${cfg[@]:rot}" "${cfg[@]:0:rot}"; do
      case $c in
        off) cmd=("$tmp/vm") ;;
        traced) cmd=("$tmp/vm" --memtrace "$tmp/t.ctf" --memtrace-no-end-state --memtrace-rate "$rate") ;;
        before) cmd=("$tmp/vm-before" --memtrace "$tmp/t.ctf" --memtrace-no-end-state --memtrace-rate "$rate") ;;
      esac
      # shellcheck disable=SC2086 # args split on purpose
      { TIMEFORMAT='%3U %3S'; time "${cmd[@]}" "bench/programs/$prog.mn" $args >"$tmp/out" 2>"$tmp/err" </dev/null; } 2>"$tmp/time"
      st=$?
      sum=$(grep -m 1 '^checksum:' "$tmp/out")
      [ -z "$ref" ] && ref=$sum
      if [ "$st" -ne 0 ] || [ "$sum" != "$ref" ]; then
        echo "trace_pairs: $prog $args $c round $round failed (exit $st, $sum)" >&2
        failed=1
        continue
      fi
      echo "$ci $c $round $(awk '{ printf "%.3f", $1 + $2 }' "$tmp/time")" >>"$tmp/raw"
    done
  done
done <<<"$cases"

echo "program,args,config,rate,rounds,median_cpu_s,median_ratio,min_ratio,max_ratio" >"$out"
ci=0
while read -r prog args; do
  ci=$((ci + 1))
  for c in "${cfg[@]}"; do
    awk -v ci="$ci" -v c="$c" -v p="$prog" -v a="$args" -v r="$rate" '
      function med(v, n,   i, j, t) { for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
      $1 == ci && $2 == "off" { off[$3] = $4 }
      $1 == ci && $2 == c { k++; cpu[k] = $4; rd[k] = $3 }
      END {
        for (i = 1; i <= k; i++) if (off[rd[i]] > 0) { m++; q[m] = cpu[i] / off[rd[i]] }
        mc = med(cpu, k); mq = med(q, m)
        printf "%s,%s,%s,%s,%d,%.3f,%.4f,%.4f,%.4f\n", p, a, c, (c == "off" ? "" : r), k, mc, mq, q[1], q[m] }' "$tmp/raw"
  done
done <<<"$cases" >>"$out"
column -s, -t <"$out"
echo "trace_pairs: wrote $out; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$failed"
