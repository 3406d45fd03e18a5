# Minnow: bytecode VM, generational GC and statistical memory profiler.
# One hand-written Makefile. Builds land in build/<variant>/; binaries at the top.
#   make            ./vm (release, -O2)
#   make vm-boehm   ./vm-boehm, the same interpreter on Boehm GC (libgc-dev)
#   make vm-asan    ./vm-asan, AddressSanitizer + UndefinedBehaviorSanitizer
#   make test       every test suite; ends with one line "N passed, N failed"
#   make bench-gc / bench-memprof   benchmarks (bench/README.md)

CC      ?= gcc
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror
CFLAGS_release := -O2 -g
CFLAGS_boehm   := -O2 -g -DMINNOW_BOEHM=1
CFLAGS_noprof  := -O2 -g -DMINNOW_NO_MEMPROF=1
CFLAGS_asan    := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDLIBS  := -lm

FRONT_SRC := lang/arena.c lang/lexer.c lang/parser.c lang/ast_dump.c
VM_SRC    := $(FRONT_SRC) lang/compiler.c lang/disasm.c lang/frames.c lang/interp.c lang/ops.c \
             lang/shapes.c lang/primitives.c lang/builtins_core.c lang/builtins_string.c \
             lang/builtins_array.c lang/builtins_buffer.c lang/builtins_gc.c lang/stdlib_sources.c lang/vm.c
GC_SRC    := gc/heap.c gc/minor.c gc/major.c gc/roots.c gc/verify.c
MEMPROF_SRC := $(filter-out %_test.c,$(wildcard memprof/*.c))
MAIN_SRC  := lang/main.c
STDLIB    := $(sort $(wildcard stdlib/*.mn))

SRC_release := $(VM_SRC) $(GC_SRC) $(MEMPROF_SRC)
SRC_asan    := $(SRC_release)
SRC_boehm   := $(VM_SRC) gc/boehm.c $(MEMPROF_SRC)
SRC_noprof  := $(SRC_release)

obj = $(patsubst %.c,build/$(1)/%.o,$(2))

.PHONY: all test unit-test lang-test clean bench-gc bench-memprof
all: vm

build/embed: tools/embed.c
	@mkdir -p build
	$(CC) $(CSTD) $(WARN) -O1 -o $@ $<

lang/stdlib.inc: build/embed $(STDLIB)
	build/embed $(STDLIB) > $@.tmp && mv $@.tmp $@

define variant
build/$(1)/%.o: %.c lang/stdlib.inc
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CSTD) $$(WARN) $$(CFLAGS_$(1)) -MMD -MP -c $$< -o $$@
-include $$(patsubst %.o,%.d,$$(call obj,$(1),$$(SRC_$(1)) $$(MAIN_SRC)))
endef
$(foreach v,release boehm asan noprof,$(eval $(call variant,$(v))))

vm: $(call obj,release,$(SRC_release) $(MAIN_SRC))
	$(CC) $(CFLAGS_release) -o $@ $^ $(LDLIBS)

vm-boehm: $(call obj,boehm,$(SRC_boehm) $(MAIN_SRC))
	$(CC) $(CFLAGS_boehm) -o $@ $^ $(LDLIBS) -lgc

# The reference build for the profiler's cost when off (bench-memprof).
vm-noprof: $(call obj,noprof,$(SRC_noprof) $(MAIN_SRC))
	$(CC) $(CFLAGS_noprof) -o $@ $^ $(LDLIBS)

vm-asan: $(call obj,asan,$(SRC_asan) $(MAIN_SRC))
	$(CC) $(CFLAGS_asan) -o $@ $^ $(LDLIBS)

# ---------------------------------------------------------------- unit tests
UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))
build/%/unit/test_%: ;
define unit
build/$(1)/unit/$(2): tests/unit/$(2).c $(wildcard tests/unit/*.h) $(call obj,$(1),$(SRC_$(1)))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CSTD) $$(WARN) $$(CFLAGS_$(1)) -Ilang -Igc -Imemprof -o $$@ $$(filter %.c %.o,$$^) $$(LDLIBS) -lcmocka
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit,release,$(t))) $(eval $(call unit,asan,$(t))))

unit-bins: $(foreach t,$(UNIT_TESTS),build/release/unit/$(t) build/asan/unit/$(t))

test: vm vm-boehm vm-asan unit-bins
	@tests/run_all.sh

clean:
	rm -rf build vm vm-boehm vm-asan vm-noprof lang/stdlib.inc

-include bench/bench.mk
-include bench/memprof.mk
-include bench/peers.mk
