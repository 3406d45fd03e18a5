#!/usr/bin/env bash
# bench_peers.sh - the twins of the bench programs, and the bench-peers machinery:
#   1. every program of bench/programs (and of bench/calls), at a small size, prints exactly ./vm's output
#      when run as its idiomatic Lua twin, its identical-work Lua twin (bench/lua), its
#      OCaml twin under ocamlrun and ocamlopt, and the OCaml twin under Gc.Memprof
#      (BENCH_MEMPROF_COUNT, which must also print a memprof line with samples);
#   2. build/bench/runstat reports exit statuses, time-outs and repetitions;
#   3. bench/peers_bench.sh, once at small sizes into a temporary directory, writes a
#      row for every case and implementation, and exits 1 when a twin's checksum differs.
# Missing lua5.4 or OCaml: those checks are reported as not run and not counted.
# Run by tests/run_all.sh, which reads the last line: "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2

. tests/suites/lib.sh
suite_init bench_peers
# check_eq GOT WANT LABEL
check_eq() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', expected '$2'"; fi; }

require_built ./vm
have_lua=0
command -v lua5.4 >/dev/null 2>&1 && have_lua=1
have_ocaml=0
command -v ocamlopt >/dev/null 2>&1 && command -v ocamlc >/dev/null 2>&1 && command -v ocamlrun >/dev/null 2>&1 && have_ocaml=1
[ "$have_lua" = 1 ] || skip "lua5.4 not found: the Lua twins are not checked (not counted)"
[ "$have_ocaml" = 1 ] || skip "ocamlopt, ocamlc or ocamlrun not found: the OCaml twins are not checked (not counted)"

targets=build/bench/runstat
[ "$have_ocaml" = 1 ] && targets="$targets ocaml-twins calls-twins"
# shellcheck disable=SC2086
if ! MAKEFLAGS= make -s --no-print-directory $targets >/tmp/bench_peers_make.$$ 2>&1; then
  cat /tmp/bench_peers_make.$$
  rm -f /tmp/bench_peers_make.$$
  suite_abort "make $targets failed"
fi
rm -f /tmp/bench_peers_make.$$
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# ----------------------------------------------------------------- 1. the twins
quick_args() {
  case $1 in
    binary_trees) echo 10 ;; list_pipeline | deep_map) echo 1000 20 ;;
    word_count) echo 20000 ;; string_build) echo 2000 5 ;; *) echo "" ;;
  esac
}
idiomatic_lua() { echo "bench/lua/idiomatic/$1.lua"; }

# same_output LABEL REF command...: the command's stdout must be REF's content, exactly.
same_output() {
  local label=$1 ref=$2
  shift 2
  if "$@" >"$tmp/out" 2>"$tmp/err" </dev/null && cmp -s "$ref" "$tmp/out"; then ok; else
    bad "$label: output differs from ./vm's (or it failed): $*"
    diff "$ref" "$tmp/out" | head -n 4
    head -n 3 "$tmp/err"
  fi
}

