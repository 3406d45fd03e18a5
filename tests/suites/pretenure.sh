#!/usr/bin/env bash
# pretenure.sh - pretenuring (docs/design.md, "Pretenuring"; memprof/pretenure.c):
#   1. the command line: --pretenure, --pretenure-rate, --pretenure-log,
#      --pretenure-from; refusals exit 2, their first line naming the option or
#      the file (and the byte of a damaged trace); vm-noprof has no feedback;
#   2. a table built then read (bench/pretenure/table.mn): its record site
#      switches, once, and the program prints what it prints without
#      --pretenure, on vm, vm-asan and vm-debug, with --gc-verify, and under
#      --gc-stress at rate 1;
#   3. a program whose phases change (bench/pretenure/phases.mn): switched,
#      then undone by a probe within the major cycle of the change and one
#      minor collection after it, having made at most 2 M words of the churn
#      old (fixed seed; undo by the window of first-cycle deaths alone took
#      two major cycles, two minor collections and 6.2 M words);
#      and a site of medium lifetimes (bench/pretenure/medium.mn: promoted
#      by every minor collection, dead at the first major cycle) undone by
#      the window of first-cycle deaths alone;
#   4. programs where nothing should be pretenured (steady churn, word_count,
#      the other bench programs): no site switched in 10 seeds;
#   5. offline (--pretenure-from): the trace of a run decides the same site
#      before the next run starts; a trace of another program matches
#      nothing (said by the log); a truncated trace is used to its last
#      whole packet with a warning, one without a whole packet refused;
#      every trace of the reader's fuzz corpus used or refused on vm-asan;
#      with a trace running, each decision is a record of its snapshot file
#      (read by tests/trace/snapshots.py), one made during a snapshot after
#      it;
#   6. Gc.set_pretenure, and a Memprof profile running beside the feedback
#      (tests/pretenure/*.mn, // expect: lines, on vm and vm-asan);
#   7. the language tests under --pretenure at rate 0.01 (all but gc/, whose
#      minor-heap accounting pretenuring changes by design);
#   8. sampling stays unbiased: tests/pretenure/mix.mn (three sites of
#      exactly known words, two switched mid-run) traced at rates 1e-3 and
#      1e-2 over seeds 1-20 while the feedback runs at 1e-2: memtrace top's
#      95 % intervals of bytes allocated and live hold the truth. Lines 3
#      and 7 are kept to the end (their live interval is their allocated
#      one) and line 4's live bytes are 0, so a run makes 3 independent
#      estimates, 120 in all. Were the intervals exact, misses would be
#      Binomial(20, 0.05) per site and rate and Binomial(120, 0.05) in all:
#      at most 4 misses in a cell (P(more) = 0.26 %) and at most 14 in all
#      (P(more) = 0.10 %) are asked; a pretenured site sampled at a wrong
#      rate misses nearly every time (needs python3).
# Last line: "N passed, N failed". Exit status 0 iff none failed.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/suites/lib.sh
suite_init pretenure
require_built ./vm ./vm-asan ./vm-debug tools/memtrace
export MEMTRACE_PROGRESS=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---------------------------------------------------------------- 1. command line

refused() {  # WANT_TEXT ARGS...: exit 2, stderr's first line holds WANT_TEXT
  local want=$1
  shift
  ./vm "$@" >"$tmp/o" 2>"$tmp/e"
  local st=$?
  check "./vm $* refused (exit $st, want 2): $(head -1 "$tmp/e")" '[ $st -eq 2 ] && head -1 "$tmp/e" | grep -qF -- "$want"'
}
refused "vm: option --pretenure-rate: '0' is not a rate in (0, 1]" --pretenure-rate 0 bench/pretenure/table.mn
refused "vm: option --pretenure-rate needs a value (R)" --pretenure-rate
refused "vm: option --pretenure-from needs a value (T)" --pretenure-from
refused "vm: option --pretenure given twice" --pretenure --pretenure bench/pretenure/table.mn
refused "vm: --pretenure-from /nonexistent/t.ctf: cannot open" --pretenure-from /nonexistent/t.ctf bench/pretenure/table.mn 10 1
printf 'not a trace at all, not even close' >"$tmp/junk.ctf"
refused "vm: --pretenure-from $tmp/junk.ctf: byte 0: bad magic" --pretenure-from "$tmp/junk.ctf" bench/pretenure/table.mn 10 1
if [ -x ./vm-noprof ]; then
  ./vm-noprof --pretenure bench/pretenure/table.mn 10 1 >/dev/null 2>"$tmp/e"
  st=$?
  check "vm-noprof --pretenure: exit 2, no feedback to decide from (exit $st: $(head -1 "$tmp/e"))" \
    '[ $st -eq 2 ] && grep -q "no profiler" "$tmp/e"'
