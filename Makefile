# heapinject - attach a sampling heap profiler to a running process.
#
#   make            build build/heapinject and build/libheapinject.so
#   make check      install missing packages, build, run unit + end-to-end tests
#   make layers     check the include rules (payload and cli folders as layers)
#                   and that every unit has a test (check_test_names.py)
#   make coverage   which units the named tests run (gcov; mk/coverage.mk)
#   make demo       install missing packages, build, profile a leaking demo program
#   make bench      overhead / latency / accuracy benchmarks
#   make install PREFIX=/usr/local

CC      ?= gcc
CXX     ?= g++
PREFIX  ?= /usr/local
BUILD   := build

WARN    := -Wall -Wextra -Werror
BASE_CFLAGS := $(WARN) -O2 -g -std=gnu11 -D_GNU_SOURCE -I. -I$(BUILD)/gen $(EXTRA_CFLAGS)

# The payload runs inside other people's processes: hidden visibility with an
# explicit export list, initial-exec TLS (no __tls_get_addr, which can
# allocate), frame pointers kept, bound at load time (-z now: no lazy binding
# inside a hook).
PAYLOAD_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec \
                  -fno-omit-frame-pointer -pthread
PAYLOAD_LDFLAGS := -shared -Wl,-z,now -Wl,-z,relro -Wl,-z,nodelete -Wl,--no-undefined \
                   -Wl,--version-script=payload/exports.map
PAYLOAD_LIBS := -ldl -lpthread

CLI_CFLAGS := $(BASE_CFLAGS) -pthread
CLI_LIBS   := -lunwind-ptrace -lunwind-generic -lunwind -lelf -ldw -lz -lprotobuf-c -lm -lpthread -liberty -ljansson -llz4

COMMON_SRC  := $(sort $(wildcard common/*.c))
PAYLOAD_SRC := $(sort $(wildcard payload/*/*.c))
INJ_SRC     := $(sort $(wildcard injector/*.c))
# pprof's profile.proto compiled by protoc-c (never committed: the build
# makes it from the .proto with the protoc-c of the machine).
PB_PROTO    := cli/report/profile.proto
PB_C        := $(BUILD)/gen/cli/report/profile.pb-c.c
PB_H        := $(BUILD)/gen/cli/report/profile.pb-c.h
CLI_SRC     := $(sort $(wildcard cli/*.c cli/*/*.c)) $(PB_C)

PAYLOAD_OBJ := $(patsubst %.c,$(BUILD)/pic/%.o,$(PAYLOAD_SRC) $(COMMON_SRC))
CLI_OBJ     := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRC) $(INJ_SRC) $(COMMON_SRC))
CLI_LIB_OBJ := $(filter-out $(BUILD)/obj/cli/cmd/main.o,$(CLI_OBJ))

