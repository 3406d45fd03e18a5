# Minnow: bytecode VM, generational GC and statistical memory profiler.
# One hand-written Makefile. Builds land in build/<variant>/; binaries at the top.
#   make            ./vm (release, -O2)
#   make vm-boehm   ./vm-boehm, the same interpreter on Boehm GC (libgc-dev)
#   make vm-asan    ./vm-asan, AddressSanitizer + UndefinedBehaviorSanitizer
#   make vm-debug   ./vm-debug, every ASSERT checked (core/debug.h)
#   make vm-noprof  ./vm-noprof, every memprof hook compiled out; make vm-fp  ./vm-fp, frame pointers (perf)
#   make demo       trace examples/leaky_cache.mn: demo/report.html, timeline, flame graph
#   make test       every test suite; ends with one line "N passed, N failed"
#   make bench-gc / bench-memprof / bench-trace-writer / bench-trace / bench-tools / bench-leaks   benchmarks (bench/README.md)

CC      ?= gcc
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror
CFLAGS_release := -O2 -g
CFLAGS_boehm   := -O2 -g -DMINNOW_BOEHM=1
CFLAGS_noprof  := -O2 -g -DMINNOW_NO_MEMPROF=1
CFLAGS_debug   := -O1 -g -DMINNOW_DEBUG=1
CFLAGS_asan    := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CFLAGS_fp      := -O2 -g -fno-omit-frame-pointer
LDLIBS  := -lm

