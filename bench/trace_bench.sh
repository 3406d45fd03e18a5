#!/usr/bin/env bash
# trace_bench.sh - ./vm --memtrace against perf record, on the programs of
# bench/programs (make bench-trace; method and findings in bench/TRACE.md).
# Every traced run here passes --memtrace-no-end-state: these figures are
# the cost of sampling and writing while the program runs; the end state
# (a final collection and the retaining paths) is measured on its own by
# make bench-retention (bench/retention_bench.sh).
#
#   1. sizes     one traced run per program and rate: bytes per sample and
#                their split (tools/memtrace info); the profiler-off CPU time
#                that sets perf's frequency for a similar sample count
#   2. callgrind instructions of ./vm --memtrace against ./vm (profiler off),
#                and where the extra goes: the trace writer, the tracker's
#                glue and clock reads, the memprof engine (per sample); what
#                a trace costs whatever its samples (a run at rate 1e-12,
#                which takes none) and a sample's cost with it taken apart; the
#                new callers a sample brings (the frames its capture walks,
#                from ./vm --memprof-count at the same rate and seed, which
#                takes the same samples) and the extra per new caller
#   3. times     paired CPU and wall times of the program itself: off, traced
#                at each rate, and under perf record (no call graph,
#                --call-graph=fp on ./vm-fp, --call-graph=dwarf) at the
#                frequency matched to each rate; perf's file sizes and what
#                its samples name come from the first round's files
#   4. reader    decoding speed of trace/reader.c on the traces of step 1
#                (make bench-reader's build/release/reader_bench: CPU time per
#                pass), and the check that every sample's innermost frame is a
#                Minnow allocation site (build/bench/trace_sites)
# Writes, under $BENCH_TRACE_OUT: trace_sizes.csv, trace_callgrind.csv,
# trace_callgrind_top.txt, trace_times.csv, trace_names.csv,
# trace_reader.csv, trace.dat and trace.png (bench/trace.gp), and prints the
# summary table.
#
# Environment (all optional):
#   BENCH_TRACE_RUNS=5                       timed rounds (each runs every configuration once)
#   BENCH_TRACE_RATES="1e-6 1e-5 1e-4 1e-3"  memtrace rates
#   BENCH_TRACE_CASES="prog args;..."        programs for steps 1, 3, 4 (defaults below)
#   BENCH_TRACE_CG_CASES="prog args;..."     programs for step 2 (smaller: callgrind is ~50x slower)
#   BENCH_TRACE_CALLGRIND=yes                no: skip step 2
#   BENCH_TRACE_STEPS=all                    callgrind: step 2 alone (the other results are kept)
#   BENCH_TRACE_PERF=yes                     no: skip everything perf
#   BENCH_TRACE_PERF_MODES="none fp dwarf"   perf's call-graph modes
#   BENCH_TRACE_PERF_RATES="1e-6 1e-5 1e-4"  rates whose sample counts perf is matched to
#   BENCH_TRACE_PERF_MAX_FREQ=25000          perf's -F at most this (Hz; and the kernel's maximum)
#   BENCH_TRACE_NAMES_RATE=1e-4              the perf runs whose samples are classified
#   BENCH_TRACE_READ_REPS=21                 reader passes per trace
#   BENCH_TRACE_TIMEOUT=300                  seconds before one run is killed
#   BENCH_TRACE_VM=./vm BENCH_TRACE_VM_FP=./vm-fp BENCH_TRACE_TOOL=tools/memtrace
#   BENCH_TRACE_READER=build/release/reader_bench BENCH_TRACE_SITES=build/bench/trace_sites
#   BENCH_TRACE_OUT=bench/results
# Exit status: 0 if every run succeeded and printed the profiler-off run's
# checksum, 1 otherwise. Floors that are not met are reported, not failed.
# perf missing or not permitted: the perf half is skipped with a message.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root" || exit 1
# shellcheck source=bench/trace_perf.sh
source "$here/trace_perf.sh"

