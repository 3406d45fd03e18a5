#!/usr/bin/env bash
# trace_tools.sh - the analysing commands of tools/memtrace (top, lifetimes,
# leaks, diff) on traces whose truth is known:
#   1. known mix (tests/tools/known_mix.mn: six sites of exactly known words
#      allocated, live at the end, promoted): at rate 1 every estimate equals
#      the truth; at rates 1e-3 and 1e-2 over seeds 1-20 every 95 % interval
#      holds the truth in at least 17 of the 20 seeds (a correct estimator
#      misses more than 3 of 20 with probability under 2 %; these seeds are
#      fixed, so the outcome is too) and in at least 95 % of all checks;
#      the ASan/UBSan build prints the same JSON;
#   2. lifetimes on the known mix: promoted shares, blocks dying young;
#   3. leaks (from the end state, tests/suites/trace_kept.sh has the rest):
#      examples/leaky_cache.mn names its cache's Hashtbl first, render's line
#      3 among its sites; leak_twin.mn names the global log's list first, its
#      cons (line 14) first and the entry (line 13) under it, its bounded twin
#      nothing; the examples and bench programs that do not leak name nothing
#      (rates 1e-3 and 1e-2), word_count neither: its table's words are the
#      text's strings, made before the counting (its cells, remade as counts
#      change, say when it last changed, not when its data came): "built
#      early";
#   4. diff: the same program under two seeds or two rates shows no
#      significant change; doubling one site's allocation shows that site,
#      first and significant, and no other;
#   5. memtrace's OCaml traces (tests/fixtures/memtrace): totals agree with
#      `info`, v2 and v3 twins diff to nothing, 10,000-frame stacks (folded
#      by default, whole with --whole-stacks); recursion folded on a
#      20,000-deep trace and on cycles of 6 and 10 frames (bounded
#      output), --whole-stacks byte for byte as
#      before the folding (tests/fixtures/memtrace/whole_stacks);
#   6. empty, one-event, truncated, damaged, missing traces and bad usage:
#      exit statuses, PARTIAL marks, messages naming the file and byte;
#   7. --json of every command against its schema (README.md);
#   8. top --follow on a trace being written: redraws, stops when the
#      writer exits, ends with the same table as top on the finished file.
# JSON checks need python3 (tests/tools/tools_check.py); without it they are
# reported as not run and not counted.
# Last line: "N passed, N failed". Exit status 0 iff none failed.
set -u
cd "$(dirname "$0")/../.." || exit 2

tool=tools/memtrace
asan_tool=build/asan/memtrace
synth=build/release/tests/trace_synth
check=tests/tools/tools_check.py
export MEMTRACE_PROGRESS=0
. tests/suites/lib.sh
suite_init trace_tools
require_built ./vm "$tool" "$asan_tool" "$synth"
have_python=true
if ! command -v python3 >/dev/null; then
  have_python=false
  skip "python3 is not installed: the JSON checks (schemas, known-mix estimates) did not run"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

trace() {  # OUT RATE SEED SCRIPT ARGS...
  local out=$1 rate=$2 seed=$3
  shift 3
  MINNOW_SEED=$seed ./vm --memtrace "$out" --memtrace-rate "$rate" "$@" >/dev/null 2>"$tmp/vm.err" ||
    bad "./vm --memtrace $out --memtrace-rate $rate $* (seed $seed) failed: $(head -c 200 "$tmp/vm.err")"
}

# ---------------------------------------------------------------- 1. known mix

n=20000
top_jsons() {  # TRACE PREFIX [TOOL]
  local t=${3:-$tool}
  "$t" top -n 0 --json "$1" >"$2.alloc.json" && "$t" top --live -n 0 --json "$1" >"$2.live.json" &&
    "$t" top --promoted -n 0 --json "$1" >"$2.promoted.json"
}