BASE_SRC  := $(wildcard base/*.c)
CORE_SRC  := $(wildcard core/*.c)
FRONT_SRC := $(wildcard lang/front/*.c)
RUNTIME_SRC := $(wildcard lang/runtime/*.c)
LIB_SRC   := $(wildcard lang/lib/*.c)
VM_SRC    := $(CORE_SRC) $(FRONT_SRC) $(RUNTIME_SRC) $(LIB_SRC) lang/vm.c
GC_SRC    := gc/heap.c gc/minor.c gc/major.c gc/roots.c gc/mark_paths.c gc/verify.c gc/raise.c
MEMPROF_SRC := $(wildcard memprof/*.c)
TRACE_SRC := $(wildcard trace/*.c)
MAIN_SRC  := lang/main.c
STDLIB    := $(sort $(wildcard stdlib/*.mn))

SRC_release := $(BASE_SRC) $(VM_SRC) $(GC_SRC) $(MEMPROF_SRC) $(TRACE_SRC)
SRC_asan    := $(SRC_release)
SRC_boehm   := $(BASE_SRC) $(VM_SRC) gc/boehm.c gc/raise.c $(MEMPROF_SRC) $(TRACE_SRC)
SRC_noprof  := $(SRC_release)
SRC_debug   := $(SRC_release)
SRC_fp      := $(SRC_release)

obj = $(patsubst %.c,build/$(1)/%.o,$(2))

.PHONY: all test unit-test lang-test clean bench-gc bench-memprof memtrace demo
all: vm tools/memtrace

build/embed: tools/embed.c
	@mkdir -p build
	$(CC) $(CSTD) $(WARN) -O1 -o $@ $<

lang/lib/stdlib.inc: build/embed $(STDLIB)
	build/embed $(STDLIB) > $@.tmp && mv $@.tmp $@

define variant
build/$(1)/%.o: %.c lang/lib/stdlib.inc
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CSTD) $$(WARN) $$(CFLAGS_$(1)) -MMD -MP -c $$< -o $$@
-include $$(patsubst %.o,%.d,$$(call obj,$(1),$$(SRC_$(1)) $$(MAIN_SRC)))
endef
$(foreach v,release boehm asan noprof debug fp,$(eval $(call variant,$(v))))

vm: $(call obj,release,$(SRC_release) $(MAIN_SRC))
	$(CC) $(CFLAGS_release) -o $@ $^ $(LDLIBS)

vm-boehm: $(call obj,boehm,$(SRC_boehm) $(MAIN_SRC))
	$(CC) $(CFLAGS_boehm) -o $@ $^ $(LDLIBS) -lgc

# The reference build for the profiler's cost when off (bench-memprof).
vm-noprof: $(call obj,noprof,$(SRC_noprof) $(MAIN_SRC))
	$(CC) $(CFLAGS_noprof) -o $@ $^ $(LDLIBS)

# The debug build: every ASSERT (core/debug.h) checks its invariant.
vm-debug: $(call obj,debug,$(SRC_debug) $(MAIN_SRC))
	$(CC) $(CFLAGS_debug) -o $@ $^ $(LDLIBS)

vm-asan: $(call obj,asan,$(SRC_asan) $(MAIN_SRC))
	$(CC) $(CFLAGS_asan) -o $@ $^ $(LDLIBS)

# The release build with frame pointers, for perf record --call-graph=fp
# (bench/trace_bench.sh).
vm-fp: $(call obj,fp,$(SRC_fp) $(MAIN_SRC))
	$(CC) $(CFLAGS_fp) -o $@ $^ $(LDLIBS)

# ---------------------------------------------------------------- unit tests
# tests/unit/debug_*.c check the debug build's ASSERTs: built against it only.
UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))
DEBUG_UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/debug_*.c))
# test_tool_*.c test the trace tool's modules: they link its objects too.
MEMTRACE_SRC := $(wildcard tools/memtrace_cli/*.c tools/memtrace_cli/*/*.c)
unit_tool_src = $(if $(filter test_tool_%,$(1)),$(filter-out tools/memtrace_cli/main.c,$(MEMTRACE_SRC)))
build/%/unit/test_%: ;
build/%/unit/debug_%: ;
define unit
build/$(1)/unit/$(2): tests/unit/$(2).c $(wildcard tests/unit/*.h) $(call obj,$(1),$(SRC_$(1)) $(call unit_tool_src,$(2)))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CSTD) $$(WARN) $$(CFLAGS_$(1)) -Itrace -Itools/memtrace_cli -o $$@ $$(filter %.c %.o,$$^) $$(LDLIBS) $(if $(call unit_tool_src,$(2)),-lz) -lcmocka
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit,release,$(t))) $(eval $(call unit,asan,$(t))))
$(foreach t,$(DEBUG_UNIT_TESTS),$(eval $(call unit,debug,$(t))))

unit-bins: $(foreach t,$(UNIT_TESTS),build/release/unit/$(t) build/asan/unit/$(t)) \
           $(foreach t,$(DEBUG_UNIT_TESTS),build/debug/unit/$(t))

# trace_synth: synthetic traces and the dump memtrace's tool must print for
# them (tests/suites/trace_writer.sh), and the encoder benchmark's stream.
TEST_TOOLS := build/release/tests/trace_synth build/asan/tests/trace_synth build/release/tests/retain_dump \
              build/release/tests/snapshot_synth
# retain_dump: a snapshot file's last snapshot as text (tests/suites/end_state.sh).
build/%/tests/retain_dump: tests/trace/retain_dump.c build/%/trace/snapshot_reader.o build/%/trace/snapshot_file.o
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_$*) -o $@ $^ $(LDLIBS)
# snapshot_synth: synthetic snapshot files (the reader's fuzz seeds, tests).
build/%/tests/snapshot_synth: tests/trace/snapshot_synth.c build/%/trace/snapshot_writer.o build/%/trace/snapshot_file.o
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_$*) -o $@ $^ $(LDLIBS)
build/%/tests/trace_synth: tests/trace/trace_synth.c build/%/trace/writer.o
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_$*) -o $@ $^ $(LDLIBS)

# ---------------------------------------------------------------- trace tools
# tools/memtrace, the trace tool (sources and README in tools/memtrace_cli/),
# and its ASan+UBSan build for the tests. zlib: gzipped pprof profiles.
memtrace: tools/memtrace
tools/memtrace: $(call obj,release,$(MEMTRACE_SRC) $(TRACE_SRC) $(BASE_SRC))
	$(CC) $(CFLAGS_release) -o $@ $^ $(LDLIBS) -lz
build/asan/memtrace: $(call obj,asan,$(MEMTRACE_SRC) $(TRACE_SRC) $(BASE_SRC))
	$(CC) $(CFLAGS_asan) -o $@ $^ $(LDLIBS) -lz
-include $(patsubst %.o,%.d,$(call obj,release,$(MEMTRACE_SRC)) $(call obj,asan,$(MEMTRACE_SRC)))

# make demo: a traced run of examples/leaky_cache.mn and what the trace tools
# make of it, written to demo/ (tools/demo.sh says what and why).
demo: vm tools/memtrace
	@tools/demo.sh

test: vm vm-boehm vm-asan vm-debug unit-bins $(TEST_TOOLS) tools/memtrace build/asan/memtrace
	@tests/run_all.sh

clean:
	rm -rf build vm vm-boehm vm-asan vm-debug vm-noprof vm-fp tools/memtrace lang/lib/stdlib.inc

-include bench/bench.mk
-include bench/memprof.mk
-include bench/trace.mk
-include bench/reader.mk
-include tests/fuzz/reader.mk
-include bench/hostile.mk
-include bench/scale.mk
-include bench/hashtbl.mk
-include bench/peers.mk
-include bench/calls.mk
-include bench/leaks.mk
-include bench/tools.mk
-include tests/fuzz/vm.mk
-include tests/gen/gen.mk
-include bench/retention.mk
-include bench/pretenure.mk
