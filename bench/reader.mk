# bench/reader.mk: the trace reader's speed, included by the top-level Makefile.
#   make bench-reader   events/s and MB/s of trace/reader.c (bench/reader_bench.sh)
# Tools built here: build/release/trace_gen (synthetic traces from the small
# independent encoder tests/trace/mini_encoder.h: the bench, the fuzz corpus,
# and tests/suites/trace_reader.sh's cross-check against memtrace's own
# dump_trace, hence a prerequisite of `make test`), build/release/trace_repeat
# (a fixture repeated into a large trace), build/release/reader_bench.
# Knobs: make bench-reader BENCH_READER_RUNS=7 BENCH_READER_CALLGRIND=0
BENCH_READER_RUNS ?= 5
BENCH_READER_CALLGRIND ?= 1

.PHONY: bench-reader

build/release/trace_gen: bench/trace_gen.c tests/trace/mini_encoder.h trace/format.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $<
test: build/release/trace_gen

build/release/trace_repeat: bench/trace_repeat.c trace/format.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $<

build/release/reader_bench: bench/reader_bench.c $(call obj,release,$(TRACE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $^ $(LDLIBS)

bench-reader: build/release/trace_gen build/release/trace_repeat build/release/reader_bench
	BENCH_READER_RUNS='$(BENCH_READER_RUNS)' BENCH_READER_CALLGRIND='$(BENCH_READER_CALLGRIND)' \
	  bash bench/reader_bench.sh
