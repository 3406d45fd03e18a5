# bench/memprof.mk: profiler benchmarks, included by the top-level Makefile.
#   make bench-memprof        run time of bench/programs with the profiler off and at
#                             each rate (counting tracker), plus the cost of one sample
#                             split into its parts (bench/micro/memprof_micro.c)
#   make bench-memprof-quick  every program once at a small size (does it all run?)
#   make callgrind-memprof    callgrind instruction counts: ./vm (profiler off) against
#                             ./vm-noprof (built without it)
# Results in bench/results/memprof*.csv, memprof.png, callgrind_memprof.csv.
# Method and how to read them: bench/MEMPROF.md.
# Knobs: make bench-memprof BENCH_MP_RUNS=3 BENCH_MP_RATES="1e-5 1e-4"
#        BENCH_MP_CASES="binary_trees 14;deep_map 10000 100"

BENCH_MP_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BENCH_MP_RUNS ?= 5
BENCH_MP_RATES ?= 1e-6 1e-5 1e-4 1e-3 1e-2
BENCH_MP_CASES ?=
BENCH_MP_OUT ?= $(BENCH_MP_DIR)/results
BENCH_MP_MICRO := build/bench/memprof_micro
# The runtime without lang/main.o (SRC_release, from the top-level Makefile, lists
# every source of ./vm but main.c).
BENCH_MP_OBJS = $(patsubst %.c,build/release/%.o,$(SRC_release))
BENCH_MP_QUICK_CASES := binary_trees 10;list_pipeline 1000 20;deep_map 1000 20;word_count 20000;string_build 2000 5

.PHONY: bench-memprof bench-memprof-quick callgrind-memprof

# -Wl,--wrap=lib_gc_verify: Gc.verify() becomes the micro benchmark's hook
# (see the comment at the top of memprof_micro.c).
$(BENCH_MP_MICRO): $(BENCH_MP_DIR)/micro/memprof_micro.c $(BENCH_MP_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $^ $(LDLIBS) -Wl,--wrap=lib_gc_verify

bench-memprof: vm vm-noprof $(BENCH_MP_MICRO)
	BENCH_MP_RUNS='$(BENCH_MP_RUNS)' BENCH_MP_RATES='$(BENCH_MP_RATES)' BENCH_MP_CASES='$(BENCH_MP_CASES)' \
	  BENCH_MP_MICRO='$(BENCH_MP_MICRO)' BENCH_MP_OUT='$(BENCH_MP_OUT)' \
	  bash $(BENCH_MP_DIR)/memprof_bench.sh time

bench-memprof-quick: vm vm-noprof $(BENCH_MP_MICRO)
	BENCH_MP_RUNS=1 BENCH_MP_RATES='$(BENCH_MP_RATES)' BENCH_MP_CASES='$(BENCH_MP_QUICK_CASES)' \
	  BENCH_MP_MICRO='$(BENCH_MP_MICRO)' BENCH_MP_MICRO_ARGS='--quick --reps 1' \
	  BENCH_MP_OUT='$(BENCH_MP_OUT)/quick' \
	  bash $(BENCH_MP_DIR)/memprof_bench.sh time

callgrind-memprof: vm vm-noprof
	BENCH_MP_CASES='$(BENCH_MP_CASES)' BENCH_MP_OUT='$(BENCH_MP_OUT)' \
	  bash $(BENCH_MP_DIR)/memprof_bench.sh callgrind

# make bench-memprof-deep: callstacks through the Memprof module on a
# 100,000-frame recursion, every frame kept vs callstack_size 10 (callgrind).
.PHONY: bench-memprof-deep
bench-memprof-deep: vm
	bash $(BENCH_MP_DIR)/memprof_deep.sh

# make bench-memprof-module: the Memprof module's callbacks on a 100,000-frame
# recursion against the profiler off and the C counting tracker (issue 33's
# floors; bench/memprof_module.sh, results/memprof_module.*).
.PHONY: bench-memprof-module
bench-memprof-module: vm build/bench/runstat
	bash $(BENCH_MP_DIR)/memprof_module.sh
