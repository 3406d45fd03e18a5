# bench/hostile.mk: make bench-hostile (compile time and memory on big
# programs, bench/hostile.sh), included by the top-level Makefile.
.PHONY: bench-hostile
bench-hostile: vm
	BENCH_RUNS='$(or $(BENCH_RUNS),3)' bash bench/hostile.sh

# The trace tool's part (issue 23, class 3): crafted traces of bench/hostile_traces.c.
build/release/hostile_traces: bench/hostile_traces.c build/release/trace/writer.o trace/writer.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ bench/hostile_traces.c build/release/trace/writer.o
bench-hostile: tools/memtrace build/release/hostile_traces
test: build/release/hostile_traces