if $have_python; then
  trace "$tmp/exact.ctf" 1 1 tests/tools/known_mix.mn
  top_jsons "$tmp/exact.ctf" "$tmp/exact" || bad "top on the known mix at rate 1"
  python3 "$check" mix "$tmp/exact.alloc.json" "$tmp/exact.live.json" "$tmp/exact.promoted.json" $n 1 exact \
    >"$tmp/exact.txt"
  check "known mix at rate 1: 18 estimates equal to the truth ($(grep -c '^in' "$tmp/exact.txt")/18): $(grep '^out' "$tmp/exact.txt" | head -3)" \
    '[ "$(grep -c "^in" "$tmp/exact.txt")" -eq 18 ]'

  : >"$tmp/coverage.txt"
  for rate in 1e-3 1e-2; do
    for seed in $(seq 1 20); do
      t="$tmp/mix-$rate-$seed.ctf"
      trace "$t" $rate $seed tests/tools/known_mix.mn
      top_jsons "$t" "$tmp/mix" || bad "top on $t"
      python3 "$check" mix "$tmp/mix.alloc.json" "$tmp/mix.live.json" "$tmp/mix.promoted.json" $n 1 |
        sed "s/^/$rate /" >>"$tmp/coverage.txt"
    done
  done
  # Lines "RATE in|out line L MEASURE[: why]": per (rate, line, measure), seeds in.
  awk '{ k = $1 " " $4 " " $5; sub(":", "", k); n[k]++; if ($2 == "in") i[k]++ }
       END { for (k in n) print k, i[k] + 0, n[k] }' "$tmp/coverage.txt" | sort >"$tmp/cells.txt"
  while read -r rate line measure hits total; do
    check "known mix, rate $rate, line $line, $measure: truth in the 95% interval in $hits of $total seeds (want >= 17)" \
      '[ "$hits" -ge 17 ]'
  done <"$tmp/cells.txt"
  hits=$(grep -c '^[^ ]* in ' "$tmp/coverage.txt")
  total=$(wc -l <"$tmp/coverage.txt")
  echo "trace_tools: known mix: truth inside its 95% interval in $hits of $total checks (6 sites x 3 measures x 2 rates x 20 seeds)"
  check "known mix: truth in the interval in $hits of $total checks (want >= 95%)" '[ $((100 * hits)) -ge $((95 * total)) ]'
  grep '^[^ ]* out ' "$tmp/coverage.txt" | head -20 | sed 's/^/trace_tools:   missed: /'

  # The ASan/UBSan build prints the same documents.
  for rate in 1e-3 1e-2; do
    top_jsons "$tmp/mix-$rate-1.ctf" "$tmp/asan" "$asan_tool" 2>"$tmp/asan.err" || bad "ASan top: $(head -c 300 "$tmp/asan.err")"
    top_jsons "$tmp/mix-$rate-1.ctf" "$tmp/rel"
    for m in alloc live promoted; do
      check "ASan build's top --json ($m, rate $rate) as the release build's" 'cmp -s "$tmp/asan.$m.json" "$tmp/rel.$m.json"'
    done
  done
fi

# ---------------------------------------------------------------- 2. lifetimes

if $have_python; then
  young=0 promoted_in=0 major_none=0 runs=0
  for seed in $(seq 1 20); do
    "$tool" lifetimes -n 0 --json "$tmp/mix-1e-2-$seed.ctf" >"$tmp/life.json" || bad "lifetimes on seed $seed"
    python3 "$check" life "$tmp/life.json" >"$tmp/life.txt"
    runs=$((runs + 1))
    grep -q "^young True" "$tmp/life.txt" && young=$((young + 1))
    grep -q "^promoted True" "$tmp/life.txt" && promoted_in=$((promoted_in + 1))
    grep -q "^major True" "$tmp/life.txt" && major_none=$((major_none + 1))
  done
  check "lifetimes: tuples never promoted, all died young, ~GCs 0 ($young of $runs seeds)" '[ $young -eq $runs ]'
  check "lifetimes: records' promoted share 1% inside its 95% interval ($promoted_in of $runs seeds, want >= 17)" \
    '[ $promoted_in -ge 17 ]'
  check "lifetimes: arrays born major have no minor blocks, all alive at the end ($major_none of $runs)" \
    '[ $major_none -eq $runs ]'
  "$tool" lifetimes tests/fixtures/memtrace/bintrees-1e-5.ctf >"$tmp/life.txt"
  check "lifetimes reads the OCaml minor heap size (s=262144) from the runtime params" \
    'grep -q "minor heap: 262144 words" "$tmp/life.txt"'
fi

# ---------------------------------------------------------------- 3. leaks

