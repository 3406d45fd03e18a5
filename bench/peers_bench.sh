#!/usr/bin/env bash
# peers_bench.sh: Minnow against the runtimes a user would pick instead (make bench-peers).
#
#   1. programs  every case of bench/programs on ./vm, ./vm-boehm, lua5.4 (the idiomatic
#                twins), ocamlrun and ocamlopt (the OCaml twins, build/ocaml/NAME.byte and
#                NAME.native), interleaved run by run; every run's checksum line must be
#                the same. Writes peers.csv, peers_checksums.csv, peers.dat, peers.png.
#   2. startup   each runtime on an empty program, and on a small program (~10 ms on
#                ./vm): rows "startup" and "small" of peers.csv.
#   3. memprof   ./vm --memprof-count R against the same OCaml programs under Gc.Memprof
#                with a counting tracker (bench/ocaml/memprof_count.ml: same rate, no
#                callstack limit on either side): time at each rate over time with the
#                profiler off, per runtime. Writes peers_memprof.csv, peers_memprof.png.
# Method and how to read the results: bench/README.md, "Against other runtimes".
# Run it through make (make bench-peers), which builds what it needs.
#
# Times are CPU times (user + system of the run, from wait4, via build/bench/runstat);
# wall time and max RSS are recorded beside them. A round runs every implementation
# once, in an order shuffled anew each round (seeded: the same orders every time);
# a paired ratio is vm's time over the other's in the same round, reported as the
# median and the range (min-max) over the rounds.
#
# Environment (all optional):
#   BENCH_PEERS_RUNS=5                 rounds of part 1
#   BENCH_PEERS_IMPLS="vm boehm lua ocamlrun ocamlopt"   also: lua-same (bench/lua/NAME.lua,
#                                      the identical-work Lua twins of bench-gc)
#   BENCH_PEERS_CASES="prog args;..."  cases of part 1 (default: bench/common.sh's)
#   BENCH_PEERS_PARTS="programs startup memprof"
#   BENCH_PEERS_STARTUP_RUNS=runs      rounds of part 2
#   BENCH_PEERS_STARTUP_REPS=20        back-to-back runs of the empty program per measurement
#   BENCH_PEERS_SMALL="word_count 20000"   the small program; BENCH_PEERS_SMALL_REPS=5
#   BENCH_PEERS_MP_RUNS=5  BENCH_PEERS_MP_RATES="1e-5 1e-4 1e-3"
#   BENCH_PEERS_MP_IMPLS="vm ocamlopt ocamlrun"  BENCH_PEERS_MP_CASES="prog args;..."
#   BENCH_PEERS_OUT=bench/results      BENCH_PEERS_TIMEOUT=300 (seconds a run)
#   BENCH_PEERS_VM=./vm  BENCH_PEERS_VM_BOEHM=./vm-boehm  BENCH_PEERS_LUA=lua5.4
#   BENCH_PEERS_OCAMLRUN=ocamlrun  BENCH_PEERS_OCAML_DIR=build/ocaml
#   BENCH_PEERS_RUNSTAT=build/bench/runstat
#   BENCH_PEERS_PROGRAMS=bench/programs  where part 1's Minnow programs are (NAME.mn), and
#   BENCH_PEERS_LUA_TWINS=bench/lua/idiomatic   their Lua twins (NAME.lua); the OCaml twins
#                                      are BENCH_PEERS_OCAML_DIR's NAME.byte, NAME.native
#   BENCH_PEERS_NAME=peers             part 1's files: NAME.csv, NAME_checksums.csv, NAME.dat,
#   BENCH_PEERS_TITLE="..."            NAME.png (titled so): make bench-calls (bench/calls.mk)
#                                      runs part 1 on the call micro-benchmarks this way
# Exit status: 0 if every run succeeded and every checksum agreed, 1 otherwise.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root" || exit 1

