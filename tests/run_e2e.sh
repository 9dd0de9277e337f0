#!/usr/bin/env bash
# run_e2e.sh - run every end-to-end test script under tests/e2e/.
# Each script exits 0 (pass), 77 (skip, with a reason) or anything else (fail).
# E2E_TEST_LIMIT (default 1500 s) only catches a hung test: under load 10 on
# 2 cores rel_cycles took longer than the 600 s it once was.
#
# Usage: tests/run_e2e.sh [PATTERN]   (only scripts whose name contains PATTERN)
#
# Two at a time. Most tests spend their time waiting on a target (a tick, a
# session's duration, a server starting), not on the CPU, so the whole suite
# ran in 31 minutes one by one on a quiet 2-core machine and in about half of
# that two by two. Each lane is a private mount namespace with its own /tmp,
# /dev/shm and /var/tmp, so that the tests that look at "nothing left behind"
# in /tmp/heapinject-UID, or at the private copies of the payload, see only
# their own files. A test whose header says `# Schedule: alone` (one that
# holds 10,000 threads under a 2 s bound, say) runs after the lanes, by
# itself; `# Schedule: first` starts the longest tests early so that the lanes
# end together. E2E_JOBS=1 runs one by one, as does a PATTERN (a few tests
# picked by hand) or a machine where unshare is not allowed (not root).
set -u
cd "$(dirname "$0")/.."
export HEAPINJECT="$PWD/build/heapinject" TARGETS="$PWD/build/targets" ROOT="$PWD"
LOGS=build/e2e-logs
mkdir -p "$LOGS"

# run_one NAME: run one test, print and record its result in $LOGS/.results
run_one() {
    local name=$1 log="$LOGS/$1.log" start rc secs
    start=$(date +%s)
    timeout -k 10 "${E2E_TEST_LIMIT:-1500}" bash "tests/e2e/$name.sh" >"$log" 2>&1; rc=$?
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then echo "PASS $name (${secs}s)"; echo "pass $name" >>"$LOGS/.results"
    elif [ $rc -eq 77 ]; then echo "SKIP $name: $(tail -1 "$log")"; echo "skip $name" >>"$LOGS/.results"
    else echo "FAIL $name (rc=$rc, ${secs}s)"; echo "fail $name $rc" >>"$LOGS/.results"; fi
}

