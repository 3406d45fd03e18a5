# bench/scale.mk: make bench-scale (bench/scale.sh: the trace tool on traces
# of real size and on crafted shapes at 1x to 8x), included by the Makefile.
.PHONY: bench-scale
build/release/scale_traces: bench/scale_traces.c build/release/trace/writer.o trace/writer.h trace/format.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ bench/scale_traces.c build/release/trace/writer.o
bench-scale: vm tools/memtrace build/release/scale_traces
	bash bench/scale.sh