first_holder() { "$tool" leaks "$1" | grep -m1 -E '^ +1\. Kept by' | sed 's/^ *1\. Kept by //'; }
first_site() { "$tool" leaks "$1" | grep -m1 -E '^     \* ' | sed 's/^ *\* //'; }
leak_count() { "$tool" leaks "$1" | grep -cE '^ +[0-9]+\. Kept by'; }
for rate in 1e-3 1e-2; do
  for seed in 1 2 3; do
    trace "$tmp/leaky.ctf" $rate $seed examples/leaky_cache.mn
    got=$(first_holder "$tmp/leaky.ctf")
    check "leaks on leaky_cache.mn (rate $rate, seed $seed) names the cache first, got '$got'" \
      '[ "$got" = "global cache -> Hashtbl" ] && "$tool" leaks -n 1 "$tmp/leaky.ctf" | grep -qE "^     - render examples/leaky_cache.mn:3:"'
    trace "$tmp/twin.ctf" $rate $seed tests/tools/leak_twin.mn leak
    got="$(first_holder "$tmp/twin.ctf") / $(first_site "$tmp/twin.ctf")"
    check "leaks on leak_twin.mn leak (rate $rate, seed $seed) names the log's list, its cons at line 14 first, got '$got'" \
      '[[ "$got" == "global log -> list cell xn / handle tests/tools/leak_twin.mn:14:"* ]] &&
       "$tool" leaks -n 1 "$tmp/twin.ctf" | grep -qE "^     - handle tests/tools/leak_twin.mn:13:"'
    trace "$tmp/twin.ctf" $rate $seed tests/tools/leak_twin.mn bounded
    got=$(leak_count "$tmp/twin.ctf")
    check "leaks on leak_twin.mn bounded (rate $rate, seed $seed) names nothing, got $got" '[ "$got" -eq 0 ]'
  done
done
nonleaking=(examples/binary_trees.mn examples/memprof_top_sites.mn examples/pipeline.mn examples/string_builder.mn
            examples/word_freq.mn "bench/programs/binary_trees.mn 12" "bench/programs/deep_map.mn 5000 60"
            "bench/programs/list_pipeline.mn 5000 60" "bench/programs/string_build.mn 5000 10")
for prog in "${nonleaking[@]}"; do
  for rate in 1e-3 1e-2; do
    # shellcheck disable=SC2086
    trace "$tmp/nl.ctf" $rate 1 $prog
    got=$(leak_count "$tmp/nl.ctf")
    check "leaks on $prog (rate $rate) names nothing, got $got: $(first_holder "$tmp/nl.ctf")" '[ "$got" -eq 0 ]'
  done
done
for rate in 1e-3 1e-2; do
  trace "$tmp/wc.ctf" $rate 1 bench/programs/word_count.mn 50000
  got=$(leak_count "$tmp/wc.ctf")
  check "leaks on word_count.mn (rate $rate) names nothing, its table built early (got $got)" \
    '[ "$got" -eq 0 ] && "$tool" leaks --all "$tmp/wc.ctf" | grep -qF "Kept by global counts -> Hashtbl  [built early]"'
