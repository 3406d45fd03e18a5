#!/usr/bin/env bash
# trace_differential.sh - every command of tools/memtrace agrees about one
# trace (issue 23). For each trace written by tests/fuzz/trace_gen.c
# (tests/fuzz/reader/corpus/gen-*.ctf: well-formed bases and their
# structure-aware mutants), on the release build and on the ASan+UBSan build:
#   1. `dump`, `info`, `top --json`, `lifetimes`, `leaks` and `flamegraph`
#      each end with status 0 (a whole trace) or 1 (damage), never a crash,
#      a sanitizer report or a hang (20 s each), and all with the same one;
#      leaks' status on a whole trace is its verdict (0 no leak, 3 leaks,
#      4 cannot judge: these traces have no snapshots), so it agrees when it
#      gives one of those where the others give 0, and on a trace cut short
#      (as a killed run leaves it) it judges and says the cut on stderr
#      where the others refuse;
#   2. when they refuse (status 1), each names the file and the same byte
#      offset ("memtrace CMD: FILE: byte N: ...");
#   3. they count the same events before the damage (none, and print
#      nothing, when the trace-info packet is damaged): allocations, promotions
#      and collections (dump's lines, info's counts, top's "events" and
#      "sampled_blocks"), samples (dump's sum, top's, lifetimes' and leaks'
#      headers) and bytes (flamegraph's folded stacks add up to top's total);
#   4. both builds print the same dump;
#   5. (issue 32) for each snapshot file the generator wrote (gen-snap-*.retain,
#      read with its trace gen-snap-NAME.ctf), `leaks`, `paths --by holder`
#      and `top --live --by holder` refuse it together at one byte, or agree
#      on every holder's blocks, samples and bytes (part 5 below).
# Command lines stay plain (CMD FILE, --json on top only).
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init trace_differential
require_built tools/memtrace build/asan/memtrace

export ASAN_OPTIONS=exitcode=86:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:exitcode=87:print_stacktrace=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
commands=(dump info top lifetimes leaks flamegraph)

# run BIN CMD FILE: stdout in $tmp/CMD.out, stderr in $tmp/CMD.err, status in rc[CMD].
declare -A rc
run() {
  local args=("$2")
  [ "$2" = top ] && args+=(--json)
  timeout 20 "$1" "${args[@]}" "$3" > "$tmp/$2.out" 2> "$tmp/$2.err"
  rc[$2]=$?
  # leaks' verdicts on a whole trace: 3 (leaks) and 4 (cannot judge) read as 0
  if [ "$2" = leaks ]; then
    verdict=${rc[$2]}
    { [ "$verdict" = 3 ] || [ "$verdict" = 4 ]; } && rc[$2]=0
  fi
}

# The byte offset a refusal names, or "-" if none.
offset_of() { sed -n "s|^memtrace $1: $2: byte \([0-9]*\): .*|\1|p" "$tmp/$1.err" | head -1; }

