#!/usr/bin/env bash
# cli_static_alloc: a program with jemalloc linked into its executable makes
# its own allocations through direct calls that no GOT slot sees. heapinject
# -p must say so plainly, exit 5 (unsupported) and leave the process
# untouched: never traced, no payload loaded, still running. `status`
# names the linked-in allocator as the holder of the memory under mmap.
. "$(dirname "$0")/lib.sh"

start_target pl_static_jemalloc
rc=0
"$HEAPINJECT" -p "$TPID" --duration 1 -o "$TMP/report.txt" >"$TMP/out.txt" 2>"$TMP/err.txt" || rc=$?
cat "$TMP/err.txt"
[ "$rc" = 5 ] || fail "exit status $rc, expected 5 (unsupported)"
grep -q "has its own allocator linked into the executable" "$TMP/err.txt" || fail "no plain reason given"
grep -q "statically linked jemalloc" "$TMP/err.txt" || fail "the allocator kind is not named"
grep -q "it defines malloc " "$TMP/err.txt" || fail "the symbol that gave it away is not named"
grep -q "not touched" "$TMP/err.txt" || fail "the message does not say the process was left alone"
[ -e "$TMP/report.txt" ] && fail "a report was written for a process we cannot see"
grep -q libheapinject "/proc/$TPID/maps" && fail "the payload was loaded anyway"
# `status` still splits its RSS from outside, and says why the heap is
# under mmap.
"$HEAPINJECT" status -p "$TPID" >"$TMP/status.txt" 2>&1
grep -q "the executable has its own allocator linked in, a statically linked jemalloc, tcmalloc or similar (it defines malloc): its heap is counted under mmap" "$TMP/status.txt" ||
    fail "status does not say where the executable's own allocator's heap is: $(cat "$TMP/status.txt")"
grep -q libheapinject "/proc/$TPID/maps" && fail "status loaded the payload"
# A census is refused as well, before anything is attached, without
# suggesting the profiling that was just refused.
"$HEAPINJECT" census -p "$TPID" >"$TMP/census.txt" 2>"$TMP/census.err"; rc=$?
[ "$rc" = 5 ] || fail "census: exit $rc, expected 5: $(cat "$TMP/census.err")"
grep -q "this process uses an allocator linked into its executable (its malloc slots point into pl_static_jemalloc); nothing was attached" "$TMP/census.err" ||
    fail "census: no clear refusal: $(cat "$TMP/census.err")"
grep -q "'heapinject -p" "$TMP/census.err" && fail "census: suggests heapinject -p, which refuses this process"
grep -q libheapinject "/proc/$TPID/maps" && fail "census loaded the payload"
sleep 0.2
assert_alive "$TPID"
assert_not_traced "$TPID"

# The same program linked against glibc's malloc is profiled: the check
# looks at what the executable defines, not at its name or its code.
${CC:-cc} -O1 -g -fno-omit-frame-pointer -pthread "$ROOT/tests/targets/pl_static_jemalloc.c" -o "$TMP/plain" ||
    fail "cannot build the glibc variant"
"$TMP/plain" >"$TMP/plain.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/plain.out" ready 10 || fail "the glibc variant did not start"
"$HEAPINJECT" -p "$TPID" --duration 1 --rate 4K -q -o "$TMP/plain.txt" 2>"$TMP/plain.err" ||
    fail "the glibc variant was refused: $(cat "$TMP/plain.err")"
grep -q grow_cache "$TMP/plain.txt" || fail "the glibc variant's allocations were not seen"
assert_alive "$TPID"
ok "statically linked allocator refused before injection, target untouched"