runs=${BENCH_TRACE_RUNS:-5}
steps=${BENCH_TRACE_STEPS:-all}
rates=${BENCH_TRACE_RATES:-1e-6 1e-5 1e-4 1e-3}
use_cg=${BENCH_TRACE_CALLGRIND:-yes}
use_perf=${BENCH_TRACE_PERF:-yes}
perf_modes=${BENCH_TRACE_PERF_MODES:-none fp dwarf}
perf_rates=${BENCH_TRACE_PERF_RATES:-1e-6 1e-5 1e-4}
perf_cap=${BENCH_TRACE_PERF_MAX_FREQ:-25000}
names_rate=${BENCH_TRACE_NAMES_RATE:-1e-4}
read_reps=${BENCH_TRACE_READ_REPS:-21}
run_timeout=${BENCH_TRACE_TIMEOUT:-300}
vm=${BENCH_TRACE_VM:-./vm}
vm_fp=${BENCH_TRACE_VM_FP:-./vm-fp}
tool=${BENCH_TRACE_TOOL:-tools/memtrace}
reader=${BENCH_TRACE_READER:-build/release/reader_bench}
sites=${BENCH_TRACE_SITES:-build/bench/trace_sites}
out=${BENCH_TRACE_OUT:-bench/results}

# Steps 1, 3, 4: the sizes of bench-gc (0.1-0.7 s a run with the profiler off).
# deep_map and list_pipeline recurse 10,000 frames deep (List.map); the others
# stay shallow. Step 2: callgrind sizes, ~0.2-1.3 G instructions a run.
default_cases="binary_trees 16
list_pipeline 10000 600
deep_map 10000 400
word_count 1000000
string_build 20000 80"
default_cg_cases="binary_trees 15
list_pipeline 10000 80
deep_map 10000 80
word_count 200000
string_build 2000 40"
split_cases() { printf '%s\n' "$1" | tr ';' '\n' | sed 's/^ *//; s/ *$//; /^$/d'; }
cases=$(split_cases "${BENCH_TRACE_CASES:-$default_cases}")
cg_cases=$(split_cases "${BENCH_TRACE_CG_CASES:-$default_cg_cases}")

die() { echo "trace_bench: $*" >&2; exit 1; }
note() { echo "trace_bench: $*"; }

for b in "$vm" "$tool" "$reader" "$sites"; do [ -x "$b" ] || die "$b not found (make bench-trace builds it)"; done
command -v timeout >/dev/null || die "timeout (coreutils) is missing"
while read -r prog _; do
  [ -f "bench/programs/$prog.mn" ] || die "no bench/programs/$prog.mn"
done <<<"$cases"$'\n'"$cg_cases"
mkdir -p "$out" || die "cannot create $out"
sizes=$out/trace_sizes.csv times=$out/trace_times.csv names=$out/trace_names.csv readcsv=$out/trace_reader.csv
cgcsv=$out/trace_callgrind.csv cgtop=$out/trace_callgrind_top.txt
tmp=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
# Copies of the binaries: a rebuild during the benchmark cannot mix versions.
mkdir -p "$tmp/bin" "$tmp/traces" "$tmp/perf"
cp "$vm" "$tmp/bin/vm" || die "cannot copy $vm"
bin_vm=$tmp/bin/vm
failed=0

if [ "$use_perf" = yes ]; then
  why=$(perf_unavailable)
  if [ -n "$why" ]; then
    note "skipping the perf half: $why"
    use_perf=no
  elif [ ! -x "$vm_fp" ]; then
    note "skipping the perf half: $vm_fp not found (make vm-fp)"
    use_perf=no
  else
    cp "$vm_fp" "$tmp/bin/vm-fp" || die "cannot copy $vm_fp"
  fi
fi
[ "$use_perf" = yes ] || perf_modes=""
if [ "$use_cg" = yes ] && ! command -v valgrind >/dev/null 2>&1; then
  note "skipping callgrind: valgrind is not installed (apt-get install valgrind)"
  use_cg=no
fi

echo "trace_bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
  "$(grep -m 1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"

checksum_of() { grep -m 1 '^checksum:' "$1" 2>/dev/null | sed 's/^checksum: *//'; }

