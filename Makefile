# comet build. `make run` installs Debian packages if missing, builds and
# runs the main job; `make test` builds and runs the whole test suite.
# `make SAN=1 test` does the same under ASan+UBSan in build-san/.

CC      ?= cc
SAN     ?= 0
ifeq ($(SAN),1)
B       ?= build-san
OPT     = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
B       ?= build
OPT     = -O2 -g
endif
CFLAGS_ALL = -std=c11 -Wall -Wextra -Werror -Wshadow -Wvla -D_POSIX_C_SOURCE=200809L -pthread \
             -Iinclude $(OPT) $(CFLAGS)
LDLIBS_ALL = -lyaml -lprotobuf-c -lz -lm -pthread $(LDLIBS)

# OpenMPI is optional: with mpicc on the PATH (and MPI unset or 1) the CLI
# is built with MPI so `mpirun -n K comet sweep` splits a sweep; the
# library never uses MPI.
MPI       ?= $(if $(shell command -v mpicc 2>/dev/null),1,0)
ifeq ($(MPI),1)
MPI_CFLAGS := -DCOMET_HAVE_MPI $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell mpicc --showme:link 2>/dev/null)
endif

LIB_SRC   := $(sort $(wildcard src/*/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/%.o) $(B)/gen/presets_data.o $(B)/gen/et_def.pb-c.o
CLI_SRC   := $(sort $(wildcard cli/*.c))
CLI_OBJ   := $(CLI_SRC:%.c=$(B)/%.o)
TEST_SRC  := $(sort $(wildcard tests/*.c))
TEST_OBJ  := $(TEST_SRC:%.c=$(B)/%.o)
PRESETS   := $(sort $(wildcard presets/models/*.yaml presets/systems/*.yaml presets/strategies/*.yaml presets/studies/*.yaml))
HEADERS   := $(wildcard include/comet/*.h src/*/*.h tests/*.h cli/*.h)

.PHONY: all run test test-san bench fuzz deps clean example-trace
all: $(B)/comet

deps:
	@scripts/install-deps.sh

# the main job: the COMET methodology on the default study (transformer-1t),
# replacing the results of an earlier run in study-transformer-1t/
run: deps all
	$(B)/comet study --force

test: deps $(B)/comet $(B)/comet_tests
	@COMET_BIN=$(B)/comet COMET_TESTS_DIR=tests $(B)/comet_tests

test-san:
	@COMET_SANITIZED=1 $(MAKE) --no-print-directory SAN=1 test

$(B)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(B)/cli/cluster.o: cli/cluster.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(MPI_CFLAGS) -c $< -o $@

$(B)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror -O1 $< -o $@

$(B)/gen/presets_data.c: $(B)/tools/embed $(PRESETS)
	@mkdir -p $(dir $@)
	$(B)/tools/embed $@ $(PRESETS)

# Chakra's messages: protobuf-c code generated from comet's own schema.
$(B)/gen/et_def.pb-c.c $(B)/gen/et_def.pb-c.h: schema/chakra/et_def.proto
	@mkdir -p $(B)/gen
	protoc-c --c_out=$(B)/gen --proto_path=schema/chakra $<

# generated code: warnings are not ours to fix
$(B)/gen/et_def.pb-c.o: $(B)/gen/et_def.pb-c.c
	$(CC) -std=c11 -O2 -g $(if $(filter 1,$(SAN)),$(OPT)) -c $< -o $@

$(B)/src/trace/%.o: src/trace/%.c $(HEADERS) $(B)/gen/et_def.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(B)/gen -c $< -o $@

$(B)/gen/presets_data.o: $(B)/gen/presets_data.c
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(B)/libcomet.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/comet: $(CLI_OBJ) $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL) $(MPI_LIBS)

$(B)/comet_tests: $(TEST_OBJ) $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL) -lcmocka

$(B)/bench_estimate: bench/estimate.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_search: bench/search.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_chakra_read: bench/chakra_read.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_chakra_sim: bench/chakra_sim.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

# the example Chakra trace in examples/chakra (committed; this regenerates it)
$(B)/tools/example_trace: tools/example_trace.c $(B)/libcomet.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

example-trace: $(B)/tools/example_trace
	@mkdir -p examples/chakra
	$(B)/tools/example_trace examples/chakra

bench: $(B)/bench_estimate $(B)/bench_search $(B)/bench_chakra_read $(B)/bench_chakra_sim
	$(B)/bench_estimate
	$(B)/bench_search
	$(B)/bench_chakra_read
	$(B)/bench_chakra_sim

# libFuzzer target for the config reader (needs clang and libclang-rt-dev).
fuzz: $(B)/gen/presets_data.c $(B)/gen/et_def.pb-c.c
	@scripts/install-deps.sh fuzz
	@mkdir -p build-fuzz fuzz/corpus-chakra fuzz/corpus-results
	clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -D_POSIX_C_SOURCE=200809L -Iinclude \
	    fuzz/fuzz_config.c $(LIB_SRC) $(B)/gen/presets_data.c $(B)/gen/et_def.pb-c.c -I$(B)/gen \
	    -o build-fuzz/fuzz_config -lyaml -lprotobuf-c -lz -lm
	clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -D_POSIX_C_SOURCE=200809L -Iinclude \
	    fuzz/fuzz_chakra.c $(LIB_SRC) $(B)/gen/presets_data.c $(B)/gen/et_def.pb-c.c -I$(B)/gen \
	    -o build-fuzz/fuzz_chakra -lyaml -lprotobuf-c -lz -lm
	clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -D_POSIX_C_SOURCE=200809L -Iinclude \
	    fuzz/fuzz_results.c $(LIB_SRC) $(B)/gen/presets_data.c $(B)/gen/et_def.pb-c.c -I$(B)/gen \
	    -o build-fuzz/fuzz_results -lyaml -lprotobuf-c -lz -lm
	build-fuzz/fuzz_config -max_total_time=$${FUZZ_SECONDS:-60} fuzz/corpus
	build-fuzz/fuzz_chakra -max_total_time=$${FUZZ_SECONDS:-60} fuzz/corpus-chakra
	@mkdir -p build-fuzz/corpus-results && cp -n fuzz/corpus-results/* build-fuzz/corpus-results/
	build-fuzz/fuzz_results -max_total_time=$${FUZZ_SECONDS:-60} build-fuzz/corpus-results

clean:
	rm -rf build build-san build-fuzz