runs=${BENCH_PEERS_RUNS:-5}
impls=${BENCH_PEERS_IMPLS:-vm boehm lua ocamlrun ocamlopt}
parts=${BENCH_PEERS_PARTS:-programs startup memprof}
startup_runs=${BENCH_PEERS_STARTUP_RUNS:-$runs}
startup_reps=${BENCH_PEERS_STARTUP_REPS:-20}
small_case=${BENCH_PEERS_SMALL:-word_count 20000}
small_reps=${BENCH_PEERS_SMALL_REPS:-5}
mp_runs=${BENCH_PEERS_MP_RUNS:-5}
mp_rates=${BENCH_PEERS_MP_RATES:-1e-5 1e-4 1e-3}
mp_impls=${BENCH_PEERS_MP_IMPLS:-vm ocamlopt ocamlrun}
out=${BENCH_PEERS_OUT:-bench/results}
run_timeout=${BENCH_PEERS_TIMEOUT:-300}
vm=${BENCH_PEERS_VM:-./vm}
vm_boehm=${BENCH_PEERS_VM_BOEHM:-./vm-boehm}
lua=${BENCH_PEERS_LUA:-lua5.4}
ocamlrun=${BENCH_PEERS_OCAMLRUN:-ocamlrun}
ocaml_dir=${BENCH_PEERS_OCAML_DIR:-build/ocaml}
runstat=${BENCH_PEERS_RUNSTAT:-build/bench/runstat}
programs_dir=${BENCH_PEERS_PROGRAMS:-bench/programs}
lua_twins=${BENCH_PEERS_LUA_TWINS:-bench/lua/idiomatic}
name=${BENCH_PEERS_NAME:-peers}
title=${BENCH_PEERS_TITLE:-Minnow against other runtimes: median CPU time a run (lower is better; the last two groups are start-up rows)}

# shellcheck source=bench/common.sh
source "$here/common.sh"
cases=$(BENCH_CASES=${BENCH_PEERS_CASES:-} bench_cases)
# Part 3's default cases: bench-memprof's (0.5-1.5 s each on ./vm with the profiler off).
mp_cases=$(printf '%s\n' "${BENCH_PEERS_MP_CASES:-binary_trees 17;list_pipeline 10000 800;deep_map 10000 600;word_count 1000000;string_build 20000 200}" |
  tr ';' '\n' | sed 's/^ *//; s/ *$//; /^$/d')

die() { echo "peers_bench: $*" >&2; exit 1; }
warn() { echo "peers_bench: warning: $*" >&2; }
has_part() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

[ -x "$runstat" ] || die "$runstat not found (make bench-peers builds it)"
[ -x "$vm" ] || die "$vm not found (make vm)"
mkdir -p "$out" || die "cannot create $out"
tmp=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
failed=0
: >"$tmp/bad" # "part prog args" of the cases with a failed run or a wrong checksum

# =====================================================================================
# The implementations
# =====================================================================================

impl_label() {
  case $1 in
    vm) echo vm ;; boehm) echo vm-boehm ;; lua) echo lua5.4 ;; lua-same) echo lua5.4-same ;;
    ocamlrun) echo ocamlrun ;; ocamlopt) echo ocamlopt ;; *) die "unknown implementation '$1'" ;;
  esac
}

# The idiomatic Lua twin of program $1.
lua_twin() { echo "$lua_twins/$1.lua"; }

# Copies of the binaries, so that a rebuild during the run cannot mix two versions.
bin=$tmp/bin
mkdir -p "$bin"
cp "$vm" "$bin/vm" || die "cannot copy $vm"
cp "$runstat" "$bin/runstat" || die "cannot copy $runstat"