done
for f in tests/fixtures/memtrace/*.ctf; do
  check "leaks on $f cannot judge (no end state) and names nothing" \
    '[ "$(leak_count "$f")" -eq 0 ] && "$tool" leaks "$f" | grep -q "^cannot judge: "'
done

# ---------------------------------------------------------------- 4. diff

if $have_python; then
  sig() { python3 "$check" get "$1" "sum(r['significant'] for r in d['rows'])"; }
  "$tool" diff -n 0 --json "$tmp/mix-1e-2-1.ctf" "$tmp/mix-1e-2-2.ctf" >"$tmp/d.json"
  check "diff of two seeds of the known mix: no significant site (got $(sig "$tmp/d.json"))" '[ "$(sig "$tmp/d.json")" -eq 0 ]'
  "$tool" diff -n 0 --json "$tmp/mix-1e-3-3.ctf" "$tmp/mix-1e-2-4.ctf" >"$tmp/d.json"
  check "diff of the known mix at rates 1e-3 and 1e-2: no significant site (got $(sig "$tmp/d.json"))" \
    '[ "$(sig "$tmp/d.json")" -eq 0 ]'
  trace "$tmp/double.ctf" 1e-2 5 tests/tools/known_mix.mn $n 2
  "$tool" diff -n 0 --json "$tmp/mix-1e-2-6.ctf" "$tmp/double.ctf" >"$tmp/d.json"
  first=$(python3 "$check" get "$tmp/d.json" "(d['rows'][0]['key']['line'], d['rows'][0]['significant'])")
  check "diff with the strings site doubled: line 14 first and significant, got $first" '[ "$first" = "(14, True)" ]'
  check "diff with the strings site doubled: no other significant site" '[ "$(sig "$tmp/d.json")" -eq 1 ]'
  within=$(python3 "$check" get "$tmp/d.json" \
    "(lambda r: r['b']['interval']['lo'] <= 2 * 70000 * 8 <= r['b']['interval']['hi'])(d['rows'][0])")
  check "diff with the strings site doubled: B's estimate of it holds the truth (1,120,000 bytes)" '[ "$within" = True ]'
fi

# ---------------------------------------------------------------- 5. OCaml traces

fixtures=tests/fixtures/memtrace
for f in "$fixtures"/*.ctf; do
  samples=$("$tool" info "$f" | sed -n 's/^allocations .* \([0-9]*\) samples of.*/\1/p')
  got=$("$tool" top "$f" | sed -n 's/^total .* from \([0-9]*\) samples.*/\1/p')
  check "top on $f counts the samples info counts ($got, $samples)" '[ -n "$samples" ] && [ "$got" = "$samples" ]'
  for c in "top --by stack" "top --live --at 50%" "top --promoted --by function" "lifetimes --by file" "leaks --all"; do
    # shellcheck disable=SC2086
    "$asan_tool" $c "$f" >/dev/null 2>"$tmp/err"
    s=$?
    # leaks cannot judge these (no snapshot): status 4
    want=0
    [ "${c%% *}" = leaks ] && want=4
    check "ASan build: $c on $f exits $want quietly (got $s)" '[ $s -eq $want ] && [ ! -s "$tmp/err" ]'
  done
done
"$tool" diff "$fixtures/bintrees-1e-5.ctf" "$fixtures/bintrees-1e-5.v3.ctf" >"$tmp/d.txt"
check "diff of the v2 and v3 twins: total change 0, nothing significant" \
  'grep -q "^total .*(+0 B, p 1.000)" "$tmp/d.txt" && ! grep -qE "^ +[0-9]+ .* [*]  " "$tmp/d.txt"'
"$tool" top --by stack -n 0 --json --whole-stacks "$fixtures/listmap-1e-6.ctf" >"$tmp/deep.json"
"$tool" top --by stack -n 0 --json "$fixtures/listmap-1e-6.ctf" >"$tmp/folded.json"
if $have_python; then
  depth=$(python3 "$check" get "$tmp/deep.json" "max(len(r['key']['stack']) for r in d['rows'])")
  check "top --by stack --whole-stacks on listmap: a stack of thousands of frames in JSON (deepest $depth)" '[ "$depth" -gt 1000 ]'
  # Folded: the same frames, the recursion as {"repeat": N, "frames": [...]}.
  folded=$(python3 "$check" get "$tmp/folded.json" "max(len(r['key']['stack']) for r in d['rows'])")
  unfolded=$(python3 "$check" get "$tmp/folded.json" \
    "max(sum(f.get('repeat', 1) * len(f.get('frames', [f])) for f in r['key']['stack']) for r in d['rows'])")
  check "top --by stack on listmap: recursion folded in JSON ($folded entries for $unfolded frames)" \
    '[ "$folded" -le 10 ] && [ "$unfolded" = "$depth" ]'
fi