TARGET_C    := $(sort $(wildcard tests/targets/*.c))
TARGET_CXX  := $(sort $(wildcard tests/targets/*.cc))
TARGETS     := $(patsubst tests/targets/%.c,$(BUILD)/targets/%,$(TARGET_C)) \
               $(patsubst tests/targets/%.cc,$(BUILD)/targets/%,$(TARGET_CXX))
BENCH_SRC   := $(sort $(wildcard bench/*.c))
BENCH_BIN   := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

UNIT_PAYLOAD := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(sort $(wildcard tests/unit/payload_*.c)))
UNIT_CLI     := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(sort $(wildcard tests/unit/cli_*.c tests/unit/common_*.c tests/unit/injector_*.c)))

.PHONY: all deps check unit e2e demo bench install clean targets layers

all: $(BUILD)/heapinject $(BUILD)/libheapinject.so

deps:
	@scripts/deps.sh

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PAYLOAD_CFLAGS) -MMD -MP -c $< -o $@

$(PB_H): $(PB_PROTO)
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen $(PB_PROTO)
$(PB_C): $(PB_H)

$(BUILD)/obj/%.o: %.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CLI_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libheapinject.so: $(PAYLOAD_OBJ) payload/exports.map
	$(CC) $(PAYLOAD_CFLAGS) $(PAYLOAD_LDFLAGS) -o $@ $(PAYLOAD_OBJ) $(PAYLOAD_LIBS)

$(BUILD)/heapinject: $(CLI_OBJ)
	$(CC) $(CLI_CFLAGS) -o $@ $(CLI_OBJ) $(CLI_LIBS)

# Test targets: plain programs we attach to. -O1 with frame pointers, like a
# typical distribution build, plus symbols for the assertions on stacks.
$(BUILD)/targets/%: tests/targets/%.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fno-omit-frame-pointer -fno-inline -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -rdynamic $< -o $@ -ldl -lm

# jemalloc linked into the executable (cli/process/exe_alloc.c must refuse it).
$(BUILD)/targets/pl_static_jemalloc: tests/targets/pl_static_jemalloc.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Wall -Wextra -Werror -pthread $< -o $@ /usr/lib/x86_64-linux-gnu/libjemalloc.a -ldl -lm

# Optimised like a release build: its stacks hold long inlined STL chains.
$(BUILD)/targets/cli_stl_map: tests/targets/cli_stl_map.cc
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -Wall -Wextra -Werror $< -o $@

$(BUILD)/targets/%: tests/targets/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -O1 -g -fno-omit-frame-pointer -fno-inline -Wall -Wextra -Werror -pthread -rdynamic $< -o $@ -ldl

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -D_GNU_SOURCE -pthread $< -o $@ -lm

# The memory breakdown benchmark runs the cli's own smaps reader.
$(BUILD)/bench/smaps_bench: bench/smaps_bench.c $(CLI_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CLI_CFLAGS) $< -o $@ $(CLI_LIB_OBJ) $(CLI_LIBS)

# The census scan benchmark runs the payload's own mark.
$(BUILD)/bench/census_scan_bench: bench/census_scan_bench.c $(PAYLOAD_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(PAYLOAD_CFLAGS) $< -o $@ $(PAYLOAD_OBJ) $(PAYLOAD_LIBS) -lm

# The symbolization benchmark runs the cli's own symbolizer.
$(BUILD)/bench/symbolize_bench: bench/symbolize_bench.c $(CLI_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CLI_CFLAGS) $< -o $@ $(CLI_LIB_OBJ) $(CLI_LIBS)

targets: $(TARGETS)

# Unit tests. Payload modules are tested as position-independent objects
# (they run inside the target, so no sanitizer); cli, injector and common
# modules are also built with AddressSanitizer + UBSan.
$(BUILD)/unit/payload_%: tests/unit/payload_%.c $(PAYLOAD_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(PAYLOAD_CFLAGS) $< -o $@ $(PAYLOAD_OBJ) -lcriterion $(PAYLOAD_LIBS) -lm

ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
ASAN_OBJ := $(patsubst %.c,$(BUILD)/asan/%.o,$(filter-out cli/cmd/main.c,$(CLI_SRC)) $(INJ_SRC) $(COMMON_SRC))

$(BUILD)/asan/%.o: %.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CLI_CFLAGS) $(ASAN_FLAGS) -MMD -MP -c $< -o $@

$(BUILD)/unit/%: tests/unit/%.c $(ASAN_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CLI_CFLAGS) $(ASAN_FLAGS) $< -o $@ $(ASAN_OBJ) -lcriterion $(CLI_LIBS)

# Unit tests that run a target program (not built with the sanitizer: its
# heap is glibc's).
$(BUILD)/unit/cli_census_heap_sanity: $(BUILD)/targets/heap_race

unit: all layers $(UNIT_PAYLOAD) $(UNIT_CLI)
	@scripts/run_unit.sh $(UNIT_PAYLOAD) $(UNIT_CLI)

# The include rules (docs/DESIGN-NOTES.md, Layout): the payload's folders
# and the cli's folders are layers, none includes one above it (and no
# include circle across the payload's folders), and every unit has a test
# (scripts/check_test_names.py); run by make unit and check.
layers:
	@scripts/check_payload_layers.py
	@scripts/check_cli_layers.sh
	@scripts/check_test_names.py

e2e: all targets
	@tests/run_e2e.sh

JOBS ?= $(shell nproc 2>/dev/null || echo 2)

check: deps layers
	@$(MAKE) --no-print-directory -j$(JOBS) all targets $(UNIT_PAYLOAD) $(UNIT_CLI)
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory e2e

demo: deps
	@$(MAKE) --no-print-directory all $(BUILD)/targets/demo_leaky
	@scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all targets $(BENCH_BIN)
	@bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/heapinject $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD)/heapinject $(DESTDIR)$(PREFIX)/bin/heapinject
	install -m 0644 $(BUILD)/libheapinject.so $(DESTDIR)$(PREFIX)/lib/heapinject/libheapinject.so
	install -m 0644 contrib/heapinject.1 $(DESTDIR)$(PREFIX)/share/man/man1/heapinject.1

clean:
	rm -rf $(BUILD)

# Extra targets kept in their own files (make stress, make fuzz, ...).
include $(wildcard mk/*.mk)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