# Drop the implementations that are not there, with a warning.
usable_impls() {
  local impl ok list=""
  for impl in $1; do
    impl_label "$impl" >/dev/null || exit 1
    case $impl in
      vm) ok=1 ;;
      boehm) [ -x "$vm_boehm" ] && cp "$vm_boehm" "$bin/vm-boehm" && ok=1 || ok=0 ;;
      lua | lua-same) command -v "$lua" >/dev/null 2>&1 && ok=1 || ok=0 ;;
      ocamlrun) command -v "$ocamlrun" >/dev/null 2>&1 && ls "$ocaml_dir"/*.byte >/dev/null 2>&1 && ok=1 || ok=0 ;;
      ocamlopt) ls "$ocaml_dir"/*.native >/dev/null 2>&1 && ok=1 || ok=0 ;;
    esac
    if [ "$ok" = 1 ]; then list="$list $impl"; else warn "$(impl_label "$impl") is not available (see bench/README.md), skipped"; fi
  done
  echo $list
}
available=$(usable_impls "$impls")
mp_available=""
has_part memprof && mp_available=$(usable_impls "$mp_impls")
case " $available $mp_available " in *" ocaml"*) cp "$ocaml_dir"/*.byte "$ocaml_dir"/*.native "$bin/" 2>/dev/null ;; esac
[ -n "$available" ] || die "no implementation to run"

# The command line of implementation $1 running program $2 (its arguments follow).
# Program "empty" is the empty program of each language.
impl_cmd() {
  local impl=$1 prog=$2
  case $impl:$prog in
    vm:empty | boehm:empty) src=$tmp/empty.mn ;;
    lua*:empty) src=$tmp/empty.lua ;;
    vm:* | boehm:*) src=$programs_dir/$prog.mn ;;
    lua:*) src=$(lua_twin "$prog") ;;
    lua-same:*) src=bench/lua/$prog.lua ;;
  esac
  case $impl in
    vm) echo "$bin/vm $src" ;;
    boehm) echo "$bin/vm-boehm $src" ;;
    lua | lua-same) echo "$lua $src" ;;
    ocamlrun) echo "$ocamlrun $bin/$prog.byte" ;;
    ocamlopt) echo "$bin/$prog.native" ;;
  esac
}
: >"$tmp/empty.mn"
: >"$tmp/empty.lua"

# Checks that every twin program $1 needs is there; dies otherwise.
check_twins() {
  local prog=$1 impl
  [ -f "$programs_dir/$prog.mn" ] || die "no $programs_dir/$prog.mn"
  for impl in $available $mp_available; do
    case $impl in
      lua) [ -f "$(lua_twin "$prog")" ] || die "no Lua twin of $prog" ;;
      lua-same) [ -f "bench/lua/$prog.lua" ] || die "no bench/lua/$prog.lua" ;;
      ocamlrun) [ -f "$bin/$prog.byte" ] || die "no $ocaml_dir/$prog.byte (make ocaml-twins)" ;;
      ocamlopt) [ -f "$bin/$prog.native" ] || die "no $ocaml_dir/$prog.native (make ocaml-twins)" ;;
    esac
  done
}

# =====================================================================================
# Running and recording
# =====================================================================================

# measure REPS STDOUT STDERR command...: runs the command REPS times back to back under
# runstat; prints "wall_s cpu_s maxrss_kb status" (means per run; status 2xx: runstat failed).
measure() {
  local reps=$1 o=$2 e=$3
  shift 3
  if "$bin/runstat" -n "$reps" -t "$run_timeout" -o "$tmp/stat" -- "$@" >"$o" 2>"$e" </dev/null; then
    cat "$tmp/stat"
  else
    echo "0 0 0 255"
  fi
}

checksum_of() { grep -m 1 '^checksum:' "$1" 2>/dev/null | sed 's/^checksum: *//'; }

# The counts of a --memprof-count (or memprof_count.ml) line: "samples blocks frames_per_sample".
memprof_counts() {
  sed -n 's/^memprof: rate [^:]*: \([0-9]*\) samples in \([0-9]*\) blocks.* \([0-9.]*\) frames per sample$/\1 \2 \3/p' "$1" | tail -n 1
}

# Reports a failed run: run_failed PART CASE LABEL RUN STATUS STDERR-FILE command...
run_failed() {
  local part=$1 case=$2 label=$3 run=$4 status=$5 err=$6
  shift 6
  failed=1
  echo "$part $case" >>"$tmp/bad"
  printf '\n  %s run %s FAILED (status %s%s): %s\n' "$label" "$run" "$status" \
    "$([ "$status" = 142 ] && echo ", out of time after ${run_timeout}s")" "$*"
  sed 's/^/    /' "$err" | head -n 5
}