# The program's own time: timed PREFIX COMMAND... runs COMMAND with stdout in
# PREFIX.out, stderr in PREFIX.err and "real user sys" (s, bash's time: to the
# millisecond, children included) in PREFIX.time. Under perf, this wrapper is
# what perf starts, so perf's own start and finish are not in PREFIX.time.
# shellcheck disable=SC2016 # expanded by the inner bash
timer=(bash -c 'TIMEFORMAT="%3R %3U %3S"; { time "$@" >"$0.out" 2>"$0.err" </dev/null; } 2>"$0.time"')

# `memtrace info` of a trace as "allocs events samples bytes headers info
# locations backtraces event_bytes avg_depth max_depth new_per_alloc".
trace_info() {
  "$tool" info "$1" 2>/dev/null | awk '
    /^events / { ev = $2; sub(":", "", ev); al = $3 }
    /^allocations / { for (i = 1; i <= NF; i++) if ($i ~ /^samples$/) sm = $(i - 1) }
    /^backtraces / { mx = $3; av = $5; nw = $8 }
    /^bytes / { gsub(",", ""); b = $2; sub(":", "", b); h = $4; inf = $7; l = $9; bt = $11; e = $13 }
    END { print al, ev, sm, b, h, inf, l, bt, e, av, mx, nw }'
}

# =====================================================================================
# 1. sizes: one traced run per program and rate, and the profiler-off CPU time
# =====================================================================================
step_sizes() {
  note "1/4 sizes: $(echo "$cases" | wc -l) programs x rates $rates"
  echo "method,program,args,rate,freq_hz,samples,n_samples,events,file_bytes,bytes_per_sample,headers_per_sample,info_per_sample,locations_per_sample,backtraces_per_sample,events_per_sample,data_bytes_per_sample,sample_records_per_sample,lost_samples,avg_depth,max_depth,new_frames_per_sample" >"$sizes"
  : >"$tmp/freqs" # case_index rate freq
  ci=0
  while read -r prog args; do
    ci=$((ci + 1))
    # Three profiler-off runs: the median CPU time sets perf's frequencies.
    for k in 1 2 3; do
      # shellcheck disable=SC2086 # word splitting of args is intended
      "${timer[@]}" "$tmp/off.$ci.$k" timeout "$run_timeout" "$bin_vm" "bench/programs/$prog.mn" $args ||
        { echo "trace_bench: $prog $args failed with the profiler off" >&2; failed=1; }
    done
    ref=$(checksum_of "$tmp/off.$ci.1.out")
    echo "$ref" >"$tmp/ref.$ci"
    cpu_off=$(for k in 1 2 3; do awk '{ print $2 + $3 }' "$tmp/off.$ci.$k.time"; done | sort -g | sed -n 2p)
    printf '  %-26s off %.3f s CPU;' "$prog $args" "$cpu_off"
    for r in $rates; do
      t=$tmp/traces/$ci.$r.ctf
      # shellcheck disable=SC2086
      if ! "${timer[@]}" "$tmp/size" timeout "$run_timeout" "$bin_vm" --memtrace "$t" --memtrace-no-end-state --memtrace-rate "$r" \
          "bench/programs/$prog.mn" $args || [ "$(checksum_of "$tmp/size.out")" != "$ref" ]; then
        echo "trace_bench: $prog $args --memtrace-rate $r failed or printed another checksum" >&2
        failed=1
        continue
      fi
      read -r al ev sm b h inf l bt e av mx nw <<<"$(trace_info "$t")"
      if [ -z "${al:-}" ] || [ "${al:-0}" -eq 0 ]; then
        echo "trace_bench: $prog $args at $r: no allocation in the trace" >&2
        continue
      fi
      awk -v p="$prog" -v a="$args" -v r="$r" -v al="$al" -v ev="$ev" -v sm="$sm" -v b="$b" -v h="$h" -v inf="$inf" \
          -v l="$l" -v bt="$bt" -v e="$e" -v av="$av" -v mx="$mx" -v nw="$nw" 'BEGIN {
        printf "memtrace,%s,%s,%s,,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,,,,%s,%s,%s\n", p, a, r, al, sm, ev, b,
          b / al, h / al, inf / al, l / al, bt / al, e / al, av, mx, nw }' >>"$sizes"
      # perf's frequency for about as many samples: allocations per CPU second,
      # within [1, cap] and the kernel's current maximum.
      cap=$(perf_max_freq)
      [ "$perf_cap" -lt "$cap" ] && cap=$perf_cap
      awk -v n="$al" -v t="$cpu_off" -v cap="$cap" -v ci="$ci" -v r="$r" 'BEGIN {
        f = t > 0 ? int(n / t + 0.5) : cap; if (f < 1) f = 1; if (f > cap) f = cap; print ci, r, f }' >>"$tmp/freqs"
      printf ' %s %d samples %.1f B' "$r" "$al" "$(awk -v b="$b" -v n="$al" 'BEGIN { print b / n }')"
    done
    echo
  done <<<"$cases"
  freq_of() { awk -v ci="$1" -v r="$2" '$1 == ci && $2 == r { print $3 }' "$tmp/freqs"; }
}

