#!/usr/bin/env bash
# rel_seccomp_actions: seccomp filters with every action (KILL_PROCESS,
# KILL_THREAD, TRAP, ERRNO, TRACE, LOG, USER_NOTIF) on each system call the
# profiler needs that sandboxes forbid (socket, clone3, pidfd_open, openat,
# eventfd2), and an allow-list filter. The target is never killed: where a
# call the injection cannot do without would be killed, trapped, failed or
# held, `heapinject -p` refuses before any call (exit 5), naming the call and
# the filter's answer, and the process runs on untraced with nothing loaded.
# Where the code copes (glibc falls back to clone when clone3 says ENOSYS,
# TRACE with no tracer is ENOSYS, a failed pidfd_open leaves the
# time-to-live), or the action is LOG, the session works. The target's own
# data checks pass every time.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
refused=0 worked=0

# run MODE WANT(refused|works) [MESSAGE_REGEX]
run() {
    local mode=$1 want=$2 msg=${3:-}
    rel_start rel_seccomp "$mode"
    local stale; stale=$(rel_sock "$TPID"); [ -z "$stale" ] || rm -f "$stale"
    timeout -k 5 60 "$HEAPINJECT" -p "$TPID" --duration 0.3 -o "$TMP/r.txt" >/dev/null 2>"$TMP/r.err"
    local rc=$?
    echo "$mode: exit $rc: $(tail -1 "$TMP/r.err")"
    alive "$TPID" || fail "$mode: the target died: $(cat "$TMP/r.err")"
    rel_untraced "$TPID"
    if [ "$want" = refused ]; then
        [ "$rc" = 5 ] || fail "$mode: exit $rc, want 5 (refused): $(cat "$TMP/r.err")"
        grep -Eq "runs under a seccomp filter that answers $msg" "$TMP/r.err" ||
            fail "$mode: the message lacks /$msg/: $(cat "$TMP/r.err")"
        grep -q libheapinject "/proc/$TPID/maps" && fail "$mode: the library was loaded"
        refused=$((refused + 1))
    else
        [ "$rc" = 0 ] || fail "$mode: the session failed (exit $rc): $(cat "$TMP/r.err")"
        grep -q "it runs on without hooks" "$TMP/r.err" || fail "$mode: no clean detach: $(cat "$TMP/r.err")"
        worked=$((worked + 1))
    fi
    line=$(rel_cmd status '^status')
    grep -q 'errors=0' <<<"$line" || fail "$mode: the target's data: $line"
    rel_quit >/dev/null
}

declare -A what=([socket]="the profiler's unix socket" [openat]="loading the library"
    [eventfd2]="waking the agent thread" [clone3]="the agent thread" [pidfd_open]="watching the cli")
for call in ${REL_SECCOMP_CALLS:-socket openat eventfd2 clone3 pidfd_open}; do
    for act in kill_process kill_thread trap errno trace log user_notif; do
        case "$act:$call" in
        log:*) run "$act:$call" works ;;
        trace:clone3 | trace:pidfd_open | errno:pidfd_open) run "$act:$call" works ;;
        *)
            case $act in
            kill_process) a=KILL_PROCESS ;; kill_thread) a=KILL_THREAD ;; trap) a='TRAP \(SIGSYS\)' ;;
            errno) a='ERRNO \(Operation not permitted\)' ;; trace) a=TRACE ;; user_notif) a='USER_NOTIF' ;;
            esac
            run "$act:$call" refused "$a[^,]* to $call\\(2\\), which ${what[$call]}"
            ;;
        esac
    done
done
run errno_enosys:clone3 works
run allowlist refused "KILL_PROCESS to [a-z0-9_]+\\(2\\)"
echo "RESULT rel_seccomp_actions refused=$refused worked=$worked target_killed=0"
ok "$refused filters refused before any call with the call named, $worked sessions worked, no target harmed"