else
  skip "vm-noprof is not built: its refusal of --pretenure was not checked"
fi

# ---------------------------------------------------------------- 2. a table built then read

switch_lines() { grep -c -- '-> major heap' "$1"; }
# A minor heap of 256 Ki words: the table's 1.2 M words of records go through
# several minor collections, which resolve the feedback's trials.
small="--minor-words 262144"
./vm bench/pretenure/table.mn 300000 2 >"$tmp/table.want"
for run in "./vm" "./vm-asan" "./vm-debug" "./vm --gc-verify" "./vm-asan --gc-verify"; do
  $run $small --pretenure --pretenure-log bench/pretenure/table.mn 300000 2 >"$tmp/table.out" 2>"$tmp/table.err"
  check "$run --pretenure: table.mn prints what it prints without" 'cmp -s "$tmp/table.out" "$tmp/table.want"'
  check "$run --pretenure: table.mn's record site (line 16) switched, once: $(head -c 300 "$tmp/table.err")" \
    '[ "$(switch_lines "$tmp/table.err")" -eq 1 ] && grep -q "table.mn:16:27-77) -> major heap: 64 of 64" "$tmp/table.err"'
done
./vm bench/pretenure/table.mn 3000 2 >"$tmp/small.want"
./vm --gc-stress --gc-verify --pretenure --pretenure-rate 1 --pretenure-log bench/pretenure/table.mn 3000 2 \
  >"$tmp/small.out" 2>"$tmp/small.err"
check "--gc-stress --gc-verify --pretenure-rate 1: same output, the site switched" \
  'cmp -s "$tmp/small.out" "$tmp/small.want" && [ "$(switch_lines "$tmp/small.err")" -ge 1 ]'

# ---------------------------------------------------------------- 3. phases

./vm bench/pretenure/phases.mn 1000000 4 >"$tmp/phases.want"
for run in "./vm" "./vm-asan"; do
  $run --pretenure --pretenure-log bench/pretenure/phases.mn 1000000 4 >"$tmp/phases.out" 2>"$tmp/phases.err"
  check "$run: phases.mn prints the same checksum with --pretenure" \
    '[ "$(head -1 "$tmp/phases.out")" = "$(head -1 "$tmp/phases.want")" ]'
  change=$(sed -n 's/^phase change after major collection \([0-9]*\) of.*/\1/p' "$tmp/phases.out")
  undone=$(sed -n 's/.*-> minor heap again:.*major cycle \([0-9]*\))$/\1/p' "$tmp/phases.err" | head -1)
  change_minor=$(sed -n 's/^phase change after .*, minor collection \([0-9]*\) of.*/\1/p' "$tmp/phases.out")
  undone_minor=$(sed -n 's/.*-> minor heap again:.*(minor collection \([0-9]*\), major cycle.*/\1/p' "$tmp/phases.err" | head -1)
  after=$(sed -n 's/^phase change after .*; words pretenured after it: \([0-9]*\)$/\1/p' "$tmp/phases.out")
  check "$run: phases.mn's site switched, then undone by a probe in the major cycle of the change and within one minor collection of it, at most 2 M words made old after it (change: major $change, minor $change_minor; undone: major ${undone:-never}, minor ${undone_minor:-never}; words old after it: $after): $(head -c 600 "$tmp/phases.err")" \
    '[ "$(switch_lines "$tmp/phases.err")" -eq 1 ] && [ -n "$undone" ] && [ -n "$change" ] && [ "$undone" -le "$change" ] &&
     [ -n "$undone_minor" ] && [ -n "$change_minor" ] && [ "$undone_minor" -le $((change_minor + 1)) ] &&
     grep -q "born young in a probe died at the next minor collection" "$tmp/phases.err" &&
     [ -n "$after" ] && [ "$after" -le 2000000 ]'
done

