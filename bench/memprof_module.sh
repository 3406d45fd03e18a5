#!/usr/bin/env bash
# memprof_module.sh (make bench-memprof-module): what the Memprof module's
# callbacks cost on a 100,000-frame recursion (bench/memprof_deep/callbacks.mn:
# every level allocates a pair), against the profiler off and against the C
# counting tracker (./vm --memprof-count) at the same rate. Configurations:
#   off            no profile
#   count@R        ./vm --memprof-count R (a native tracker that reads no frame)
#   none@R         a Memprof callback that counts samples and reads no frame
#   frames@R       a Memprof callback that reads its sample's frames
#                  (Memprof.frames on every sample: every frame is read)
# for R in BENCH_MM_RATES. Floors (issue 33): none/off <= 1.2 at 1e-4 and <= 1.5
# at 1e-3; frames/count <= 1.5.
#   1. time: rounds run every configuration once, in an order shuffled anew each
#      round (seeded); CPU time (user + system) of each run from build/bench/runstat;
#      a ratio is taken within a round, and reported as the median and range over
#      the rounds.
#   2. callgrind: the instructions of each configuration, one run each (fewer
#      rounds of the recursion: callgrind is exact and repeatable).
# Results: bench/results/memprof_module.csv (both), memprof_module.dat and .png.
# Environment: BENCH_MM_RUNS=11 BENCH_MM_RATES="1e-4 1e-3" BENCH_MM_DEPTH=100000
#   BENCH_MM_ROUNDS=200 BENCH_MM_CG_ROUNDS=20 BENCH_MM_STEPS="time callgrind"
#   BENCH_MM_VM=./vm BENCH_MM_OUT=bench/results
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$here")" || exit 1

runs=${BENCH_MM_RUNS:-11}
rates=${BENCH_MM_RATES:-1e-4 1e-3}
depth=${BENCH_MM_DEPTH:-100000}
rounds=${BENCH_MM_ROUNDS:-200}
cg_rounds=${BENCH_MM_CG_ROUNDS:-20}
steps=${BENCH_MM_STEPS:-time callgrind}
out=${BENCH_MM_OUT:-bench/results}
runstat=build/bench/runstat
prog=bench/memprof_deep/callbacks.mn
[ -x "$runstat" ] || { echo "memprof_module: $runstat not found (make bench-memprof-module builds it)" >&2; exit 1; }
mkdir -p "$out" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cp "${BENCH_MM_VM:-./vm}" "$tmp/vm" || exit 1
has_step() { case " $steps " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

configs=(off)
for r in $rates; do configs+=("count@$r" "none@$r" "frames@$r"); done
n=${#configs[@]}
# The command line of configuration $1 for $2 rounds of the recursion.
cmd_of() {
  local c=$1 rounds=$2 mode=${1%@*} rate=${1#*@}
  case $mode in
    off) echo "$tmp/vm $prog $depth $rounds off" ;;
    count) echo "$tmp/vm --memprof-count $rate $prog $depth $rounds off" ;;
    *) echo "$tmp/vm $prog $depth $rounds $mode $rate" ;;
  esac
}
shuffled() {
  awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed); for (i = 0; i < n; i++) a[i] = i
    for (i = n - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = a[i]; a[i] = a[j]; a[j] = t }
    for (i = 0; i < n; i++) print a[i] }'
}
failed=0
echo "memprof_module: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "memprof_module: depth $depth, configurations: ${configs[*]}"

: >"$tmp/raw"   # config round cpu_s
if has_step time; then
  echo "memprof_module: 1/2 time: $runs rounds of $rounds recursions"
  ref=""
  for round in $(seq 1 "$runs"); do
    for k in $(shuffled "$n" "$round"); do
      c=${configs[$k]}
      # shellcheck disable=SC2046 # word splitting intended
      "$runstat" -o "$tmp/stat" -- $(cmd_of "$c" "$rounds") >"$tmp/out" 2>"$tmp/err" </dev/null
      st=$(cut -d' ' -f4 "$tmp/stat")
      sum=$(grep -m 1 '^checksum:' "$tmp/out")
      [ -z "$ref" ] && ref=$sum
      if [ "$st" != 0 ] || [ "$sum" != "$ref" ]; then
        echo "memprof_module: $c round $round failed (status $st, $sum): $(head -c 300 "$tmp/err")" >&2
        failed=1
        continue
      fi
      echo "$c $round $(cut -d' ' -f2 "$tmp/stat")" >>"$tmp/raw"
      printf '.'
    done
  done
  echo
