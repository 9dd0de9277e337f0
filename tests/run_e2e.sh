#!/usr/bin/env bash
# run_e2e.sh - run every end-to-end test script under tests/e2e/.
# Each script exits 0 (pass), 77 (skip, with a reason) or anything else (fail).
# E2E_TEST_LIMIT (default 1500 s) only catches a hung test: under load 10 on
# 2 cores rel_cycles took longer than the 600 s it once was.
# Usage: tests/run_e2e.sh [PATTERN]   (only scripts whose name contains PATTERN)
set -u
cd "$(dirname "$0")/.."
export HEAPINJECT="$PWD/build/heapinject" TARGETS="$PWD/build/targets" ROOT="$PWD"
pass=0 failn=0 skip=0 failed=()
for t in tests/e2e/*.sh; do
    case "$t" in *"${1:-}"*) ;; *) continue ;; esac
    name=$(basename "$t" .sh)
    [ "$name" = lib ] && continue   # sourced helpers, not a test
    log="build/e2e-logs/$name.log"; mkdir -p build/e2e-logs
    start=$(date +%s)
    timeout -k 10 "${E2E_TEST_LIMIT:-1500}" bash "$t" >"$log" 2>&1; rc=$?
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS $name (${secs}s)"
    elif [ $rc -eq 77 ]; then skip=$((skip+1)); echo "SKIP $name: $(tail -1 "$log")"
    else failn=$((failn+1)); failed+=("$name"); echo "FAIL $name (rc=$rc, ${secs}s); last lines of $log:"; tail -25 "$log" | sed 's/^/    /'; fi
done
echo "e2e: $pass passed, $failn failed, $skip skipped"
[ $failn -eq 0 ]