# 5b. Recursion folded (analysis/collapse.h): a 20,000-deep recursion (and a
# 2,000-deep mutual one) at rate 1e-2. Every stack shows at most 5 frames
# (<top>, "down ×N", down; or <top>, "(ping → pong) ×N", ping, pong), so the
# folded stacks, pprof and the report grow with the distinct frames and the
# number of stacks, not with the depth; --whole-stacks gives every frame.
./vm --memtrace "$tmp/deep.ctf" --memtrace-rate 1e-2 bench/deep_tools/deep.mn 20000 >/dev/null
"$tool" flamegraph "$tmp/deep.ctf" >"$tmp/deep.folded"
# (--max-frames 0: whole, these 674 stacks are 8 million frames, past the
# default limit of what whole-stack outputs write, README "Limits")
"$tool" flamegraph --whole-stacks --max-frames 0 "$tmp/deep.ctf" >"$tmp/deep.whole"
lines=$(wc -l <"$tmp/deep.folded")
frames=$(awk '{n = split($0, f, ";"); if (n > m) m = n} END {print m + 0}' "$tmp/deep.folded")
whole=$(awk '{n = split($0, f, ";"); if (n > m) m = n} END {print m + 0}' "$tmp/deep.whole")
check "deep recursion folded: $lines stacks of at most $frames frames ($(wc -c <"$tmp/deep.folded") bytes; whole: $whole frames, $(wc -c <"$tmp/deep.whole") bytes)" \
  '[ "$lines" -gt 100 ] && [ "$frames" -le 5 ] && [ "$(wc -c <"$tmp/deep.folded")" -le $((lines * 200)) ] && [ "$whole" -gt 19000 ] &&
   [ "$(wc -l <"$tmp/deep.whole")" = "$lines" ]'
check "deep recursion folded: a run \"down (...) ×N\" and a cycle \"(ping (...) → pong (...)) ×N\"" \
  'grep -q ";down (bench/deep_tools/deep.mn:[0-9]*) ×[0-9]*;" "$tmp/deep.folded" &&
   grep -q ";(ping (bench/deep_tools/deep.mn:[0-9]*) → pong (bench/deep_tools/deep.mn:[0-9]*)) ×[0-9]*;" "$tmp/deep.folded"'
"$tool" pprof "$tmp/deep.ctf" -o "$tmp/deep.pb.gz"
"$tool" pprof --whole-stacks "$tmp/deep.ctf" -o "$tmp/deep-whole.pb.gz"
folded_pb=$(zcat "$tmp/deep.pb.gz" | wc -c) whole_pb=$(zcat "$tmp/deep-whole.pb.gz" | wc -c)
check "deep recursion: pprof of $folded_pb bytes folded, $whole_pb whole (unzipped)" \
  '[ "$folded_pb" -lt 200000 ] && [ "$whole_pb" -gt $((20 * folded_pb)) ]'
"$tool" report "$tmp/deep.ctf" -o "$tmp/deep.html"
check "deep recursion: report of $(wc -c <"$tmp/deep.html") bytes (under 1 MiB)" '[ "$(wc -c <"$tmp/deep.html")" -lt 1048576 ]'
"$tool" top --by stack -n 3 "$tmp/deep.ctf" >"$tmp/deep.top"
check "deep recursion: top --by stack names the run (\"called from down ... ×N\"), not each frame" \
  'grep -q "called from down bench/deep_tools/deep.mn:[0-9:-]* ×[0-9]*$" "$tmp/deep.top" && [ "$(wc -l <"$tmp/deep.top")" -lt 20 ]'

# 5c. Cycles longer than 4 frames fold too (issue 32): a 20,000-deep
# recursion f -> g -> g -> h -> g -> g (period 6, g repeated inside the
# cycle) and a 20,000-deep one through 10 functions c0 .. c9, at rate 1e-2
# (bench/deep_tools/cycles.mn). Every stack is <top>, the cycle ×N, then the
# cycle begun: at most 12 frames; whole, 20,000.
./vm --memtrace "$tmp/cycles.ctf" --memtrace-rate 1e-2 bench/deep_tools/cycles.mn 20000 >/dev/null
"$tool" flamegraph "$tmp/cycles.ctf" >"$tmp/cycles.folded"
lines=$(wc -l <"$tmp/cycles.folded")
frames=$(awk '{n = split($0, f, ";"); if (n > m) m = n} END {print m + 0}' "$tmp/cycles.folded")
f_at='(bench/deep_tools/cycles.mn:[0-9]*)'
check "long cycles folded: $lines stacks of at most $frames frames ($(wc -c <"$tmp/cycles.folded") bytes)" \
  '[ "$lines" -gt 500 ] && [ "$frames" -le 12 ] && [ "$(wc -c <"$tmp/cycles.folded")" -le $((lines * 1000)) ]'
