#!/usr/bin/env bash
# memprof_bench.sh: what the memprof profiler costs, on the programs of bench/programs.
#
#   memprof_bench.sh time       run time with the profiler off, at each rate (./vm
#                               --memprof-count RATE: a C tracker that only counts) and
#                               without it (./vm-noprof), plus the cost of one sample
#                               split into its parts (build/bench/memprof_micro).
#                               Writes memprof.csv, memprof_ratios.csv, memprof_cost.csv,
#                               memprof.dat, memprof.png
#   memprof_bench.sh callgrind  instruction counts (callgrind Ir) of ./vm with the
#                               profiler off against ./vm-noprof, and at two rates.
#                               Writes callgrind_memprof.csv
# Method and how to read the results: bench/MEMPROF.md. Run through make
# (make bench-memprof, make callgrind-memprof), which builds what it needs.
#
# Environment (all optional):
#   BENCH_MP_RUNS=5                         runs per program and configuration (interleaved)
#   BENCH_MP_RATES="1e-6 1e-5 1e-4 1e-3 1e-2" sampling rates
#   BENCH_MP_CASES="prog args;..."          cases instead of the defaults below
#   BENCH_MP_CG_RATES="1e-5 1e-4 1e-3 1e-2" rates also counted by callgrind ("" for none)
#   BENCH_MP_VM=./vm  BENCH_MP_VM_NOPROF=./vm-noprof  BENCH_MP_MICRO=build/bench/memprof_micro
#   BENCH_MP_MICRO_ARGS=""                  e.g. "--quick --reps 1"; BENCH_MP_MICRO=none skips it
#   BENCH_MP_OUT=bench/results              where the results go
#   BENCH_MP_TIMEOUT=300                    seconds before one run is killed
# Exit status: 0 if every run succeeded and printed the same checksum as the
# profiler-off run; 1 otherwise. Floors that are not met are reported, not failed.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root" || exit 1

mode=${1:-time}
runs=${BENCH_MP_RUNS:-5}
rates=${BENCH_MP_RATES:-1e-6 1e-5 1e-4 1e-3 1e-2}
vm=${BENCH_MP_VM:-./vm}
vm_noprof=${BENCH_MP_VM_NOPROF:-./vm-noprof}
micro=${BENCH_MP_MICRO:-build/bench/memprof_micro}
micro_args=${BENCH_MP_MICRO_ARGS:-}
out=${BENCH_MP_OUT:-bench/results}
run_timeout=${BENCH_MP_TIMEOUT:-300}
cg_rates=${BENCH_MP_CG_RATES-1e-5 1e-4 1e-3 1e-2}

# One case a line: program (bench/programs/NAME.mn) and its arguments. deep_map is the
# deep-recursion program (List.map over 10,000 elements), binary_trees the shallow one.
# Timing: each run takes 0.7-1.6 s of CPU with the profiler off (1 ms resolution: 0.1%);
# 5 cases x 7 configurations x 5 runs take ~4 minutes of CPU, ~10 minutes of wall time
# when other jobs hold the other core. Callgrind: smaller sizes (~50 times slower).
if [ "$mode" = callgrind ]; then
  default_cases="binary_trees 13
list_pipeline 10000 20
deep_map 10000 20
word_count 50000
string_build 2000 10"
else
  default_cases="binary_trees 17
list_pipeline 10000 800
deep_map 10000 600
word_count 1000000
string_build 20000 200"
fi
cases=${BENCH_MP_CASES:-}
[ -n "$cases" ] || cases=$default_cases
cases=$(printf '%s\n' "$cases" | tr ';' '\n' | sed 's/^ *//; s/ *$//; /^$/d')

die() { echo "memprof_bench: $*" >&2; exit 1; }

[ -x "$vm" ] || die "$vm not found (make vm)"
[ -x "$vm_noprof" ] || die "$vm_noprof not found (make vm-noprof)"
command -v timeout >/dev/null || die "timeout (coreutils) is missing"
while read -r prog _; do
  [ -f "bench/programs/$prog.mn" ] || die "no bench/programs/$prog.mn"