files=(tests/fuzz/reader/corpus/gen-*.ctf)
[ -f "${files[0]}" ] || suite_abort "no generated traces in tests/fuzz/reader/corpus (make fuzz-reader-seeds)"
for bin in tools/memtrace build/asan/memtrace; do
  for f in "${files[@]}"; do
    name="$bin $(basename "$f")"
    for c in "${commands[@]}"; do run "$bin" "$c" "$f"; done
    # 1. statuses. A trace cut short (a killed run's) is judged by leaks, the
    # cut said on stderr: its verdict there counts as the others' refusal.
    if [ "${rc[dump]}" = 1 ] && [ "${rc[leaks]}" = 0 ] && grep -q ": the trace is truncated: " "$tmp/dump.err"; then
      rc[leaks]=1
      [ "$verdict" = 4 ] || bad "$name: leaks gave verdict $verdict on a cut trace without snapshots (cannot judge is 4)"
    fi
    status=${rc[dump]} same=yes
    for c in "${commands[@]}"; do
      [ "${rc[$c]}" = "$status" ] || same=no
      if [ "${rc[$c]}" != 0 ] && [ "${rc[$c]}" != 1 ]; then
        bad "$name: $c ended with status ${rc[$c]}: $(head -c 300 "$tmp/$c.err")"
        same=crash
      fi
      if grep -q -E 'Sanitizer|runtime error:' "$tmp/$c.err"; then
        bad "$name: $c: sanitizer report: $(grep -m1 -E 'Sanitizer|runtime error:' "$tmp/$c.err")"
        same=crash
      fi
    done
    [ "$same" = crash ] && continue
    # no snapshot beside a generated trace: on a whole one leaks cannot judge
    # (gen-snap-*.ctf have theirs: part 5 checks what leaks makes of them)
    if [ "$status" = 0 ] && [ "$same" = yes ] && [ "$verdict" != 4 ] && [ ! -f "$f.retain" ]; then
      bad "$name: leaks gave verdict $verdict on a trace without snapshots (cannot judge is 4)"
      continue
    fi
    if [ "$same" = no ]; then
      bad "$name: statuses differ: $(for c in "${commands[@]}"; do printf '%s=%s ' "$c" "${rc[$c]}"; done)"
      continue
    fi
    ok
    # 2. one offset
    if [ "$status" = 1 ]; then
      at=$(offset_of dump "$f")
      if [ -z "$at" ]; then
        bad "$name: dump refuses without naming the file and a byte offset: $(head -c 300 "$tmp/dump.err")"
      else
        differ=
        for c in "${commands[@]}"; do [ "$(offset_of "$c" "$f")" = "$at" ] || differ+=" $c"; done
        check "$name: commands name another offset than dump's byte $at:$differ" '[ -z "$differ" ]'
      fi
    fi
    # 3. counts; a trace refused when opened (its first packet damaged)
    # has none: then no command prints anything
    if [ "$status" = 1 ] && [ ! -s "$tmp/info.out" ]; then
      printed=
      for c in "${commands[@]}"; do [ -s "$tmp/$c.out" ] && printed+=" $c"; done
      check "$name: refused when opened by info, but printed by:$printed" '[ -z "$printed" ]'
      continue
    fi
    read -r allocs promotes collects samples < <(awk '
      $3 ~ /^alloc/ { a++; s += $4 } $3 == "promote" { p++ } $3 == "collect" { c++ }
      END { print a + 0, p + 0, c + 0, s + 0 }' "$tmp/dump.out")
    info=$(sed -n 's/^events *[0-9]*: \([0-9]*\) allocations, \([0-9]*\) promotions, \([0-9]*\) collections$/\1 \2 \3/p' "$tmp/info.out")
    check "$name: info counts '$info', dump $allocs $promotes $collects" '[ "$info" = "$allocs $promotes $collects" ]'
    top_events=$(grep -o '"trace":{[^}]*}' "$tmp/top.out" | grep -o '"events":[0-9]*' | cut -d: -f2)
    top_samples=$(grep -o '"trace":{[^}]*}' "$tmp/top.out" | grep -o '"samples":[0-9]*' | cut -d: -f2)
    top_blocks=$(grep -o '"total":{"bytes":[^}]*}[^}]*}' "$tmp/top.out" | grep -o '"sampled_blocks":[0-9]*' | cut -d: -f2)
    top_bytes=$(grep -o '"total":{"bytes":[0-9.e+]*' "$tmp/top.out" | cut -d: -f3)
    check "$name: top events=$top_events samples=$top_samples blocks=$top_blocks, dump $((allocs + promotes + collects)) $samples $allocs" \
      '[ "$top_events" = $((allocs + promotes + collects)) ] && [ "$top_samples" = "$samples" ] && [ "$top_blocks" = "$allocs" ]'
    for c in lifetimes leaks; do
      n=$(sed -n "1s|^$f: \([0-9]*\) samples at rate.*|\1|p" "$tmp/$c.out")
      check "$name: $c counts ${n:-no} samples, dump $samples" '[ "$n" = "$samples" ]'
    done
    flame=$(awk '{ s += $NF; n++ } END { printf "%.0f %d\n", s, n }' "$tmp/flamegraph.out")
    check "$name: flamegraph's stacks add up to ${flame% *} bytes, top's total is ${top_bytes:-missing}" \
      'awk -v a="${flame% *}" -v b="$top_bytes" -v n="${flame#* }" "BEGIN { d = a - b; exit !(b != \"\" && d <= n + 1 && -d <= n + 1) }"'
    # 4. the same dump on both builds
    if [ "$bin" = tools/memtrace ]; then
      cp "$tmp/dump.out" "$tmp/$(basename "$f").release"
    else
      check "$name: the ASan build's dump differs from the release build's" 'cmp -s "$tmp/dump.out" "$tmp/$(basename "$f").release"'
    fi
  done
done

# 5. Holders (issue 32). For each snapshot file the generator wrote
# (gen-NAME.ctf.retain beside its trace, and its copies gen-NAME.WHAT.retain,
# read with the trace through --retain), on both builds: `leaks`, `paths --by
# holder` and `top --live --by holder` end with a documented status (leaks
# 0, 3, 4 or 1; the others 0 or 1), no sanitizer report; they refuse the
# file together or read it together; when they refuse, each names the file
# and the same byte ("FILE: damaged snapshot file at byte N"), the byte the
# copy's name gives (bad-WHAT-at-N) if it gives one; a copy named bad-* is
# refused, cut-* (a file cut short: a growing file or a killed run's) and
# the whole file never are; when they read it, tests/tools/holders_agree.py:
# every holder of the snapshot they show with the same sampled blocks,
# samples and bytes in all three, and the same snapshot named.
offset_retain() { sed -n "s|^memtrace $1: $2: damaged snapshot file at byte \([0-9]*\): .*|\1|p" "$tmp/h-$1.err" | head -1; }
retains=(tests/fuzz/reader/corpus/gen-snap-*.retain)
if ! command -v python3 > /dev/null; then
  skip "holders: python3 missing: the commands' JSON not compared"
elif [ ! -f "${retains[0]}" ]; then
  bad "no gen-snap-*.retain in tests/fuzz/reader/corpus (make fuzz-reader-seeds)"
else
  declare -A hargs=([leaks]="leaks --all -n 0 --json" [paths]="paths --by holder --json"
                    [top]="top --live --by holder -n 0 --json")
  for bin in tools/memtrace build/asan/memtrace; do
    for r in "${retains[@]}"; do
      b=$(basename "$r")
      t=tests/fuzz/reader/corpus/${b%%.*}.ctf
      what=${b#*.}
      what=${what%.retain}
      name="$bin $b"
      refused=() crashed=
      for c in leaks paths top; do
        # shellcheck disable=SC2086
        timeout 20 "$bin" ${hargs[$c]} --retain "$r" "$t" > "$tmp/h-$c.out" 2> "$tmp/h-$c.err"
        st=$?
        case "$c:$st" in
          leaks:0 | leaks:3 | leaks:4 | paths:0 | top:0) ;;
          *:1) refused+=("$c") ;;
          *) bad "$name: $c ended with status $st: $(head -c 300 "$tmp/h-$c.err")"; crashed=yes ;;
        esac
        if grep -q -E 'Sanitizer|runtime error:' "$tmp/h-$c.err"; then
          bad "$name: $c: sanitizer report: $(grep -m1 -E 'Sanitizer|runtime error:' "$tmp/h-$c.err")"
          crashed=yes
        fi
      done
      [ -n "$crashed" ] && continue
      if [ "${#refused[@]}" = 3 ]; then
        at=$(offset_retain leaks "$r")
        want=${what##*-at-}
        [ "$want" = "$what" ] && want=$at
        differ=
        for c in leaks paths top; do [ -n "$at" ] && [ "$(offset_retain "$c" "$r")" = "$want" ] || differ+=" $c"; done
        check "$name: refused, but not all at byte ${want:-?} (leaks names ${at:-none}):$differ $(head -c 300 "$tmp/h-leaks.err")" \
          '[ -z "$differ" ]'
        case $what in cut-* | ctf) bad "$name: a file cut short or whole, refused: $(head -c 300 "$tmp/h-leaks.err")" ;; esac
      elif [ "${#refused[@]}" = 0 ]; then
        case $what in bad-*) bad "$name: damage read as a whole file" ;; esac
        agree=$(python3 tests/tools/holders_agree.py "$tmp/h-leaks.out" "$tmp/h-paths.out" "$tmp/h-top.out")
        agreed=$?
        check "$name: holders differ (holders_agree.py status $agreed): $agree" '[ "$agreed" = 0 ]'
      else
        bad "$name: refused by ${refused[*]} only: $(cat "$tmp"/h-*.err | head -c 400)"
      fi
    done
  done
fi
suite_end
