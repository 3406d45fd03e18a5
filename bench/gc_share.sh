#!/usr/bin/env bash
# gc_share.sh: where the time of each bench program goes on ./vm and ./vm-boehm,
# split by perf's sampling into the interpreter and everything the two builds
# share, the allocator and collector (the part they differ in), and the kernel.
# Writes bench/results/{gc_share.csv,gc_share_ratios.csv}; see bench/README.md.
#
# Each sample (perf record, software cpu-clock, BENCH_SHARE_FREQ Hz) goes to:
#   collector  a function whose source is gc/*.c or core/frames.c (the frame
#              walker serves the GC's root scan; with the profiler off nothing
#              else walks frames in these programs), the interpreter's
#              allocation slow paths (alloc1_slow, allocn_slow), libgc.so, and
#              __tls_get_addr (libgc's thread-local free lists call it);
#   kernel     [kernel.kallsyms]: page faults (first writes to fresh memory,
#              zeroed by the kernel), mmap/munmap, process start and exit;
#   profiler   memprof/*.c (expected 0: the profiler is off);
#   shared     the rest: the dispatch loop (which holds vm's inline bump
#              allocation too), the primitives, libc, the compiler.
# The split under-counts vm's collector (its fast path is inline in the
# dispatch loop) and over-counts nothing of Boehm's that vm does not also do.
#
# Environment (all optional):
#   BENCH_RUNS=3                  runs per program and implementation (interleaved)
#   BENCH_CASES="prog args;..."   cases to run instead of the default list (common.sh)
#   BENCH_SHARE_FREQ=2000         perf sampling frequency (Hz)
#   BENCH_VM=./vm  BENCH_VM_BOEHM=./vm-boehm
#   BENCH_OUT=bench/results
# Exit status: 0 when every run succeeded, 1 otherwise; 2 when perf cannot
# record here (not installed, or perf_event_paranoid forbids it).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root" || exit 1

runs=${BENCH_RUNS:-3}
freq=${BENCH_SHARE_FREQ:-2000}
vm=${BENCH_VM:-./vm}
vm_boehm=${BENCH_VM_BOEHM:-./vm-boehm}
out=${BENCH_OUT:-bench/results}
# shellcheck source=bench/common.sh
source "$here/common.sh"
cases=$(bench_cases)

die() { echo "gc_share: $1" >&2; exit "${2:-1}"; }

command -v perf >/dev/null || die "perf is not installed (apt-get install linux-perf)" 2
for b in "$vm" "$vm_boehm"; do [ -x "$b" ] || die "$b is missing (make vm vm-boehm)"; done
tmp=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
perf record -q -F "$freq" -o "$tmp/probe.data" true >/dev/null 2>"$tmp/probe.err" ||
  die "perf cannot record here: $(head -1 "$tmp/probe.err")" 2
mkdir -p "$out" || die "cannot create $out"

# Functions of a binary that count as collector, from its debug information.
collector_syms() {
  nm -l --defined-only "$1" |
    awk 'NF >= 4 && ($2 == "T" || $2 == "t") && $4 ~ /\/(gc\/[a-z_]+\.c|lang\/frames\.c):/ { print $3 }'
  printf '%s\n' alloc1_slow alloc1_slow.cold allocn_slow allocn_slow.cold
}
profiler_syms() {
  nm -l --defined-only "$1" |
    awk 'NF >= 4 && ($2 == "T" || $2 == "t") && $4 ~ /\/memprof\/[a-z_]+\.c:/ { print $3 }'
}
for impl in vm boehm; do
  bin=$vm; [ "$impl" = boehm ] && bin=$vm_boehm
  collector_syms "$bin" | sort -u >"$tmp/$impl.collector"
  profiler_syms "$bin" | sort -u >"$tmp/$impl.profiler"
  [ -s "$tmp/$impl.collector" ] || die "no gc/ functions found in $bin (built without -g?)"
done

