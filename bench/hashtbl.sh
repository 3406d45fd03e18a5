#!/usr/bin/env bash
# hashtbl.sh (make bench-hashtbl): the cost of hash and Hashtbl (issue 23,
# class 3). Two measurements, written to bench/results/:
#   hashtbl.csv   the time to build a Hashtbl of 100,000 keys of one kind
#                 (ints k * 2^32, integral floats, strings, (int, float)
#                 tuples; bench/hashtbl/build.mn): the CPU time (user +
#                 system, build/bench/runstat) of a run that builds the
#                 table minus that of a run that only makes the keys, the
#                 two alternating, median over BENCH_RUNS pairs (default 7);
#                 floor 50 ms. CPU time rather than wall time: the machine
#                 is shared, and a run waiting for a core is not slower.
#                 The wall time the program reads around its build is kept
#                 too (median), with the load average before the runs.
#   hash_callgrind.csv   callgrind's instruction count of
#                 bench/programs/word_count.mn (deterministic), and the
#                 instructions inside the hash (ops_hash, inclusive).
# With BENCH_BASE=path/to/an/older/vm the base's runs alternate with ./vm's,
# each capped at BENCH_BASE_TIMEOUT seconds (default 30: the FNV hash put
# every integral float in one bucket, so its float build is quadratic) and
# reported as "timeout" past it (a kind that timed out once is not run
# again). Before timing, each VM builds each table once in mode check
# (every key found again); a wrong table ends the bench with status 1.
# The floor is reported (ok / OVER), never asserted by a test.
set -u
cd "$(dirname "$0")/.." || exit 2
runs=${BENCH_RUNS:-7}
out=${BENCH_OUT:-bench/results}
base=${BENCH_BASE:-}
cap=${BENCH_BASE_TIMEOUT:-30}
runstat=build/bench/runstat
n=100000
mkdir -p "$out"
vms=(./vm)
[ -n "$base" ] && vms+=("$base")
[ -x "$runstat" ] || { echo "hashtbl: $runstat is not built (make $runstat)"; exit 1; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "none") }'; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# cpu VM KIND MODE: the run's CPU seconds, or "timeout"; its output in $tmp/line.
cpu() {
  "$runstat" -t "$cap" -o "$tmp/stat" -- "$1" bench/hashtbl/build.mn "$2" "$n" "$3" > "$tmp/line" 2> /dev/null
  local wall cpu_s rss status
  read -r wall cpu_s rss status < "$tmp/stat"
  if [ "$status" -ne 0 ]; then echo timeout; else echo "$cpu_s"; fi
}

load=$(cut -d' ' -f1 /proc/loadavg 2> /dev/null || echo unknown)
printf 'vm,kind,keys,pairs,median_cpu_ms,median_wall_ms,floor_ms,verdict,load_before\n' > "$out/hashtbl.csv"
for kind in int float string tuple; do
  for i in "${!vms[@]}"; do
    : > "$tmp/$i-$kind"
    : > "$tmp/$i-$kind-wall"
    if [ "$(cpu "${vms[$i]}" "$kind" check)" = timeout ]; then
      echo timeout > "$tmp/$i-$kind"
    elif ! grep -q ' true$' "$tmp/line"; then
      echo "hashtbl: ${vms[$i]} $kind: wrong table: $(cat "$tmp/line")"
      exit 1
    fi
  done
  for ((r = 0; r < runs; r++)); do
    for i in "${!vms[@]}"; do
      grep -qs timeout "$tmp/$i-$kind" && continue
      built=$(cpu "${vms[$i]}" "$kind" build)
      read -r _ _ wall_ms _ < "$tmp/line"
      only_keys=$(cpu "${vms[$i]}" "$kind" keys)
      if [ "$built" = timeout ] || [ "$only_keys" = timeout ]; then echo timeout > "$tmp/$i-$kind"; continue; fi
      awk -v b="$built" -v k="$only_keys" 'BEGIN { printf "%.2f\n", (b - k) * 1000 }' >> "$tmp/$i-$kind"
      echo "$wall_ms" >> "$tmp/$i-$kind-wall"
    done
  done
  for i in "${!vms[@]}"; do
    if grep -q timeout "$tmp/$i-$kind"; then med="timeout(>${cap}s)"; wall=none
    else med=$(median < "$tmp/$i-$kind"); wall=$(median < "$tmp/$i-$kind-wall"); fi
    verdict=OVER
    awk -v t="$med" 'BEGIN { exit !(t + 0 == t && t < 50) }' && verdict=ok
    printf '%-24s %-7s %d keys: %s ms CPU (median of %d pairs), %s ms wall  %s\n' "${vms[$i]}" "$kind" "$n" "$med" \
      "$runs" "$wall" "$verdict"
    printf '%s,%s,%d,%d,%s,%s,50,%s,%s\n' "${vms[$i]}" "$kind" "$n" "$runs" "$med" "$wall" "$verdict" "$load" \
      >> "$out/hashtbl.csv"
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
  # ops_hash: the structural hash, whoever calls it (Hashtbl's C half since ba1d8ad, lib_hash for `hash`)
  hash=$(callgrind_annotate --inclusive=yes "$tmp/cg" 2>/dev/null | awk '/ops_hash \[/ { gsub(",", "", $1); print $1; exit }')
  printf '%-24s word_count: %s instructions, %s in hash\n' "$v" "$total" "${hash:-0}"
  printf '%s,word_count,%s,%s\n' "$v" "$total" "${hash:-0}" >> "$out/hash_callgrind.csv"
done