# =====================================================================================
# 2. callgrind: instructions with --memtrace against the profiler off
# =====================================================================================
step_callgrind() {
  # Inclusive Ir of the functions named on stdin ("name" a line) in a profile:
  # "name Ir" lines (0 when absent).
  inclusive() {
    local prof=$1
    callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$prof" 2>/dev/null |
      sed -n -E 's/^ *([0-9,]+) \( *[0-9.]+%\)  [^ ]*:([A-Za-z_0-9.]+) \[[^]]*\]$/\2 \1/p' | tr -d , >"$prof.incl"
    while read -r f; do
      awk -v f="$f" '$1 == f { v = $2 } END { print f, v + 0 }' "$prof.incl"
    done
  }
  # Self Ir per function: "function Ir", sorted by function.
  self_ir() {
    callgrind_annotate --auto=no --threshold=100 "$1" 2>/dev/null |
      sed -n -E 's/ \[[^]]*\]$//; s/^ *([0-9,]+) \( *[0-9.]+%\)  (.*)$/\2|\1/p' | grep -v '^PROGRAM TOTALS' |
      awk -F'|' '{ gsub(",", "", $2); print $1 "|" $2 }' | LC_ALL=C sort -t'|' -k1,1
  }
  if [ "$use_cg" = yes ]; then
    note "2/4 callgrind: $(echo "$cg_cases" | wc -l) programs, profiler off and --memtrace at $rates"
    echo "program,args,rate,ir_off,ir_traced,extra_pct,floor_pct,floor,allocs,events,extra_ir_per_sample,writer_ir_per_sample,tracker_ir_per_sample,engine_ir_per_sample,ir_per_event_writer,new_callers_per_sample,extra_ir_per_new_caller,ir_trace_fixed,ir_per_sample_fixed_apart" >"$cgcsv"
    {
      echo "trace_callgrind_top.txt: per program and rate, the functions whose own instructions (Ir)"
      echo "grow most with --memtrace (traced - profiler off), from callgrind_annotate; written by"
      echo "bench/trace_bench.sh on $(date -u '+%Y-%m-%d')."
    } >"$cgtop"
    printf '  %-26s %-6s %13s %13s %8s %7s %9s %9s %9s %9s %9s\n' case rate "Ir off" "Ir traced" "extra%" floor \
      "Ir/smp" writer tracker engine "w/o fixed"
    while read -r prog args; do
      cg() { # cg NAME ARGS...: total Ir of ./vm ARGS... under callgrind
        local name=$1
        shift
        # shellcheck disable=SC2086
        if ! valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$name" "$bin_vm" "$@" "bench/programs/$prog.mn" $args \
            >"$tmp/cg.$name.out" 2>"$tmp/cg.$name.log" </dev/null; then
          echo "trace_bench: $prog $args $* failed under callgrind" >&2
          failed=1
          return
        fi
        awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.$name"
      }
      off=$(cg off)
      ref=$(checksum_of "$tmp/cg.off.out")
      # A trace that takes no sample (rate 1e-12): what a trace costs
      # whatever its samples (start, trace info, symbol binding, finish).
      # Its extra over the profiler off is taken apart from the samples'.
      fixed=$(cg fixed --memtrace "$tmp/cg.ctf" --memtrace-no-end-state --memtrace-rate 1e-12)
      read -r fixed_al _ <<<"$(trace_info "$tmp/cg.ctf")"
      [ "${fixed_al:-1}" = 0 ] || { echo "trace_bench: $prog $args sampled at 1e-12" >&2; failed=1; }
      self_ir "$tmp/cg.off" >"$tmp/cg.off.self"
      for r in $rates; do
        on=$(cg "$r" --memtrace "$tmp/cg.ctf" --memtrace-no-end-state --memtrace-rate "$r")
        [ "$(checksum_of "$tmp/cg.$r.out")" = "$ref" ] || { echo "trace_bench: $prog $args: checksum differs at $r (callgrind)" >&2; failed=1; }
        if [ -z "$off" ] || [ -z "$on" ]; then continue; fi
        read -r al ev _ <<<"$(trace_info "$tmp/cg.ctf")"
        # Writer: trace_writer_* (encoding, flushes, write(2) calls); tracker: the
        # memtrace.c callbacks around them (callstack copy, clock reads); engine:
        # the rest of the extra (sampling, callstack capture, tracking, delivery).
        printf '%s\n' trace_writer_alloc trace_writer_alloc_common trace_writer_alloc_runs trace_writer_promote \
          trace_writer_collect on_alloc on_promote on_dealloc >"$tmp/fns"
        inclusive "$tmp/cg.$r" <"$tmp/fns" >"$tmp/incl"
        # The counting tracker at the same rate and (default) seed takes the
        # same samples: its "new callers per sample" are the frames walked.
        # shellcheck disable=SC2086
        nc=$("$bin_vm" --memprof-count "$r" "bench/programs/$prog.mn" $args 2>&1 >/dev/null |
          sed -n 's/.* \([0-9.]*\) new callers per sample.*/\1/p' | tail -n 1)
        row=$(awk -v p="$prog" -v a="$args" -v r="$r" -v off="$off" -v on="$on" -v al="${al:-0}" -v ev="${ev:-0}" -v nc="${nc:-0}" -v fixed="${fixed:-$off}" '
          { v[$1] = $2 }
          END {
            w = v["trace_writer_alloc"] + v["trace_writer_alloc_common"] + v["trace_writer_alloc_runs"] \
              + v["trace_writer_promote"] + v["trace_writer_collect"]
            t = v["on_alloc"] + v["on_promote"] + v["on_dealloc"] - w
            x = on - off; pct = 100 * x / off
            fl = (r + 0 == 1e-5) ? 1 : (r + 0 == 1e-4) ? 3 : ""
            ok = fl == "" ? "" : (pct <= fl ? "ok" : "OVER")
            n = al > 0 ? al : 1
            printf "%s,%s,%s,%d,%d,%.3f,%s,%s,%d,%d,%.0f,%.0f,%.0f,%.0f,%.0f,%.1f,%.2f,%d,%.0f\n", p, a, r, off, on, pct, fl, ok, al, ev,
              x / n, w / n, t / n, (x - w - t) / n, (ev > 0 ? w / ev : 0), nc, (nc > 0 ? x / n / nc : 0),
              fixed - off, (on - fixed) / n }' "$tmp/incl")
        echo "$row" >>"$cgcsv"
        echo "$row" | awk -F, '{ printf "  %-26s %-6s %13s %13s %8s %7s %9s %9s %9s %9s %9s\n", $1 " " $2, $3, $4, $5, $6, $8, $11, $12, $13, $14, $19 }'
        { echo; echo "== $prog $args at $r: off $off Ir, traced $on Ir, $al allocations, $ev events"
          self_ir "$tmp/cg.$r" >"$tmp/cg.on.self"
          LC_ALL=C join -t'|' -a1 -a2 -e0 -o 0,1.2,2.2 "$tmp/cg.on.self" "$tmp/cg.off.self" |
            awk -F'|' '{ d = $2 - $3; if (d > 0) printf "%12d  %s\n", d, $1 }' | sort -rn | head -n 10; } >>"$cgtop"
      done
    done <<<"$cg_cases"
  fi
}

# =====================================================================================
# 3. times: every configuration once per round, in rotating order
# =====================================================================================
step_times() {
  configs="off"
  [ "$use_perf" = yes ] && [[ " $perf_modes " == *" fp "* ]] && configs="$configs fpbuild"
  for r in $rates; do configs="$configs memtrace@$r"; done
  for m in $perf_modes; do for r in $perf_rates; do configs="$configs perf-$m@$r"; done; done
  read -r -a cfg_list <<<"$configs"
  ncfg=${#cfg_list[@]}
  note "3/4 times: $(echo "$cases" | wc -l) programs x $ncfg configurations x $runs rounds"
  raw=$tmp/raw # case config round real cpu perf_cpu samples status
  : >"$raw"
  perfrows=$tmp/perfrows # sizes rows of perf, from round 1
  : >"$perfrows"
  echo "method,program,args,rate,freq_hz,samples,minnow_line,alloc,collector,dispatch,primitives,startup,libc,kernel,other,mean_frames,max_frames,top_innermost" >"$names"
  ci=0
  while read -r prog args; do
    ci=$((ci + 1))
    ref=$(cat "$tmp/ref.$ci")
    printf '  %-26s' "$prog $args"
    for run in $(seq 1 "$runs"); do
      rot=$(((run - 1) % ncfg))
      for cfg in "${cfg_list[@]:rot}" "${cfg_list[@]:0:rot}"; do
        p=$tmp/run
        rate=${cfg#*@}
        data=""
        outer_cpu=""
        samples=""
        case $cfg in
          off)
            # shellcheck disable=SC2086
            "${timer[@]}" "$p" timeout "$run_timeout" "$bin_vm" "bench/programs/$prog.mn" $args ;;
          fpbuild)
            # shellcheck disable=SC2086
            "${timer[@]}" "$p" timeout "$run_timeout" "$tmp/bin/vm-fp" "bench/programs/$prog.mn" $args ;;
          memtrace@*)
            # shellcheck disable=SC2086
            "${timer[@]}" "$p" timeout "$run_timeout" "$bin_vm" --memtrace "$tmp/run.ctf" --memtrace-no-end-state --memtrace-rate "$rate" \
              "bench/programs/$prog.mn" $args ;;
          perf-*)
            mode=${cfg%@*}
            mode=${mode#perf-}
            bin=$bin_vm
            [ "$mode" = fp ] && bin=$tmp/bin/vm-fp
            freq=$(freq_of "$ci" "$rate")
            [ -n "$freq" ] || continue   # no traced run at this rate to match
            data=$tmp/perf/run.data
            # The whole perf record (perf's own CPU included) in $p.outer.
            # shellcheck disable=SC2086
            { TIMEFORMAT='%3R %3U %3S'; time perf_record "$mode" "$freq" "$data" -- "${timer[@]}" "$p" \
                timeout "$run_timeout" "$bin" "bench/programs/$prog.mn" $args; } 2>"$p.outer" ;;
        esac
        status=$?
        sum=$(checksum_of "$p.out")
        if [ "$status" -ne 0 ] || [ "$sum" != "$ref" ]; then
          failed=1
          printf '\n  %s round %d FAILED (exit %d, checksum "%s", want "%s")\n' "$cfg" "$run" "$status" "$sum" "$ref"
          sed 's/^/    /' "$p.err" | head -n 5
          [ -n "$data" ] && [ -f "$data.log" ] && sed 's/^/    perf: /' "$data.log" | head -n 3
          printf '  %-26s' ""
          echo "$ci $cfg $run 0 0 0 0 $status" >>"$raw"
          continue
        fi
        read -r real user sys <"$p.time"
        cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')
        if [[ $cfg == perf-* ]]; then
          outer_cpu=$(awk -v c="$cpu" '{ printf "%.3f", $2 + $3 - c }' "$p.outer")
          samples=$(perf_logged_samples "$data")
          if [ "$run" -eq 1 ]; then
            read -r fb db sb ns lost <<<"$(perf_sizes "$data")"
            awk -v m="perf-$mode" -v p="$prog" -v a="$args" -v r="$rate" -v f="$freq" -v n="$ns" -v fb="$fb" -v db="$db" \
                -v sb="$sb" -v lost="$lost" 'BEGIN { if (n == 0) exit
              printf "%s,%s,%s,%s,%s,%d,,,%d,%.2f,,,,,,%.2f,%.2f,%d,,,\n", m, p, a, r, f, n, fb, fb / n, db / n, sb / n, lost }' >>"$perfrows"
            if [ "$rate" = "$names_rate" ]; then
              echo "perf-$mode,$prog,$args,$rate,$freq,$(perf_names "$data" "$bin" "$root")" >>"$names"
            fi
          fi
          rm -f "$data"
        fi
        echo "$ci $cfg $run $real $cpu ${outer_cpu:-0} ${samples:-0} 0" >>"$raw"
        printf '.'
      done
    done
    echo
  done <<<"$cases"
  cat "$perfrows" >>"$sizes"

  # trace_times.csv: per program and configuration, medians over the rounds and
  # the median of the per-round ratios to the profiler-off run of that round.
  echo "program,args,config,rate,freq_hz,rounds,median_cpu_s,median_wall_s,cpu_ratio,wall_ratio,perf_process_cpu_s,samples,cpu_ratio_min,cpu_ratio_max" >"$times"
  ci=0
  while read -r prog args; do
    ci=$((ci + 1))
    for cfg in "${cfg_list[@]}"; do
      rate=""; freq=""
      case $cfg in *@*) rate=${cfg#*@} ;; esac
      [[ $cfg == perf-* ]] && freq=$(freq_of "$ci" "$rate")
      awk -v ci="$ci" -v cfg="$cfg" -v p="$prog" -v a="$args" -v rate="$rate" -v freq="$freq" '
        function med(v, n,   i, j, t) { for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
          return n == 0 ? "" : (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) }
        $1 == ci && $2 == "off" && $8 == 0 { offr[$3] = $4; offc[$3] = $5 }
        $1 == ci && $2 == cfg && $8 == 0 { n++; rr[n] = $4; cc[n] = $5; pc[n] = $6; sm[n] = $7; round[n] = $3 }
        END {
          if (!n) exit
          for (i = 1; i <= n; i++) if (round[i] in offc && offc[round[i]] > 0 && offr[round[i]] > 0) {
            k++; qc[k] = cc[i] / offc[round[i]]; qr[k] = rr[i] / offr[round[i]] }
          mc = med(cc, n); mr = med(rr, n); mp = med(pc, n); ms = med(sm, n)
        if (k) { rc = med(qc, k); rw = med(qr, k) }   # med sorts: qc[1] and qc[k] are the extremes
          printf "%s,%s,%s,%s,%s,%d,%.3f,%.3f,%s,%s,%s,%s,%s,%s\n", p, a, cfg ~ /@/ ? substr(cfg, 1, index(cfg, "@") - 1) : cfg,
            rate, freq, n, mc, mr, k ? sprintf("%.4f", rc) : "", k ? sprintf("%.4f", rw) : "",
            cfg ~ /^perf/ ? sprintf("%.3f", mp) : "", cfg ~ /^perf/ ? ms : "",
            k ? sprintf("%.4f", qc[1]) : "", k ? sprintf("%.4f", qc[k]) : "" }' "$raw"
    done
  done <<<"$cases" >>"$times"
}