# A site whose blocks outlive a minor collection but die before their first
# major cycle ends (bench/pretenure/medium.mn): every probe sees its young
# births promoted, so only the window of first-cycle deaths (part 4 of
# memprof/pretenure.c) can undo it; it must, within the run.
./vm bench/pretenure/medium.mn >"$tmp/medium.want"
for run in "./vm" "./vm-asan"; do
  MINNOW_SEED=1 $run --pretenure --pretenure-log bench/pretenure/medium.mn >"$tmp/medium.out" 2>"$tmp/medium.err"
  check "$run: medium.mn's site switched once, then undone by the window of first-cycle deaths (not a probe), the same checksum: $(head -c 600 "$tmp/medium.err")" \
    'cmp -s "$tmp/medium.out" "$tmp/medium.want" && [ "$(switch_lines "$tmp/medium.err")" -eq 1 ] &&
     grep -q "medium.mn:23:14-64) -> minor heap again: .* sampled blocks born old died at their first major cycle" "$tmp/medium.err" &&
     ! grep -q "born young in a probe died" "$tmp/medium.err"'
done

# ---------------------------------------------------------------- 4. nothing to pretenure

for prog in "bench/leaks/steady_churn.mn 300000" "bench/programs/word_count.mn 200000" \
  "bench/programs/list_pipeline.mn 10000 100" "bench/programs/deep_map.mn 10000 100" \
  "bench/programs/binary_trees.mn 15" "bench/programs/string_build.mn 20000 10"; do
  switched=0
  for seed in $(seq 1 10); do
    MINNOW_SEED=$seed ./vm --pretenure --pretenure-log $prog >/dev/null 2>"$tmp/none.err" || bad "$prog seed $seed failed"
    switched=$((switched + $(switch_lines "$tmp/none.err")))
  done
  check "$prog: no site switched in seeds 1-10 ($switched switches)" '[ $switched -eq 0 ]'
done

# ---------------------------------------------------------------- 5. offline

./vm $small --memtrace "$tmp/table.ctf" --memtrace-rate 1e-3 bench/pretenure/table.mn 300000 2 >/dev/null
./vm --pretenure-from "$tmp/table.ctf" --pretenure-log bench/pretenure/table.mn 300000 2 >"$tmp/off.out" 2>"$tmp/off.err"
check "--pretenure-from: same output, line 16 switched before the run: $(head -c 300 "$tmp/off.err")" \
  'cmp -s "$tmp/off.out" "$tmp/table.want" && grep -q "table.mn:16:27-77) -> major heap: .*(in the trace, before the run)" "$tmp/off.err"'
printf 'println(Gc.stat().pretenured_words)\n' >"$tmp/words.mn"
cat bench/pretenure/table.mn "$tmp/words.mn" >"$tmp/table_words.mn"
words=$(./vm --pretenure-from "$tmp/table.ctf" "$tmp/table_words.mn" 300000 1 2>/dev/null | tail -1)
# The trace names bench/pretenure/table.mn: a copy elsewhere matches nothing.
check "--pretenure-from matches by file: a copy of the program under another name switches nothing ($words words)" \
  '[ "$words" = 0 ]'
./vm --pretenure-from "$tmp/table.ctf" --pretenure-log tests/pretenure/mix.mn 1000 >/dev/null 2>"$tmp/other.err"
check "--pretenure-from a trace of another program: nothing switched, the site said: $(head -c 300 "$tmp/other.err")" \
  '[ "$(switch_lines "$tmp/other.err")" -eq 0 ] && grep -q "table.mn:16:27-77) from the trace: not an allocation site of this program" "$tmp/other.err"'
# A trace of several packets (rate 1e-2) cut at 60 %, inside a packet: a run
# killed while writing it. Its whole packets still hold line 16's evidence.
./vm $small --memtrace "$tmp/dense.ctf" --memtrace-rate 1e-2 bench/pretenure/table.mn 300000 2 >/dev/null
size=$(stat -c %s "$tmp/dense.ctf")
head -c $((size * 6 / 10)) "$tmp/dense.ctf" >"$tmp/cut.ctf"
./vm --pretenure-from "$tmp/cut.ctf" --pretenure-log bench/pretenure/table.mn 300000 2 >"$tmp/cut.out" 2>"$tmp/cut.err"
st=$?
check "--pretenure-from a truncated trace: used with a warning naming the byte, line 16 switched from its whole packets (exit $st): $(head -c 400 "$tmp/cut.err")" \
  '[ $st -eq 0 ] && grep -q "cut.ctf: byte [0-9]*: the trace is truncated.*its whole packets are used" "$tmp/cut.err" &&
   grep -q "table.mn:16:27-77) -> major heap: .*(in the trace, before the run)" "$tmp/cut.err" && cmp -s "$tmp/cut.out" "$tmp/table.want"'