done <<<"$cases"
mkdir -p "$out" || die "cannot create $out"
tmp=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
# Run copies of the binaries, so that a rebuild during the benchmark cannot mix
# two versions of ./vm in one table.
bin_vm=$tmp/vm
bin_noprof=$tmp/vm-noprof
{ cp "$vm" "$bin_vm" && cp "$vm_noprof" "$bin_noprof"; } || die "cannot copy $vm and $vm_noprof"
failed=0
ncases=$(printf '%s\n' "$cases" | wc -l)
machine="$(nproc) cores, $(grep -m 1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: *//')"

# The memprof line of a --memprof-count run: "samples blocks frames_per_sample".
memprof_counts() {
  sed -n 's/^memprof: rate [^:]*: \([0-9]*\) samples in \([0-9]*\) blocks.* \([0-9.]*\) frames per sample$/\1 \2 \3/p' "$1" | tail -n 1
}

checksum_of() { grep -m 1 '^checksum:' "$1" 2>/dev/null | sed 's/^checksum: *//'; }

# =====================================================================================
# callgrind: ./vm (profiler off) against ./vm-noprof
# =====================================================================================
if [ "$mode" = callgrind ]; then
  command -v valgrind >/dev/null || die "valgrind is missing (apt-get install valgrind)"
  command -v callgrind_annotate >/dev/null || die "callgrind_annotate is missing (valgrind package)"
  # Total Ir of one run: ir NAME COMMAND... (stdout in $tmp/NAME.out, stderr in
  # $tmp/NAME.log, the profile in $tmp/cg.NAME.out)
  ir() {
    local name=$1
    shift
    if ! valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$name.out" "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.log" </dev/null; then
      echo "memprof_bench: FAILED under callgrind: $*" >&2
      tail -n 5 "$tmp/$name.log" >&2
      failed=1
      echo ""
      return
    fi
    awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.$name.out"
  }
  # Ir per function of a callgrind profile: "function|Ir", sorted by function.
  per_function() {
    callgrind_annotate --auto=no "$1" 2>/dev/null |
      sed -n -E 's/ \[[^]]*\]$//; s/^ *([0-9,]+) \( *[0-9.]+%\)  (.*)$/\2|\1/p' | grep -v '^PROGRAM TOTALS' |
      awk -F'|' '{ gsub(",", "", $2); print $1 "|" $2 }' | LC_ALL=C sort -t'|' -k1,1
  }
  # The functions whose Ir differ most between two profiles (A - B), for the diff report.
  diff_functions() {
    per_function "$1" >"$tmp/fa"
    per_function "$2" >"$tmp/fb"
    LC_ALL=C join -t'|' -a1 -a2 -e0 -o 0,1.2,2.2 "$tmp/fa" "$tmp/fb" |
      awk -F'|' '{ d = $2 - $3; if (d != 0) printf "%12d  %s\n", d, $1 }' | sort -rn -k1,1 |
      awk '{ a = $1 < 0 ? -$1 : $1; print a "\t" $0 }' | sort -rn -k1,1 | cut -f2- | head -n 8
  }
  header="program,args,ir_vm_noprof,ir_vm_off,diff_ir,rel_diff_pct,within_0.1pct"
  for r in $cg_rates; do header="$header,ir_rate_$r,rel_rate_${r}_pct,samples_$r,frames_per_sample_$r,ir_per_sample_$r"; done
  echo "$header" >"$out/callgrind_memprof.csv"
  diffs=$out/callgrind_memprof_diff.txt
  {
    echo "callgrind_memprof_diff.txt: per case, the functions whose instruction count (Ir) differs"
    echo "most between ./vm with the profiler off and ./vm-noprof (vm - vm-noprof), from"
    echo "callgrind_annotate; written by bench/memprof_bench.sh callgrind on $(date -u '+%Y-%m-%d')."
  } >"$diffs"
  echo "memprof_bench: callgrind, $ncases cases: ./vm (profiler off) against ./vm-noprof${cg_rates:+; ./vm --memprof-count at $cg_rates}"
  printf '%-26s %12s %12s %9s %8s' "case" "vm-noprof Ir" "vm off Ir" "diff" "rel %"
  for r in $cg_rates; do printf ' %10s %11s' "rel% $r" "Ir/sample"; done
  echo
  while read -r prog args; do
    # shellcheck disable=SC2086 # word splitting of args is intended
    base=$(ir noprof "$bin_noprof" "bench/programs/$prog.mn" $args)
    # shellcheck disable=SC2086
    off=$(ir off "$bin_vm" "bench/programs/$prog.mn" $args)
    ref=$(checksum_of "$tmp/noprof.out")
    [ "$(checksum_of "$tmp/off.out")" = "$ref" ] || { echo "memprof_bench: $prog $args: checksum differs between vm and vm-noprof" >&2; failed=1; }
    if [ -z "$base" ] || [ -z "$off" ]; then
      echo "$prog,$args,$base,$off,,," >>"$out/callgrind_memprof.csv"
      continue
    fi
    line=$(awk -v a="$base" -v b="$off" 'BEGIN {
      d = b - a; rel = 100 * d / a; ok = (rel <= 0.1 && rel >= -0.1) ? "yes" : "NO"
      printf "%d,%d,%d,%.4f,%s", a, b, d, rel, ok }')
    row="$prog,$args,$line"
    printf '%-26s %12s %12s %9s %8s' "$prog $args" "$base" "$off" "$(echo "$line" | cut -d, -f3)" "$(echo "$line" | cut -d, -f4)"
    { echo; echo "== $prog $args: vm-noprof $base Ir, vm (off) $off Ir"; diff_functions "$tmp/cg.off.out" "$tmp/cg.noprof.out"; } >>"$diffs"
    for r in $cg_rates; do
      # shellcheck disable=SC2086
      on=$(ir "on$r" "$bin_vm" --memprof-count "$r" "bench/programs/$prog.mn" $args)
      [ "$(checksum_of "$tmp/on$r.out")" = "$ref" ] || { echo "memprof_bench: $prog $args: checksum differs at rate $r" >&2; failed=1; }
      counts=$(memprof_counts "$tmp/on$r.log")
      smp=${counts%% *}
      fps=${counts##* }
      cells=$(awk -v a="$off" -v b="$on" -v n="${smp:-0}" 'BEGIN {
        if (b == "") { print ",,"; exit }
        printf "%.3f,%s", 100 * (b - a) / a, (n > 0) ? sprintf("%.0f", (b - a) / n) : "" }')
      row="$row,$on,${cells%%,*},$smp,$fps,${cells#*,}"
      printf ' %10s %11s' "${cells%%,*}" "${cells#*,}"
    done
    echo
    echo "$row" >>"$out/callgrind_memprof.csv"
  done <<<"$cases"
  # Instructions per sample of the deep-recursion program over binary trees, per rate.
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^ir_per_sample_/) { r = $i; sub(/^ir_per_sample_/, "", r); col[r] = i; rs[++nr] = r }; next }
    $1 == "deep_map" { for (k = 1; k <= nr; k++) d[rs[k]] = $(col[rs[k]]) }
    $1 == "binary_trees" && !bt { bt = 1; for (k = 1; k <= nr; k++) b[rs[k]] = $(col[rs[k]]) }
    END { for (k = 1; k <= nr; k++) if (d[rs[k]] != "" && b[rs[k]] > 0)
      printf "deep_map / binary_trees, Ir per sample at %s: %.1f (floor for time per sample: at most 2)\n", rs[k], d[rs[k]] / b[rs[k]] }' \
    "$out/callgrind_memprof.csv"
  echo "memprof_bench: wrote $out/callgrind_memprof.csv, $diffs"
  [ "$failed" -eq 0 ] || exit 1
  exit 0
