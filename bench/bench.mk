# bench/bench.mk: benchmark targets, included by the top-level Makefile.
# bench-gc times bench/programs on ./vm, ./vm-boehm and lua5.4 (see bench/README.md);
# bench-gc-quick runs every program once at small sizes, to check that checksums agree.
# bench-gc-share splits each program's time on vm and vm-boehm (perf) into the shared
# interpreter, the allocator and collector, and the kernel (bench/gc_share.sh).
# Knobs: make bench-gc BENCH_RUNS=3 BENCH_IMPLS="vm boehm"

BENCH_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BENCH_RUNS ?= 5
BENCH_IMPLS ?= vm boehm lua
BENCH_QUICK_CASES := binary_trees 10;list_pipeline 1000 20;deep_map 1000 20;word_count 20000;string_build 2000 5

.PHONY: bench-gc bench-gc-quick bench-gc-share

bench-gc: vm vm-boehm
	BENCH_RUNS='$(BENCH_RUNS)' BENCH_IMPLS='$(BENCH_IMPLS)' \
	  BENCH_OUT='$(BENCH_DIR)/results' bash $(BENCH_DIR)/gc_bench.sh

bench-gc-quick: vm vm-boehm
	BENCH_RUNS=1 BENCH_IMPLS='$(BENCH_IMPLS)' BENCH_CASES='$(BENCH_QUICK_CASES)' \
	  BENCH_OUT='$(BENCH_DIR)/results/quick' bash $(BENCH_DIR)/gc_bench.sh

bench-gc-share: vm vm-boehm
	BENCH_RUNS='$(or $(BENCH_SHARE_RUNS),3)' BENCH_OUT='$(BENCH_DIR)/results' bash $(BENCH_DIR)/gc_share.sh
