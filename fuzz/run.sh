#!/usr/bin/env bash
# run.sh - runs the libFuzzer harnesses built by `make fuzz-build`.
#
#   fuzz/run.sh SECONDS [HARNESS...]      (default: every build/fuzz/fuzz_*)
#
# For each harness: first every regression input under fuzz/regress/NAME/
# (inputs that once crashed it: each must now pass), then SECONDS of fuzzing
# from the seeds in fuzz/corpus/NAME/. New interesting inputs go to
# build/fuzz/corpus/NAME/ (kept between runs, never into the source tree);
# a crash is saved as build/fuzz/crashes/NAME/crash-* and fails the run:
# copy it to fuzz/regress/NAME/ once fixed. UBSan findings already reported
# and waiting for a fix are listed in fuzz/ubsan.supp. Prints one line per harness,
# "FUZZ NAME runs=N seconds=S crashes=C", and the totals.
set -u
cd "$(dirname "$0")/.."
secs=${1:-60}; shift || true
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for b in build/fuzz/fuzz_*; do [ -x "$b" ] && names+=("$(basename "$b")"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "fuzz: nothing built (make fuzz-build)" >&2; exit 1; }
total=0 failed=0
# Known findings awaiting a fix are suppressed (fuzz/ubsan.supp); any other
# UBSan report fails the run even where the check is recoverable.
export UBSAN_OPTIONS="suppressions=$PWD/fuzz/ubsan.supp:print_stacktrace=1:${UBSAN_OPTIONS:-}"
for n in "${names[@]}"; do
    bin=build/fuzz/$n
    [ -x "$bin" ] || { echo "fuzz: $bin missing" >&2; failed=1; continue; }
    work=build/fuzz/corpus/$n crashes=build/fuzz/crashes/$n log=build/fuzz/$n.log
    rm -rf "$crashes"; mkdir -p "$work" "$crashes"
    if [ -d "fuzz/regress/$n" ] && [ -n "$(ls -A "fuzz/regress/$n")" ]; then
        # Files (not directories) as arguments: each is run once, no fuzzing.
        # UBSan's recoverable checks (mk/reliability.mk) print and go on:
        # a "runtime error" in the log fails the input as a crash would.
        if ! "$bin" -timeout=10 fuzz/regress/"$n"/* >"$log.regress" 2>&1 ||
            grep -q 'runtime error:' "$log.regress"; then
            echo "FUZZ $n: a regression input crashes again:"; tail -30 "$log.regress"
            failed=1
            continue
        fi
    fi
    seeds=(); [ -d "fuzz/corpus/$n" ] && seeds=("fuzz/corpus/$n")
    # -rss_limit_mb: the readers bound their allocations by the input; a
    # blow-up past this is a finding. -timeout: no input may take 10 s.
    "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$crashes/" -print_final_stats=1 "$work" "${seeds[@]}" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    ncrash=$(( $(find "$crashes" -type f | wc -l) + $(grep -c 'runtime error:' "$log") ))
    echo "FUZZ $n runs=${runs:-0} seconds=$secs crashes=$ncrash"
    total=$((total + ${runs:-0}))
    if [ "$rc" != 0 ] || [ "$ncrash" != 0 ]; then
        failed=1
        grep -E "ERROR: |SUMMARY|runtime error|invariant failed|^    #[0-9]+ " "$log" | head -25
        echo "  (inputs: $crashes/; log: $log)"
    fi
done
echo "FUZZ total runs=$total harnesses=${#names[@]} failed=$failed"
exit $failed
