# bench/retention.mk: what a trace's end state costs (included by the top-level Makefile).
#   make bench-retention   for each program of bench/programs and bench/leaks, traced at
#                          1e-4: callgrind instructions of the end state (the final major
#                          collection, the walk from the roots and the paths, the file)
#                          against the run's, wall times of the collection and the walk
#                          (from T.ctf.retain), peak RSS with and without it, bytes per
#                          reachable block. Results: bench/results/retention.csv; method
#                          and findings: bench/RETENTION.md.
# Knobs: make bench-retention BENCH_RET_RUNS=5 BENCH_RET_RATE=1e-4
#          BENCH_RET_CASES="programs/binary_trees 16;leaks/global_list 120000"

BENCH_RET_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BENCH_RET_RUNS ?= 5
BENCH_RET_RATE ?= 1e-4
BENCH_RET_CASES ?=
BENCH_RET_STATS := build/bench/retain_stats

.PHONY: bench-retention

$(BENCH_RET_STATS): $(BENCH_RET_DIR)/retain_stats.c build/release/trace/snapshot_reader.o build/release/trace/snapshot_file.o
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $^ $(LDLIBS)

bench-retention: vm $(BENCH_RET_STATS)
	BENCH_RET_RUNS='$(BENCH_RET_RUNS)' BENCH_RET_RATE='$(BENCH_RET_RATE)' BENCH_RET_CASES='$(BENCH_RET_CASES)' \
	  BENCH_RET_STATS='$(BENCH_RET_STATS)' BENCH_RET_OUT='$(BENCH_RET_DIR)/results' \
	  bash $(BENCH_RET_DIR)/retention_bench.sh
