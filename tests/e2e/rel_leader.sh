#!/usr/bin/env bash
# rel_leader: the process's main thread exits (pthread_exit) during a
# session, or the process runs out of file descriptors during a session:
# every hooked slot must be restored (the cli reads them all back through
# /proc/PID/mem and says so; so does this test, independently), the report
# is symbolized and shows the RSS. Before attach, the same states must not
# pass for a "statically linked allocator": a zombie main thread is
# attached through another thread; too few free descriptors is refused
# before any slot is patched. The target checks its own data throughout.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

# session NAME: a one-shot session in the background; waits until attached.
session() {
    "$HEAPINJECT" -p "$TPID" --duration 2 -o "$TMP/$1.txt" >/dev/null 2>"$TMP/$1.err" &
    CLI=$!
    wait_for_line "$TMP/$1.err" "attached to pid $TPID" 30 || fail "$1: not attached: $(cat "$TMP/$1.err")"
}
# finished NAME: the session ended with exit 0, every slot verified back,
# a symbolized report with a real RSS.
finished() {
    wait "$CLI"; local rc=$?
    cat "$TMP/$1.err"
    [ "$rc" = 0 ] || fail "$1: exit $rc"
    grep -q "it runs on without hooks (all [0-9]* allocator slots of [0-9]* modules, hooked or not, read back through /proc/[0-9]*/mem: none points into the profiler)" \
        "$TMP/$1.err" || fail "$1: no verified detach"
    grep -q "make_block" "$TMP/$1.txt" || fail "$1: report not symbolized: $(head -20 "$TMP/$1.txt")"
    grep -q "target RSS *0 B" "$TMP/$1.txt" && fail "$1: report says target RSS 0 B"
    local n; n=$(rel_hooks_gone "$TPID") || exit 1
    echo "$1: $n slots read back by the test, none hooked"
    rel_untraced "$TPID"; echo "[t=${SECONDS}s] $1 done"
}

echo "[t=${SECONDS}s]"
# --- the main thread exits mid-session, then a session on the zombie leader --
rel_start rel_states threads
session leader
rel_cmd leaderexit '^leader exiting' >/dev/null
for ((i = 0; i < 100; i++)); do grep -q '^State:.*Z' "/proc/$TPID/status" && break; sleep 0.02; done
grep -q '^State:.*Z' "/proc/$TPID/status" || fail "the main thread did not exit"
finished leader
rel_cmd check '^check ok' | grep -q errors=0 || fail "data damaged"
session zombie_leader
finished zombie_leader
grep -q "statically linked" "$TMP/zombie_leader.err" && fail "a zombie leader called statically linked"
grep -q "pid $TPID: its main thread has exited (a zombie) while other threads run on; attaching through thread" \
    "$TMP/zombie_leader.err" || fail "no word of the zombie main thread"
grep -q "its main thread has exited" "$TMP/leader.err" && fail "a live main thread called exited"

echo "[t=${SECONDS}s]"
# --- out of descriptors mid-session (and the main thread gone as well) -------
session leader_fds
rel_cmd exhaust '^exhausted' >/dev/null
finished leader_fds
grep -q "could not read the process's maps" "$TMP/leader_fds.txt" || fail "no note on the maps read by the cli"
rel_cmd release '^released' >/dev/null
rel_cmd check '^check ok' | grep -q errors=0 || fail "data damaged"
rel_quit

rel_start rel_states threads
session fds
rel_cmd exhaust '^exhausted' >/dev/null
finished fds
rel_cmd release '^released' >/dev/null

echo "[t=${SECONDS}s]"
# --- 3 free descriptors before attach: refused, nothing patched --------------
rel_cmd "exhaust 3" '^exhausted' >/dev/null
"$HEAPINJECT" -p "$TPID" --duration 2 -o "$TMP/few.txt" >/dev/null 2>"$TMP/few.err"; rc=$?
cat "$TMP/few.err"
[ "$rc" = 6 ] || fail "3 free fds: exit $rc, want 6"
grep -q "pid $TPID is out of file descriptors" "$TMP/few.err" || fail "3 free fds: message"
grep -q "statically linked" "$TMP/few.err" && fail "3 free fds called statically linked"
rel_hooks_gone "$TPID" >/dev/null || exit 1
[ -z "$(rel_sock "$TPID")" ] || fail "a socket was left behind"
rel_cmd release '^released' >/dev/null
rel_cmd check '^check ok' | grep -q errors=0 || fail "data damaged"
rel_quit

echo "[t=${SECONDS}s]"
# --- a filter that forbids putting the slots back ----------------------------
# The target forbids mprotect on libc's read-only GOT mid-session (seccomp,
# all threads). The agent sees the new filter and stops (no system call the
# filter was not shown to allow); the cli runs the filter, finds mprotect
# refused and puts every slot back itself through /proc/PID/mem (before:
# libc's slots stayed hooked and the cli named them, exit 1). The session
# says what the filter cost it, exit 5, and every slot reads back unhooked.
rel_start rel_states threads
session locked
rel_cmd lockgot '^lockgot 0' >/dev/null
wait "$CLI"; rc=$?
cat "$TMP/locked.err"
[ "$rc" = 5 ] || fail "locked: exit $rc, want 5"
grep -q "installed a seccomp filter after attach" "$TMP/locked.err" || fail "locked: the filter is not named"
n=$(rel_hooks_gone "$TPID") || exit 1
echo "locked: $n slots read back through /proc/$TPID/mem, none hooked"
rel_cmd check '^check ok' | grep -q errors=0 || fail "data damaged"
rel_quit

echo "RESULT rel_leader sessions=5 refusals=1 failures=0"
ok "main thread exit and fd exhaustion mid-session: every slot verified back; few fds refused"
