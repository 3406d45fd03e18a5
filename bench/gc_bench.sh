#!/usr/bin/env bash
# gc_bench.sh: time the allocation-heavy programs of bench/programs on ./vm (minor heap +
# generational GC), ./vm-boehm (same interpreter on Boehm GC) and lua5.4 (bench/lua twins).
# Writes bench/results/{gc.csv,gc_ratios.csv,gc.png}; see bench/README.md.
#
# Environment (all optional):
#   BENCH_RUNS=5                  runs per program and implementation (interleaved)
#   BENCH_IMPLS="vm boehm lua"    which implementations to run
#   BENCH_CASES="prog args;..."   cases to run instead of the default list (common.sh)
#   BENCH_VM=./vm  BENCH_VM_BOEHM=./vm-boehm  BENCH_LUA=lua5.4
#   BENCH_OUT=bench/results       where the results go
#   BENCH_TIMEOUT=300             seconds before one run is killed
# Exit status: 0 if every run succeeded and every checksum agreed, 1 otherwise.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root" || exit 1

runs=${BENCH_RUNS:-5}
impls=${BENCH_IMPLS:-vm boehm lua}
vm=${BENCH_VM:-./vm}
vm_boehm=${BENCH_VM_BOEHM:-./vm-boehm}
lua=${BENCH_LUA:-lua5.4}
out=${BENCH_OUT:-bench/results}
run_timeout=${BENCH_TIMEOUT:-300}

# shellcheck source=bench/common.sh
source "$here/common.sh"
cases=$(bench_cases)

die() { echo "gc_bench: $*" >&2; exit 1; }

[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
command -v timeout >/dev/null || die "timeout (coreutils) is missing"

# The command line of implementation $1 for program $2 (arguments follow).
impl_cmd() {
  local impl=$1 prog=$2
  case $impl in
    vm) echo "$vm bench/programs/$prog.mn" ;;
    boehm) echo "$vm_boehm bench/programs/$prog.mn" ;;
    lua) echo "$lua bench/lua/$prog.lua" ;;
    *) die "unknown implementation '$impl' (vm, boehm or lua)" ;;
  esac
}

impl_label() {
  case $1 in vm) echo vm ;; boehm) echo vm-boehm ;; lua) echo lua5.4 ;; esac
}

# Drop the implementations that are not there, with a warning.
available=""
for impl in $impls; do
  case $impl in
    vm) bin=$vm ;; boehm) bin=$vm_boehm ;; lua) bin=$lua ;;
    *) die "unknown implementation '$impl' (vm, boehm or lua)" ;;
  esac
  if command -v "$bin" >/dev/null 2>&1; then
    available="$available $impl"
  else
    echo "gc_bench: warning: $bin not found, skipping $(impl_label "$impl")" >&2
  fi
done
[ -n "$available" ] || die "no implementation to run"

mkdir -p "$out" || die "cannot create $out"
tmp=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

raw=$tmp/raw.csv # case_index,impl,run,seconds,rss_kb,status
: >"$raw"
: >"$tmp/bad" # "prog args" of the cases with a failed run or a wrong checksum
failed=0
ncases=$(printf '%s\n' "$cases" | wc -l)
nimpls=$(echo $available | wc -w)

