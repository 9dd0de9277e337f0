#!/usr/bin/env bash
# rel_seccomp_late: a program that sandboxes itself while heapinject is
# attached (issue 25, item 1): a TSYNC filter that answers KILL_PROCESS to
# openat, or to mprotect and madvise, installed after attach. Filters used
# to be checked only at attach: the target died of SIGSYS at `status`,
# `snapshot`, `detach`, a one-shot session's end and the time-to-live.
# Now the agent sees the filter (a pread of its own status, opened at
# start), turns the hooks off and makes no call until the cli has run the
# filter over the agent's calls; what cannot be done is said, exit 5, and
# the target must live on, its data intact (it checks every block).
# Covers: payload/sys/seccomp_watch.c
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

SAID='installed a seccomp filter after attach'

# check_cmd NAME WANT_EXIT CMD...: runs heapinject CMD, wants its exit
# status and the message; the target alive with its data intact.
check_cmd() {
    local name=$1 want=$2; shift 2
    "$HEAPINJECT" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    local rc=$?
    echo "$name: exit $rc: $(head -c 600 "$TMP/$name.err")"
    sleep 0.3
    assert_alive "$TPID"
    [ "$rc" = "$want" ] || fail "$name: exit $rc, want $want"
    grep -q "$SAID" "$TMP/$name.err" || fail "$name: the filter is not said"
    line=$(rel_cmd status '^status')
    grep -q 'errors=0' <<<"$line" || fail "$name: $line"
}

# 1. attach, then openat forbidden: status, snapshot, detach.
rel_start rel_seccomp_late
"$HEAPINJECT" attach -p "$TPID" 2>"$TMP/a1.err" || fail "attach: $(cat "$TMP/a1.err")"
rel_cmd 'filter openat' '^filtered' >/dev/null
check_cmd status1 5 status -p "$TPID"
grep -q "openat(2)" "$TMP/status1.err" || fail "status: openat not named"
check_cmd snapshot1 5 snapshot -p "$TPID" -o "$TMP/snap1.txt"
[ -s "$TMP/snap1.txt" ] || fail "snapshot: no report written"
check_cmd detach1 5 detach -p "$TPID"
grep -q "detached from pid" "$TMP/detach1.err" || fail "detach: not detached"
[ -z "$(rel_sock "$TPID")" ] || fail "detach1: the socket is still there"
rel_quit

# 2. attach, then mprotect and madvise forbidden: detach restores the slots
#    from outside (the agent cannot mprotect), the agent thread stays asleep.
rel_start rel_seccomp_late
"$HEAPINJECT" attach -p "$TPID" 2>"$TMP/a2.err" || fail "attach: $(cat "$TMP/a2.err")"
rel_cmd 'filter mprotect,madvise' '^filtered' >/dev/null
check_cmd detach2 5 detach -p "$TPID"
grep -q "put back from outside\|heapinject did, through /proc/PID/mem" "$TMP/detach2.err" ||
    fail "detach2: the restore from outside is not said"
grep -q "detached from pid $TPID: " "$TMP/detach2.err" || fail "detach2: slots not verified"
grep -q "but" "$TMP/detach2.err" && grep -q "still point" "$TMP/detach2.err" && fail "detach2: slots left hooked"
rel_quit

# 3. a one-shot session, openat forbidden halfway: the session ends, its
#    report is written, exit 5, the target lives.
rel_start rel_seccomp_late
"$HEAPINJECT" -p "$TPID" --duration 4 -o "$TMP/s3.txt" >/dev/null 2>"$TMP/s3.err" &
HPID=$!
PIDS+=("$HPID")
wait_for_line "$TMP/s3.err" 'attached to pid' 30 || fail "session did not attach: $(cat "$TMP/s3.err")"
rel_cmd 'filter openat' '^filtered' >/dev/null
wait "$HPID"
rc=$?
echo "session3: exit $rc: $(cat "$TMP/s3.err")"
sleep 0.3
assert_alive "$TPID"
[ "$rc" = 5 ] || fail "session3: exit $rc, want 5"
grep -q "$SAID" "$TMP/s3.err" || fail "session3: the filter is not said"
[ -s "$TMP/s3.txt" ] || fail "session3: no report"
line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "session3: $line"
rel_quit

# 4. mprotect and madvise forbidden during a one-shot session: its detach.
rel_start rel_seccomp_late
"$HEAPINJECT" -p "$TPID" --duration 3 -o "$TMP/s4.txt" >/dev/null 2>"$TMP/s4.err" &
HPID=$!
PIDS+=("$HPID")
wait_for_line "$TMP/s4.err" 'attached to pid' 30 || fail "session did not attach: $(cat "$TMP/s4.err")"
rel_cmd 'filter mprotect,madvise' '^filtered' >/dev/null
wait "$HPID"
rc=$?
echo "session4: exit $rc: $(cat "$TMP/s4.err")"
sleep 0.3
assert_alive "$TPID"
[ "$rc" = 5 ] || fail "session4: exit $rc, want 5"
line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "session4: $line"
rel_quit

# 5. the time-to-live: attach --ttl 2, mprotect forbidden, nobody there when
#    the ttl comes: the agent cannot put the slots back itself, so it stays
#    (hooks off, no CPU: serving in poll within the verdict the filtering
#    thread wrote, or asleep in a page fault until a cli's); the next
#    command puts the slots back from outside, and the agent leaves.
rel_start rel_seccomp_late
"$HEAPINJECT" attach -p "$TPID" --ttl 2 2>"$TMP/a5.err" || fail "attach: $(cat "$TMP/a5.err")"
rel_cmd 'filter mprotect' '^filtered' >/dev/null
sleep 3
assert_alive "$TPID"
line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "ttl: $line"
# The sealed agent waits without spinning (before: a pause loop, one CPU
# busy).
atid=$(grep -lx heapinject /proc/"$TPID"/task/*/comm | head -1 | cut -d/ -f5)
[ -n "$atid" ] || fail "ttl: no agent thread"
ticks() { awk '{print $14 + $15}' "/proc/$TPID/task/$atid/stat"; }
c0=$(ticks)
sleep 2
c1=$(ticks)
echo "sealed agent: $((c1 - c0)) ticks of CPU in 2 s, state $(awk '{print $3}' "/proc/$TPID/task/$atid/stat"), wchan $(cat "/proc/$TPID/task/$atid/wchan" 2>/dev/null)"
[ $((c1 - c0)) -lt 20 ] || fail "ttl: the sealed agent used $((c1 - c0)) ticks of CPU in 2 s: it spins"
"$HEAPINJECT" status -p "$TPID" >"$TMP/st5.out" 2>"$TMP/st5.err"
rc=$?
echo "ttl status: exit $rc: $(cat "$TMP/st5.err")"
sleep 1
assert_alive "$TPID"
[ "$rc" = 5 ] || fail "ttl status: exit $rc, want 5"
grep -q "$SAID" "$TMP/st5.err" || fail "ttl status: the filter is not said"
rel_detached_within "$TPID" 5000 >/dev/null || fail "ttl: the agent did not leave after the verdict"
line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "ttl: $line"
rel_quit
ok "a seccomp filter installed after attach: status, snapshot, detach, a session's end and the ttl leave the process alive"
