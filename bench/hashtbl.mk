# bench/hashtbl.mk: make bench-hashtbl (hash and Hashtbl: 100,000-key builds
# of each kind of key against the 50 ms floor, callgrind instructions of
# word_count; bench/hashtbl.sh), included by the top-level Makefile.
#   make bench-hashtbl BENCH_RUNS=9 BENCH_BASE=/path/to/older/vm
.PHONY: bench-hashtbl
bench-hashtbl: vm build/bench/runstat
	BENCH_RUNS='$(or $(BENCH_RUNS),7)' BENCH_BASE='$(BENCH_BASE)' bash bench/hashtbl.sh
