#!/usr/bin/env bash
# a thread caught inside glibc's allocator or inside the dynamic linker is
# never used for the injected dlopen: heapinject waits for it to leave, and
# when it does not within --timeout, refuses (exit 8) with a message that
# says where the thread is, leaving the target as it was. Never a deadlock:
# every injection runs under a time limit. The only thread of each target:
#   - waits inside realloc's copy of a 16 MiB block, with the arena's lock
#     held (a dlopen there deadlocks), held there by a userfaultfd until a
#     child of the target fills the pages: found by address, "inside
#     libc's malloc";
#   - is blocked in the constructor of a library it dlopen()s (the loader's
#     lock held), and
#   - is blocked in an LD_AUDIT library's la_objopen at startup: both found
#     by address, "inside the dynamic linker".
# Then each is let go during a waiting injection, which must succeed.
source "$(dirname "$0")/inject_common.bash"
build_testlib
GO=$TMP/release
for k in ctor audit; do
    gcc -shared -fPIC -O1 -DRELEASE_FILE="\"$GO.$k\"" -o "$TMP/libblock$k.so" \
        "$ROOT/tests/e2e/inject_block$k.c" || fail "cannot build libblock$k.so"
done

# inject_limited SECS ARGS...: inject under a hard time limit; a limit hit
# means the injector hung (deadlocked on the target's lock).
inject_limited() {
    local secs=$1; shift
    timeout -k 5 "$secs" "$HEAPINJECT" inject "$@" >"$TMP/inj.out" 2>"$TMP/inj.err"
    RC=$?
    echo "$RC" >"$TMP/inj.rc" # read back when run in the background
    echo "+ heapinject inject $* -> $RC"; sed 's/^/  out: /' "$TMP/inj.out"; sed 's/^/  err: /' "$TMP/inj.err" | tail -5
    [ "$RC" = 124 ] || [ "$RC" = 137 ] && fail "heapinject inject did not return within $secs s: deadlocked?"
    return 0
}

# refused PID WHERE: a 2 s injection is refused with exit 8, naming WHERE.
refused() {
    inject_limited 30 -p "$1" --timeout 2000 "$LIB" hi_test_count
    expect_rc 8
    expect_err "no thread reached a safe point within 2000 ms .*last: thread $1 is inside $2"
    assert_fine "$1"
    assert_not_loaded "$1" "$LIB"
}

# --- inside realloc ---------------------------------------------------------
probe=$("$TARGETS/inj_unsafe" realloc 0 2>&1 | head -1)
case "$probe" in "userfaultfd unavailable"*) skip "$probe (needed to hold a thread inside realloc)" ;; esac
start_target inj_unsafe realloc 600
R=$TPID
refused "$R" "libc's malloc"
ok "thread inside realloc: refused, 'inside libc's malloc'"
mv "$TMP/inj_unsafe.out" "$TMP/spin1.out"
start_target inj_unsafe realloc 3
inject_limited 60 -v -p "$TPID" --timeout 30000 "$LIB" hi_test_count
expect_rc 0; expect_out '^called hi_test_count\(NULL\) = 1$'
expect_err "thread $TPID is inside libc's malloc .*; retrying"
expect_err "thread $TPID is at a safe point \(attempt [0-9]+\)"
wait_for_line "$TMP/inj_unsafe.out" '^calm after' 20 || fail "the target's realloc did not finish after the injection"
assert_fine "$TPID"
ok "thread inside realloc: waited for it to leave, then injected"

# --- inside the dynamic linker: a constructor that blocks in dlopen ---------
start_target inj_unsafe ctor "$TMP/libblockctor.so"
C=$TPID
refused "$C" "the dynamic linker"
inject_limited 60 -v -p "$C" --timeout 30000 "$LIB" hi_test_count &
IPID=$!
wait_for_line "$TMP/inj.err" "is inside the dynamic linker.*retrying" 20 || fail "the injection did not wait: $(cat "$TMP/inj.err")"
touch "$GO.ctor"
wait "$IPID" || exit 1
RC=$(cat "$TMP/inj.rc")
expect_rc 0; expect_out '^called hi_test_count\(NULL\) = 1$'
grep -q '^loaded' "$TMP/inj_unsafe.out" || fail "the target's dlopen did not finish"
assert_fine "$C"
ok "thread in a blocked constructor: refused, then waited for and injected"

# --- inside the dynamic linker at startup: LD_AUDIT -----------------------------
LD_AUDIT="$TMP/libblockaudit.so" "$TARGETS/inj_wait" nanosleep 60 >"$TMP/audit.out" 2>"$TMP/audit.err" &
A=$!; PIDS+=("$A")
wait_for_line "$TMP/audit.out" ready 10 || fail "audit target did not start: $(cat "$TMP/audit.err")"
refused "$A" "the dynamic linker"
inject_limited 60 -v -p "$A" --timeout 30000 "$LIB" hi_test_count &
IPID=$!
wait_for_line "$TMP/inj.err" "is inside the dynamic linker.*retrying" 20 || fail "the injection did not wait: $(cat "$TMP/inj.err")"
touch "$GO.audit"
wait "$IPID" || exit 1
RC=$(cat "$TMP/inj.rc")
expect_rc 0; expect_out '^called hi_test_count\(NULL\) = 1$'
assert_fine "$A"
ok "thread held by an LD_AUDIT library at startup: refused, then waited for and injected"