# shuffled N SEED: the indices 0..N-1 in an order drawn from SEED (the same every time),
# one a line. A run's time depends on the run before it (a run of ./vm on word_count
# 1000000 took 0.51-0.55 s of CPU right after an ocamlrun run, 0.40-0.44 s right after
# another ./vm run), so no implementation may always follow the same one, as it would
# in a fixed rotation.
shuffled() {
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed)
    for (i = 0; i < n; i++) a[i] = i
    for (i = n - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = a[i]; a[i] = a[j]; a[j] = t }
    for (i = 0; i < n; i++) print a[i] }'
}

# =====================================================================================
# Part 1 and 2: programs, start-up and the small program
# =====================================================================================
# raw.csv: part,case_index,impl,run,wall_s,cpu_s,rss_kb,status,checksum
raw=$tmp/raw.csv
: >"$raw"
read -r -a impl_list <<<"$available"
nimpls=${#impl_list[@]}

# run_rounds PART CASE_INDEX ROUNDS REPS prog args...: every implementation, ROUNDS rounds.
run_rounds() {
  local part=$1 ci=$2 rounds=$3 reps=$4 prog=$5 run k impl cmd o e stat sum
  shift 5
  printf '%-9s %-28s' "$part" "$prog $*"
  for run in $(seq 1 "$rounds"); do
    for k in $(shuffled "$nimpls" "$((ci * 1000 + run))"); do
      impl=${impl_list[$k]}
      cmd=$(impl_cmd "$impl" "$prog")
      o=$tmp/out.$part.$ci.$impl.$run
      e=$tmp/err.$part.$ci.$impl.$run
      # shellcheck disable=SC2086 # word splitting of cmd is intended
      stat=$(measure "$reps" "$o" "$e" $cmd "$@")
      sum=$(checksum_of "$o")
      echo "$part,$ci,$impl,$run,$(echo "$stat" | tr ' ' ','),$sum" >>"$raw"
      [ "${stat##* }" = 0 ] || run_failed "$part" "$prog $*" "$(impl_label "$impl")" "$run" "${stat##* }" "$e" $cmd "$@"
      printf '.'
    done
  done
  echo
}

# Checksums of part PART: every successful run must print the first one's checksum line.
check_checksums() {
  local part=$1 ci=0 prog args
  while read -r prog args; do
    ci=$((ci + 1))
    awk -F, -v part="$part" -v ci="$ci" '$1 == part && $2 == ci && $8 == 0 { print $3, $4, $9 }' "$raw" |
      awk -v prog="$prog" -v args="$args" -v part="$part" -v labels="$label_map" -v csv="$tmp/checksums.csv" '
        BEGIN { n = split(labels, l, " "); for (i = 1; i < n; i += 2) label[l[i]] = l[i + 1] }
        $3 == "" { printf "peers_bench: %s %s: %s run %s printed no checksum line\n", prog, args, label[$1], $2; bad = 1; next }
        ref == "" { ref = $3; ref_impl = $1 }
        !($1 in seen) { seen[$1] = 1; print prog "," args "," label[$1] "," $3 >>csv }
        $3 != ref { printf "peers_bench: %s %s: CHECKSUM MISMATCH: %s run %s printed %s, %s printed %s\n", prog, args, label[$1], $2, $3, label[ref_impl], ref; bad = 1 }
        END { exit bad }' >&2 || { failed=1; echo "$part $prog $args" >>"$tmp/bad"; }
  done
}
label_map=$(for i in vm boehm lua lua-same ocamlrun ocamlopt; do printf '%s %s ' "$i" "$(impl_label "$i")"; done)
echo "program,args,impl,checksum" >"$tmp/checksums.csv"

echo "peers_bench: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "peers_bench: implementations:$(for i in $available; do printf ' %s' "$(impl_label "$i")"; done)"
if has_part programs; then
  echo "peers_bench: programs: $(printf '%s\n' "$cases" | wc -l) cases x $nimpls implementations x $runs rounds"
  while read -r prog _; do check_twins "$prog"; done <<<"$cases"
  ci=0
  while read -r prog args; do
    ci=$((ci + 1))
    # shellcheck disable=SC2086 # word splitting of args is intended
    run_rounds programs "$ci" "$runs" 1 "$prog" $args
  done <<<"$cases"
  check_checksums programs <<<"$cases"
fi
if has_part startup; then
  echo "peers_bench: start-up: the empty program ($startup_reps runs a measurement) and $small_case ($small_reps runs), $startup_runs rounds"
  check_twins "${small_case%% *}"
  run_rounds startup 1 "$startup_runs" "$startup_reps" empty
  # shellcheck disable=SC2086
  run_rounds small 1 "$startup_runs" "$small_reps" $small_case
  check_checksums small <<<"$small_case"
fi
cp "$tmp/checksums.csv" "$out/${name}_checksums.csv"

# peers.csv: one row per part, case and implementation (medians over the successful
# runs; CPU seconds a run), with vm's time over this implementation's: the ratio of the
# medians and the paired ratios (same round) as median, min and max.
{
  echo "part,program,args,impl,runs,median_cpu_s,min_cpu_s,max_cpu_s,median_wall_s,max_rss_kb,vm_over_impl,paired_median,paired_min,paired_max"
  for part in programs startup small; do
    case $part in programs) list=$cases ;; startup) list="empty" ;; small) list=$small_case ;; esac
    has_part "$part" || { [ "$part" = small ] && has_part startup; } || continue
    ci=0
    while read -r prog args; do
      ci=$((ci + 1))
      awk -F, -v part="$part" -v ci="$ci" '$1 == part && $2 == ci && $8 == 0' "$raw" |
        awk -F, -v part="$part" -v prog="$prog" -v args="$args" -v order="$available" -v labels="$label_map" '
          function med(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
          }
          BEGIN { n = split(labels, l, " "); for (i = 1; i < n; i += 2) label[l[i]] = l[i + 1] }
          { cpu[$3, $4] = $6; wall[$3, $4] = $5; if ($7 > rss[$3]) rss[$3] = $7; runs[$4] = 1 }
          END {
            ni = split(order, impl, " ")
            for (i = 1; i <= ni; i++) {
              m = impl[i]; nc = 0; nw = 0; np = 0; lo = ""; hi = ""; plo = ""; phi = ""
              for (r in runs) {
                if (!((m, r) in cpu)) continue
                c[++nc] = cpu[m, r]; w[++nw] = wall[m, r]
                if (lo == "" || cpu[m, r] < lo) lo = cpu[m, r]
                if (hi == "" || cpu[m, r] > hi) hi = cpu[m, r]
                if (("vm", r) in cpu && cpu[m, r] > 0) {
                  q = cpu["vm", r] / cpu[m, r]; p[++np] = q
                  if (plo == "" || q < plo) plo = q
                  if (phi == "" || q > phi) phi = q
                }
              }
              if (nc == 0) continue
              mc[m] = med(c, nc)
              line[m] = sprintf("%s,%s,%s,%s,%d,%.6f,%.6f,%.6f,%.6f,%d", part, prog, args, label[m], nc, mc[m], lo, hi, med(w, nw), rss[m])
              pr[m] = (np > 0) ? sprintf("%.3f,%.3f,%.3f", med(p, np), plo, phi) : ",,"
            }
            for (i = 1; i <= ni; i++) {
              m = impl[i]
              if (!(m in line)) continue
              vr = (("vm" in mc) && mc[m] > 0) ? sprintf("%.3f", mc["vm"] / mc[m]) : ""
              print line[m] "," vr "," pr[m]
            }
          }'
    done <<<"$list"
  done
} >"$out/$name.csv"