echo "gc_bench: $ncases cases x $nimpls implementations x $runs runs"
ci=0
while read -r prog args; do
  ci=$((ci + 1))
  [ -f "bench/programs/$prog.mn" ] || die "no bench/programs/$prog.mn"
  [ -f "bench/lua/$prog.lua" ] || die "no bench/lua/$prog.lua"
  printf '%-28s' "$prog $args"
  for run in $(seq 1 "$runs"); do
    for impl in $available; do
      cmd=$(impl_cmd "$impl" "$prog")
      stdout=$tmp/out.$ci.$impl.$run
      t0=$(date +%s%N)
      # shellcheck disable=SC2086 # word splitting of cmd and args is intended
      timeout "$run_timeout" /usr/bin/time -f '%M' -o "$tmp/time" $cmd $args \
        >"$stdout" 2>"$tmp/err.$ci.$impl.$run" </dev/null
      status=$?
      t1=$(date +%s%N)
      secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
      rss=$(tail -n 1 "$tmp/time" 2>/dev/null | tr -dc '0-9')
      echo "$ci,$impl,$run,$secs,${rss:-0},$status" >>"$raw"
      if [ "$status" -ne 0 ]; then
        failed=1
        echo "$prog $args" >>"$tmp/bad"
        printf '\n  %s run %d FAILED (exit %d): %s %s\n' "$(impl_label "$impl")" "$run" "$status" "$cmd" "$args"
        sed 's/^/    /' "$tmp/err.$ci.$impl.$run" | head -n 5
        printf '%-28s' ""
      fi
      printf '.'
    done
  done
  echo
done <<<"$cases"

# Exit status of run $3 of implementation $2 on case $1 (empty if it did not run).
run_status() {
  awk -F, -v ci="$1" -v impl="$2" -v run="$3" '$1 == ci && $2 == impl && $3 == run { print $6 }' "$raw"
}

# Checksums: every successful run of a case must print the same checksum line.
echo "program,args,impl,checksum" >"$out/gc_checksums.csv"
ci=0
while read -r prog args; do
  ci=$((ci + 1))
  ref=""
  for impl in $available; do
    first=""
    for run in $(seq 1 "$runs"); do
      [ "$(run_status "$ci" "$impl" "$run")" = 0 ] || continue
      sum=$(grep -m 1 '^checksum:' "$tmp/out.$ci.$impl.$run" | sed 's/^checksum: *//')
      if [ -z "$sum" ]; then
        echo "gc_bench: $prog $args: $(impl_label "$impl") run $run printed no checksum line" >&2
        echo "$prog $args" >>"$tmp/bad"
        failed=1
        continue
      fi
      [ -n "$first" ] || { first=$sum; echo "$prog,$args,$(impl_label "$impl"),$sum" >>"$out/gc_checksums.csv"; }
      if [ -z "$ref" ]; then
        ref=$sum
        ref_impl=$impl
      elif [ "$sum" != "$ref" ]; then
        echo "gc_bench: $prog $args: CHECKSUM MISMATCH: $(impl_label "$impl") run $run printed $sum, $(impl_label "$ref_impl") printed $ref" >&2
        echo "$prog $args" >>"$tmp/bad"
        failed=1
      fi
    done
  done
done <<<"$cases"

# gc.csv: one line per case and implementation, over its successful runs.
echo "program,args,impl,median_s,min_s,max_s,max_rss_kb" >"$out/gc.csv"
ci=0
while read -r prog args; do
  ci=$((ci + 1))
  for impl in $available; do
    awk -F, -v ci="$ci" -v impl="$impl" '$1 == ci && $2 == impl && $6 == 0 { print $4, $5 }' "$raw" |
      sort -n |
      awk -v prog="$prog" -v args="$args" -v label="$(impl_label "$impl")" '
        { t[NR] = $1; if ($2 > rss) rss = $2 }
        END {
          if (NR == 0) exit
          med = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
          printf "%s,%s,%s,%.3f,%.3f,%.3f,%d\n", prog, args, label, med, t[1], t[NR], rss
        }' >>"$out/gc.csv"
  done
done <<<"$cases"

# Paired ratios: run r of vm over run r of vm-boehm (run one after the other, so
# that a slow phase of the machine hits both), median over the runs where both
# succeeded. One line per case: "program,args,ratio" (empty ratio: no pair).
ci=0
while read -r prog args; do
  ci=$((ci + 1))
  awk -F, -v ci="$ci" '$1 == ci && $6 == 0 && ($2 == "vm" || $2 == "boehm") { t[$2, $3] = $4; runs[$3] = 1 }
    END {
      for (r in runs) if ((("vm", r) in t) && (("boehm", r) in t) && t["boehm", r] > 0) print t["vm", r] / t["boehm", r]
    }' "$raw" | median | awk -v prog="$prog" -v args="$args" '{ med = sprintf("%.2f", $1) }
      END { print prog "," args "," med }'