check "long cycles folded: \"(f → g → g → h → g → g) ×N\" and \"(c0 → ... → c9) ×N\" in the flame graph" \
  'grep -q ";(f $f_at → g $f_at → g $f_at → h $f_at → g $f_at → g $f_at) ×[0-9]*;" "$tmp/cycles.folded" &&
   grep -q ";(c0 $f_at → c1 $f_at → c2 $f_at → c3 $f_at → c4 $f_at → c5 $f_at → c6 $f_at → c7 $f_at → c8 $f_at → c9 $f_at) ×[0-9]*;" "$tmp/cycles.folded"'
"$tool" flamegraph --functions "$tmp/cycles.ctf" >"$tmp/cycles.functions"
check "long cycles folded by function: \"(f → g → g → h → g → g) ×N\"" \
  'grep -q ";(f → g → g → h → g → g) ×[0-9]*;" "$tmp/cycles.functions"'
"$tool" pprof "$tmp/cycles.ctf" -o "$tmp/cycles.pb.gz"
"$tool" pprof --whole-stacks "$tmp/cycles.ctf" -o "$tmp/cycles-whole.pb.gz"
folded_pb=$(zcat "$tmp/cycles.pb.gz" | wc -c) whole_pb=$(zcat "$tmp/cycles-whole.pb.gz" | wc -c)
check "long cycles: pprof of $folded_pb bytes folded, $whole_pb whole (unzipped), its functions the cycles ×N" \
  '[ "$folded_pb" -lt 300000 ] && [ "$whole_pb" -gt $((20 * folded_pb)) ] &&
   zcat "$tmp/cycles.pb.gz" | grep -aq "(f → g → g → h → g → g) ×[0-9]" &&
   zcat "$tmp/cycles.pb.gz" | grep -aq "(c0 → c1 → c2 → c3 → c4 → c5 → c6 → c7 → c8 → c9) ×[0-9]"'
"$tool" top --by stack -n 3 "$tmp/cycles.ctf" >"$tmp/cycles.top"
check "long cycles: top --by stack names the cycle (\"called from (... → ...) ×N\"), not each frame" \
  'grep -Eq "called from \((f|c0) bench/deep_tools/cycles.mn:.* ×[0-9]+$" "$tmp/cycles.top" && [ "$(wc -l <"$tmp/cycles.top")" -lt 50 ]'

# --whole-stacks prints what the tool printed before it folded recursion,
# byte for byte (tests/fixtures/memtrace/whole_stacks, written by commit 8b9e26b).
ws=tests/fixtures/memtrace/whole_stacks
bt=tests/fixtures/memtrace/bintrees-1e-5.ctf
check "flamegraph --whole-stacks: the previous folded stacks" 'cmp -s <("$tool" flamegraph --whole-stacks "$bt") <(zcat "$ws/bintrees.folded.gz")'
check "flamegraph --whole-stacks --functions: the previous folded stacks" \
  'cmp -s <("$tool" flamegraph --whole-stacks --functions "$bt") <(zcat "$ws/bintrees.functions.folded.gz")'
"$tool" flamegraph --whole-stacks "$bt" -o "$tmp/ws.svg"
check "flamegraph --whole-stacks -o X.svg: the previous SVG" 'cmp -s "$tmp/ws.svg" <(zcat "$ws/bintrees.svg.gz")'
"$tool" pprof --whole-stacks "$bt" -o "$tmp/ws.pb.gz"
# Since ac8e92e a profile's mapping is the program as a virtual object
# ("[bintrees.exe]", was its path) and the trace's comment names the
# executable: the previous profile is compared with those two strings
# rewritten (tests/trace/pprof_as_since_ac8e92e.py), every other byte as it was.
check "pprof --whole-stacks: the previous profile (mapping and comment as since ac8e92e)" \
  'cmp -s <(zcat "$tmp/ws.pb.gz") <(zcat "$ws/bintrees.pb.gz" | python3 tests/trace/pprof_as_since_ac8e92e.py bench/bintrees.exe)'
check "top --by stack --whole-stacks: the previous table" \
  'cmp -s <("$tool" top --by stack -n 5 --whole-stacks "$bt") "$ws/bintrees.top_stack.txt"'
check "bintrees folds its recursion by default" '! cmp -s <("$tool" flamegraph "$bt") <(zcat "$ws/bintrees.folded.gz")'

