# tests/gen/gen.mk: the program generator and the differential runs (issue
# 17), included by the top-level Makefile.
#   make fuzz-diff N=10000 SEED=100000   N programs from seed SEED on every build
N    ?= 10000
SEED ?= 100000
.PHONY: fuzz-diff
build/progen: tests/gen/progen.c
	@mkdir -p build
	$(CC) $(CSTD) $(WARN) -O1 -o $@ $<

fuzz-diff: build/progen vm vm-boehm vm-asan
	bash tests/gen/differential.sh $(N) $(SEED)

test: build/progen