# =====================================================================================
# 4. reader: decoding speed, and what memtrace's samples name
# =====================================================================================
step_reader() {
  note "4/4 reader: $reader on the traces of step 1 ($read_reps passes each), $sites"
  echo "program,args,rate,bytes,events,allocs,frames,new_frames,median_s,min_s,events_per_s,mb_per_s,best_events_per_s,best_mb_per_s,innermost_site_share" >"$readcsv"
  ci=0
  while read -r prog args; do
    ci=$((ci + 1))
    for r in $rates; do
      t=$tmp/traces/$ci.$r.ctf
      [ -f "$t" ] || continue
      # reader_bench: a line "events bytes frames wall_s cpu_s" per pass;
      # trace_sites: "file,allocs,new_frames,sites".
      if ! "$reader" --repeat "$read_reps" "$t" >"$tmp/read.runs" 2>"$tmp/read.err" ||
          ! "$sites" "$t" >"$tmp/sites.csv" 2>>"$tmp/read.err"; then
        echo "trace_bench: reading $prog $args at $r failed: $(head -n 1 "$tmp/read.err")" >&2
        failed=1
        continue
      fi
      IFS=, read -r _ allocs new_frames n_sites <"$tmp/sites.csv"
      # Times: the process's CPU time of each pass (the machine is shared:
      # wall time counts the waits too); median and fastest pass.
      awk -v p="$prog" -v a="$args" -v r="$r" -v al="$allocs" -v nf="$new_frames" -v ns="$n_sites" '
        { ev = $1; b = $2; fr = $3; t[NR] = $5 }
        END {
          n = NR; for (i = 2; i <= n; i++) { x = t[i]; for (j = i - 1; j >= 1 && t[j] > x; j--) t[j + 1] = t[j]; t[j + 1] = x }
          m = (n % 2) ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
          printf "%s,%s,%s,%d,%d,%d,%d,%d,%.6f,%.6f,%.0f,%.1f,%.0f,%.1f,%.4f\n", p, a, r, b, ev, al, fr, nf, m, t[1],
            ev / m, b / m / 1e6, ev / t[1], b / t[1] / 1e6, (al > 0 ? ns / al : 0) }' "$tmp/read.runs" >>"$readcsv"
    done
  done <<<"$cases"
  # memtrace's rows of trace_names.csv: by construction its innermost frame is
  # the allocating Minnow expression (checked above on every allocation).
  awk -F, 'FILENAME == ARGV[1] { if (FNR > 1) share[$1 "," $2 "," $3] = $15; next }
    $1 == "memtrace" { k = $2 "," $3 "," $4
      printf "memtrace,%s,%s,%s,,%s,%s,1,,,,,,,,%s,%s,allocation site (%.1f%%)\n", $2, $3, $4, $6, share[k], $19, $20, 100 * share[k] }' \
    "$readcsv" "$sizes" >>"$names"
}

