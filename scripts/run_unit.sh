#!/usr/bin/env bash
# run_unit.sh - run each criterion unit-test binary; fail if any fails.
set -u
fail=0
for t in "$@"; do
    echo "== unit: $(basename "$t")"
    "$t" --jobs 2 || { echo "FAILED: $t"; fail=1; }
done
exit $fail
