# bench/leaks.mk: how well `memtrace leaks` judges bench/leaks, included by
# the top-level Makefile.
#   make bench-leaks   ten programs (five leaking, five not) x rates 1e-3 and
#                      1e-4 x MINNOW_SEED 1..10, default heap; bench/leaks_eval.sh,
#                      results in bench/results/leaks_eval.csv, findings in
#                      bench/LEAKS.md
# Knobs: make bench-leaks BENCH_LEAKS_SEEDS=20 BENCH_LEAKS_RATES="1e-3 1e-4 1e-5"
BENCH_LEAKS_SEEDS ?= 10
BENCH_LEAKS_RATES ?= 1e-3 1e-4

.PHONY: bench-leaks

bench-leaks: vm tools/memtrace
	SEEDS='$(BENCH_LEAKS_SEEDS)' RATES='$(BENCH_LEAKS_RATES)' bash bench/leaks_eval.sh