for src in bench/programs/*.mn; do
  prog=$(basename "$src" .mn)
  args=$(quick_args "$prog")
  [ -n "$args" ] || { bad "$prog: no small size in tests/suites/bench_peers.sh"; continue; }
  # shellcheck disable=SC2086 # word splitting of args is intended
  ./vm "$src" $args >"$tmp/ref" 2>/dev/null </dev/null || bad "$prog: ./vm failed"
  grep -q '^checksum: ' "$tmp/ref" || bad "$prog: ./vm printed no checksum line"
  [ -f "bench/ocaml/$prog.ml" ] || bad "$prog: no OCaml twin bench/ocaml/$prog.ml"
  [ -f "bench/lua/idiomatic/$prog.lua" ] || bad "$prog: no idiomatic Lua twin bench/lua/idiomatic/$prog.lua"
  if [ "$have_lua" = 1 ]; then
    # shellcheck disable=SC2086
    same_output "$prog (idiomatic Lua)" "$tmp/ref" lua5.4 "$(idiomatic_lua "$prog")" $args
    # shellcheck disable=SC2086
    same_output "$prog (identical-work Lua)" "$tmp/ref" lua5.4 "bench/lua/$prog.lua" $args
  fi
  [ "$have_ocaml" = 1 ] || continue
  # shellcheck disable=SC2086
  same_output "$prog (ocamlopt)" "$tmp/ref" "build/ocaml/$prog.native" $args
  # shellcheck disable=SC2086
  same_output "$prog (ocamlrun)" "$tmp/ref" ocamlrun "build/ocaml/$prog.byte" $args
  # shellcheck disable=SC2086
  same_output "$prog (ocamlopt under Gc.Memprof)" "$tmp/ref" env BENCH_MEMPROF_COUNT=1e-2 "build/ocaml/$prog.native" $args
  smp=$(sed -n 's/^memprof: rate 0.01: \([0-9]*\) samples in [0-9]* blocks.*frames per sample$/\1/p' "$tmp/err")
  [ "${smp:-0}" -gt 0 ] && ok || bad "$prog: the OCaml memprof twin printed no memprof line with samples: $(head -c 300 "$tmp/err")"
done
if [ "$have_ocaml" = 1 ]; then
  BENCH_MEMPROF_COUNT=2 build/ocaml/empty.native 2>"$tmp/err"
  check_eq "$?" 2 "memprof_count.ml: a rate above 1 is refused"
  grep -q 'is not a rate' "$tmp/err" && ok || bad "memprof_count.ml: no message for a bad rate"
fi

# The call micro-benchmarks (make bench-calls): the same for each of bench/calls.
for src in bench/calls/*.mn; do
  prog=$(basename "$src" .mn)
  case $prog in calls_fib) args=20 ;; *) args=1000 ;; esac
  ./vm "$src" $args >"$tmp/ref" 2>/dev/null </dev/null || bad "$prog: ./vm failed"
  grep -q '^checksum: ' "$tmp/ref" || bad "$prog: ./vm printed no checksum line"
  [ -f "bench/calls/$prog.ml" ] || bad "$prog: no OCaml twin bench/calls/$prog.ml"
  [ -f "bench/calls/$prog.lua" ] || bad "$prog: no Lua twin bench/calls/$prog.lua"
  [ "$have_lua" = 1 ] && same_output "$prog (Lua)" "$tmp/ref" lua5.4 "bench/calls/$prog.lua" $args
  [ "$have_ocaml" = 1 ] || continue
  same_output "$prog (ocamlopt)" "$tmp/ref" "build/calls/$prog.native" $args
  same_output "$prog (ocamlrun)" "$tmp/ref" ocamlrun "build/calls/$prog.byte" $args
done

# ----------------------------------------------------------------- 2. runstat
rs=build/bench/runstat
$rs -o "$tmp/st" -- sh -c 'exit 3'
check_eq "$(cut -d' ' -f4 "$tmp/st")" 3 "runstat: exit status"
$rs -t 1 -o "$tmp/st" -- sleep 5
check_eq "$(cut -d' ' -f4 "$tmp/st")" 142 "runstat: a run out of time dies of SIGALRM"
awk '{ exit !($1 >= 0.9 && $1 < 3) }' "$tmp/st" && ok || bad "runstat: wall time of a 1 s time-out: $(cat "$tmp/st")"
$rs -n 4 -o "$tmp/st" -- sh -c "echo x >>$tmp/reps"
check_eq "$(wc -l <"$tmp/reps")/$(cut -d' ' -f4 "$tmp/st")" 4/0 "runstat -n 4: runs and status"
$rs -n 4 -o "$tmp/st" -- sh -c "echo y >>$tmp/reps2; exit 1"
check_eq "$(wc -l <"$tmp/reps2")/$(cut -d' ' -f4 "$tmp/st")" 1/1 "runstat -n 4: a failed run ends the series"
$rs -o "$tmp/st" -- ./no-such-command 2>/dev/null
check_eq "$(cut -d' ' -f4 "$tmp/st")" 127 "runstat: a command that cannot be executed"
$rs -n 0 -o "$tmp/st" -- true 2>/dev/null
check_eq "$?" 2 "runstat -n 0 is a usage error"
$rs -- true 2>/dev/null
check_eq "$?" 2 "runstat without -o is a usage error"
$rs -o "$tmp/st" -- ./vm bench/programs/binary_trees.mn 12 >/dev/null
awk '{ exit !($2 > 0.001 && $3 > 1000 && $4 == 0) }' "$tmp/st" && ok || bad "runstat: CPU time and max RSS of ./vm: $(cat "$tmp/st")"

# ----------------------------------------------------------------- 3. peers_bench.sh
impls=vm
[ "$have_lua" = 1 ] && impls="$impls lua"
[ "$have_ocaml" = 1 ] && impls="$impls ocamlrun ocamlopt"
cases="binary_trees 8;list_pipeline 100 3"
env BENCH_PEERS_RUNS=2 BENCH_PEERS_STARTUP_RUNS=1 BENCH_PEERS_STARTUP_REPS=2 BENCH_PEERS_SMALL="binary_trees 6" \
  BENCH_PEERS_SMALL_REPS=2 BENCH_PEERS_MP_RUNS=1 BENCH_PEERS_MP_RATES=1e-2 BENCH_PEERS_MP_CASES="deep_map 100 3" \
  BENCH_PEERS_IMPLS="$impls" BENCH_PEERS_MP_IMPLS="$([ "$have_ocaml" = 1 ] && echo "vm ocamlopt" || echo vm)" \
  BENCH_PEERS_CASES="$cases" BENCH_PEERS_OUT="$tmp/res" bash bench/peers_bench.sh >"$tmp/log" 2>&1
check_eq "$?" 0 "peers_bench.sh at small sizes: exit status"
nimpls=$(echo $impls | wc -w)
# 2 cases + the empty program + the small program, each on every implementation.
check_eq "$(tail -n +2 "$tmp/res/peers.csv" | wc -l)" $((4 * nimpls)) "peers.csv rows"
check_eq "$(awk -F, 'NR > 1 && $5 == 2 && $1 == "programs"' "$tmp/res/peers.csv" | wc -l)" $((2 * nimpls)) "peers.csv: two runs a program row"
check_eq "$(awk -F, 'NR > 1 && $4 == "vm" && $12 == "1.000"' "$tmp/res/peers.csv" | wc -l)" 4 "peers.csv: vm over vm is 1"
mp_rows=$(tail -n +2 "$tmp/res/peers_memprof.csv" | wc -l)
check_eq "$mp_rows" $((2 * (1 + have_ocaml))) "peers_memprof.csv rows"
awk -F, 'NR > 1 && $4 == "1e-2" { exit !($13 > 0) }' "$tmp/res/peers_memprof.csv" && ok || bad "peers_memprof.csv: no samples at 1e-2"
if [ "$fail" -gt 0 ]; then tail -n 30 "$tmp/log"; fi
# Part 1 on other programs under another name, as make bench-calls runs it.
env BENCH_PEERS_RUNS=2 BENCH_PEERS_PARTS=programs BENCH_PEERS_IMPLS="$impls" BENCH_PEERS_CASES="calls_fib 12;calls_loop 100" \
  BENCH_PEERS_PROGRAMS=bench/calls BENCH_PEERS_LUA_TWINS=bench/calls BENCH_PEERS_OCAML_DIR=build/calls \
  BENCH_PEERS_NAME=calls BENCH_PEERS_OUT="$tmp/res3" bash bench/peers_bench.sh >"$tmp/log3" 2>&1
check_eq "$?" 0 "peers_bench.sh on bench/calls: exit status"
check_eq "$(tail -n +2 "$tmp/res3/calls.csv" 2>/dev/null | wc -l)" $((2 * nimpls)) "calls.csv rows"
[ -e "$tmp/res3/peers.csv" ] && bad "peers_bench.sh with BENCH_PEERS_NAME=calls wrote peers.csv" || ok
if [ "$have_lua" = 1 ]; then
  # A "Lua" that prints a wrong checksum must make the run fail and say so.
  printf '#!/bin/sh\necho "checksum: 1"\n' >"$tmp/badlua"
  chmod +x "$tmp/badlua"
  env BENCH_PEERS_RUNS=1 BENCH_PEERS_PARTS=programs BENCH_PEERS_IMPLS="vm lua" BENCH_PEERS_LUA="$tmp/badlua" \
    BENCH_PEERS_CASES="binary_trees 6" BENCH_PEERS_OUT="$tmp/res2" bash bench/peers_bench.sh >"$tmp/log2" 2>&1
  check_eq "$?" 1 "peers_bench.sh with a wrong checksum: exit status"
  grep -q 'CHECKSUM MISMATCH' "$tmp/log2" && ok || bad "peers_bench.sh did not report the mismatch"
fi

suite_end