fi

: >"$tmp/ir"   # config instructions
if has_step callgrind; then
  if command -v valgrind >/dev/null 2>&1; then
    echo "memprof_module: 2/2 callgrind: $cg_rounds recursions a run"
    for c in "${configs[@]}"; do
      # shellcheck disable=SC2046
      ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null $(cmd_of "$c" "$cg_rounds") 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
      echo "$c ${ir:-0}" >>"$tmp/ir"
    done
  else
    echo "memprof_module: valgrind not found: no callgrind step" >&2
  fi
fi

# memprof_module.csv: per configuration, the median CPU time, its ratio to off and to
# count at its rate (paired: same round; median, min, max), and callgrind's count with
# the same two ratios.
base_of() { case $1 in frames@*) echo "count@${1#*@}" ;; *) echo off ;; esac; }
{
  echo "config,rate,rounds,median_cpu_s,base,paired_median,paired_min,paired_max,over_off_median,instructions,ir_over_base,ir_over_off"
  for c in "${configs[@]}"; do
    b=$(base_of "$c")
    awk -v c="$c" -v b="$b" -v rate="$([ "$c" = off ] || echo "${c#*@}")" '
      function med(v, n,   i, j, t) { for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
      FILENAME ~ /ir$/ { ir[$1] = $2; next }
      { t[$1, $2] = $3; if ($1 == c) { k++; cpu[k] = $3; rd[k] = $2 } }
      END {
        for (i = 1; i <= k; i++) {
          if (t[b, rd[i]] > 0) { m++; q[m] = cpu[i] / t[b, rd[i]] }
          if (t["off", rd[i]] > 0) { mo++; qo[mo] = cpu[i] / t["off", rd[i]] }
        }
        mc = k ? sprintf("%.4f", med(cpu, k)) : ""
        lo = hi = ""; for (i = 1; i <= m; i++) { if (lo == "" || q[i] < lo) lo = q[i]; if (hi == "" || q[i] > hi) hi = q[i] }
        pq = m ? sprintf("%.4f,%.4f,%.4f", med(q, m), lo, hi) : ",,"
        po = mo ? sprintf("%.4f", med(qo, mo)) : ""
        irb = (ir[c] > 0 && ir[b] > 0) ? sprintf("%.4f", ir[c] / ir[b]) : ""
        iro = (ir[c] > 0 && ir["off"] > 0) ? sprintf("%.4f", ir[c] / ir["off"]) : ""
        printf "%s,%s,%d,%s,%s,%s,%s,%s,%s,%s\n", c, rate, k, mc, b, pq, po, ir[c], irb, iro }' "$tmp/ir" "$tmp/raw"
  done
} >"$out/memprof_module.csv"
column -s, -t <"$out/memprof_module.csv"

# memprof_module.dat / .png: the ratios the floors are on, time (paired median) and
# instructions, one group per rate.
if command -v gnuplot >/dev/null 2>&1; then
  awk -F, 'NR > 1 && $1 != "off" { split($1, p, "@"); key = p[2]; if (!(key in seen)) { seen[key] = 1; ks[++nk] = key }
      v[key, p[1]] = $6; w[key, p[1]] = $11 }
    END { print "rate none/off(time) frames/count(time) none/off(Ir) frames/count(Ir)"
      for (i = 1; i <= nk; i++) { k = ks[i]; printf "%s %s %s %s %s\n", k, (v[k, "none"] == "" ? "?" : v[k, "none"]),
        (v[k, "frames"] == "" ? "?" : v[k, "frames"]), (w[k, "none"] == "" ? "?" : w[k, "none"]), (w[k, "frames"] == "" ? "?" : w[k, "frames"]) } }' \
    "$out/memprof_module.csv" >"$out/memprof_module.dat"
  gnuplot -e "datafile='$out/memprof_module.dat'; outfile='$out/memprof_module.png'" bench/memprof_module.gp ||
    echo "memprof_module: gnuplot failed, no $out/memprof_module.png" >&2
fi
echo "memprof_module: wrote $out/memprof_module.csv; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$failed"