head -c 100 "$tmp/dense.ctf" >"$tmp/stub.ctf"
refused "vm: --pretenure-from $tmp/stub.ctf: byte 0: the trace is truncated" --pretenure-from "$tmp/stub.ctf" \
  bench/pretenure/table.mn 10 1
: >"$tmp/empty.ctf"
refused "vm: --pretenure-from $tmp/empty.ctf: byte 0: the file is empty" --pretenure-from "$tmp/empty.ctf" \
  bench/pretenure/table.mn 10 1

# Every trace of the reader's fuzz corpus (damaged, hostile, other
# runtimes', version 3 with domains numbering ids far apart): --pretenure-from
# uses it or refuses it (exit 0 or 2), on vm-asan, within 20 s each.
printf 'let x = (1, 2)\nprintln(1)\n' >"$tmp/tiny.mn"
n=0
: >"$tmp/corpus.bad"
for f in tests/fuzz/reader/corpus/*.ctf; do
  timeout 20 ./vm-asan --pretenure-from "$f" "$tmp/tiny.mn" >/dev/null 2>"$tmp/corpus.err"
  st=$?
  n=$((n + 1))
  [ $st -eq 0 ] || [ $st -eq 2 ] || echo "$f: exit $st: $(head -c 200 "$tmp/corpus.err")" >>"$tmp/corpus.bad"
done
check "--pretenure-from on the $n traces of the reader's fuzz corpus, vm-asan: each used or refused: $(head -3 "$tmp/corpus.bad")" \
  '[ $n -gt 100 ] && [ ! -s "$tmp/corpus.bad" ]'
# ---------------------------------------------------------------- 5b. decisions in the trace

# With a trace running, each decision is a record of the snapshot file beside
# it (docs/trace-format.md 12.1, kind 5), read by the independent reader
# tests/trace/snapshots.py.
if command -v python3 >/dev/null; then
  ./vm $small --pretenure --memtrace "$tmp/dec.ctf" --memtrace-rate 1e-4 bench/pretenure/table.mn 300000 2 >/dev/null
  python3 tests/trace/snapshots.py "$tmp/dec.ctf.retain" >"$tmp/dec.txt" 2>&1
  st=$?
  check "--pretenure with --memtrace: one decision record, table.mn's site made old on 64 of 64 promoted (exit $st): $(grep decision "$tmp/dec.txt")" \
    '[ $st -eq 0 ] && [ "$(grep -c "^decision " "$tmp/dec.txt")" -eq 1 ] &&
     grep -Eq "^decision time=[0-9]+ allocs=[0-9]+ action=old site=<top> bench/pretenure/table.mn:16:27-77 sampled=64 counted=64 bound=8[5-9][0-9]{4} threshold=850000$" "$tmp/dec.txt"'
  # Snapshots every 10 ms: decisions made while one is taken wait for its end.
  ./vm --pretenure --memtrace "$tmp/ph.ctf" --memtrace-rate 1e-4 --memtrace-snapshot-every 0.01 \
    bench/pretenure/phases.mn 1000000 4 >/dev/null
  python3 tests/trace/snapshots.py "$tmp/ph.ctf.retain" >"$tmp/ph.txt" 2>&1
  st=$?
  check "phases.mn traced with snapshots every 10 ms: the file reads whole (exit $st), $(grep -c "^number=" "$tmp/ph.txt") snapshots, made old then young again: $(grep decision "$tmp/ph.txt" | cut -d" " -f4-6 | tr "\n" " ")" \
    '[ $st -eq 0 ] && [ "$(grep -c "^number=" "$tmp/ph.txt")" -ge 2 ] &&
     [ "$(grep "^decision " "$tmp/ph.txt" | sed "s/.* action=\([a-z-]*\) site=entry bench\/pretenure\/phases.mn:16:14-64 .*/\1/" | tr "\n" " ")" = "old young-probe " ]'
  ./vm --memtrace "$tmp/off2.ctf" --pretenure-from "$tmp/table.ctf" bench/pretenure/table.mn 300000 2 >/dev/null
  python3 tests/trace/snapshots.py "$tmp/off2.ctf.retain" >"$tmp/off2.txt" 2>&1
  check "--pretenure-from with --memtrace: the offline decision recorded before any allocation: $(grep decision "$tmp/off2.txt")" \
    'grep -Eq "^decision time=[0-9]+ allocs=0 action=old site=<top> bench/pretenure/table.mn:16:27-77 " "$tmp/off2.txt"'
