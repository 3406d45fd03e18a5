#!/usr/bin/env bash
# fastpath.sh: machine instructions (callgrind Ir) per iteration of bench/fastpath/alloc_loop.mn,
# in each mode, from the difference between runs of n and 2n iterations (start-up cancels out).
# See bench/README.md "Fast path cost". Environment: BENCH_FP_N (default 200000), BENCH_VM, BENCH_VM_BOEHM.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1

n1=${BENCH_FP_N:-200000}
n2=$((2 * n1))
vm=${BENCH_VM:-./vm}
vm_boehm=${BENCH_VM_BOEHM:-./vm-boehm}
# A minor heap big enough that the 2n-iteration run never collects: only the fast path runs.
minor=$((4 * n2 + 1048576))

command -v valgrind >/dev/null || { echo "fastpath: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Total Ir of one run: ir BINARY N MODE [VM OPTIONS...]
ir() {
  local bin=$1 n=$2 mode=$3
  shift 3
  if ! valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
      "$bin" "$@" bench/fastpath/alloc_loop.mn "$n" "$mode" >"$tmp/out" 2>"$tmp/log"; then
    echo "fastpath: $bin $* alloc_loop.mn $n $mode failed:" >&2
    tail -n 5 "$tmp/log" >&2
    exit 1
  fi
  awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.out"
}

# Ir per loop iteration: per_iter BINARY MODE [VM OPTIONS...]
per_iter() {
  local bin=$1 mode=$2
  shift 2
  local a b
  a=$(ir "$bin" "$n1" "$mode" "$@")
  b=$(ir "$bin" "$n2" "$mode" "$@")
  awk -v a="$a" -v b="$b" -v d="$((n2 - n1))" 'BEGIN { printf "%.2f", (b - a) / d }'
}

echo "fastpath: callgrind, $n1 and $n2 iterations, Ir per iteration"
control=$(per_iter "$vm" control --minor-words "$minor")
alloc=$(per_iter "$vm" alloc --minor-words "$minor")
memprof=$(per_iter "$vm" memprof --minor-words "$minor")
printf '%-44s %10s\n' "vm control loop (no allocation)" "$control"
printf '%-44s %10s\n' "vm alloc loop (2-field tuple)" "$alloc"
printf '%-44s %10s\n' "vm alloc loop, Memprof on, nothing sampled" "$memprof"
printf '%-44s %10s\n' "vm: allocation (alloc - control)" "$(awk -v a="$alloc" -v c="$control" 'BEGIN { printf "%.2f", a - c }')"
printf '%-44s %10s\n' "vm: unsampled profiler cost (memprof - alloc)" "$(awk -v a="$alloc" -v m="$memprof" 'BEGIN { printf "%.2f", m - a }')"
if command -v "$vm_boehm" >/dev/null 2>&1; then
  bcontrol=$(per_iter "$vm_boehm" control)
  balloc=$(per_iter "$vm_boehm" alloc)
  printf '%-44s %10s\n' "vm-boehm control loop" "$bcontrol"
  printf '%-44s %10s\n' "vm-boehm alloc loop" "$balloc"
  printf '%-44s %10s\n' "vm-boehm: allocation (alloc - control)" "$(awk -v a="$balloc" -v c="$bcontrol" 'BEGIN { printf "%.2f", a - c }')"
fi