fi

[ "$mode" = time ] || die "unknown mode '$mode' (time or callgrind)"

# =====================================================================================
# time: 1. the micro benchmark (cost of one sample, split)
# =====================================================================================
echo "memprof_bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $machine, load average $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$tmp/micro.csv"
if [ "$micro" != none ]; then
  [ -x "$micro" ] || die "$micro not found (make bench-memprof builds it)"
  echo "memprof_bench: cost of one sample ($micro $micro_args)"
  # shellcheck disable=SC2086 # word splitting of micro_args is intended
  if ! "$micro" $micro_args --csv "$tmp/micro.csv"; then
    echo "memprof_bench: $micro failed" >&2
    failed=1
  fi
  echo
fi

# =====================================================================================
# time: 2. the programs, every configuration interleaved
# =====================================================================================
configs="off noprof $rates"
read -r -a cfg_list <<<"$configs"
nconfigs=${#cfg_list[@]}
echo "memprof_bench: $ncases cases x $nconfigs configurations ($configs) x $runs runs, interleaved"

raw=$tmp/raw.csv # case_index,config,run,wall_s,cpu_s,status
: >"$raw"
: >"$tmp/bad"
ci=0
while read -r prog args; do
  ci=$((ci + 1))
  printf '%-28s' "$prog $args"
  for run in $(seq 1 "$runs"); do
    # Each round starts one configuration further on, so that no configuration
    # always runs first (or right after the slowest one).
    rot=$(((run - 1) % nconfigs))
    order="${cfg_list[*]:rot} ${cfg_list[*]:0:rot}"
    for cfg in $order; do
      case $cfg in
        off) cmd="$bin_vm" ;;
        noprof) cmd="$bin_noprof" ;;
        *) cmd="$bin_vm --memprof-count $cfg" ;;
      esac
      o=$tmp/out.$ci.$cfg.$run
      e=$tmp/err.$ci.$cfg.$run
      t0=$(date +%s%N)
      # bash's time keyword: CPU times from getrusage, to the millisecond.
      # shellcheck disable=SC2086 # word splitting of cmd and args is intended
      { TIMEFORMAT='%3U %3S'; time timeout "$run_timeout" $cmd "bench/programs/$prog.mn" $args >"$o" 2>"$e" </dev/null; } 2>"$tmp/time"
      status=$?
      t1=$(date +%s%N)
      cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$tmp/time")
      wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
      echo "$ci,$cfg,$run,$wall,$cpu,$status" >>"$raw"
      if [ "$status" -ne 0 ]; then
        failed=1
        echo "$prog $args" >>"$tmp/bad"
        printf '\n  %s run %d FAILED (exit %d): %s %s %s\n' "$cfg" "$run" "$status" "$cmd" "bench/programs/$prog.mn" "$args"
        sed 's/^/    /' "$e" | head -n 5
        printf '%-28s' ""
      fi
      printf '.'
    done
  done
  echo
