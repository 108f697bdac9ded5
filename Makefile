# comet build. `make run` installs Debian packages if missing, builds and
# runs the main job; `make test` builds and runs the whole test suite.
# `make SAN=1 test` does the same under ASan+UBSan in build-san/.

CC      ?= cc
SAN     ?= 0
ifeq ($(SAN),1)
B       ?= build-san
OPT     = -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all
else
B       ?= build
# Link-time optimization: the library's families (collective algorithms,
# topologies, pipeline schedules) are structs of function pointers in const
# tables, one file per member, and the step plan and network helpers are
# small functions in other files; only the linker can inline across files.
# The strategy search runs about 12 % fewer instructions with it
# (BENCHMARKS.md). `make LTO=` builds without; gcc-ar keeps the archive's
# LTO symbols.
LTO     ?= -flto=auto
OPT     = -O2 -g $(LTO)
endif
AR_LIB  = $(if $(findstring -flto,$(OPT)),gcc-ar,ar)
CFLAGS_ALL = -std=c11 -Wall -Wextra -Werror -Wshadow -Wvla -D_POSIX_C_SOURCE=200809L -pthread \
             -Iinclude $(OPT) $(CFLAGS)
# The library's objects go into both libcomet.a and libcomet.so, so they
# are position-independent; without semantic interposition gcc still
# inlines and calls directly inside the library, as it does for the
# static build (the executables are PIE on Debian anyway).
PIC        = -fPIC -fno-semantic-interposition
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
PRESETS   := $(sort $(wildcard presets/models/*.yaml presets/systems/*.yaml presets/strategies/*.yaml presets/studies/*.yaml presets/validation/*.yaml))
HEADERS   := $(wildcard include/comet/*.h src/*/*.h tests/*.h cli/*.h)

# The core model: the folders that estimate and simulate a step from structs
# built in C. `make check-layers` links them alone (no config/, report/,
# explore/, chakra/, libyaml or protobuf-c) into a program that runs a step.
CORE_DIRS := core vocab parallel schedule workload hardware network cost estimate sim
CORE_OBJ  := $(patsubst %.c,$(B)/%.o,$(sort $(foreach d,$(CORE_DIRS),$(wildcard src/$(d)/*.c))))

.PHONY: all run test test-san bench fuzz deps clean example-trace check-layers check-includes
all: $(B)/comet

deps:
	@scripts/install-deps.sh

# the main job: the COMET methodology on the default study (transformer-1t),
# replacing the results of an earlier run in study-transformer-1t/
run: deps all
	$(B)/comet study --force

# (the install and Python tests load the release build's shared library,
# so a sanitized build leaves them to the plain one)
test: deps $(B)/comet $(B)/comet_tests check-includes check-layers \
      $(if $(filter 1,$(SAN)),,test-install test-python)
	@COMET_BIN=$(B)/comet COMET_TESTS_DIR=tests $(B)/comet_tests

# The layering (docs/architecture.md): no folder includes another's private
# header, or includes or calls a folder above it, and the core model links
# and runs alone.
check-includes: $(LIB_OBJ)
	@scripts/check-includes.sh $(B)

check-layers: $(B)/check_layers
	@$(B)/check_layers

$(B)/check_layers: $(B)/tests/layers/core_model.o $(B)/tests/toy.o $(CORE_OBJ)
	$(CC) $(CFLAGS_ALL) $^ -o $@ -lm -pthread

test-san:
	@COMET_SANITIZED=1 $(MAKE) --no-print-directory SAN=1 test

$(B)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(B)/src/%.o: src/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(PIC) -c $< -o $@

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
	$(CC) -std=c11 -O2 -g $(PIC) $(if $(filter 1,$(SAN)),$(OPT)) -c $< -o $@

$(B)/src/chakra/%.o: src/chakra/%.c $(HEADERS) $(B)/gen/et_def.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(PIC) -I$(B)/gen -c $< -o $@

$(B)/gen/presets_data.o: $(B)/gen/presets_data.c
	$(CC) $(CFLAGS_ALL) $(PIC) -c $< -o $@

$(B)/libcomet.a: $(LIB_OBJ)
	rm -f $@ && $(AR_LIB) rcs $@ $^

# The shared library: the same objects, the public API exported
# (src/libcomet.map), soname libcomet.so.MAJOR from COMET_VERSION.
VERSION   := $(shell sed -n 's/^\#define COMET_VERSION "\(.*\)"/\1/p' include/comet/comet.h)
SOMAJOR   := $(firstword $(subst ., ,$(VERSION)))
SONAME    := libcomet.so.$(SOMAJOR)
$(B)/libcomet.so.$(VERSION): $(LIB_OBJ) src/libcomet.map
	$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=src/libcomet.map \
	    -Wl,--no-undefined $(LIB_OBJ) -o $@ -lyaml -lprotobuf-c -lz -lm -pthread

$(B)/libcomet.so: $(B)/libcomet.so.$(VERSION)
	ln -sf libcomet.so.$(VERSION) $(B)/$(SONAME)
	ln -sf $(SONAME) $@

$(B)/comet.1: $(B)/comet scripts/make-man.sh
	scripts/make-man.sh $(B)/comet $@

# rewritten each time: it holds PREFIX, which install may be given
$(B)/comet.pc: FORCE
	@mkdir -p $(B)
	printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' '' \
	    'Name: comet' \
	    'Description: cluster design-space explorer for distributed deep-learning training' \
	    'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lcomet' \
	    'Requires.private: yaml-0.1 libprotobuf-c zlib' 'Libs.private: -lm -pthread' >$@.tmp
	mv $@.tmp $@

# `make install` (PREFIX, DESTDIR as Debian's packaging sets them) and
# `make uninstall`, which removes exactly the files install writes.
PREFIX    ?= /usr/local
DESTDIR   ?=
INSTALL_FILES = bin/comet lib/libcomet.so.$(VERSION) lib/$(SONAME) lib/libcomet.so \
                lib/libcomet.a lib/pkgconfig/comet.pc share/man/man1/comet.1 \
                $(patsubst include/%,include/%,$(sort $(wildcard include/comet/*.h)))
.PHONY: install uninstall test-install test-python FORCE
FORCE:
install: $(B)/comet $(B)/libcomet.a $(B)/libcomet.so $(B)/comet.pc $(B)/comet.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include/comet $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/comet $(DESTDIR)$(PREFIX)/bin/comet
	install -m 755 $(B)/libcomet.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libcomet.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libcomet.so
	install -m 644 $(B)/libcomet.a $(DESTDIR)$(PREFIX)/lib/libcomet.a
	install -m 644 $(B)/comet.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/comet.pc
	install -m 644 include/comet/*.h $(DESTDIR)$(PREFIX)/include/comet/
	install -m 644 $(B)/comet.1 $(DESTDIR)$(PREFIX)/share/man/man1/comet.1

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALL_FILES))
	-rmdir $(DESTDIR)$(PREFIX)/include/comet 2>/dev/null

# installs into a temporary DESTDIR, builds tests/install/example.c with
# pkg-config against it, checks its step time against the CLI's, uninstalls
test-install: $(B)/comet $(B)/libcomet.a $(B)/libcomet.so $(B)/comet.1
	@scripts/test-install.sh $(B)

# the Python package's tests (pytest), over $(B)/libcomet.so
PYTHON    ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
test-python: $(B)/libcomet.so
	@scripts/test-python.sh $(PYTHON) $(B)

$(B)/comet: $(CLI_OBJ) $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL) $(MPI_LIBS)

# the CLI's flag parser is tested on its own (tests/test_cli.c)
$(B)/comet_tests: $(TEST_OBJ) $(B)/cli/args.o $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL) -lcmocka

$(B)/bench_estimate: bench/estimate.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_search: bench/search.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_chakra_read: bench/chakra_read.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_chakra_sim: bench/chakra_sim.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_fabric: bench/fabric.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_roce: bench/roce.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_partition: bench/partition.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_allocate: bench/allocate.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(B)/bench_deeppool: bench/deeppool.c $(B)/libcomet.a
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

# the example Chakra trace in examples/chakra (committed; this regenerates it)
$(B)/tools/example_trace: tools/example_trace.c $(B)/libcomet.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

example-trace: $(B)/tools/example_trace
	@mkdir -p examples/chakra
	$(B)/tools/example_trace examples/chakra

bench: $(B)/bench_estimate $(B)/bench_search $(B)/bench_chakra_read $(B)/bench_chakra_sim \
       $(B)/bench_fabric $(B)/bench_partition $(B)/bench_deeppool $(B)/bench_roce
	$(B)/bench_estimate
	$(B)/bench_search
	$(B)/bench_chakra_read
	$(B)/bench_chakra_sim
	$(B)/bench_fabric
	$(B)/bench_partition
	$(B)/bench_deeppool
	$(B)/bench_roce

# libFuzzer targets, one per fuzz/fuzz_NAME.c, each seeded from the
# committed fuzz/corpus-NAME/ (needs clang and libclang-rt-dev, installed
# if missing). The library is compiled once into build-fuzz/obj with the
# sanitizers that abort on the first report, so undefined behaviour counts
# as a crash. Seeds are copied into build-fuzz/corpus-NAME and the fuzzer
# grows that copy; crashes, leaks and timeouts land in build-fuzz/ too:
# nothing under fuzz/ is written. `make fuzz` runs every target for
# FUZZ_SECONDS (60) one after another; `make fuzz-NAME` runs one;
# FUZZ_FLAGS passes more libFuzzer flags (e.g. -fork=1 -ignore_crashes=1;
# not -jobs, whose logs go to the current directory). See docs/fuzzing.md.
FUZZ_B       := build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   ?=
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(sort $(wildcard fuzz/fuzz_*.c)))
FUZZ_SAN     := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c11 -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link -Wall -Wextra -Werror \
                -D_POSIX_C_SOURCE=200809L -Iinclude -I$(B)/gen
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_B)/obj/%.o) $(FUZZ_B)/obj/gen/presets_data.o \
                $(FUZZ_B)/obj/gen/et_def.pb-c.o

.PHONY: fuzz-deps
.SECONDARY: $(FUZZ_LIB_OBJ) $(FUZZ_TARGETS:%=$(FUZZ_B)/fuzz_%) $(FUZZ_TARGETS:%=$(FUZZ_B)/obj/fuzz/fuzz_%.o)
fuzz: $(FUZZ_TARGETS:%=fuzz-%)

fuzz-deps:
	@scripts/install-deps.sh fuzz

fuzz-%: $(FUZZ_B)/fuzz_%
	@mkdir -p $(FUZZ_B)/corpus-$* $(FUZZ_B)/findings-$*
	cp fuzz/corpus-$*/* $(FUZZ_B)/corpus-$*/
	$< -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(FUZZ_B)/findings-$*/ $(FUZZ_FLAGS) $(FUZZ_B)/corpus-$*

$(FUZZ_B)/fuzz_%: $(FUZZ_B)/obj/fuzz/fuzz_%.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $^ -o $@ -lyaml -lprotobuf-c -lz -lm

$(FUZZ_B)/obj/%.o: %.c $(HEADERS) $(B)/gen/et_def.pb-c.h | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

# the generated sources (from build/gen); their warnings are not ours to fix
$(FUZZ_B)/obj/gen/%.o: $(B)/gen/%.c $(B)/gen/et_def.pb-c.h | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(filter-out -Werror,$(FUZZ_CFLAGS)) -w -c $< -o $@

clean:
	rm -rf build build-san build-fuzz
