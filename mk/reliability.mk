# reliability.mk - `make stress` and `make fuzz` (included by the Makefile).
#
#   make stress        the long variants of the reliability tests: 1000
#                      attach/snapshot/detach cycles, 10 attach rounds per
#                      awkward state, the kill tests three times over, and
#                      the real programs (tests/stress/run.sh)
#   make fuzz          libFuzzer harnesses (fuzz/fuzz_*.c), FUZZ_SECONDS
#                      (default 60) each, after their regression inputs
#   make fuzz-build    only build them (clang, ASan + UBSan)
#
# `make check` runs the short variants: tests/e2e/rel_*.sh (rel_fuzz_short
# builds and runs each harness for a few seconds).

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
# Sanitizers stop at the first finding, except two UBSan checks that are
# recoverable so that findings already reported (fuzz/ubsan.supp) can be
# suppressed until fixed; fuzz/run.sh fails on any other report of them.
# -Werror is left out on purpose: clang warns about other things than gcc,
# and a warning in a file of someone else must not hide a crash in ours.
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all \
                -fsanitize-recover=float-cast-overflow,nonnull-attribute -fno-omit-frame-pointer
FUZZ_CFLAGS  := -g -O1 -std=gnu11 -D_GNU_SOURCE -I. -I$(BUILD)/gen -DHI_FUZZ -Wall -Wextra -Wno-unused-parameter \
                -pthread $(FUZZ_SAN)

FUZZ_HARNESS := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN     := $(patsubst fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_HARNESS))
# The cli side: every cli, injector and common source but main(), as the
# unit tests link them (readers, writers and the client use each other).
FUZZ_CLI_OBJ := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(filter-out cli/cmd/main.c,$(CLI_SRC)) $(INJ_SRC) $(COMMON_SRC))

.PHONY: fuzz fuzz-build fuzz-deps stress

fuzz-deps:
	@scripts/deps.sh clang libclang-rt-14-dev

$(FUZZ_DIR)/obj/%.o: %.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/fuzz_agent_request: fuzz/fuzz_agent_request.c $(FUZZ_DIR)/obj/payload/serve/proto_check.o
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@

$(FUZZ_DIR)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_profile.h $(FUZZ_CLI_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_CLI_OBJ) -o $@ $(CLI_LIBS)

fuzz-build: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZ_BIN)

fuzz: fuzz-build
	@fuzz/run.sh $(FUZZ_SECONDS)

stress: deps
	@$(MAKE) --no-print-directory all targets
	@tests/stress/run.sh
