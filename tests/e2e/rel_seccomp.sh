#!/usr/bin/env bash
# rel_seccomp: `heapinject -p` on a process under a seccomp filter. A filter
# that makes openat or mmap raise SIGSYS, or fail with EPERM: the injection
# fails with a message that names the cause, the process runs on untraced
# with nothing loaded and no mapping of ours left, and exits normally later.
# A filter that allows what loading needs: the session works (the injector
# then lets each rt_sigreturn of its rescue frames run, since skipping a
# syscall could be refused), and killing heapinject inside the injected
# dlopen leaves the process whole.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
KILLER="python3 $ROOT/tests/stress/rel_killer.py"

# mode EXIT_STATUS MESSAGE_REGEX
check_refused() {
    local mode=$1 want=$2 msg=$3
    rel_start rel_seccomp "$mode"
    # A socket already at this pid's path is stale: an earlier process with
    # the same pid was killed while attached. It is not this target's.
    local stale; stale=$(rel_sock "$TPID"); [ -z "$stale" ] || rm -f "$stale"
    awk '$6 != "[heap]" {print $1, $2, $6}' "/proc/$TPID/maps" >"$TMP/maps.before"
    rel_fds "$TPID" >"$TMP/fds.before"
    "$HEAPINJECT" -p "$TPID" --duration 1 -o "$TMP/never.txt" >/dev/null 2>"$TMP/$mode.err"
    rc=$?
    echo "$mode: exit $rc: $(cat "$TMP/$mode.err")"
    [ "$rc" = "$want" ] || fail "$mode: exit $rc, want $want"
    grep -Eq "$msg" "$TMP/$mode.err" || fail "$mode: message lacks /$msg/"
    rel_untraced "$TPID"
    awk '$6 != "[heap]" {print $1, $2, $6}' "/proc/$TPID/maps" >"$TMP/maps.after"
    grep -q libheapinject "$TMP/maps.after" && fail "$mode: the library is mapped"
    diff "$TMP/maps.before" "$TMP/maps.after" || fail "$mode: mappings changed"
    rel_fds "$TPID" | diff "$TMP/fds.before" - || fail "$mode: open files changed"
    [ -z "$(rel_sock "$TPID")" ] || fail "$mode: a socket exists"
    [ ! -e "$TMP/never.txt" ] || fail "$mode: a report was written"
    line=$(rel_cmd status '^status')
    grep -q 'errors=0' <<<"$line" || fail "$mode: $line"
    rel_quit
}

check_refused trap-openat 5 "seccomp filter in pid [0-9]+ trapped syscall 257 \(SIGSYS\)"
check_refused trap-mmap 5 "seccomp filter in pid [0-9]+ trapped syscall 9 \(SIGSYS\) in mmap\(\)"
check_refused errno-openat 1 "dlopen\(.*libheapinject.so.*\) failed in pid [0-9]+: .*Operation not permitted.*runs under a seccomp filter"
check_refused errno-mmap 1 "dlopen\(.*libheapinject.so.*\) failed in pid [0-9]+: .*map.*runs under a seccomp filter"

# A filter that does not get in the way. First heapinject is killed inside
# the injected dlopen (the library is not loaded yet, so dlopen takes a
# while): the thread restores itself through the rescue frame, here with
# rt_sigreturn really run (the injector saw the filter). Should the kill
# land after dlopen, in heapinject_start, the profiler leaves by itself at
# the end of the 1 s that heapinject -p gives it until it owns the session.
rel_start rel_seccomp allow
$KILLER --timeout 60 'calling dlopen\(' -- "$HEAPINJECT" -p "$TPID" -v --duration 30 \
    >/dev/null 2>"$TMP/kill.err"
grep -q '^killer: exit -9' "$TMP/kill.err" || fail "allow: the cli was not killed in dlopen: $(tail -3 "$TMP/kill.err")"
grep -q 'seccomp: rt_sigreturn runs' "$TMP/kill.err" || fail "allow: the injector did not see the filter"
rel_detached_within "$TPID" 2000 "$(rel_kill_time "$TMP/kill.err")" >/dev/null || fail "allow: still attached 2 s after the kill"
rel_untraced "$TPID"
line=$(rel_cmd status '^status')
grep -q 'errors=0' <<<"$line" || fail "allow: $line"
# Then whole sessions work.
for i in 1 2; do
    "$HEAPINJECT" -p "$TPID" -v --rate 4K --duration 1 -o "$TMP/allow.txt" 2>"$TMP/allow.err" ||
        fail "allow: session $i failed: $(cat "$TMP/allow.err")"
    grep -q 'seccomp: rt_sigreturn runs' "$TMP/allow.err" || fail "allow: the injector did not see the filter"
    grep -q main "$TMP/allow.txt" || fail "allow: report lacks main: $(head -20 "$TMP/allow.txt")"
    rel_untraced "$TPID"
    rel_hooks_gone "$TPID" >/dev/null
done
rel_quit
echo "RESULT rel_seccomp refused=4 allowed=2 killed_in_dlopen=1 failures=0"
ok "seccomp: refused clearly, the target runs on; allowed: works and survives a killed cli"
