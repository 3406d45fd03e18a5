#!/usr/bin/env bash
# pretenure.sh - what pretenuring (./vm --pretenure, docs/design.md
# "Pretenuring") gains and costs: make bench-pretenure (bench/PRETENURE.md).
#
# Each case is run by the same ./vm with and without --pretenure:
#   gc      once each, the program followed by a line printing its Gc.stat():
#           words copied by minor collections (promoted_words), words
#           allocated old by pretenured sites, minor and major collections;
#           the switches and undos --pretenure-log printed; the outputs must
#           agree (checksums);
#   time    paired rounds (farm-bench --vs: --pretenure and without in turn,
#           the CPU-time ratio taken pair by pair, its median over
#           BENCH_PT_RUNS pairs), and each side's median peak RSS;
#   seeds   cases of class "none": switches in seeds 1-10 (MINNOW_SEED);
#   ir      callgrind instructions with --pretenure over without, the cases
#           that switch, at smaller sizes (BENCH_PT_IR_CASES);
#   callgrind  the feedback's own cost where it decides nothing: instructions
#           of --pretenure over those without, bench/programs at the sizes of
#           make callgrind-memprof.
# Classes: "survive", long-lived data made by sites of their own (pretenuring
# should pay); "shared", long-lived data made by sites that mostly make
# short-lived data too (the issue's binary_trees, leaky_cache, list_pipeline:
# a site is a code position, so nothing should switch); "none", nothing long
# lived (nothing should switch, nothing should slow down); "phase", a site
# whose blocks survive, then die young (switched, then undone).
# Writes $BENCH_PT_OUT (default bench/results): pretenure.csv,
# pretenure_seeds.csv, pretenure_ir.csv, pretenure_callgrind.csv,
# pretenure.dat, pretenure.png.
# Knobs (environment): BENCH_PT_RUNS (11), BENCH_PT_PARTS ("gc time seeds ir
# callgrind"), BENCH_PT_CASES ("class name program args;..."),
# BENCH_PT_IR_CASES (same form), BENCH_PT_OUT.
# Exit status 1 if a run failed or outputs differ.
set -u
cd "$(dirname "$0")/.." || exit 2
runs=${BENCH_PT_RUNS:-11}
parts=${BENCH_PT_PARTS:-gc time seeds ir callgrind}
out=${BENCH_PT_OUT:-bench/results}
default_cases="survive table bench/pretenure/table.mn 2000000 5
survive log bench/pretenure/log.mn 2000000 2
survive index bench/pretenure/index.mn 1000000 100000
shared binary_trees bench/programs/binary_trees.mn 16
shared leaky_cache examples/leaky_cache.mn
shared list_pipeline bench/programs/list_pipeline.mn 10000 300
none steady_churn bench/leaks/steady_churn.mn 3000000
none word_count bench/programs/word_count.mn 1000000
none deep_map bench/programs/deep_map.mn 10000 400
none string_build bench/programs/string_build.mn 20000 80
phase phases bench/pretenure/phases.mn 2000000 10"
cases=$(printf '%s\n' "${BENCH_PT_CASES:-$default_cases}" | tr ';' '\n' | sed 's/^ *//; s/ *$//; /^$/d')
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
for b in ./vm; do [ -x "$b" ] || { echo "pretenure.sh: $b is not built (make)" >&2; exit 2; }; done
if has time && ! command -v farm-bench >/dev/null; then
  echo "pretenure.sh: farm-bench not found: the paired timings are left out" >&2
  parts=${parts//time/}
fi
if { has callgrind || has ir; } && ! command -v valgrind >/dev/null; then
  echo "pretenure.sh: valgrind not found: the callgrind part is left out" >&2
  parts=${parts//callgrind/}
  parts=${parts//ir/}
fi
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
echo "pretenure.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)," \
  "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); parts: $parts; $runs paired rounds"

# The figure NAME from farm-bench's report: the median of row NAME.
fb_median() { awk -v row="$1" 'index($0, row) == 1 { n = split($0, f, / +/); print f[n - 1]; exit }' "$2"; }

csv=$out/pretenure.csv
echo "class,case,args,promoted_words_off,promoted_words_on,copied_ratio,pretenured_words_on,minor_off,minor_on,major_off,major_on,switches,undos,cpu_off_s,cpu_on_s,cpu_ratio_median,cpu_ratio_min,cpu_ratio_max,rss_off_mib,rss_on_mib,same_output" >"$csv"
printf '%-8s %-14s %12s %12s %7s %12s %5s %5s %9s %7s %9s %9s\n' class case copied_off copied_on ratio pretenured switch undo cpu_ratio spread rss_off rss_on
while read -r class name prog args; do
  # shellcheck disable=SC2086 # args are words
  set -- $args
  promoted_off=? promoted_on=? ratio=? pretenured=? minor_off=? minor_on=? major_off=? major_on=? switches=? undos=?
  cpu_off=? cpu_on=? r_med=? r_min=? r_max=? rss_off=? rss_on=? same=?
  if has gc; then
    # The program, then a line with its Gc.stat(): a copy under $tmp (its
    # sites are named after the copy; the decisions are the same).
    w=$tmp/$name.mn
    { cat "$prog"; printf '\nlet bench_pt_stat = Gc.stat()\nprintln("gcstat " ++ str(bench_pt_stat.promoted_words) ++ " " ++ str(bench_pt_stat.pretenured_words) ++ " " ++ str(bench_pt_stat.minor_collections) ++ " " ++ str(bench_pt_stat.major_collections))\n'; } >"$w"
    ./vm "$w" "$@" >"$tmp/off.out" 2>"$tmp/off.err" || { echo "pretenure.sh: $name failed without --pretenure" >&2; failed=1; }
    ./vm --pretenure --pretenure-log "$w" "$@" >"$tmp/on.out" 2>"$tmp/on.err" ||
      { echo "pretenure.sh: $name failed with --pretenure" >&2; failed=1; }
    read -r _ promoted_off _ minor_off major_off < <(grep '^gcstat ' "$tmp/off.out")
    read -r _ promoted_on pretenured minor_on major_on < <(grep '^gcstat ' "$tmp/on.out")
    switches=$(grep -c -- '-> major heap' "$tmp/on.err")
    undos=$(grep -c -- '-> minor heap again' "$tmp/on.err")
    ratio=$(awk -v a="$promoted_on" -v b="$promoted_off" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "?" }')
    # phases.mn's last line says when its phase changed, which depends on pretenuring.
    if cmp -s <(grep -v '^gcstat \|^phase change' "$tmp/off.out") <(grep -v '^gcstat \|^phase change' "$tmp/on.out"); then
      same=yes
    else
      same=no
      failed=1
      echo "pretenure.sh: $name prints something else with --pretenure" >&2
    fi
    sed "s/^/  $name: /" "$tmp/on.err" | grep -- '->' | cut -c1-220 >>"$tmp/decisions.txt"
  fi
  if has time; then
    # One round: --pretenure then without; a run slower than the timeout per pair is cut.
    farm-bench -n "$runs" --warmup 1 --timeout 1200 --vs "./vm $prog $args" -- ./vm --pretenure "$prog" "$@" \
      >"$tmp/fb.txt" 2>&1 || { echo "pretenure.sh: farm-bench failed on $name" >&2; failed=1; }
    grep -q "^A exit 0 ($runs of $runs)" "$tmp/fb.txt" && grep -q "^B exit 0 ($runs of $runs)" "$tmp/fb.txt" ||
      { echo "pretenure.sh: $name: not every timed run ended well: $(grep '^[AB] exit' "$tmp/fb.txt" | tr '\n' ' ')" >&2; failed=1; }
    cpu_on=$(fb_median "A cpu s" "$tmp/fb.txt")
    cpu_off=$(fb_median "B cpu s" "$tmp/fb.txt")
    rss_on=$(fb_median "A peak MiB" "$tmp/fb.txt")
    rss_off=$(fb_median "B peak MiB" "$tmp/fb.txt")
    read -r r_min r_med r_max < <(awk 'index($0, "A/B cpu") == 1 { print $3, $4, $5 }' "$tmp/fb.txt")
    cp "$tmp/fb.txt" "$tmp/fb_$name.txt"
  fi
  echo "$class,$name,$args,$promoted_off,$promoted_on,$ratio,$pretenured,$minor_off,$minor_on,$major_off,$major_on,$switches,$undos,$cpu_off,$cpu_on,$r_med,$r_min,$r_max,$rss_off,$rss_on,$same" >>"$csv"
  printf '%-8s %-14s %12s %12s %7s %12s %5s %5s %9s %7s %9s %9s\n' "$class" "$name" "$promoted_off" "$promoted_on" \
    "$ratio" "$pretenured" "$switches" "$undos" "$r_med" "$r_min-$r_max" "$rss_off" "$rss_on"
done <<<"$cases"
[ -s "$tmp/decisions.txt" ] && { echo "decisions (--pretenure-log, default seed):"; cat "$tmp/decisions.txt"; }

# Seeds: no switch where nothing lives long.
if has seeds; then
  echo "class,case,args,seeds,runs_with_a_switch,switches" >"$out/pretenure_seeds.csv"
  while read -r class name prog args; do
    [ "$class" = none ] || continue
    n_runs=0 n_sw=0
    for seed in $(seq 1 10); do
      # shellcheck disable=SC2086
      MINNOW_SEED=$seed ./vm --pretenure --pretenure-log "$prog" $args >/dev/null 2>"$tmp/seed.err" ||
        { echo "pretenure.sh: $name seed $seed failed" >&2; failed=1; }
      s=$(grep -c -- '-> major heap' "$tmp/seed.err")
      [ "$s" -gt 0 ] && n_runs=$((n_runs + 1))
      n_sw=$((n_sw + s))
    done
    echo "$class,$name,$args,1-10,$n_runs,$n_sw" >>"$out/pretenure_seeds.csv"
    echo "seeds 1-10: $name $args: $n_sw switches ($n_runs runs with one)"
  done <<<"$cases"
fi

# Callgrind: instructions with --pretenure over without, the cases that
# switch something, at smaller sizes (callgrind runs 50x slower): what the
# switch saves or costs, free of the machine's noise (but blind to caches).
if has ir; then
  echo "class,case,args,ir_off,ir_pretenure,ratio,switches,undos" >"$out/pretenure_ir.csv"
  while read -r class name prog args; do
    for cfg in off on; do
      flags=""
      [ $cfg = on ] && flags="--pretenure --pretenure-log"
      # shellcheck disable=SC2086
      valgrind --tool=callgrind --callgrind-out-file="$tmp/ir.$cfg" ./vm $flags "$prog" $args \
        >/dev/null 2>"$tmp/ir.$cfg.err" || { echo "pretenure.sh: callgrind $name $cfg failed" >&2; failed=1; }
    done
    ir_off=$(sed -n 's/^summary: //p' "$tmp/ir.off")
    ir_on=$(sed -n 's/^summary: //p' "$tmp/ir.on")
    sw=$(grep -c -- '-> major heap' "$tmp/ir.on.err")
    un=$(grep -c -- '-> minor heap again' "$tmp/ir.on.err")
    r=$(awk -v a="$ir_on" -v b="$ir_off" 'BEGIN { printf "%.4f", a / b }')
    echo "$class,$name,$args,$ir_off,$ir_on,$r,$sw,$un" >>"$out/pretenure_ir.csv"
    echo "instructions: $name $args: $ir_off -> $ir_on (x$r), $sw switches, $un undos"
  done <<<"${BENCH_PT_IR_CASES:-survive table bench/pretenure/table.mn 1000000 2
survive log bench/pretenure/log.mn 1000000 1
survive index bench/pretenure/index.mn 300000 10000
phase phases bench/pretenure/phases.mn 1000000 4}"
fi

# Callgrind: the feedback's cost where it switches nothing.
if has callgrind; then
  echo "program,args,ir_off,ir_pretenure,rel_pct,switches" >"$out/pretenure_callgrind.csv"
  while read -r name args; do
    for cfg in off on; do
      flags=""
      [ $cfg = on ] && flags="--pretenure --pretenure-log"
      # shellcheck disable=SC2086
      valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$cfg" ./vm $flags "bench/programs/$name.mn" $args \
        >/dev/null 2>"$tmp/cg.$cfg.err" || { echo "pretenure.sh: callgrind $name $cfg failed" >&2; failed=1; }
    done
    ir_off=$(sed -n 's/^summary: //p' "$tmp/cg.off")
    ir_on=$(sed -n 's/^summary: //p' "$tmp/cg.on")
    sw=$(grep -c -- '-> major heap' "$tmp/cg.on.err")
    rel=$(awk -v a="$ir_on" -v b="$ir_off" 'BEGIN { printf "%.3f", 100 * (a - b) / b }')
    echo "$name,$args,$ir_off,$ir_on,$rel,$sw" >>"$out/pretenure_callgrind.csv"
    echo "callgrind: $name $args: $ir_off -> $ir_on instructions ($rel %), $sw switches"
  done <<<"binary_trees 13
list_pipeline 10000 20
deep_map 10000 20
word_count 50000
string_build 2000 10"
fi

# The chart: per case, words copied and CPU time with --pretenure over without.
awk -F, 'NR > 1 { printf "%s %s %s %s %s\n", $2, $6, $16, $17, $18 }' "$csv" >"$out/pretenure.dat"
if command -v gnuplot >/dev/null; then
  gnuplot -e "datafile='$out/pretenure.dat'; outfile='$out/pretenure.png'" bench/pretenure.gp ||
    echo "pretenure.sh: gnuplot failed" >&2
else
  echo "pretenure.sh: gnuplot not found: no chart" >&2
fi
echo "pretenure.sh: wrote $csv, $out/pretenure.png"
exit $failed