# A lane's own /tmp, /dev/shm and /var/tmp (run inside unshare -m, and -p
# where allowed): a fresh
# tmpfs on each; when the checkout lives under one of them, the checkout is
# bound into the new tmpfs at its own path before the tmpfs is moved into
# place, so that the tests still find it where it was.
# /var/tmp stays on disk (a fresh directory of the real one): a test fills
# the page cache there, which a tmpfs would turn into memory no one can
# take back.
if [ "${1:-}" = --private-tmp ]; then
    lane_var=""
    case "$ROOT/" in
    /var/tmp/*) ;;   # the checkout itself is there: /var/tmp stays shared
    *) lane_var=$(mktemp -d /var/tmp/hi-e2e-lane.XXXXXX) && chmod 1777 "$lane_var" &&
           mount --bind "$lane_var" /var/tmp || exit 1 ;;
    esac
    for d in /tmp /dev/shm; do
        case "$ROOT/" in
        "$d"/*)
            hold="$ROOT/build/.lane-$2${d//\//-}"; mkdir -p "$hold"
            mount -t tmpfs -o mode=1777 tmpfs "$hold" && mkdir -p "$hold/${ROOT#"$d"/}" &&
                mount --bind "$ROOT" "$hold/${ROOT#"$d"/}" && mount --move "$hold" "$d" || exit 1 ;;
        *) mount -t tmpfs -o mode=1777 tmpfs "$d" || exit 1 ;;
        esac
    done
    "$0" --lane; rc=$?
    [ -n "$lane_var" ] && umount /var/tmp && rm -rf "$lane_var"
    exit $rc
fi

# sweep_lane_tmp NAME: in a lane /tmp is the lane's own, so what a test
# left in the profiler's directories (a failed test's followed children
# write PID.last as they end) is written to that test's log and removed:
# the next test of the lane starts clean instead of failing on another
# test's leftovers. Each test still checks its own.
sweep_lane_tmp() {
    local left
    left=$(find /tmp/heapinject-* /tmp/.heapinject-* -mindepth 1 2>/dev/null)
    [ -n "$left" ] || return 0
    printf 'run_e2e: left in /tmp after %s, removed:\n%s\n' "$1" "$left" >>"$LOGS/$1.log"
    rm -rf /tmp/heapinject-* /tmp/.heapinject-*
}

# A lane: take the next name off the shared queue until it is empty.
if [ "${1:-}" = --lane ]; then
    while :; do
        name=$(flock "$LOGS/.queue" sh -c 'head -1 "$1"; sed -i 1d "$1"' _ "$LOGS/.queue")
        [ -n "$name" ] || exit 0
        run_one "$name"
        sweep_lane_tmp "$name"
    done
fi

# schedule NAME: the word after "# Schedule:" in the test's leading comments
schedule() { awk 'NR > 1 && !/^#/ { exit } /^# Schedule:/ { print $3; exit }' "tests/e2e/$1.sh"; }

first=() rest=() alone=()
for t in tests/e2e/*.sh; do
    case "$t" in *"${1:-}"*) ;; *) continue ;; esac
    name=$(basename "$t" .sh)
    [ "$name" = lib ] && continue   # sourced helpers, not a test
    case $(schedule "$name") in
        first) first+=("$name") ;;
        alone) alone+=("$name") ;;
        *) rest+=("$name") ;;
    esac
done

jobs=${E2E_JOBS:-2}
[ -n "${1:-}" ] && jobs=${E2E_JOBS:-1}
if [ "$jobs" -gt 1 ] && ! unshare -m true 2>/dev/null; then
    echo "run_e2e: one test at a time (unshare -m is not allowed here: not root)"
    jobs=1
fi
# Each lane is also a pid namespace of its own (its /proc mounted anew):
# pid_max is 32768 on a machine of few cores and the lanes wrap it in
# minutes, so a test's cleanup (kill -9 of the pids it started, some long
# gone) could kill another lane's process that got one of those pids
# (seen: a gunicorn worker killed mid-request in py_gunicorn). A lane's
# pids are its own, and whatever a lane leaves running ends with it.
lane_ns=(-m)
unshare -m -p -f --mount-proc true 2>/dev/null && lane_ns=(-m -p -f --mount-proc)

: >"$LOGS/.results"
if [ "$jobs" -le 1 ]; then
    for name in "${first[@]}" "${rest[@]}" "${alone[@]}"; do run_one "$name"; done
else
    echo "run_e2e: $jobs tests at a time, each lane with its own /tmp and pids; ${#alone[@]} alone at the end"
    printf '%s\n' "${first[@]}" "${rest[@]}" >"$LOGS/.queue"
    lanes=()
    for ((i = 0; i < jobs; i++)); do
        unshare "${lane_ns[@]}" "$PWD/tests/run_e2e.sh" --private-tmp "$i" &
        lanes+=($!)
    done
    wait "${lanes[@]}"
    for name in "${alone[@]}"; do run_one "$name"; done
fi

pass=$(grep -c '^pass ' "$LOGS/.results") skip=$(grep -c '^skip ' "$LOGS/.results")
failed=$(sed -n 's/^fail \([^ ]*\) .*/\1/p' "$LOGS/.results")
# a lane that died leaves tests never run: each of them is a failure
for name in "${first[@]}" "${rest[@]}" "${alone[@]}"; do
    grep -q " $name\( \|$\)" "$LOGS/.results" || { echo "FAIL $name: never ran (its lane ended early)"; failed+=" $name"; }
done
for name in $failed; do
    echo "FAIL $name; last lines of $LOGS/$name.log:"
    tail -25 "$LOGS/$name.log" | sed 's/^/    /'
done
# One line per failed test at the very end, where a shortened CI log still
# shows it: the test's own "FAIL:" reason (the tails above may be cut).
for name in $failed; do
    reason=$(grep -m1 '^FAIL: ' "$LOGS/$name.log" 2>/dev/null | cut -c1-240)
    echo "failed: $name: ${reason:-$(tail -1 "$LOGS/$name.log" 2>/dev/null | cut -c1-240)}"
done
echo "e2e: $pass passed, $(echo "$failed" | grep -c .) failed, $skip skipped"
[ -z "$failed" ]
