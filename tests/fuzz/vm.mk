# tests/fuzz/vm.mk: the VM's in-process fuzz target (tests/fuzz/README.md),
# included by the top-level Makefile.
#   make fuzz                 afl++ on build/fuzz/fuzz_vm for FUZZ_SECONDS (default 600)
#   make fuzz-replay          build/fuzzreplay/fuzz_replay (gcc, ASan+UBSan): replays inputs
# Both are MINNOW_FUZZ builds (a step budget in the interpreter); neither is
# part of ./vm.
FUZZ_CC      ?= afl-clang-fast
FUZZ_SECONDS ?= 600
FUZZ_OUT     ?= build/fuzz/out
FUZZ_FLAGS   := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
                -DMINNOW_FUZZ=1
FUZZ_SRC     := $(SRC_release) tests/fuzz/fuzz_vm.c
AFL_DRIVER   ?= /usr/lib/afl/libAFLDriver.a

.PHONY: fuzz fuzz-replay
build/fuzz/%.o: %.c lang/lib/stdlib.inc
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) -Wall -Wextra $(FUZZ_FLAGS) -MMD -MP -c $< -o $@
build/fuzzreplay/%.o: %.c lang/lib/stdlib.inc
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(FUZZ_FLAGS) -MMD -MP -c $< -o $@
-include $(patsubst %.c,build/fuzz/%.d,$(FUZZ_SRC)) $(patsubst %.c,build/fuzzreplay/%.d,$(FUZZ_SRC) tests/fuzz/fuzz_replay.c)

build/fuzz/fuzz_vm: $(patsubst %.c,build/fuzz/%.o,$(FUZZ_SRC))
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(AFL_DRIVER) $(LDLIBS)

build/fuzzreplay/fuzz_replay: $(patsubst %.c,build/fuzzreplay/%.o,$(FUZZ_SRC) tests/fuzz/fuzz_replay.c)
	$(CC) $(FUZZ_FLAGS) -o $@ $^ $(LDLIBS)

fuzz-replay: build/fuzzreplay/fuzz_replay

fuzz: build/fuzz/fuzz_vm
	bash tests/fuzz/run_afl.sh $(FUZZ_SECONDS) $(FUZZ_OUT)

# The baseline the in-process target is measured against (tests/fuzz/README.md):
# ./vm-asan's program (lang/main.c) built by afl-clang-fast with the same
# flags, one process per input (afl's fork server), the input as a file.
build/fuzz/vm-afl: $(patsubst %.c,build/fuzz/%.o,$(SRC_release) $(MAIN_SRC))
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(LDLIBS)

.PHONY: bench-fuzz-speed
bench-fuzz-speed: build/fuzz/fuzz_vm build/fuzz/vm-afl
	bash bench/fuzz_speed.sh

# make test replays the corpus and the findings (tests/suites/fuzz_corpus.sh).
test: build/fuzzreplay/fuzz_replay
