# bench/tools.mk: the trace tools' time and memory, included by the top-level Makefile.
#   make bench-tools   each analysing command of tools/memtrace on traces of
#                      10 M events or more (wall, CPU, peak RSS; medians of
#                      BENCH_TOOLS_RUNS runs), and the known-mix coverage of
#                      the 95 % intervals; bench/tools_bench.sh, results in
#                      bench/results/tools.csv and tools_coverage.csv,
#                      findings in bench/TOOLS.md
# Knob: make bench-tools BENCH_TOOLS_RUNS=5
BENCH_TOOLS_RUNS ?= 3

.PHONY: bench-tools

bench-tools: vm tools/memtrace
	BENCH_TOOLS_RUNS='$(BENCH_TOOLS_RUNS)' bash bench/tools_bench.sh

# make bench-deep-tools: the tools on 100,000- and 80,000-deep recursion
# (folded stacks, SVG, report, pprof, merge, top --by stack; go tool pprof
# -top; callgrind of pprof folded and whole): bench/deep_tools.sh, results in
# bench/results/deep_tools.csv and deep_tools_callgrind.csv, findings in
# bench/TOOLS.md ("Deep recursion").
.PHONY: bench-deep-tools
bench-deep-tools: vm tools/memtrace
	BENCH_DEEP_RUNS='$(BENCH_DEEP_RUNS)' bash bench/deep_tools.sh
BENCH_DEEP_RUNS ?= 3
