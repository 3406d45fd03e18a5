#!/usr/bin/env bash
# memprof_deep.sh (make bench-memprof-deep): what callstacks cost in Minnow
# code. A 100,000-frame recursion sampled at 1e-3 through the Memprof module
# (bench/memprof_deep/deep_module.mn), with every frame kept (no
# callstack_size) and with callstack_size 10: callgrind instructions of each
# and their ratio (the floor: within 2x), then wall times of alternating runs.
# Results: bench/results/memprof_deep.csv.
set -eu
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-bench/results}
depth=${DEPTH:-100000}
rounds=${ROUNDS:-10}
mkdir -p "$out"
ir() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null ./vm bench/memprof_deep/deep_module.mn "$depth" "$rounds" "$1" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
all=$(ir 0)
ten=$(ir 10)
echo "callstack_size,instructions" > "$out/memprof_deep.csv"
echo "none,$all" >> "$out/memprof_deep.csv"
echo "10,$ten" >> "$out/memprof_deep.csv"
awk -v a="$all" -v t="$ten" 'BEGIN { printf "depth %d, %d rounds at 1e-3: every frame %d Ir, callstack_size 10 %d Ir, ratio %.4f\n", '"$depth"', '"$rounds"', a, t, a / t }'
for i in 1 2 3; do
  for s in 0 10; do /usr/bin/time -f "callstack_size $s: %e s, %M KB" ./vm bench/memprof_deep/deep_module.mn "$depth" "$rounds" "$s" > /dev/null; done
done
