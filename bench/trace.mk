# bench/trace.mk: the trace encoder's benchmark, included by the top-level Makefile.
#   make bench-trace-writer   callgrind instructions per allocation event inside
#                             trace_writer_alloc, on the streams of
#                             bench/micro/trace_writer_micro.c; results in
#                             bench/results/trace_writer_cost.csv
# Knob: make bench-trace-writer BENCH_TW_EVENTS=200000

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
