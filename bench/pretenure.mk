# bench/pretenure.mk: what pretenuring gains and costs, included by the
# top-level Makefile.
#   make bench-pretenure   bench/pretenure.sh: each case with and without
#                          --pretenure (words copied, collections, switches;
#                          paired CPU rounds and peak RSS; switches over 10
#                          seeds where nothing lives long; the feedback's
#                          callgrind cost); results in bench/results/pretenure*,
#                          findings in bench/PRETENURE.md
# Knobs: make bench-pretenure BENCH_PT_RUNS=5 BENCH_PT_PARTS="gc time"
#        BENCH_PT_CASES="survive table bench/pretenure/table.mn 2000000 5"
BENCH_PT_RUNS ?= 11
BENCH_PT_PARTS ?= gc time seeds ir callgrind

.PHONY: bench-pretenure

bench-pretenure: vm
	BENCH_PT_RUNS='$(BENCH_PT_RUNS)' BENCH_PT_PARTS='$(BENCH_PT_PARTS)' BENCH_PT_CASES='$(BENCH_PT_CASES)' \
	  bash bench/pretenure.sh