# Milliseconds per category for one perf.data: "shared collector kernel profiler".
classify() {
  local data=$1 impl=$2
  perf script -i "$data" -F period,ip,sym,dso 2>/dev/null |
    awk -v coll="$tmp/$impl.collector" -v prof="$tmp/$impl.profiler" '
      BEGIN {
        while ((getline s < coll) > 0) is_coll[s] = 1
        while ((getline s < prof) > 0) is_prof[s] = 1
      }
      {
        period = $1; dso = $NF; sym = $3
        if (dso ~ /kernel\.kallsyms/) kernel += period
        else if (dso ~ /libgc\.so/ || sym ~ /^__tls_get_addr/ || (sym in is_coll)) collector += period
        else if (sym in is_prof) profiler += period
        else shared += period
      }
      END { printf "%.1f %.1f %.1f %.1f\n", shared / 1e6, collector / 1e6, kernel / 1e6, profiler / 1e6 }'
}

# A median in ms as the CSV shows it: one decimal (NA when there is none).
median_ms() { median | awk '{ printf "%.1f\n", $1; n++ } END { if (!n) print "NA" }'; }

csv=$out/gc_share.csv
ratios=$out/gc_share_ratios.csv
echo "program,args,impl,runs,total_ms,shared_ms,collector_ms,kernel_ms,profiler_ms" >"$csv"
echo "program,args,collector_vm_over_boehm,collector_kernel_vm_over_boehm,shared_vm_over_boehm,total_vm_over_boehm" >"$ratios"
failed=0

printf '%-26s %-9s %9s %9s %9s %9s\n' case impl total_ms shared collector kernel
while IFS= read -r case_line; do
  read -r prog args <<<"$case_line"
  [ -f "bench/programs/$prog.mn" ] || { echo "gc_share: no bench/programs/$prog.mn" >&2; failed=1; continue; }
  for impl in vm boehm; do : >"$tmp/$impl.runs"; done
  for ((r = 1; r <= runs; r++)); do
    for impl in vm boehm; do
      bin=$vm; [ "$impl" = boehm ] && bin=$vm_boehm
      # shellcheck disable=SC2086
      if ! perf record -q -F "$freq" -o "$tmp/run.data" "$bin" "bench/programs/$prog.mn" $args >/dev/null 2>"$tmp/run.err"; then
        echo "gc_share: $impl $prog $args failed: $(tail -1 "$tmp/run.err")" >&2
        failed=1
        continue
      fi
      classify "$tmp/run.data" "$impl" >>"$tmp/$impl.runs"
    done
  done
  declare -A med=()
  for impl in vm boehm; do
    n=$(wc -l <"$tmp/$impl.runs")
    [ "$n" -gt 0 ] || continue
    for col in 1 2 3 4; do med[$impl.$col]=$(awk -v c=$col '{ print $c }' "$tmp/$impl.runs" | median_ms); done
    med[$impl.total]=$(awk '{ print $1 + $2 + $3 + $4 }' "$tmp/$impl.runs" | median_ms)
    label=vm; [ "$impl" = boehm ] && label=vm-boehm
    echo "$prog,$args,$label,$n,${med[$impl.total]},${med[$impl.1]},${med[$impl.2]},${med[$impl.3]},${med[$impl.4]}" >>"$csv"
    printf '%-26s %-9s %9s %9s %9s %9s\n' "$prog $args" "$label" "${med[$impl.total]}" "${med[$impl.1]}" "${med[$impl.2]}" "${med[$impl.3]}"
  done
  if [ -n "${med[vm.total]:-}" ] && [ -n "${med[boehm.total]:-}" ]; then
    awk -v p="$prog" -v a="$args" -v vc="${med[vm.2]}" -v vk="${med[vm.3]}" -v vs="${med[vm.1]}" -v vt="${med[vm.total]}" \
        -v bc="${med[boehm.2]}" -v bk="${med[boehm.3]}" -v bs="${med[boehm.1]}" -v bt="${med[boehm.total]}" '
      function ratio(x, y) { return y > 0 ? sprintf("%.3f", x / y) : "NA" }
      BEGIN { print p "," a "," ratio(vc, bc) "," ratio(vc + vk, bc + bk) "," ratio(vs, bs) "," ratio(vt, bt) }' >>"$ratios"
  fi
  unset med
done <<<"$cases"

echo
echo "medians of $runs runs at $freq Hz: $csv"
column -s, -t "$ratios"
exit $failed
