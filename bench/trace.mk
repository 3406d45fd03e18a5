# bench/trace.mk: the trace benchmarks, included by the top-level Makefile.
#   make bench-trace-writer   callgrind instructions per allocation event inside
#                             trace_writer_alloc, on the streams of
#                             bench/micro/trace_writer_micro.c; results in
#                             bench/results/trace_writer_cost.csv
#   make bench-trace          ./vm --memtrace against perf record on bench/programs:
#                             bytes per sample, cost (callgrind and paired times),
#                             writer cost, reader speed, what a sample names
#                             (bench/trace_bench.sh; findings in bench/TRACE.md)
#   make bench-trace-pairs    paired CPU times, profiler off and --memtrace, on the deep
#                             programs (bench/trace_pairs.sh)
#   (./vm-fp, the release build with frame pointers that perf record
#   --call-graph=fp needs, is the top-level Makefile's `make vm-fp`)
# Knobs: make bench-trace-writer BENCH_TW_EVENTS=200000
#        make bench-trace BENCH_TRACE_RUNS=5 BENCH_TRACE_RATES="1e-5 1e-4"
#          BENCH_TRACE_CASES="binary_trees 16;deep_map 10000 400" BENCH_TRACE_PERF=no
#          (more in bench/trace_bench.sh)

BENCH_TW_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BENCH_TW_EVENTS ?= 200000
BENCH_TW_MICRO := build/bench/trace_writer_micro

.PHONY: bench-trace-writer

$(BENCH_TW_MICRO): $(BENCH_TW_DIR)/micro/trace_writer_micro.c build/release/trace/writer.o
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $^ $(LDLIBS)

bench-trace-writer: $(BENCH_TW_MICRO)
	BENCH_TW_MICRO='$(BENCH_TW_MICRO)' BENCH_TW_EVENTS='$(BENCH_TW_EVENTS)' \
	  BENCH_TW_OUT='$(BENCH_TW_DIR)/results' bash $(BENCH_TW_DIR)/trace_writer_bench.sh

# ---------------------------------------------------------------- bench-trace
BENCH_TR_SITES := build/bench/trace_sites
$(BENCH_TR_SITES): $(BENCH_TW_DIR)/micro/trace_sites.c $(call obj,release,$(TRACE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $^ $(LDLIBS)

BENCH_TRACE_RUNS ?= 5
BENCH_TRACE_RATES ?= 1e-6 1e-5 1e-4 1e-3
.PHONY: bench-trace bench-trace-quick
bench-trace: vm vm-fp tools/memtrace $(BENCH_TR_SITES) build/release/reader_bench
	BENCH_TRACE_RUNS='$(BENCH_TRACE_RUNS)' BENCH_TRACE_RATES='$(BENCH_TRACE_RATES)' \
	  BENCH_TRACE_OUT='$(BENCH_TW_DIR)/results' bash $(BENCH_TW_DIR)/trace_bench.sh
# Every step once at small sizes, into bench/results/quick (does it all run?).
bench-trace-quick: vm vm-fp tools/memtrace $(BENCH_TR_SITES) build/release/reader_bench
	BENCH_TRACE_RUNS=1 BENCH_TRACE_RATES='1e-5 1e-4' BENCH_TRACE_PERF_RATES='1e-4' BENCH_TRACE_READ_REPS=3 \
	  BENCH_TRACE_CASES='binary_trees 12;deep_map 1000 20' BENCH_TRACE_CG_CASES='binary_trees 10;deep_map 1000 10' \
	  BENCH_TRACE_OUT='$(BENCH_TW_DIR)/results/quick' bash $(BENCH_TW_DIR)/trace_bench.sh

# make bench-trace-pairs: --memtrace's cost in time on the deep programs, paired
# alternating runs (bench/trace_pairs.sh; BENCH_PAIRS_VM_BEFORE=path traces with
# an earlier build in the same rounds). Results in bench/results/trace_pairs.csv.
.PHONY: bench-trace-pairs
bench-trace-pairs: vm
	bash $(BENCH_TW_DIR)/trace_pairs.sh
