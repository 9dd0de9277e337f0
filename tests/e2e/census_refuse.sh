#!/bin/bash
# census_refuse.sh - a census that cannot be taken is refused before
# Covers: cli/census/precheck.c, cli/census/stopwatch.c, cli/census/uffd_check.c, cli/link/census_freeze.c
# anything is attached, when /proc shows why: a process whose malloc is
# jemalloc's, tcmalloc's or mimalloc's (read from its bound malloc GOT
# slots), or one under a seccomp filter (which may forbid the census's
# fork). Each gets exit 5 and a message that names the reason, and
# libheapinject.so is never mapped into it (the payload, once loaded,
# stays for good). With a session already attached the slots point into
# our hooks and tell nothing: the payload's own check refuses then, with
# the same words. Every target runs on, its data intact. A copy whose heap
# does not walk is taken again, twice at most (one caught in the middle of a
# malloc does not walk either): a heap that never walks says so three times
# and fails, exit 1, the process running on.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

LIBDIR=/usr/lib/x86_64-linux-gnu
# refused WHAT PID PATTERN: census -p PID exits 5 saying PATTERN, with
# nothing of ours mapped in PID afterwards.
refused() {
    local what=$1 pid=$2 pattern=$3 rc
    "$HEAPINJECT" census -q -p "$pid" >"$TMP/c.txt" 2>"$TMP/c.err"
    rc=$?
    [ "$rc" = 5 ] || fail "$what: census exit $rc, expected 5: $(cat "$TMP/c.err")"
    grep -q -- "$pattern" "$TMP/c.err" || fail "$what: no clear refusal ('$pattern'): $(cat "$TMP/c.err")"
    grep -q "nothing was attached" "$TMP/c.err" || fail "$what: the refusal does not say nothing was attached: $(cat "$TMP/c.err")"
    ! grep -q libheapinject "/proc/$pid/maps" || fail "$what: libheapinject.so was loaded into the process"
    [ ! -s "$TMP/c.txt" ] || fail "$what: a report was written: $(head -3 "$TMP/c.txt")"
    assert_alive "$pid"
    assert_not_traced "$pid"
    ok "$what: exit 5, '$pattern', nothing loaded"
}

# --- other allocators, preloaded ------------------------------------------------
TESTED=0
for lib in "$LIBDIR/libjemalloc.so.2:jemalloc" "$LIBDIR/libtcmalloc_minimal.so.4:tcmalloc" \
           "$LIBDIR/libmimalloc.so.2:mimalloc"; do
    path=${lib%%:*} name=${lib##*:}
    if [ ! -e "$path" ]; then
        [ "$name" = mimalloc ] && { echo "(mimalloc not installed: apt-get install libmimalloc2.0)"; continue; }
        fail "$path missing (scripts/deps.sh installs it)"
    fi
    LD_PRELOAD=$path "$TARGETS/census_cxx" >"$TMP/$name.out" 2>&1 &
    pid=$!; PIDS+=("$pid")
    wait_for_line "$TMP/$name.out" ready 10 || fail "$name target did not start"
    refused "$name" "$pid" "census supports glibc malloc; this process uses $name (its malloc slots point into lib$name"
    kill -USR1 "$pid"
    wait_for_line "$TMP/$name.out" "verify" 10 && grep -q "verify ok" "$TMP/$name.out" || fail "$name: target data damaged"
    TESTED=$((TESTED + 1))
done
[ "$TESTED" -ge 2 ] || fail "only $TESTED allocators tested"

# --- attached already: the slots point into our hooks, the payload refuses ------
LD_PRELOAD=$LIBDIR/libjemalloc.so.2 "$TARGETS/census_cxx" >"$TMP/je2.out" 2>&1 &
JP=$!; PIDS+=("$JP")
wait_for_line "$TMP/je2.out" ready 10 || fail "jemalloc target did not start"
"$HEAPINJECT" attach -q -p "$JP" 2>"$TMP/attach.err" || fail "attach: $(cat "$TMP/attach.err")"
"$HEAPINJECT" census -q -p "$JP" >"$TMP/c.txt" 2>"$TMP/c.err"
rc=$?
[ "$rc" = 5 ] || fail "attached jemalloc: census exit $rc, expected 5: $(cat "$TMP/c.err")"
grep -q "census supports glibc malloc; this process uses jemalloc" "$TMP/c.err" ||
    fail "attached jemalloc: no clear refusal: $(cat "$TMP/c.err")"
"$HEAPINJECT" detach -p "$JP" >/dev/null 2>&1 || fail "detach after the refused census"
assert_alive "$JP"
ok "attached jemalloc: the payload refuses, exit 5"

# --- a seccomp filter ---------------------------------------------------------
rel_start rel_seccomp allow
refused "seccomp filter" "$TPID" "runs under a seccomp filter, which may forbid the fork a census takes"
rel_cmd quit "^done" 120 | grep -q "errors=0" || fail "seccomp target: its own checks failed: $(cat "$TOUT")"
ok "seccomp target ran on, its checks clean"

# --- a heap that does not walk: three copies, then a clear failure ---------------
"$TARGETS/census_corrupt" >"$TMP/corrupt.out" 2>&1 &
CP=$!; PIDS+=("$CP")
wait_for_line "$TMP/corrupt.out" ready 10 || fail "census_corrupt did not start"
"$HEAPINJECT" census -q -p "$CP" >"$TMP/c.txt" 2>"$TMP/c.err"; rc=$?
[ "$rc" = 1 ] || fail "corrupt heap: census exit $rc, expected 1: $(cat "$TMP/c.err")"
n=$(grep -c "the copy caught the heap in the middle of a change (the chunks of \[heap\] do not chain.*); taking another" "$TMP/c.err")
[ "$n" = 2 ] || fail "corrupt heap: $n retries said, expected 2: $(cat "$TMP/c.err")"
grep -q "no census: the chunks of \[heap\] do not chain" "$TMP/c.err" || fail "corrupt heap: no final reason: $(cat "$TMP/c.err")"
assert_alive "$CP"
ok "a heap that does not walk: taken three times, then 'do not chain', exit 1, process running"
