#!/usr/bin/env bash
# rel_seccomp: `heapinject -p` on a process under a seccomp filter. A filter
# Covers: cli/census/heap_sanity.c, common/config.c, injector/log.c, injector/remote_rescue.c, injector/seccomp_plan.c
# that makes openat or mmap raise SIGSYS, or fail with EPERM: the injection
# is refused before any call (exit 5) with a message that names the call
# and the filter's answer, the process runs on untraced
# with nothing loaded and no mapping of ours left, and exits normally later.
# A filter that allows what loading needs: the session works (the injector
# then lets each rt_sigreturn of its rescue frames run, since skipping a
# syscall could be refused), and killing heapinject inside the injected
# dlopen leaves the process whole, and killing it once its rescue page
# exists leaves no page behind (the filter allows munmap). A filter that
# refuses munmap: the session works, the page would stay should heapinject
# die (the old stub), and a kill leaves the process running.
# Schedule: first (one of the longest: started early so that the lanes end together)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
KILLER="python3 $ROOT/tests/stress/rel_killer.py"
# rescue_pages: anonymous r-x mappings of the target (the injector's
# rescue page is one; the target itself has none).
rescue_pages() { awk '$2 == "r-xp" && $6 == ""' "/proc/$TPID/maps" | wc -l; }

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

# Refused before anything is done: the filters are run over every system
# call the injection needs (injector/seccomp_plan.c).
check_refused trap-openat 5 "pid [0-9]+ runs under a seccomp filter that answers TRAP \(SIGSYS\) to openat\(2\), which loading the library needs; nothing was done"
check_refused trap-mmap 5 "pid [0-9]+ runs under a seccomp filter that answers TRAP \(SIGSYS\) to mmap\(2\)"
check_refused errno-openat 5 "pid [0-9]+ runs under a seccomp filter that answers ERRNO \(Operation not permitted\) to openat\(2\)"
check_refused errno-mmap 5 "pid [0-9]+ runs under a seccomp filter that answers ERRNO \(Operation not permitted\) to mmap\(2\)"
# A filter one thread installed for itself alone (no TSYNC), harmless as it
# is: the filters are read and run in the held thread only, while the hooks
# run in every thread that allocates, so threads with different filters
# are refused (before: the main thread was held, its no-filter checked).
check_refused thread-allow 5 "pid [0-9]+'s threads run under different seccomp filters \(thread [0-9]+: 0 filters, thread [0-9]+: 1\).*nothing was done"

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
# Killed once the rescue page exists: the filter allows munmap (the
# injector reads and runs it), so the page unmaps itself on the thread's
# way back, also when the kill lands between two calls (the stub's munmap,
# run then as getpid with munmap(page) as its way out, parks the thread
# at munmap(page)).
base_pages=$(rescue_pages)
for stage in "rescue frame at" "calling heapinject_start"; do
    $KILLER --timeout 60 "$stage" -- "$HEAPINJECT" -p "$TPID" -v --duration 30 \
        >/dev/null 2>"$TMP/kill.err"
    grep -q '^killer: exit -9' "$TMP/kill.err" || fail "allow: not killed at '$stage': $(tail -3 "$TMP/kill.err")"
    grep -q 'seccomp filters of thread [0-9]* allow munmap' "$TMP/kill.err" ||
        fail "allow: the filter was not read: $(grep -i seccomp "$TMP/kill.err")"
    grep -q 'unmapped by the thread itself' "$TMP/kill.err" || fail "allow: the page was not set to unmap itself"
    grep -q "mapping a rescue page at .*from munmap's syscall" "$TMP/kill.err" ||
        fail "allow: the page's own mmap can leave it: $(grep -o 'mapping a rescue page.*' "$TMP/kill.err")"
    rel_detached_within "$TPID" 2000 "$(rel_kill_time "$TMP/kill.err")" >/dev/null ||
        fail "allow: still attached 2 s after the kill at '$stage'"
    rel_untraced "$TPID"
    pages=$(rescue_pages)
    ((pages == base_pages)) || fail "allow: killed at '$stage': $((pages - base_pages)) rescue page(s) left"
    line=$(rel_cmd status '^status')
    grep -q 'errors=0' <<<"$line" || fail "allow: after the kill at '$stage': $line"
    echo "allow: killed at '$stage': no rescue page left, $line"
