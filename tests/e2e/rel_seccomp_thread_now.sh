#!/usr/bin/env bash
# rel_seccomp_thread_now: a thread installs a seccomp filter after attach
# and allocates in a tight loop at once, before any cli command or the
# agent's scan (every 500 ms) could see the filter (issue 25). The filter
# kills what the hooks used to call: gettid (a thread's first hooked
# call, and the slot's ownership check), getpid, rt_sigprocmask (the
# stack walk's probes), openat, sched_yield (a lock's wait). Before: SIGSYS
# at the thread's first allocation. Now prctl, seccomp and syscall go
# through our slots too: the installing thread turns the hooks off for
# good and waits for the ones in flight before its filter goes in
# (payload/interpose/hooks_sandbox.c). Three ways to install
# (syscall(SYS_seccomp) for the thread, prctl(PR_SET_SECCOMP) for the
# thread, syscall(SYS_seccomp) with TSYNC for every thread, the agent's
# included), each under `attach` (then status, snapshot, detach) and under
# a one-shot session; the syscall way a second time. The worker checks
# every block it allocates (errors=0); the cli says what it cannot do
# (exit 5) and the target lives.
# Covers: payload/interpose/hooks_sandbox.c, payload/record/thread.c, payload/record/stack_span.c
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

OWN=gettid,getpid,rt_sigprocmask,openat,sched_yield
ALL=gettid,getpid,rt_sigprocmask,openat # TSYNC: the main thread too (sched_yield left to it)

# worker_ran NAME: the filtered worker did its 2,000 tight rounds and more,
# every block it checked was right.
worker_ran() {
    local line i
    for ((i = 0; i < 300; i++)); do
        line=$(rel_cmd status '^status')
        grep -q 'errors=0' <<<"$line" || fail "$1: the target found corrupted data: $line"
        (($(sed 's/.*wrounds=//' <<<"$line") > 2000)) && break
        sleep 0.1
    done
    echo "$1: $line"
    (($(sed 's/.*wrounds=//' <<<"$line") > 2000)) || fail "$1: the worker did not get through its tight loop: $line"
}

# said NAME HOW FILE: the cli's message for the way the filter came.
said() {
    case $2 in
        tsync) grep -q "installed a seccomp filter after attach" "$3" ;;
        *) grep -q "thread $wtid has a filter of its own\|thread $wtid called prctl or seccomp" "$3" ;;
    esac || fail "$1: the filter is not said: $(cat "$3")"
}

# The raw instruction (inline assembly, a static libseccomp): no slot
#    of ours sees it, the hooks stay live until the agent's scan or a
#    command. raw_case NAME CALLS RATE:
#    - "raw", gettid and getpid at the default rate: a thread's first
#      hooked call takes its tid from glibc's struct pthread
#      (payload/record/thread.c), no system call. Before: SIGSYS in the
#      first hook's gettid.
#    - "rawall", OWN at --rate 1 (every allocation a sample): a thread's
#      first samples walk its stack reading only what lies between the
#      walk's first frame and the stack's top, found without a system
#      call (payload/record/stack_span.c); its bucket and address-map
#      locks never yield. Before: SIGSYS in the first walk's
#      rt_sigprocmask probe.
raw_case() {
    rel_start rel_seccomp_late
    "$HEAPINJECT" attach -p "$TPID" --rate "$3" 2>"$TMP/a$1.err" || fail "attach: $(cat "$TMP/a$1.err")"
    wtid=$(rel_cmd "thread-filter-now $2 raw" '^thread-filtered' | awk '{print $2}')
    worker_ran "$1/attach"
    "$HEAPINJECT" detach -p "$TPID" >/dev/null 2>"$TMP/d$1.err"
    rc=$?
    echo "$1/detach: exit $rc: $(head -c 600 "$TMP/d$1.err")"
    assert_alive "$TPID"
    [ "$rc" = 5 ] || fail "$1/detach: exit $rc, want 5"
    said "$1/detach" raw "$TMP/d$1.err"
    rel_hooks_gone "$TPID" >/dev/null
    rel_quit
}

# REL_NOW_CASES: a subset (each case alone against older code).
n=0
for how in ${REL_NOW_CASES:-syscall prctl tsync syscall raw rawall}; do
    n=$((n + 1))
    [ "$how" = raw ] && { raw_case raw gettid,getpid 4096; continue; }
    [ "$how" = rawall ] && { raw_case rawall "$OWN" 1; continue; }
    calls=$OWN; [ "$how" = tsync ] && calls=$ALL

    # attach, then the commands.
    rel_start rel_seccomp_late
    "$HEAPINJECT" attach -p "$TPID" --rate 1 2>"$TMP/a$n.err" || fail "attach: $(cat "$TMP/a$n.err")"
    wtid=$(rel_cmd "thread-filter-now $calls $how" '^thread-filtered' | awk '{print $2}')
    assert_alive "$TPID"
    worker_ran "$how/attach"
    for cmd in status snapshot detach; do
        o=(); [ $cmd = snapshot ] && o=(-o "$TMP/$cmd$n.txt")
        "$HEAPINJECT" $cmd -p "$TPID" "${o[@]}" >"$TMP/$cmd$n.out" 2>"$TMP/$cmd$n.err"
        rc=$?
        echo "$how/$cmd: exit $rc: $(head -c 600 "$TMP/$cmd$n.err")"
        assert_alive "$TPID"
        [ "$rc" = 5 ] || fail "$how/$cmd: exit $rc, want 5 (the filter said)"
        said "$how/$cmd" "$how" "$TMP/$cmd$n.err"
        line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "$how/$cmd: $line"
    done
    rel_hooks_gone "$TPID" >/dev/null
    rel_quit

    # a one-shot session: the filter comes while it runs.
    rel_start rel_seccomp_late
    "$HEAPINJECT" -p "$TPID" --rate 1 --duration 2 -o "$TMP/s$n.txt" >/dev/null 2>"$TMP/s$n.err" &
    HPID=$!
    PIDS+=("$HPID")
    wait_for_line "$TMP/s$n.err" 'attached to pid' 30 || fail "session did not attach: $(cat "$TMP/s$n.err")"
    wtid=$(rel_cmd "thread-filter-now $calls $how" '^thread-filtered' | awk '{print $2}')
    worker_ran "$how/one-shot"
    wait "$HPID"
    rc=$?
    echo "$how/one-shot: exit $rc: $(head -c 600 "$TMP/s$n.err")"
    assert_alive "$TPID"
    [ "$rc" = 5 ] || fail "$how/one-shot: exit $rc, want 5"
    said "$how/one-shot" "$how" "$TMP/s$n.err"
    rel_quit
done
ok "a filter installed after attach and allocations right after it: the hooks were off before it, the target lives"