# =====================================================================================
# Summary: the table, the chart
# =====================================================================================
write_summary() {
  # trace.dat for bench/trace.gp: "row program_index rate_index bytes_per_sample
  # method program rate", row 1 memtrace, 2 perf-none, 3 perf-fp, 4 perf-dwarf.
  awk -F, -v rates="$rates" -v cases="$(echo "$cases" | cut -d' ' -f1 | tr '\n' ' ')" '
    BEGIN { nr = split(rates, r, " "); for (i = 1; i <= nr; i++) ri[r[i]] = i
            np = split(cases, c, " "); for (i = 1; i <= np; i++) if (!(c[i] in pi)) pi[c[i]] = i }
    NR > 1 { row = $1 == "memtrace" ? 1 : $1 == "perf-none" ? 2 : $1 == "perf-fp" ? 3 : $1 == "perf-dwarf" ? 4 : 0
      if (row && ($2 in pi) && ($4 in ri)) print row, pi[$2], ri[$4], $10, $1, $2, $4 }' "$sizes" >"$out/trace.dat"
  if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "datafile='$out/trace.dat'; outfile='$out/trace.png'; programs='$(echo "$cases" | cut -d' ' -f1 | tr '\n' ' ')'; rates='$rates'" "$here/trace.gp" 2>"$tmp/gp.err" ||
      { echo "trace_bench: warning: gnuplot failed, no $out/trace.png" >&2; cat "$tmp/gp.err" >&2; }
  else
    echo "trace_bench: warning: gnuplot not found (apt-get install gnuplot-nox), no $out/trace.png" >&2
  fi
}

# BENCH_TRACE_STEPS=callgrind: step 2 alone (its CSVs rewritten, the others kept).
if [ "$steps" = callgrind ]; then
  step_callgrind
else
  step_sizes
  step_callgrind
  step_times
  step_reader
  write_summary
fi

echo
bash "$here/trace_table.sh" "$out"
echo
if [ "$steps" = callgrind ]; then
  note "wrote $cgcsv, $cgtop"
else
  note "wrote $sizes, $times, $names, $readcsv$([ "$use_cg" = yes ] && echo ", $cgcsv, $cgtop")$([ -f "$out/trace.png" ] && echo ", $out/trace.png")"
fi
note "load average at the end $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
if [ "$failed" -ne 0 ]; then
  echo "trace_bench: some runs failed or printed another checksum (see above)" >&2
  exit 1
fi
exit 0
