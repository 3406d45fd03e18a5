# bench/peers.mk: Minnow against the runtimes a user would pick instead, included by
# the top-level Makefile. See bench/README.md ("Against other runtimes").
#   make bench-peers         vm, vm-boehm, lua5.4 (idiomatic twins), ocamlrun and ocamlopt
#                            on every program of bench/programs, interleaved run by run;
#                            start-up and a small program; ./vm --memprof-count against
#                            OCaml's Gc.Memprof. Writes bench/results/peers*.csv, peers*.png
#   make bench-peers-quick   everything once at small sizes: do the checksums agree?
#   make ocaml-twins         only build the OCaml twins (build/ocaml/NAME.byte, NAME.native)
# Knobs: make bench-peers BENCH_PEERS_RUNS=3 BENCH_PEERS_IMPLS="vm ocamlopt"
#        BENCH_PEERS_CASES="binary_trees 14;deep_map 10000 100" BENCH_PEERS_PARTS="programs startup"
#        BENCH_PEERS_MP_RUNS=3 BENCH_PEERS_MP_RATES="1e-4" BENCH_PEERS_MP_CASES=...
#        (every knob of bench/peers_bench.sh, whose header lists them, as a make
#        variable or in the environment)

PEERS_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
OCAMLC ?= ocamlc
OCAMLOPT ?= ocamlopt
# Every program of bench/programs has a twin bench/ocaml/NAME.ml; empty.ml is the
# start-up row's empty program. memprof_count.ml is linked first into each of them.
PEERS_OCAML_PROGS := $(sort $(notdir $(basename $(wildcard $(PEERS_DIR)/programs/*.mn)))) empty
PEERS_OCAML_BINS := $(foreach p,$(PEERS_OCAML_PROGS),build/ocaml/$(p).byte build/ocaml/$(p).native)
PEERS_RUNSTAT := build/bench/runstat
PEERS_QUICK_CASES := binary_trees 10;list_pipeline 1000 20;deep_map 1000 20;word_count 20000;string_build 2000 5

.PHONY: bench-peers bench-peers-quick ocaml-twins peers-ocaml-if-present
# Keep the compiled modules (make would delete them as intermediates of the links).
.PRECIOUS: build/ocaml/byte/%.cmo build/ocaml/native/%.cmx

$(PEERS_RUNSTAT): $(PEERS_DIR)/runstat.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $<

# ocamlc/ocamlopt -c -o put the .cmo/.cmx (and .cmi, .o) in build/, not beside the sources.
build/ocaml/byte/%.cmo: $(PEERS_DIR)/ocaml/%.ml
	@mkdir -p $(dir $@)
	$(OCAMLC) -c -o $@ $<
build/ocaml/native/%.cmx: $(PEERS_DIR)/ocaml/%.ml
	@mkdir -p $(dir $@)
	$(OCAMLOPT) -c -o $@ $<
build/ocaml/%.byte: build/ocaml/byte/memprof_count.cmo build/ocaml/byte/%.cmo
	$(OCAMLC) -o $@ $^
build/ocaml/%.native: build/ocaml/native/memprof_count.cmx build/ocaml/native/%.cmx
	$(OCAMLOPT) -o $@ $^

ocaml-twins: $(PEERS_OCAML_BINS)

# Without OCaml the OCaml columns are skipped (with a warning from the script).
peers-ocaml-if-present:
	@if command -v $(OCAMLOPT) >/dev/null 2>&1 && command -v $(OCAMLC) >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory ocaml-twins; \
	else echo "bench-peers: warning: $(OCAMLOPT) or $(OCAMLC) not found (apt-get install ocaml-nox): no OCaml columns" >&2; fi

# The knobs reach the script through the environment (make exports command-line variables).
bench-peers: vm vm-boehm $(PEERS_RUNSTAT) peers-ocaml-if-present
	BENCH_PEERS_OUT='$(or $(BENCH_PEERS_OUT),$(PEERS_DIR)/results)' \
	  bash $(PEERS_DIR)/peers_bench.sh

bench-peers-quick: vm vm-boehm $(PEERS_RUNSTAT) peers-ocaml-if-present
	BENCH_PEERS_RUNS=1 BENCH_PEERS_MP_RUNS=1 BENCH_PEERS_STARTUP_RUNS=1 \
	  BENCH_PEERS_CASES='$(PEERS_QUICK_CASES)' BENCH_PEERS_MP_CASES='$(PEERS_QUICK_CASES)' \
	  BENCH_PEERS_SMALL='binary_trees 6' BENCH_PEERS_OUT='$(PEERS_DIR)/results/quick' \
	  bash $(PEERS_DIR)/peers_bench.sh
