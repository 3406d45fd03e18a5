# bench/leaks.mk: how well `memtrace leaks` names what leaks, and what a
# snapshot costs (issue 30; issue 22 before it), included by the top-level
# Makefile. Findings in bench/LEAKS.md.
#   make bench-leaks      bench/leaks_eval.sh: the servers of bench/servers
#                         killed by SIGKILL after 3 periodic snapshots (series),
#                         and the servers and bench/leaks run to their end with
#                         the default options (end), at rates 1e-3 and 1e-4,
#                         MINNOW_SEED 1..10: recall and false positives
#                         against each program's stated truth
#                         (results/leaks_*.csv, leaks_summary.txt, leaks.png);
#                         then bench/snapshot_pause.sh: a snapshot's pause
#                         against Gc.full_major() of the same heap, and its
#                         memory a sampled live block (results/snapshot_*).
#   make bench-snapshots  bench/snapshot_cost.sh: callgrind instructions of the
#                         end state against one major collection on every
#                         bench program, of deep_map 10000 40's end state with
#                         no sampled survivor, and of a snapshot a second at
#                         1e-4 (results/snapshot_cost*.csv).
# Knobs: make bench-leaks BENCH_LEAKS_SEEDS=20 BENCH_LEAKS_RATES="1e-3 1e-4 1e-5" \
#        BENCH_LEAKS_MODES="series end term"
BENCH_LEAKS_SEEDS ?= 10
BENCH_LEAKS_RATES ?= 1e-3 1e-4
BENCH_LEAKS_MODES ?= series end

.PHONY: bench-leaks bench-snapshots

bench-leaks: vm tools/memtrace
	SEEDS='$(BENCH_LEAKS_SEEDS)' RATES='$(BENCH_LEAKS_RATES)' MODES='$(BENCH_LEAKS_MODES)' bash bench/leaks_eval.sh
	bash bench/snapshot_pause.sh

bench-snapshots: vm
	bash bench/snapshot_cost.sh
