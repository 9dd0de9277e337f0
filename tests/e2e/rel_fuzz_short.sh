#!/usr/bin/env bash
# rel_fuzz_short: builds the libFuzzer harnesses (fuzz/, clang with ASan and
# UBSan; installs clang and its runtime when missing) and runs each for a
# short while (REL_FUZZ_SECONDS, default 4, to keep make check under 30
# minutes; `make fuzz` runs them for
# 60 s): the agent's request decoder, the cli's protocol decoder, and the
# profile readers of `report` and `diff` (any format, JSON, pprof, heap),
# each followed by sort, diff and every writer. Inputs that once crashed a
# harness (fuzz/regress/) run first and must pass. Any crash, sanitizer
# report, timeout or memory blow-up fails the test.
# Schedule: first (one of the longest: started early so that the lanes end together)
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
if ! make -s fuzz-build >"$TMP/build.log" 2>&1; then
    if ! command -v clang >/dev/null && [ "$(id -u)" != 0 ]; then
        skip "clang is not installed and we are not root: $(tail -2 "$TMP/build.log")"
    fi
    fail "building the fuzz harnesses failed: $(grep -E 'error|Error' "$TMP/build.log" | head -10)"
fi
fuzz/run.sh "${REL_FUZZ_SECONDS:-4}" | tee "$TMP/fuzz.out"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "a fuzz harness found a crash (see above)"
n=$(grep -c '^FUZZ fuzz_' "$TMP/fuzz.out")
[ "$n" -ge 6 ] || fail "only $n harnesses ran"
echo "RESULT rel_fuzz_short $(tail -1 "$TMP/fuzz.out" | sed 's/^FUZZ //')"
ok "$n harnesses, no crash"
