# tests/fuzz/reader.mk: fuzzing trace/reader.c and trace/snapshot_reader.c with afl++ (Debian's afl++),
# included by the top-level Makefile. Not part of `make test` (it takes time),
# but make test replays the corpus and every saved crash on the ASan build.
#   make fuzz-reader [FUZZ_SECONDS=600]   build the target (afl-clang-fast,
#       ASan+UBSan, persistent mode), fuzz from tests/fuzz/reader/corpus for
#       FUZZ_SECONDS, print afl's statistics, copy crashes and hangs found
#       into tests/fuzz/reader/crashes/ (fix the reader, commit them).
#   make fuzz-reader-seeds   regenerate the corpus (small valid traces, and
#       tests/fuzz/trace_gen.c's bases and mutants, gen-*.ctf, and its
#       snapshot files and their copies, gen-snap-*.retain, which
#       tests/suites/trace_differential.sh also runs every command on)
FUZZ_READER_DIR := tests/fuzz/reader
FUZZ_SECONDS ?= 600
FUZZ_CC ?= afl-clang-fast
FUZZ_OUT ?= build/fuzz/reader-out
FUZZ_PAIR_OUT ?= build/fuzz/pair-out

.PHONY: fuzz-reader fuzz-reader-seeds fuzz-pair fuzz-pair-seeds

build/fuzz/fuzz_reader: $(FUZZ_READER_DIR)/fuzz_reader.c $(FUZZ_READER_DIR)/fuzz_main.h $(TRACE_SRC) $(wildcard trace/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) -O2 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	  -o $@ $(FUZZ_READER_DIR)/fuzz_reader.c $(TRACE_SRC)

# The harness without afl: replays the files named on its command line.
build/asan/fuzz_reader_replay: $(FUZZ_READER_DIR)/fuzz_reader.c $(FUZZ_READER_DIR)/fuzz_main.h \
    $(call obj,asan,$(TRACE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_asan) -o $@ $(filter-out %.h,$^) $(LDLIBS)
test: build/asan/fuzz_reader_replay

# The pair target (tests/fuzz/reader/fuzz_pair.c): a trace and its snapshot
# file in one input, read together by the trace tool's commands (their
# cmd_* functions: every tool source but main.c).
#   make fuzz-pair [FUZZ_SECONDS=600] [FUZZ_PAIR_OUT=build/fuzz/pair-out]   as
#       fuzz-reader, from tests/fuzz/reader/pairs/; crashes and hangs into
#       tests/fuzz/reader/crashes/ (*.pair)
#   make fuzz-pair-seeds   regenerate the pairs (tests/fuzz/reader/pair_seeds.sh)
FUZZ_PAIR_SRC := $(FUZZ_READER_DIR)/fuzz_pair.c $(filter-out tools/memtrace_cli/main.c,$(MEMTRACE_SRC)) \
    $(TRACE_SRC) $(BASE_SRC)
build/fuzz/fuzz_pair: $(FUZZ_PAIR_SRC) $(FUZZ_READER_DIR)/fuzz_main.h $(wildcard trace/*.h base/*.h tools/memtrace_cli/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) -O2 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	  -o $@ $(FUZZ_PAIR_SRC) -lm -lz
build/asan/fuzz_pair_replay: $(FUZZ_READER_DIR)/fuzz_pair.c $(FUZZ_READER_DIR)/fuzz_main.h \
    $(call obj,asan,$(filter-out tools/memtrace_cli/main.c,$(MEMTRACE_SRC)) $(TRACE_SRC) $(BASE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_asan) -o $@ $(filter-out %.h,$^) $(LDLIBS) -lz
test: build/asan/fuzz_pair_replay

fuzz-pair: build/fuzz/fuzz_pair
	FUZZ_SECONDS='$(FUZZ_SECONDS)' FUZZ_OUT='$(FUZZ_PAIR_OUT)' FUZZ_TARGET=build/fuzz/fuzz_pair FUZZ_CORPUS=$(FUZZ_READER_DIR)/pairs bash $(FUZZ_READER_DIR)/fuzz.sh

fuzz-pair-seeds: vm build/release/tests/fuzz_trace_gen
	bash $(FUZZ_READER_DIR)/pair_seeds.sh

fuzz-reader: build/fuzz/fuzz_reader
	FUZZ_SECONDS='$(FUZZ_SECONDS)' FUZZ_OUT='$(FUZZ_OUT)' bash $(FUZZ_READER_DIR)/fuzz.sh

build/fuzz/seed_head: $(FUZZ_READER_DIR)/seed_head.c $(call obj,release,$(TRACE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $^ $(LDLIBS)

# The structure-aware generator of hostile traces (tests/fuzz/trace_gen.c).
build/release/tests/fuzz_trace_gen: tests/fuzz/trace_gen.c build/release/trace/writer.o build/release/trace/snapshot_writer.o \
    build/release/trace/snapshot_file.o
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS_release) -o $@ $^ $(LDLIBS)

fuzz-reader-seeds: vm build/fuzz/seed_head build/release/trace_gen build/release/tests/trace_synth \
    build/release/tests/fuzz_trace_gen build/release/tests/snapshot_synth
	bash $(FUZZ_READER_DIR)/seeds.sh
