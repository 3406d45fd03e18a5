# bench/hostile.mk: make bench-hostile (compile time and memory on big
# programs, bench/hostile.sh), included by the top-level Makefile.
.PHONY: bench-hostile
bench-hostile: vm
	BENCH_RUNS='$(or $(BENCH_RUNS),3)' bash bench/hostile.sh