else
  skip "python3 is not installed: the decision records were not read"
fi

# ---------------------------------------------------------------- 6. scripts

lang_run "Gc.set_pretenure, vm" --flags "--minor-words 65536 --pretenure-rate 0.01" tests/pretenure/set_pretenure.mn
lang_run "Gc.set_pretenure, vm-asan" --vm ./vm-asan --flags "--minor-words 65536 --pretenure-rate 0.01" \
  tests/pretenure/set_pretenure.mn
lang_run "with Memprof, vm" --flags "--pretenure --pretenure-rate 0.01 --minor-words 65536" tests/pretenure/with_memprof.mn
lang_run "with Memprof, vm-asan" --vm ./vm-asan --flags "--pretenure --pretenure-rate 0.01 --minor-words 65536" \
  tests/pretenure/with_memprof.mn

# ---------------------------------------------------------------- 7. the language tests

dirs=$(find tests/lang -mindepth 1 -maxdepth 1 -type d ! -name gc | sort)
# shellcheck disable=SC2086
lang_run "tests/lang but gc/, --pretenure at 0.01" --flags "--pretenure --pretenure-rate 0.01" $dirs

# ---------------------------------------------------------------- 8. unbiased sampling

if command -v python3 >/dev/null; then
  n=100000
  : >"$tmp/cover.txt"
  switched=0
  for rate in 1e-3 1e-2; do
    for seed in $(seq 1 20); do
      t="$tmp/mix.ctf"
      MINNOW_SEED=$seed ./vm --minor-words 262144 --pretenure --pretenure-rate 1e-2 --memtrace "$t" \
        --memtrace-rate $rate tests/pretenure/mix.mn $n >"$tmp/mix.out" 2>&1 || bad "mix.mn seed $seed rate $rate failed"
      [ "$(tail -1 "$tmp/mix.out")" = true ] && switched=$((switched + 1))
      tools/memtrace top -n 0 --json "$t" >"$tmp/a.json" && tools/memtrace top --live -n 0 --json "$t" >"$tmp/l.json" ||
        bad "top on mix.mn seed $seed rate $rate"
      python3 tests/pretenure/check_mix.py $n "$tmp/a.json" "$tmp/l.json" | sed "s/^/$rate $seed /" >>"$tmp/cover.txt"
    done
  done
  check "mix.mn: pretenured words in every run ($switched of 40)" '[ $switched -eq 40 ]'
  # cover.txt: RATE SEED in|out line L MEASURE[: why]. An estimate (rate,
  # seed, line) misses when any of its measures does.
  awk '{ e = $1 " " $2 " " $5; if (!(e in seen)) { seen[e] = 1; cell[$1 " " $5]++ }
         if ($3 == "out" && !(e in miss)) { miss[e] = 1; m[$1 " " $5]++ } }
       END { for (c in cell) print c, m[c] + 0, cell[c] }' "$tmp/cover.txt" | sort >"$tmp/cells.txt"
  total_miss=0
  while read -r rate line misses runs; do
    check "mix.mn under --pretenure, rate $rate, line $line: truth outside the 95% interval in $misses of $runs seeds (want <= 4)" \
      '[ "$misses" -le 4 ]'
    total_miss=$((total_miss + misses))
  done <"$tmp/cells.txt"
  echo "pretenure: mix.mn: truth outside its 95% interval in $total_miss of 120 estimates (3 sites x 2 rates x 20 seeds)"
  check "mix.mn: truth outside the interval in $total_miss of 120 estimates (want <= 14)" '[ "$total_miss" -le 14 ]'
  grep '^[^ ]* [^ ]* out ' "$tmp/cover.txt" | head -10 | sed 's/^/pretenure:   missed: /'
else
  skip "python3 is not installed: the unbiased-sampling check (mix.mn) did not run"
fi

suite_end