# NAME.dat for bench/peers.gp: one row per case, median CPU seconds per implementation.
awk -F, -v order="$available" -v labels="$label_map" '
  BEGIN { n = split(labels, l, " "); for (i = 1; i < n; i += 2) label[l[i]] = l[i + 1]; ni = split(order, impl, " ") }
  NR == 1 { next }
  { key = ($1 == "startup") ? "empty program" : ($1 == "small" ? "small: " $2 " " $3 : $2 " " $3)
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
    t[key, $4] = $6 }
  END {
    printf "case"; for (i = 1; i <= ni; i++) printf " %s", label[impl[i]]; printf "\n"
    for (k = 1; k <= nk; k++) {
      lab = keys[k]; sub(/ /, "\\n", lab); printf "\"%s\"", lab
      for (i = 1; i <= ni; i++) { v = t[keys[k], label[impl[i]]]; printf " %s", (v == "") ? "?" : v }
      printf "\n"
    }
  }' "$out/$name.csv" >"$out/$name.dat"

# =====================================================================================
# Part 3: memprof against Gc.Memprof
# =====================================================================================
if has_part memprof && [ -n "$mp_available" ]; then
  configs=()
  for impl in $mp_available; do for cfg in off $mp_rates; do configs+=("$impl:$cfg"); done; done
  nconfigs=${#configs[@]}
  echo "peers_bench: memprof: $(printf '%s\n' "$mp_cases" | wc -l) cases x ${nconfigs} configurations ($mp_available x off $mp_rates) x $mp_runs rounds"
  while read -r prog _; do check_twins "$prog"; done <<<"$mp_cases"
  mraw=$tmp/mraw.csv # case_index,impl,config,run,wall_s,cpu_s,rss_kb,status,checksum,samples,blocks,frames
  : >"$mraw"
  ci=0
  while read -r prog args; do
    ci=$((ci + 1))
    printf '%-9s %-28s' memprof "$prog $args"
    for run in $(seq 1 "$mp_runs"); do
      for k in $(shuffled "$nconfigs" "$((ci * 1000 + run))"); do
        impl=${configs[$k]%%:*}
        cfg=${configs[$k]#*:}
        cmd=$(impl_cmd "$impl" "$prog")
        o=$tmp/mout.$ci.$impl.$cfg.$run
        e=$tmp/merr.$ci.$impl.$cfg.$run
        # The OCaml twins read their rate from the environment (bench/ocaml/memprof_count.ml);
        # it is set for the profiled runs only, by the shell (no extra process in the run).
        mp_env=""
        case $impl:$cfg in
          *:off) set -- $cmd ;;
          vm:*) set -- "$bin/vm" --memprof-count "$cfg" ${cmd#* } ;;
          *) set -- $cmd; mp_env=$cfg ;;
        esac
        # shellcheck disable=SC2086 # word splitting of args is intended
        stat=$(BENCH_MEMPROF_COUNT=$mp_env measure 1 "$o" "$e" "$@" $args)
        counts=$(memprof_counts "$e")
        echo "$ci,$impl,$cfg,$run,$(echo "$stat" | tr ' ' ','),$(checksum_of "$o"),$(echo "${counts:-,,}" | tr ' ' ',')" >>"$mraw"
        # shellcheck disable=SC2086
        [ "${stat##* }" = 0 ] || run_failed memprof "$prog $args" "$(impl_label "$impl") $cfg" "$run" "${stat##* }" "$e" "$@" $args
        if [ "${stat##* }" = 0 ] && [ "$cfg" != off ] && [ -z "$counts" ]; then
          echo "peers_bench: $prog $args: $(impl_label "$impl") at $cfg printed no memprof line" >&2
          failed=1
        fi
        printf '.'
      done
    done
    echo
    # Every successful run prints the checksum of the first one.
    awk -F, -v prog="$prog $args" '$1 == '"$ci"' && $8 == 0 {
        if (ref == "") ref = $9
        else if ($9 != ref) { printf "peers_bench: memprof %s: CHECKSUM MISMATCH: %s %s run %s printed %s, expected %s\n", prog, $2, $3, $4, $9, ref; bad = 1 } }
      END { exit bad }' "$mraw" >&2 || { failed=1; echo "memprof $prog $args" >>"$tmp/bad"; }
  done <<<"$mp_cases"

  # peers_memprof.csv: per case, runtime and configuration, CPU medians; overhead = time at
  # the rate over time off: ratio of the medians, and paired (same round) median, min, max.
  {
    echo "program,args,runtime,config,runs,median_cpu_s,min_cpu_s,max_cpu_s,overhead,paired_median,paired_min,paired_max,samples,blocks,frames_per_sample"
    ci=0
    while read -r prog args; do
      ci=$((ci + 1))
      awk -F, -v ci="$ci" '$1 == ci && $8 == 0' "$mraw" |
        awk -F, -v prog="$prog" -v args="$args" -v impls="$mp_available" -v cfgs="off $mp_rates" -v labels="$label_map" '
          function med(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
          }
          BEGIN { n = split(labels, l, " "); for (i = 1; i < n; i += 2) label[l[i]] = l[i + 1] }
          { cpu[$2, $3, $4] = $6; runs[$4] = 1; if ($10 != "") { smp[$2, $3] = $10; blk[$2, $3] = $11; fps[$2, $3] = $12 } }
          END {
            ni = split(impls, impl, " "); nc = split(cfgs, cfg, " ")
            for (i = 1; i <= ni; i++) {
              m = impl[i]
              for (j = 1; j <= nc; j++) {
                g = cfg[j]; n = 0; np = 0; lo = ""; hi = ""; plo = ""; phi = ""
                for (r in runs) {
                  if (!((m, g, r) in cpu)) continue
                  v = cpu[m, g, r]; a[++n] = v
                  if (lo == "" || v < lo) lo = v
                  if (hi == "" || v > hi) hi = v
                  if ((m, "off", r) in cpu && cpu[m, "off", r] > 0) {
                    q = v / cpu[m, "off", r]; p[++np] = q
                    if (plo == "" || q < plo) plo = q
                    if (phi == "" || q > phi) phi = q
                  }
                }
                if (n == 0) continue
                mc[g] = med(a, n)
                ov = (mc["off"] > 0) ? sprintf("%.3f", mc[g] / mc["off"]) : ""
                pq = (np > 0) ? sprintf("%.3f,%.3f,%.3f", med(p, np), plo, phi) : ",,"
                printf "%s,%s,%s,%s,%d,%.6f,%.6f,%.6f,%s,%s,%s,%s,%s\n", prog, args, label[m], g, n, mc[g], lo, hi, ov, pq,
                  smp[m, g], blk[m, g], fps[m, g]
              }
              delete mc
            }
          }'
    done <<<"$mp_cases"
  } >"$out/peers_memprof.csv"

  # peers_memprof.dat for bench/peers_memprof.gp: one block per rate (two blank lines
  # between), one row per case, the paired overhead of each runtime.
  awk -F, -v impls="$mp_available" -v rates="$mp_rates" -v labels="$label_map" '
    BEGIN { n = split(labels, l, " "); for (i = 1; i < n; i += 2) label[l[i]] = l[i + 1] }
    NR == 1 { next }
    { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }; ov[key, $3, $4] = $10 }
    END {
      ni = split(impls, impl, " "); nr = split(rates, rate, " ")
      for (j = 1; j <= nr; j++) {
        printf "# rate %s\ncase", rate[j]; for (i = 1; i <= ni; i++) printf " %s", label[impl[i]]; printf "\n"
        for (k = 1; k <= nk; k++) {
          lab = keys[k]; sub(/ /, "\\n", lab); printf "\"%s\"", lab
          for (i = 1; i <= ni; i++) { v = ov[keys[k], label[impl[i]], rate[j]]; printf " %s", (v == "") ? "?" : v }
          printf "\n"
        }
        printf "\n\n"
      }
    }' "$out/peers_memprof.csv" >"$out/peers_memprof.dat"
