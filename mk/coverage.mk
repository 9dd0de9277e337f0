# coverage.mk - which tests run which unit: the whole build again under
# build-cov with gcc --coverage, then each unit-test binary and each e2e test
# named in COVERAGE_E2E run alone against it, and scripts/coverage_units.py
# writes one file per test in build-cov/cov/ listing the units (.c files)
# whose functions it ran. Not part of make check (the whole e2e suite under
# coverage is too long); name the tests to look at:
#   make coverage COVERAGE_E2E="cli_basic format_html_basic" [COVERAGE_UNIT=cli_report]
# The e2e tests use build/targets (targets need no coverage) and
# build-cov/heapinject, which injects build-cov/libheapinject.so beside it;
# tests that name build/libheapinject.so themselves (payload_lib.bash) run
# the payload without coverage. A target's payload counts are written when
# its agent leaves (mk/coverage_flush.c), or at a normal exit.
COV_BUILD := build-cov
COV_UNITS := $(subst $(BUILD)/,$(COV_BUILD)/,$(UNIT_PAYLOAD) $(UNIT_CLI))
COVERAGE_E2E ?=

.PHONY: coverage coverage-build
COV_FLUSH := $(COV_BUILD)/coverage_flush.o
coverage-build:
	@mkdir -p $(COV_BUILD)
	$(CC) $(PAYLOAD_CFLAGS) -c mk/coverage_flush.c -o $(COV_FLUSH)
	@$(MAKE) --no-print-directory BUILD=$(COV_BUILD) EXTRA_CFLAGS=--coverage \
	    PAYLOAD_LIBS="$(PAYLOAD_LIBS) $(COV_FLUSH) -Wl,--wrap=pl_session_agent_exited -Wl,--wrap=syscall" all $(COV_UNITS)

coverage: coverage-build targets
	@mkdir -p $(COV_BUILD)/cov $(COV_BUILD)/e2e-logs
	@for u in $(if $(COVERAGE_UNIT),$(filter %/$(COVERAGE_UNIT),$(COV_UNITS)),$(COV_UNITS)); do \
	    find $(COV_BUILD) -name '*.gcda' -delete; \
	    $$u --jobs 1 >$(COV_BUILD)/e2e-logs/unit-$$(basename $$u).log 2>&1 || echo "FAILED unit $$u"; \
	    scripts/coverage_units.py $(COV_BUILD) >$(COV_BUILD)/cov/unit-$$(basename $$u).txt; \
	done
	@for t in $(COVERAGE_E2E); do \
	    find $(COV_BUILD) -name '*.gcda' -delete; \
	    HEAPINJECT=$(CURDIR)/$(COV_BUILD)/heapinject TARGETS=$(CURDIR)/$(BUILD)/targets ROOT=$(CURDIR) \
	        timeout -k 10 1500 bash tests/e2e/$$t.sh >$(COV_BUILD)/e2e-logs/$$t.log 2>&1; \
	    echo "e2e $$t: rc=$$?"; \
	    scripts/coverage_units.py $(COV_BUILD) >$(COV_BUILD)/cov/e2e-$$t.txt; \
	done
