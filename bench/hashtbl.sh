#!/usr/bin/env bash
# hashtbl.sh (make bench-hashtbl): the cost of hash and Hashtbl (issue 23,
# class 3). Two measurements, written to bench/results/:
#   hashtbl.csv   the time to build a Hashtbl of 100,000 keys of one kind
#                 (ints k * 2^32, integral floats, strings, (int, float)
#                 tuples; bench/hashtbl/build.mn, keys made beforehand):
#                 the median of BENCH_RUNS runs (default 5), floor 50 ms;
#   hash_callgrind.csv   callgrind's instruction count of
#                 bench/programs/word_count.mn (deterministic), and the
#                 instructions inside hash (lib_hash, inclusive).
# With BENCH_BASE=path/to/an/older/vm the same runs alternate between the
# two VMs (paired), each base run capped at BENCH_BASE_TIMEOUT seconds
# (default 30: the FNV hash put every integral float in one bucket, so its
# float build is quadratic) and reported as "timeout" past it (a kind that
# timed out once is not run again). Times are wall-clock, read by the
# program around the build: on a loaded machine they grow with the load,
# which the results record (load average before the runs).
# The floor is reported (ok / OVER), never asserted by a test.
set -u
cd "$(dirname "$0")/.." || exit 2
runs=${BENCH_RUNS:-5}
out=${BENCH_OUT:-bench/results}
base=${BENCH_BASE:-}
cap=${BENCH_BASE_TIMEOUT:-30}
n=100000
mkdir -p "$out"
vms=(./vm)
[ -n "$base" ] && vms+=("$base")

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "none") }'; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load=$(cut -d' ' -f1 /proc/loadavg 2> /dev/null || echo unknown)
printf 'vm,kind,keys,runs,median_ms,floor_ms,verdict,load_before\n' > "$out/hashtbl.csv"
for kind in int float string tuple; do
  for ((r = 0; r < runs; r++)); do
    for i in "${!vms[@]}"; do
      grep -qs timeout "$tmp/$i-$kind" && continue   # timed out once: not run again
      line=$(timeout "$cap" "${vms[$i]}" bench/hashtbl/build.mn "$kind" "$n") || line="$kind $n timeout false"
      read -r _ _ ms check <<< "$line"
      [ "$check" = true ] || [ "$ms" = timeout ] || { echo "hashtbl: ${vms[$i]} $kind: wrong table: $line"; exit 1; }
      echo "$ms" >> "$tmp/$i-$kind"
    done
  done
  for i in "${!vms[@]}"; do
    if grep -q timeout "$tmp/$i-$kind"; then med="timeout(>${cap}s)"; else med=$(median < "$tmp/$i-$kind"); fi
    verdict=OVER
    awk -v t="$med" 'BEGIN { exit !(t + 0 == t && t < 50) }' && verdict=ok
    printf '%-24s %-7s %d keys: %s ms (median of %d)  %s\n' "${vms[$i]}" "$kind" "$n" "$med" "$runs" "$verdict"
    printf '%s,%s,%d,%d,%s,50,%s,%s\n' "${vms[$i]}" "$kind" "$n" "$runs" "$med" "$verdict" "$load" >> "$out/hashtbl.csv"
  done
done

if ! command -v valgrind > /dev/null; then
  echo "hashtbl: valgrind is missing: no instruction counts"
  exit 0
fi
printf 'vm,program,instructions,hash_instructions\n' > "$out/hash_callgrind.csv"
for v in "${vms[@]}"; do
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$v" bench/programs/word_count.mn > /dev/null 2>&1 ||
    { echo "hashtbl: callgrind of $v failed"; exit 1; }
  total=$(callgrind_annotate "$tmp/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
  hash=$(callgrind_annotate --inclusive=yes "$tmp/cg" 2>/dev/null | awk '/lib_hash \[/ { gsub(",", "", $1); print $1; exit }')
  printf '%-24s word_count: %s instructions, %s in hash\n' "$v" "$total" "${hash:-0}"
  printf '%s,word_count,%s,%s\n' "$v" "$total" "${hash:-0}" >> "$out/hash_callgrind.csv"
done