fi

# =====================================================================================
# Charts and the readable tables
# =====================================================================================
if command -v gnuplot >/dev/null 2>&1; then
  if [ -s "$out/$name.dat" ] && [ "$(wc -l <"$out/$name.dat")" -gt 1 ]; then
    gnuplot -e "datafile='$out/$name.dat'; outfile='$out/$name.png'; nimpls=$nimpls; plottitle='$title'" bench/peers.gp ||
      warn "gnuplot failed, no $out/$name.png"
  fi
  if has_part memprof && [ -s "$out/peers_memprof.dat" ]; then
    # One y range for every panel: up to the largest overhead (x 1.3, room for its label).
    ymax=$(awk 'NF > 1 && $1 !~ /^(#|case)/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9.]+$/ && $i + 0 > m) m = $i + 0 } END { print (m > 1.5 ? m : 1.5) * 1.3 }' "$out/peers_memprof.dat")
    gnuplot -e "datafile='$out/peers_memprof.dat'; outfile='$out/peers_memprof.png'; nimpls=$(echo $mp_available | wc -w); rates='$mp_rates'; ymax=$ymax" \
      bench/peers_memprof.gp || warn "gnuplot failed, no $out/peers_memprof.png"
  fi
else
  warn "gnuplot not found (apt-get install gnuplot-nox), no charts"
