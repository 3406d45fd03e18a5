# bench/calls.mk: the call micro-benchmarks, included by the top-level Makefile.
#   make bench-calls    bench/calls/calls_*.mn (a loop of calls to a small function, a
#                       recursive fib, a closure call, a method-like call through a record
#                       field) against their twins on lua5.4, ocamlrun and ocamlopt:
#                       bench/peers_bench.sh's part 1 (rounds in a shuffled order, CPU
#                       time, paired ratios), results in bench/results/calls.csv,
#                       calls_checksums.csv, calls.dat, calls.png (bench/README.md, "Calls")
#   make calls-twins    only the OCaml twins (build/calls/NAME.byte, NAME.native), built as
#                       bench/peers.mk builds the programs' twins (plain ocamlc/ocamlopt,
#                       memprof_count linked first)
# Knobs: make bench-calls BENCH_CALLS_RUNS=11 BENCH_CALLS_IMPLS="vm ocamlopt"
#        BENCH_CALLS_CASES="calls_fib 30;calls_loop 1000000"

CALLS_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
CALLS_PROGS := $(sort $(notdir $(basename $(wildcard $(CALLS_DIR)/calls/*.ml))))
CALLS_OCAML_BINS := $(foreach p,$(CALLS_PROGS),build/calls/$(p).byte build/calls/$(p).native)
BENCH_CALLS_RUNS ?= 11
BENCH_CALLS_IMPLS ?= vm lua ocamlrun ocamlopt
BENCH_CALLS_CASES ?= calls_loop 50000000;calls_fib 35;calls_closure 40000000;calls_method 30000000
BENCH_CALLS_OUT ?= $(CALLS_DIR)/results

.PHONY: bench-calls calls-twins calls-twins-if-present
.PRECIOUS: build/calls/byte/%.cmo build/calls/native/%.cmx

build/calls/byte/%.cmo: $(CALLS_DIR)/calls/%.ml
	@mkdir -p $(dir $@)
	$(OCAMLC) -c -o $@ $<
build/calls/native/%.cmx: $(CALLS_DIR)/calls/%.ml
	@mkdir -p $(dir $@)
	$(OCAMLOPT) -c -o $@ $<
build/calls/%.byte: build/ocaml/byte/memprof_count.cmo build/calls/byte/%.cmo
	$(OCAMLC) -o $@ $^
build/calls/%.native: build/ocaml/native/memprof_count.cmx build/calls/native/%.cmx
	$(OCAMLOPT) -o $@ $^

calls-twins: $(CALLS_OCAML_BINS)

calls-twins-if-present:
	@if command -v $(OCAMLOPT) >/dev/null 2>&1 && command -v $(OCAMLC) >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory calls-twins; \
	else echo "bench-calls: warning: $(OCAMLOPT) or $(OCAMLC) not found (apt-get install ocaml-nox): no OCaml columns" >&2; fi

bench-calls: vm $(PEERS_RUNSTAT) calls-twins-if-present
	BENCH_PEERS_PARTS=programs BENCH_PEERS_IMPLS='$(BENCH_CALLS_IMPLS)' BENCH_PEERS_RUNS='$(BENCH_CALLS_RUNS)' \
	  BENCH_PEERS_CASES='$(BENCH_CALLS_CASES)' BENCH_PEERS_PROGRAMS='$(CALLS_DIR)/calls' \
	  BENCH_PEERS_LUA_TWINS='$(CALLS_DIR)/calls' BENCH_PEERS_OCAML_DIR=build/calls BENCH_PEERS_NAME=calls \
	  BENCH_PEERS_TITLE='Calls: median CPU time a run of the call micro-benchmarks (lower is better)' \
	  BENCH_PEERS_OUT='$(BENCH_CALLS_OUT)' bash $(CALLS_DIR)/peers_bench.sh
