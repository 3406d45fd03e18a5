#!/usr/bin/env bash
# seeds.sh - regenerates tests/fuzz/reader/corpus (make fuzz-reader-seeds):
# small valid traces. From each fixture, its packets up to the first event
# packet cut to its first 12 events (build/fuzz/seed_head); from
# build/release/trace_gen, 40-event traces in versions 1, 2 and 3 and the
# shallow, deep and recursive shapes (the deep ones grow their stacks first,
# so they stay small at 40 events), three v3 domains taking turns, and two
# allocations whose backtrace the writer cuts (the second's common prefix
# exceeds the first's decoded length); from our writer's synth
# (build/release/tests/trace_synth), its frame-code-0 and mixed scenarios.
# From tests/fuzz/trace_gen.c (build/release/tests/fuzz_trace_gen): its
# well-formed bases and 12 structure-aware mutants of each (6 of the deep
# recursion cycles), gen-*.ctf, and traces with their snapshot files
# (gen-snap-NAME.ctf and .ctf.retain) and the snapshot files' structure-aware
# copies, gen-snap-NAME.WHAT.retain (cut-N, bad-WHAT[-at-N], any-WHAT)
# (tests/suites/trace_differential.sh runs every command on them, and the
# holders' commands on each snapshot file with its trace). From
# ./vm, end-state files (end-*.retain); from build/release/tests/snapshot_synth,
# snapshot files of every record kind, one cut by a killed run, a series
# (snap-*.retain).
# The inputs afl++ found (afl-*.ctf: a run's queue through afl-cmin, those
# under 8 KB) are kept: they are not regenerated.
set -eu
cd "$(dirname "$0")/../../.."
out=tests/fuzz/reader/corpus
find "$out" -maxdepth 1 -type f ! -name 'afl-*' -delete
for f in tests/fixtures/memtrace/*.ctf; do
  build/fuzz/seed_head "$f" 12 "$out/head-$(basename "$f" .ctf).ctf"
done
for v in 1 2 3; do
  build/release/trace_gen --version $v --shape shallow --events 40 --seed $v "$out/synth-shallow-v$v.ctf"
done
build/release/trace_gen --shape deep --events 40 "$out/synth-deep.ctf"
build/release/trace_gen --shape recursive --events 20 "$out/synth-recursive.ctf"
build/release/trace_gen --version 3 --domains 3 --events 160 "$out/synth-domains-v3.ctf"
build/release/trace_gen --shape cut --events 4 "$out/synth-cut.ctf"
build/release/tests/trace_synth --scenario zero --events 40 --seed 5 "$out/writer-zero.ctf"
build/release/tests/trace_synth --scenario mixed --events 40 --seed 5 "$out/writer-mixed.ctf"
build/release/tests/fuzz_trace_gen "$out" 12 > /dev/null
# End-state files (T.ctf.retain, which the harness reads by their magic): every
# root and hop kind (tests/retention), and five bench/leaks shapes at 1e-4.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in kinds raised; do
  ./vm tests/retention/$t.mn "$tmp/$t.ctf" > /dev/null
  cp "$tmp/$t.ctf.retain" "$out/end-$t.retain"
done
for s in kinds killed series; do
  build/release/tests/snapshot_synth $s "$out/snap-$s.retain"
done
for p in closures every_fourth global_list memo_table request_log; do
  MINNOW_SEED=1 ./vm --memtrace "$tmp/$p.ctf" --memtrace-rate 1e-4 bench/leaks/$p.mn > /dev/null
  cp "$tmp/$p.ctf.retain" "$out/end-$p.retain"
done
ls -l "$out"