fi

echo
awk -F, -v order="$available" -v labels="$label_map" '
  BEGIN { n = split(labels, l, " "); for (i = 1; i < n; i += 2) label[l[i]] = l[i + 1]; ni = split(order, impl, " ") }
  FILENAME ~ /bad$/ { sub(/ +$/, ""); bad[$0] = 1; next }
  FNR == 1 { next }
  { key = $1 " " $2 ($3 == "" ? "" : " " $3)
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key; name[key] = ($1 == "programs") ? $2 " " $3 : $1 ": " $2 " " $3 }
    ms = ($1 == "programs") ? 1 : 1000
    cell[key, $4] = sprintf(ms == 1 ? "%.3f (%dM)" : "%.2fms (%dM)", $6 * ms, ($10 + 512) / 1024)
    if ($4 != "vm") ratio[key, $4] = sprintf("%.2f %.2f-%.2f", $12, $13, $14) }
  END {
    printf "median CPU s (max RSS)        "; for (i = 1; i <= ni; i++) printf " %-15s", label[impl[i]]; printf "  runs\n"
    for (k = 1; k <= nk; k++) {
      printf "%-29s", name[keys[k]]
      for (i = 1; i <= ni; i++) printf " %-15s", cell[keys[k], label[impl[i]]]
      printf "  %s\n", (keys[k] in bad) ? "FAILED/MISMATCH" : "ok"
    }
    printf "\nvm / other, paired per round: median min-max\n%-29s", ""
    for (i = 1; i <= ni; i++) if (impl[i] != "vm") printf " %-15s", label[impl[i]]; printf "\n"
    for (k = 1; k <= nk; k++) {
      printf "%-29s", name[keys[k]]
      for (i = 1; i <= ni; i++) if (impl[i] != "vm") printf " %-15s", ratio[keys[k], label[impl[i]]]
      printf "\n"
    }
  }' "$out/$name.csv" "$tmp/bad"