done <<<"$cases"

# Checksums: every run must print the checksum of the first profiler-off run.
# Sample counts: the runs are repeatable (fixed seed), keep those of the last good run.
: >"$tmp/counts" # case_index,config,samples,blocks,frames_per_sample
ci=0
while read -r prog args; do
  ci=$((ci + 1))
  ref=$(checksum_of "$tmp/out.$ci.off.1")
  for cfg in $configs; do
    last_counts=""
    for run in $(seq 1 "$runs"); do
      [ -f "$tmp/out.$ci.$cfg.$run" ] || continue
      st=$(awk -F, -v ci="$ci" -v c="$cfg" -v r="$run" '$1 == ci && $2 == c && $3 == r { print $6 }' "$raw")
      [ "$st" = 0 ] || continue
      sum=$(checksum_of "$tmp/out.$ci.$cfg.$run")
      if [ -z "$sum" ] || [ "$sum" != "$ref" ]; then
        echo "memprof_bench: $prog $args: $cfg run $run printed checksum '$sum', the profiler-off run '$ref'" >&2
        echo "$prog $args" >>"$tmp/bad"
        failed=1
      fi
      c=$(memprof_counts "$tmp/err.$ci.$cfg.$run")
      [ -n "$c" ] && last_counts=$c || last_counts=""
    done
    case $cfg in off | noprof) ;; *)
      if [ -z "$last_counts" ]; then
        echo "memprof_bench: $prog $args: no memprof line at rate $cfg" >&2
        failed=1
      else
        echo "$ci,$cfg,$(echo "$last_counts" | tr ' ' ',')" >>"$tmp/counts"
      fi ;;
    esac
  done