done <<<"$cases" >"$tmp/paired.csv"

# gc_ratios.csv: median time of vm over vm-boehm and over lua5.4 (below 1: vm is
# faster), and the median of the paired vm/vm-boehm ratios.
awk -F, '
  FILENAME ~ /paired/ { paired[$1 "," $2] = $3; next }
  FNR == 1 { next }
  { key = $1 "," $2; if (!(key in seen)) { seen[key] = 1; order[++n] = key } med[key, $3] = $4 }
  function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "" : sprintf("%.2f", a / b) }
  END {
    print "program,args,vm_over_boehm,vm_over_lua,vm_over_boehm_paired"
    for (i = 1; i <= n; i++) {
      k = order[i]
      print k "," ratio(med[k, "vm"], med[k, "vm-boehm"]) "," ratio(med[k, "vm"], med[k, "lua5.4"]) "," paired[k]
    }
  }' "$tmp/paired.csv" "$out/gc.csv" >"$out/gc_ratios.csv"

# gc.dat: the median times in columns (one row per case) for bench/gc.gp; ? = missing.
awk -F, '
  NR == 1 { next }
  { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; order[++n] = key } med[key, $3] = $4 }
  function v(x) { return x == "" ? "?" : x }
  END {
    print "case vm vm-boehm lua5.4"
    for (i = 1; i <= n; i++) {
      k = order[i]; label = k; sub(/ /, "\\n", label)
      printf "\"%s\" %s %s %s\n", label, v(med[k, "vm"]), v(med[k, "vm-boehm"]), v(med[k, "lua5.4"])
    }
  }' "$out/gc.csv" >"$out/gc.dat"

if command -v gnuplot >/dev/null 2>&1; then
  gnuplot -e "datafile='$out/gc.dat'; outfile='$out/gc.png'" bench/gc.gp ||
    echo "gc_bench: warning: gnuplot failed, no $out/gc.png" >&2
else
  echo "gc_bench: warning: gnuplot not found (apt-get install gnuplot-nox), no $out/gc.png" >&2
fi

# The readable table: one row per case, median seconds (max RSS in MB) per implementation.
echo
awk -F, '
  FILENAME ~ /bad$/ { bad[$0] = 1; next }
  FNR == 1 { next }
  FILENAME ~ /ratios/ { rb[$1 " " $2] = $3; rl[$1 " " $2] = $4; rp[$1 " " $2] = $5; next }
  { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    cell[key, $3] = sprintf("%.3f (%dM)", $4, ($7 + 512) / 1024) }
  END {
    printf "%-26s %-15s %-15s %-15s %8s %8s %8s  %s\n", "median s (max RSS)", "vm", "vm-boehm", "lua5.4", "vm/boehm", "paired", "vm/lua", "runs"
    for (i = 1; i <= n; i++) {
      k = order[i]
      printf "%-26s %-15s %-15s %-15s %8s %8s %8s  %s\n", k, cell[k, "vm"], cell[k, "vm-boehm"], cell[k, "lua5.4"], rb[k], rp[k], rl[k], (k in bad) ? "FAILED/MISMATCH" : "ok"
    }
  }' "$out/gc.csv" "$out/gc_ratios.csv" "$tmp/bad"
echo
echo "gc_bench: wrote $out/gc.csv, $out/gc_ratios.csv, $out/gc_checksums.csv$([ -f "$out/gc.png" ] && echo ", $out/gc.png")"
if [ "$failed" -ne 0 ]; then
  echo "gc_bench: some runs failed or disagreed (see above)" >&2
  exit 1
fi
