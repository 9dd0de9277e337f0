#!/usr/bin/env bash
# rel_seccomp_thread_late: one thread sandboxes itself after attach with a
# filter of its own (no TSYNC) while the others, the agent's included,
# keep theirs (issue 25). The hooks run in that thread too, and their
# calls (gettid when a thread is first seen, rt_sigprocmask in the stack
# walk, futex, mmap) were never run through its filter: the process died
# of SIGSYS at the thread's first allocation (the agent read its own
# Seccomp_filters only). Now the agent scans every thread's count (every
# 500 ms or more, see seccomp_watch.h) and the cli its own before each
# command: a thread that differs turns the hooks off for good (the slots
# put back from outside at once), said with exit 5; the agent, whose own
# filters are the ones the attach checked, still serves status, snapshot
# and detach. The worker checks every block it allocates (errors=0).
# Covers: payload/sys/seccomp_watch.c, cli/process/seccomp_gate.c
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

rel_start rel_seccomp_late
"$HEAPINJECT" attach -p "$TPID" --rate 64 2>"$TMP/a.err" || fail "attach: $(cat "$TMP/a.err")"
wtid=$(rel_cmd "thread-filter gettid,getpid,mprotect,madvise" '^thread-filtered' | awk '{print $2}')
echo "thread $wtid: $(grep Seccomp_filters "/proc/$TPID/task/$wtid/status"), agent's thread: $(grep -h Seccomp_filters "/proc/$TPID/task/$(grep -lx heapinject /proc/"$TPID"/task/*/comm | head -1 | cut -d/ -f5)/status")"
"$HEAPINJECT" status -p "$TPID" >"$TMP/status.out" 2>"$TMP/status.err"
rc=$?
echo "status: exit $rc: $(cat "$TMP/status.err")"
assert_alive "$TPID"
[ "$rc" = 5 ] || fail "status: exit $rc, want 5 (the thread's own filter said)"
grep -q "thread $wtid has a filter of its own" "$TMP/status.err" || fail "status: the thread's filter is not said"
grep -q "^pid $TPID" "$TMP/status.out" || grep -q "$TPID" "$TMP/status.out" || fail "status: nothing served: $(cat "$TMP/status.out")"
# The worker allocates now: no hook of ours may run in it.
rel_cmd thread-work '^thread-working' >/dev/null
assert_alive "$TPID" # (a dead reader would block rel_cmd's write to its fifo)
line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "after thread-work: $line"
for cmd in snapshot detach; do
    o=(); [ $cmd = snapshot ] && o=(-o "$TMP/$cmd.txt")
    "$HEAPINJECT" $cmd -p "$TPID" "${o[@]}" >"$TMP/$cmd.out" 2>"$TMP/$cmd.err"
    rc=$?
    echo "$cmd: exit $rc: $(head -c 800 "$TMP/$cmd.err")"
    assert_alive "$TPID"
    [ "$rc" = 5 ] || fail "$cmd: exit $rc, want 5"
    line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "$cmd: $line"
done
[ -s "$TMP/snapshot.txt" ] || fail "snapshot: no report written"
grep -q "detached from pid $TPID" "$TMP/detach.err" || fail "detach: not detached"
rel_detached_within "$TPID" 5000 >/dev/null || fail "the agent did not leave"
rel_quit

# 2. No command between the worker's filter and its allocations: the
#    agent's own scan (every 500 ms) must see it. Its verdict is the
#    gate's odd_tid (common/seccomp_gate.h, offset 96), read here through
#    /proc/PID/mem: the wait is for that event, 20 s at most.
gate_odd_tid() {
    python3 - "$1" "$2" <<'PY'
import sys
pid, sym = int(sys.argv[1]), int(sys.argv[2], 16)
base = None
for line in open("/proc/%d/maps" % pid):
    f = line.split()
    if len(f) >= 6 and f[5].endswith("/libheapinject.so") and int(f[2], 16) == 0:
        base = int(f[0].split("-")[0], 16)
        break
if base is None:
    print(-1); sys.exit()
with open("/proc/%d/mem" % pid, "rb") as m:
    m.seek(base + sym + 96)
    print(int.from_bytes(m.read(4), "little", signed=True))
PY
}
sym=$(nm -D "$ROOT/build/libheapinject.so" | awk '$3 == "heapinject_seccomp_gate" {print $1}')
[ -n "$sym" ] || fail "no heapinject_seccomp_gate in libheapinject.so"
rel_start rel_seccomp_late
"$HEAPINJECT" attach -p "$TPID" --rate 64 2>"$TMP/a2.err" || fail "attach: $(cat "$TMP/a2.err")"
# The raw instruction: a filter installed through prctl or syscall() is
# seen before it goes in (payload/interpose/hooks_sandbox.c, e2e
# rel_seccomp_thread_now); this one only by the scan.
wtid=$(rel_cmd "thread-filter-raw gettid,getpid" '^thread-filtered' | awk '{print $2}')
for ((i = 0; i < 400; i++)); do
    odd=$(gate_odd_tid "$TPID" "$sym")
    [ "$odd" = "$wtid" ] && break
    sleep 0.05
done
echo "2: the agent's scan named thread ${odd:-?} (the worker: $wtid) after ~$((i * 50)) ms"
[ "$odd" = "$wtid" ] || fail "2: the agent did not see the worker's filter by itself"
rel_cmd thread-work '^thread-working' >/dev/null
assert_alive "$TPID"
line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "2: after thread-work: $line"
"$HEAPINJECT" detach -p "$TPID" >/dev/null 2>"$TMP/d2.err"
rc=$?
echo "2: detach: exit $rc: $(cat "$TMP/d2.err")"
[ "$rc" = 5 ] && grep -q "thread $wtid has a filter of its own" "$TMP/d2.err" || fail "2: detach: exit $rc"
assert_alive "$TPID"
rel_quit
ok "a thread's own filter after attach: hooks off, status, snapshot and detach served, the target lives"