done <<<"$cases"

# memprof.csv: one row per case and configuration (medians over the successful runs).
echo "program,args,config,median_cpu_s,min_cpu_s,max_cpu_s,median_wall_s,min_wall_s,max_wall_s,runs,samples,blocks,frames_per_sample" >"$out/memprof.csv"
ci=0
while read -r prog args; do
  ci=$((ci + 1))
  for cfg in $configs; do
    counts=$(awk -F, -v ci="$ci" -v c="$cfg" '$1 == ci && $2 == c { print $3 "," $4 "," $5 }' "$tmp/counts")
    [ -n "$counts" ] || counts=",,"
    awk -F, -v ci="$ci" -v c="$cfg" '$1 == ci && $2 == c && $6 == 0 { print $5, $4 }' "$raw" |
      awk -v prog="$prog" -v args="$args" -v cfg="$cfg" -v counts="$counts" '
        function med(a, n) { return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        function sort(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
        { cpu[NR] = $1; wall[NR] = $2 }
        END {
          if (NR == 0) exit
          sort(cpu, NR); sort(wall, NR)
          printf "%s,%s,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%d,%s\n", prog, args, cfg,
            med(cpu, NR), cpu[1], cpu[NR], med(wall, NR), wall[1], wall[NR], NR, counts
        }'
  done
done <<<"$cases" >>"$out/memprof.csv"

# memprof_ratios.csv: time of each configuration over the profiler-off one, on the
# median CPU time (user + sys; basis "cpu", the one the floors are judged on), on the
# fastest run's CPU time ("cpu_min") and on the median wall time ("wall").
# Floors: 1e-5 at most 1.01, 1e-4 at most 1.03.
awk -F, -v configs="noprof $rates" '
  NR == 1 { next }
  { key = $1 "," $2; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    t[1, key, $3] = $4; t[2, key, $3] = $5; t[3, key, $3] = $7 }
  function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "" : sprintf("%.4f", a / b) }
  function floor_ok(r, lim) { return r == "" ? "" : (r <= lim ? "ok" : "OVER") }
  END {
    nc = split(configs, cfg, " ")
    split("cpu cpu_min wall", basis, " ")
    h = "program,args,basis"
    for (i = 1; i <= nc; i++) h = h "," cfg[i]
    h = h ",floor_1e-5,floor_1e-4"
    print h
    for (b = 1; b <= 3; b++) {
      for (k = 1; k <= n; k++) {
        key = order[k]; line = key "," basis[b]
        r5 = ""; r4 = ""
        for (i = 1; i <= nc; i++) {
          r = ratio(t[b, key, cfg[i]], t[b, key, "off"])
          line = line "," r
          if (cfg[i] + 0 == 1e-5 && cfg[i] != "noprof") r5 = r
          if (cfg[i] + 0 == 1e-4 && cfg[i] != "noprof") r4 = r
        }
        print line "," floor_ok(r5, 1.01) "," floor_ok(r4, 1.03)
      }
    }
  }' "$out/memprof.csv" >"$out/memprof_ratios.csv"

# memprof_cost.csv: the micro benchmark's split, then the cost per sample of each
# program at each rate: (median CPU time at the rate - profiler off) / samples.
{
  echo "component,program,rate,ns,unit,detail"
  cat "$tmp/micro.csv"
  awk -F, -v rates="$rates" '
    NR == 1 { next }
    { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
      cpu[key, $3] = $4; lo[key, $3] = $5; hi[key, $3] = $6; smp[key, $3] = $11; blk[key, $3] = $12; fps[key, $3] = $13 }
    END {
      nr = split(rates, rate, " ")
      for (k = 1; k <= n; k++) {
        key = order[k]
        for (i = 1; i <= nr; i++) {
          r = rate[i]
          if (smp[key, r] == "" || smp[key, r] == 0 || cpu[key, r] == "") continue
          d = cpu[key, r] - cpu[key, "off"]
          ns[key, r] = d * 1e9 / smp[key, r]
          # Below the noise: the extra time is within the spread of the off runs (or 2 ms).
          spread = hi[key, "off"] - lo[key, "off"]
          noisy = (d <= spread || d <= 0.002)
          if (noisy) ns[key, r] = ""
          printf "per_sample,%s,%s,%.1f,ns/sample,\"%sCPU %.3f s at the rate - %.3f s off (spread off %.3f-%.3f, rate %.3f-%.3f) over %d samples in %d blocks; %.1f frames per sample\"\n",
            key, r, d * 1e9 / smp[key, r], noisy ? "BELOW THE NOISE: " : "", cpu[key, r], cpu[key, "off"], lo[key, "off"], hi[key, "off"], lo[key, r], hi[key, r], smp[key, r], blk[key, r], fps[key, r]
        }
      }
      # Floor: the deep-recursion program within 2x of binary trees, per sample.
      for (k = 1; k <= n; k++) if (order[k] ~ /^deep_map /) deep = order[k]
      for (k = 1; k <= n; k++) if (order[k] ~ /^binary_trees /) { bt = order[k]; break }
      if (deep != "" && bt != "")
        for (i = 1; i <= nr; i++) {
          r = rate[i]
          if (ns[deep, r] == "" || ns[bt, r] == "" || ns[bt, r] <= 0) continue
          q = ns[deep, r] / ns[bt, r]
          printf "deep_over_trees,%s / %s,%s,%.2f,ratio,\"cost per sample %.1f ns / %.1f ns; floor: at most 2 (%s)\"\n",
            deep, bt, r, q, ns[deep, r], ns[bt, r], q <= 2 ? "ok" : "OVER"
        }
    }' "$out/memprof.csv"
} >"$out/memprof_cost.csv"

# memprof.dat for bench/memprof.gp: one block per case (rate, CPU ratio, wall ratio,
# ns per sample), blocks separated by two blank lines; "?" where there is no value
# (ns per sample: also where the extra time is below the noise, as in memprof_cost.csv).
awk -F, -v rates="$rates" '
  NR == 1 { next }
  { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    cpu[key, $3] = $4; wall[key, $3] = $7; smp[key, $3] = $11; lo[key, $3] = $5; hi[key, $3] = $6 }
  END {
    nr = split(rates, rate, " ")
    for (k = 1; k <= n; k++) {
      key = order[k]
      spread = hi[key, "off"] - lo[key, "off"]
      printf "# \"%s\"\n", key
      for (i = 1; i <= nr; i++) {
        r = rate[i]
        c = (cpu[key, "off"] > 0 && cpu[key, r] != "") ? sprintf("%.4f", cpu[key, r] / cpu[key, "off"]) : "?"
        w = (wall[key, "off"] > 0 && wall[key, r] != "") ? sprintf("%.4f", wall[key, r] / wall[key, "off"]) : "?"
        d = cpu[key, r] - cpu[key, "off"]
        s = (smp[key, r] > 0 && d > spread && d > 0.002) ? sprintf("%.1f", d * 1e9 / smp[key, r]) : "?"
        printf "%s %s %s %s\n", r, c, w, s
      }
      printf "\n\n"
    }
  }' "$out/memprof.csv" >"$out/memprof.dat"
# Chart titles: one word per case ("deep_map 10000 300" -> "deep_map-10000-300").
titles=$(printf '%s\n' "$cases" | tr ' ' '-' | tr '\n' ' ' | sed 's/ $//')

if command -v gnuplot >/dev/null 2>&1; then
  # (A case whose points are all below the noise has nothing for the right panel:
  # gnuplot's warning about it is dropped.)
  gnuplot -e "datafile='$out/memprof.dat'; outfile='$out/memprof.png'; titles='$titles'; ncases=$ncases" \
    bench/memprof.gp 2>"$tmp/gnuplot.err" ||
    echo "memprof_bench: warning: gnuplot failed, no $out/memprof.png" >&2
  grep -v 'Skipping data file with no valid points' "$tmp/gnuplot.err" >&2
else
  echo "memprof_bench: warning: gnuplot not found (apt-get install gnuplot-nox), no $out/memprof.png" >&2
fi

# The readable tables.
echo
awk -F, -v rates="$rates" '
  FILENAME ~ /bad$/ { bad[$0] = 1; next }
  FNR == 1 { next }
  { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    cpu[key, $3] = $4; wall[key, $3] = $7 }
  END {
    nr = split("noprof " rates, cfg, " ")
    printf "%-26s %8s", "median CPU s (ratio to off)", "off"
    for (i = 1; i <= nr; i++) printf " %15s", cfg[i]
    printf "  %s\n", "runs"
    for (k = 1; k <= n; k++) {
      key = order[k]
      printf "%-26s %8.3f", key, cpu[key, "off"]
      for (i = 1; i <= nr; i++) {
        c = cpu[key, cfg[i]]
        if (c == "" || cpu[key, "off"] == 0) printf " %15s", "-"
        else printf " %6.3f (%6.4f)", c, c / cpu[key, "off"]
      }
      printf "  %s\n", (key in bad) ? "FAILED/MISMATCH" : "ok"
    }
    printf "\n%-26s %8s", "median wall s (ratio)", "off"
    for (i = 1; i <= nr; i++) printf " %15s", cfg[i]
    printf "\n"
    for (k = 1; k <= n; k++) {
      key = order[k]
      printf "%-26s %8.3f", key, wall[key, "off"]
      for (i = 1; i <= nr; i++) {
        c = wall[key, cfg[i]]
        if (c == "" || wall[key, "off"] == 0) printf " %15s", "-"
        else printf " %6.3f (%6.4f)", c, c / wall[key, "off"]
      }
      printf "\n"
    }
  }' "$out/memprof.csv" "$tmp/bad"
echo
echo "floors on CPU time (1e-5: at most 1.01 x off; 1e-4: at most 1.03 x off):"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  $3 == "cpu" { printf "  %-26s 1e-5: %-4s  1e-4: %-4s\n", $1 " " $2, $(col["floor_1e-5"]), $(col["floor_1e-4"]) }' "$out/memprof_ratios.csv"
echo
echo "cost per sample (ns, CPU time at the rate minus off, over the samples):"
awk -F, '$1 == "per_sample" { printf "  %-26s %-6s %10s%s\n", $2, $3, $4, ($6 ~ /BELOW/) ? "  (below the noise)" : "" } $1 == "deep_over_trees" { printf "  deep_map / binary_trees at %s: %s\n", $3, $4 }' "$out/memprof_cost.csv"
echo
echo "memprof_bench: wrote $out/memprof.csv, memprof_ratios.csv, memprof_cost.csv$([ -f "$out/memprof.png" ] && echo ", memprof.png")"
echo "memprof_bench: load average at the end $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores): other jobs were $( awk '{ print ($1 > 1.2) ? "running (timings are noisier)" : "mostly idle" }' /proc/loadavg)"
if [ "$failed" -ne 0 ]; then
  echo "memprof_bench: some runs failed or printed a different checksum (see above)" >&2
  exit 1
fi