if has_part memprof && [ -s "$out/peers_memprof.csv" ]; then
  echo
  awk -F, -v rates="$mp_rates" '
    NR == 1 { next }
    { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
      if (!($3 in rs)) { rs[$3] = 1; rt[++nr] = $3 }
      ov[key, $3, $4] = sprintf("%.2f", $10); off[key, $3] = ($4 == "off") ? $6 : off[key, $3] }
    END {
      n = split(rates, rate, " ")
      printf "memprof: time at the rate / time off (paired median)\n%-26s %-10s %9s", "", "runtime", "off CPU s"
      for (j = 1; j <= n; j++) printf " %8s", rate[j]; printf "\n"
      for (k = 1; k <= nk; k++) for (i = 1; i <= nr; i++) {
        printf "%-26s %-10s %9.3f", (i == 1) ? keys[k] : "", rt[i], off[keys[k], rt[i]]
        for (j = 1; j <= n; j++) printf " %8s", ov[keys[k], rt[i], rate[j]]
        printf "\n"
      }
    }' "$out/peers_memprof.csv"
fi
echo
echo "peers_bench: wrote $(cd "$out" && ls "$name".csv "$name"_checksums.csv "$name".png peers_memprof*.csv peers_memprof*.png 2>/dev/null | tr '\n' ' ')in $out"
echo "peers_bench: load average at the end $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
if [ "$failed" -ne 0 ]; then
  echo "peers_bench: some runs failed or disagreed (see above):" >&2
  sort -u "$tmp/bad" | sed 's/^/  /' >&2
  exit 1
fi