# ---------------------------------------------------------------- 6. edge cases

cmds=("top" "top --live" "top --promoted --by stack" "lifetimes" "leaks" "diff $fixtures/bintrees-1e-5.ctf")
echo 'println(1)' >"$tmp/one.mn"
trace "$tmp/empty.ctf" 1e-9 1 "$tmp/one.mn"
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086
  "$asan_tool" $c "$tmp/empty.ctf" >"$tmp/out" 2>"$tmp/err"
  s=$?
  want=0
  [ "$c" = leaks ] && want=4  # cannot judge
  check "$c on a trace without samples exits $want quietly (got $s)" '[ $s -eq $want ] && [ ! -s "$tmp/err" ]'
done
check "top on a trace without samples says so" 'grep -q "(no samples)" <("$tool" top "$tmp/empty.ctf")'
check "leaks on a trace without samples cannot judge" \
  'grep -q "^cannot judge: the trace has 0 samples" <("$tool" leaks "$tmp/empty.ctf")'
"$synth" --events 1 "$tmp/one.ctf" "$tmp/one.dump" >/dev/null
check "top on a one-event trace: one sample, one site" \
  '"$tool" top "$tmp/one.ctf" | grep -q "from 1 samples of 1 blocks"'
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086
  "$asan_tool" $c "$tmp/one.ctf" >/dev/null 2>"$tmp/err"
  s=$?
  want=0
  [ "$c" = leaks ] && want=4  # cannot judge
  check "$c on a one-event trace exits $want quietly (got $s)" '[ $s -eq $want ] && [ ! -s "$tmp/err" ]'
done
size=$(wc -c <"$tmp/mix-1e-2-1.ctf")
head -c $((size * 2 / 3)) "$tmp/mix-1e-2-1.ctf" >"$tmp/cut.ctf"
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086
  "$asan_tool" $c "$tmp/cut.ctf" >"$tmp/out" 2>"$tmp/err"
  status=$?
  # leaks judges a trace cut short (a killed run leaves one): its verdict's
  # status, here 4 (cannot judge: no snapshot file beside it)
  want=1
  [ "$c" = leaks ] && want=4
  check "$c on a truncated trace: exit $want, PARTIAL in the answer, the byte on stderr (got $status)" \
    '[ $status -eq $want ] && grep -q "^PARTIAL: " "$tmp/out" && grep -q "$tmp/cut.ctf: byte [0-9]*: the trace is truncated" "$tmp/err"'
done
if $have_python; then
  "$tool" top --json "$tmp/cut.ctf" >"$tmp/cut.json" 2>/dev/null
  check "top --json on a truncated trace: partial true, the error given" \
    '[ "$(python3 "$check" get "$tmp/cut.json" "(d[\"partial\"], \"truncated\" in d[\"error\"])")" = "(True, True)" ]'
fi
printf 'not a trace at all, just text\n' >"$tmp/junk.ctf"
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086
  "$asan_tool" $c "$tmp/junk.ctf" >/dev/null 2>"$tmp/err"
  status=$?
  check "$c on a file that is no trace: exit 1, the file and byte named" \
    '[ $status -eq 1 ] && grep -q "$tmp/junk.ctf: byte 0" "$tmp/err" && ! grep -q Sanitizer "$tmp/err"'
done
"$tool" top "$tmp/missing.ctf" >/dev/null 2>"$tmp/err"
check "top on a missing file: exit 1, the file named" '[ $? -eq 1 ] && grep -q "missing.ctf" "$tmp/err"'
for c in "top --by nothing" "top --at 5s" "top --live --at -1s" "top -n x" "lifetimes --by stack" "diff" \
         "leaks a b" "top --frobnicate"; do
  # shellcheck disable=SC2086
  "$tool" $c "$tmp/one.ctf" >/dev/null 2>&1
  check "bad usage '$c' exits 2" '[ $? -eq 2 ]'
