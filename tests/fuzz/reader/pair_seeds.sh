#!/usr/bin/env bash
# pair_seeds.sh - regenerates tests/fuzz/reader/pairs (make fuzz-pair-seeds):
# the seeds of build/fuzz/fuzz_pair, each a trace and its snapshot file in
# one input (tests/fuzz/reader/fuzz_pair.c says the layout: "MNTPAIR1", the
# trace's length, an options byte and its value, then both files).
#   vm-*      real runs of ./vm: bench/servers programs and examples, small
#             rates and request counts, snapshots on a period (the timer's)
#             or at each new peak, and the end state; each pair in three
#             option sets. These (and mix-vm-*) differ from one
#             regeneration to the next (pid, times, how many snapshots the
#             timer takes); the generator's pairs are byte for byte the same.
#   gen-*     tests/fuzz/trace_gen.c's traces with their snapshot files
#             (gen-snap-NAME), with each structure-aware copy of the file
#             (cut, damaged), and its pairs that lie (gen-lie-NAME: a
#             snapshot naming ids the trace never allocated, counting
#             allocations past the trace's end, taken back in time, listing
#             a block the trace collected, an end state of another count).
#   mix-*     mismatched pairs made here: one plan's trace with another's
#             snapshot file (one pid and start time: ids and counts that
#             do not agree), a trace cut at half or to its header with its
#             whole snapshot file (snapshots past the trace's end), a trace
#             with an empty snapshot file.
# Inputs afl++ found (afl-*.pair, a run's queue through afl-cmin, those under
# 8 KB) are kept: they are not regenerated.
set -eu
cd "$(dirname "$0")/../../.."
out=tests/fuzz/reader/pairs
mkdir -p "$out"
find "$out" -maxdepth 1 -type f ! -name 'afl-*' -delete
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# pack OUT TRACE RETAIN [OPTIONS [AT]]
pack() {
  local t
  t=$(stat -c %s "$2")
  {
    printf 'MNTPAIR1'
    printf "\\x$(printf %02x $((t & 255)))\\x$(printf %02x $((t >> 8 & 255)))"
    printf "\\x$(printf %02x $((t >> 16 & 255)))\\x$(printf %02x $((t >> 24 & 255)))"
    printf "\\x$(printf %02x "${4:-0}")\\x$(printf %02x "${5:-0}")\\x00\\x00"
    cat "$2" "$3"
  } > "$1"
}

# ---------------------------------------------------------------- vm runs
# (options: 0 text, every default; 13 = JSON + "end"; 6 = --stdlib + snapshot 1)
vm_pair() {  # name, vm arguments...
  local name=$1
  shift
  MINNOW_SEED=1 ./vm --memtrace "$tmp/$name.ctf" "$@" > /dev/null 2>&1 || true
  [ -f "$tmp/$name.ctf.retain" ] || { echo "pair_seeds: $name wrote no snapshot file" >&2; exit 1; }
  pack "$out/vm-$name.pair" "$tmp/$name.ctf" "$tmp/$name.ctf.retain" 0
  pack "$out/vm-$name-json-end.pair" "$tmp/$name.ctf" "$tmp/$name.ctf.retain" 9
  pack "$out/vm-$name-stdlib-1.pair" "$tmp/$name.ctf" "$tmp/$name.ctf.retain" 6 1
}
srv=(--memtrace-rate 1.5e-4 --memtrace-snapshot-every 0.01)
vm_pair late_leak "${srv[@]}" bench/servers/late_leak.mn 40000
vm_pair ring_buffer "${srv[@]}" bench/servers/ring_buffer.mn 40000
vm_pair string_buffer "${srv[@]}" bench/servers/string_buffer.mn 40000
vm_pair memo_records "${srv[@]}" bench/servers/memo_records.mn 30000
vm_pair leaky_cache --memtrace-rate 1e-3 --minor-words 8192 --memtrace-snapshot-peak 1.5 examples/leaky_cache.mn
vm_pair word_freq --memtrace-rate 3e-3 --memtrace-snapshot-every 0.002 examples/word_freq.mn

# ---------------------------------------------------------------- generator
build/release/tests/fuzz_trace_gen "$tmp" 0 > /dev/null
build/release/tests/fuzz_trace_gen --lies "$tmp" > /dev/null
for t in "$tmp"/gen-snap-*.ctf "$tmp"/gen-lie-*.ctf; do
  name=$(basename "$t" .ctf)
  pack "$out/$name.pair" "$t" "$t.retain" 0
  pack "$out/$name-json-end.pair" "$t" "$t.retain" 9
  pack "$out/$name-at-2.pair" "$t" "$t.retain" 4 2
  pack "$out/$name-at-60p.pair" "$t" "$t.retain" 14 60
done
for r in "$tmp"/gen-snap-*.*.retain; do
  what=$(basename "$r" .retain)        # gen-snap-NAME.WHAT
  [ "${what##*.}" = ctf ] && continue  # the whole file: packed above
  pack "$out/$what.pair" "$tmp/${what%%.*}.ctf" "$r" 0
done

# ---------------------------------------------------------------- mismatched
plans=(snap-kinds snap-series snap-small)
for a in "${plans[@]}"; do
  for b in "${plans[@]}"; do
    [ "$a" = "$b" ] || pack "$out/mix-$a-trace-$b-retain.pair" "$tmp/gen-$a.ctf" "$tmp/gen-$b.ctf.retain" 0
  done
  size=$(stat -c %s "$tmp/gen-$a.ctf")
  head -c $((size / 2)) "$tmp/gen-$a.ctf" > "$tmp/half.ctf"
  pack "$out/mix-$a-half-trace.pair" "$tmp/half.ctf" "$tmp/gen-$a.ctf.retain" 0
  head -c 200 "$tmp/gen-$a.ctf" > "$tmp/head.ctf"
  pack "$out/mix-$a-head-trace.pair" "$tmp/head.ctf" "$tmp/gen-$a.ctf.retain" 0
  : > "$tmp/empty.retain"
  pack "$out/mix-$a-empty-retain.pair" "$tmp/gen-$a.ctf" "$tmp/empty.retain" 0
done
head -c $(($(stat -c %s "$tmp/late_leak.ctf") / 2)) "$tmp/late_leak.ctf" > "$tmp/half.ctf"
pack "$out/mix-vm-late_leak-half-trace.pair" "$tmp/half.ctf" "$tmp/late_leak.ctf.retain" 0
pack "$out/mix-vm-ring_buffer-trace-late_leak-retain.pair" "$tmp/ring_buffer.ctf" "$tmp/late_leak.ctf.retain" 0
ls "$out" | wc -l
du -sh "$out"
