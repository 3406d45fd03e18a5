#!/usr/bin/env bash
# demo.sh - `make demo`: traces examples/leaky_cache.mn (a cache that never
# evicts) with ./vm --memtrace, then writes what tools/memtrace makes of it
# into demo/ (generated, not committed): the HTML report, the live heap chart
# (by gnuplot, when installed), the flame graph; prints the top sites and the
# leak verdict from the end state (what keeps the leak: "Kept by"), and the
# paths written. Run from the top of the tree after
# `make` (the Makefile's demo target builds ./vm and tools/memtrace first).
#
# The rate (1e-2: about 12,000 samples) and the small minor heap (32,768
# words, 256 KiB: the 9.4 MiB the program allocates go through some forty
# minor collections, as a long-running program's would, instead of fitting
# in the default 16 MiB one) give a detailed picture in well under a second.
set -eu
cd "$(dirname "$0")/.."
out=demo
rate=1e-2
mkdir -p "$out"
run() { echo "\$ $*"; "$@"; }

run ./vm --minor-words 32768 --memtrace "$out/leaky_cache.ctf" --memtrace-rate "$rate" examples/leaky_cache.mn
echo
run tools/memtrace top -n 5 "$out/leaky_cache.ctf"
echo
# leaks exits 3 when it finds a leak (0: none, 4: cannot judge): this one does
run tools/memtrace leaks -n 1 "$out/leaky_cache.ctf" || [ $? -eq 3 ]
echo
tools/memtrace report "$out/leaky_cache.ctf" -o "$out/report.html"
tools/memtrace flamegraph "$out/leaky_cache.ctf" -o "$out/flame.svg"
timeline="$out/timeline.svg     live heap over time, top sites stacked (gnuplot)"
if command -v gnuplot >/dev/null; then
  tools/memtrace timeline "$out/leaky_cache.ctf" -o "$out/timeline.svg"
else
  rm -f "$out/timeline.svg"
  timeline="(no timeline.svg: gnuplot is not installed; report.html draws the same chart without it)"
fi
cat <<END
wrote:
  $out/leaky_cache.ctf  the trace (memtrace's CTF format: tools/memtrace dump/info/... read it)
  $out/report.html      the report, one self-contained page: open file://$PWD/$out/report.html
  $out/flame.svg        flame graph of the bytes allocated (click a frame to zoom)
  $timeline
END