done
"$tool" top --live --at 100% --json "$tmp/mix-1e-2-1.ctf" >"$tmp/at100.json"
"$tool" top --live --json "$tmp/mix-1e-2-1.ctf" >"$tmp/atend.json"
if $have_python; then
  at100=$(python3 "$check" get "$tmp/at100.json" "d['total']['samples']")
  atend=$(python3 "$check" get "$tmp/atend.json" "d['total']['samples']")
  at0=$("$tool" top --live --at 0% --json "$tmp/mix-1e-2-1.ctf" >"$tmp/at0.json" && python3 "$check" get "$tmp/at0.json" "d['total']['samples']")
  check "--at 100% is the end ($at100 = $atend samples) and --at 0% is empty ($at0)" \
    '[ "$at100" = "$atend" ] && [ "$at0" = 0 ]'
fi
check "top reads stdin (-) like the file" \
  'cmp -s <("$tool" top "$tmp/mix-1e-2-1.ctf" | tail -n +2) <("$tool" top - <"$tmp/mix-1e-2-1.ctf" | tail -n +2)'
check "leaks reads stdin (-) with --retain like the file" \
  'cmp -s <("$tool" leaks "$tmp/mix-1e-2-1.ctf" | tail -n +3) <("$tool" leaks --retain "$tmp/mix-1e-2-1.ctf.retain" - <"$tmp/mix-1e-2-1.ctf" | tail -n +3)'

# ---------------------------------------------------------------- 7. schemas

if $have_python; then
  t="$tmp/mix-1e-2-1.ctf"
  trace "$tmp/leaky.ctf" 1e-2 1 examples/leaky_cache.mn
  for spec in "top:top -n 3 $t" "top:top --live --at 50% --by function $t" "top:top --promoted --by stack $t" \
              "top:top --by file $fixtures/listmap-1e-6.ctf" "top:top $tmp/empty.ctf" \
              "lifetimes:lifetimes $t" "lifetimes:lifetimes --by function $fixtures/bintrees-1e-5.ctf" \
              "leaks:leaks --all $tmp/leaky.ctf" "leaks:leaks -n 1 $t" "leaks:leaks $tmp/empty.ctf" \
              "diff:diff $t $tmp/leaky.ctf" "diff:diff --live --by stack $t $t" "diff:diff --promoted $tmp/empty.ctf $t" \
              "top:top --by stack $tmp/deep.ctf" "leaks:leaks --all $tmp/deep.ctf" "flamegraph:flamegraph $tmp/deep.ctf" \
              "top:top --by stack $fixtures/listmap-1e-6.ctf"; do
    command=${spec%%:*}
    args=${spec#*:}
    # shellcheck disable=SC2086
    "$tool" $args --json >"$tmp/s.json" 2>/dev/null
    out=$(python3 "$check" schema "$command" "$tmp/s.json")
    check "--json of '$args' matches the schema of $command: $out" '[[ "$out" == ok* ]]'
  done
fi

# ---------------------------------------------------------------- 8. --follow

follow=$tmp/follow.ctf
MINNOW_SEED=1 ./vm --memtrace "$follow" --memtrace-rate 1e-3 tests/tools/slow_alloc.mn 5 >/dev/null &
vm_pid=$!
timeout 40 "$tool" top --follow -n 3 "$follow" >"$tmp/follow.out" 2>"$tmp/follow.err"
status=$?
wait $vm_pid
redraws=$(grep -c "is running; redrawn every second" "$tmp/follow.out")
check "top --follow: exit 0 (got $status: $(head -c 200 "$tmp/follow.err"))" '[ $status -eq 0 ]'
check "top --follow: redrew while the writer ran ($redraws times, want >= 2)" '[ "$redraws" -ge 2 ]'
check "top --follow: ends when the writer has finished" 'grep -q "the writer has finished" "$tmp/follow.out"'
sed -n '/the writer has finished/,$p' "$tmp/follow.out" | tail -n +2 >"$tmp/follow.final"
"$tool" top -n 3 "$follow" >"$tmp/follow.top"
check "top --follow: its final table is top's on the finished trace" 'cmp -s "$tmp/follow.final" "$tmp/follow.top"'
# It must stop by itself: the timeout only keeps a hang from stalling the
# suite (no wall-clock bound is asserted, a loaded machine would break it).
timeout 120 "$tool" top --follow --idle 1 "$fixtures/bintrees-1e-5.ctf" >"$tmp/follow2.out" 2>&1
check "top --follow on a trace of another host stops after --idle 1 s without growth (status $?)" \
  '[ $? -eq 0 ] && grep -q "the writer has finished" "$tmp/follow2.out"'

suite_end