done
# The same with each of the cli's ptrace calls delayed 20 ms (strace), and
# the kill 10 to 190 ms after the page is armed: in every step of the
# calls that follow, the stub's munmap turned into getpid among them. (With
# munmap(page, 0) there instead, as before, kills in that step left the
# page.)
for delay in 10 30 50 70 90 110 130 150 170 190; do
    $KILLER --timeout 60 --victim child --delay-ms "$delay" "rescue frame at" -- \
        strace -o /dev/null -e trace=ptrace -e inject=ptrace:delay_enter=20000 \
        "$HEAPINJECT" -p "$TPID" -v --duration 30 >/dev/null 2>"$TMP/kill.err"
    grep -q '^killer: hit' "$TMP/kill.err" || fail "allow: the page was never armed: $(tail -3 "$TMP/kill.err")"
    grep -q 'unmapped by the thread itself' "$TMP/kill.err" || fail "allow: the page was not set to unmap itself"
    rel_detached_within "$TPID" 3000 "$(rel_kill_time "$TMP/kill.err")" >/dev/null ||
        fail "allow: still attached 3 s after the kill ${delay} ms after the page"
    rel_untraced "$TPID"
    pages=$(rescue_pages)
    ((pages == base_pages)) || fail "allow: killed ${delay} ms after the page was armed (ptrace calls 20 ms apart): $((pages - base_pages)) rescue page(s) left; the cli's last lines: $(grep -v '^killer' "$TMP/kill.err" | tail -3)"
    line=$(rel_cmd status '^status')
    grep -q 'errors=0' <<<"$line" || fail "allow: after the kill ${delay} ms after the page: $line"
done
echo "allow: killed 10 times 10-190 ms after the page was armed, ptrace calls 20 ms apart: no rescue page left"
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

# A filter that refuses munmap (EPERM): the page cannot unmap itself, so
# the injector keeps the old stub and the page stays should it die. The
# session works; killed once the page exists, the thread still restores
# itself and the target runs on (with the page left: the known cost).
rel_start rel_seccomp deny-munmap
base_pages=$(rescue_pages)
"$HEAPINJECT" -p "$TPID" -v --rate 4K --duration 1 -o "$TMP/deny.txt" 2>"$TMP/deny.err" ||
    fail "deny-munmap: session failed: $(cat "$TMP/deny.err")"
grep -q 'seccomp filters of thread [0-9]* do not allow munmap' "$TMP/deny.err" ||
    fail "deny-munmap: the filter was not seen to refuse munmap: $(grep -i seccomp "$TMP/deny.err")"
grep -q 'page at 0x[0-9a-f]* (stays)' "$TMP/deny.err" || fail "deny-munmap: the self-unmapping stub was used"
grep -q main "$TMP/deny.txt" || fail "deny-munmap: report lacks main"
rel_untraced "$TPID"
rel_hooks_gone "$TPID" >/dev/null
$KILLER --timeout 60 "rescue frame at" -- "$HEAPINJECT" -p "$TPID" -v --duration 30 \
    >/dev/null 2>"$TMP/kill.err"
grep -q '^killer: exit -9' "$TMP/kill.err" || fail "deny-munmap: not killed: $(tail -3 "$TMP/kill.err")"
grep -q 'page at 0x[0-9a-f]* (stays)' "$TMP/kill.err" || fail "deny-munmap: the self-unmapping stub was used"
rel_detached_within "$TPID" 2000 "$(rel_kill_time "$TMP/kill.err")" >/dev/null ||
    fail "deny-munmap: still attached 2 s after the kill"
rel_untraced "$TPID"
left=$(($(rescue_pages) - base_pages))
line=$(rel_cmd status '^status')
grep -q 'errors=0' <<<"$line" || fail "deny-munmap: after the kill: $line"
echo "deny-munmap: session worked; killed at 'rescue frame at': the target runs on ($line, $left page(s) left)"
rel_quit
echo "RESULT rel_seccomp refused=4 allowed=2 killed_in_dlopen=1 killed_self_unmap=2 deny_munmap=1 failures=0"
ok "seccomp: refused clearly, the target runs on; allowed: works and survives a killed cli"
