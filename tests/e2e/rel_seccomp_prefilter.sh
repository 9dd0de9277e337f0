#!/usr/bin/env bash
# rel_seccomp_prefilter: a program already under a seccomp filter at attach
# (one that allows everything heapinject makes) that sandboxes itself
# further while attached (issue 25). The sealed agent must wait without
# using a CPU: it used to make its userfaultfd (a wait that is no system
# call) only when no filter at all was there at attach, and spun on one
# CPU otherwise (~200 ticks in 2 s) until a cli came, and for good when
# the verdict allowed no poll. Now the injector runs the filters in force
# over the userfaultfd's calls (config "uffd=1") and over the agent's
# groups of calls (config "gate"), and a verdict names the futex wait and
# pause(2) as other ways to sleep. A TSYNC filter installed through a slot
# of ours is judged by the installing thread before it goes in, which
# writes the verdict itself: the agent never waits for a cli then.
#   1. --pre kill:acct, then openat forbidden by the raw instruction (no
#      slot of ours sees it): asleep in a fault (no system call:
#      /proc/PID/task/TID/syscall says -1), ~0 ticks in 2 s.
#   2. --pre errno:userfaultfd,ioctl (no userfaultfd possible, neither
#      the system call nor /dev/userfaultfd), then poll and openat
#      forbidden through syscall(SYS_seccomp): asleep in a futex wait at
#      once, before any command (~0 ticks, state S). Was: it spun until a
#      command gave the verdict.
#   3. 1 through `--via gdb`: the filters at attach are read there too.
#   4. --pre errno:userfaultfd (the system call refused, as container
#      runtimes' default profiles do), then openat forbidden (raw): asleep
#      in a fault at once, before any command, its userfaultfd made
#      through /dev/userfaultfd (was: it spun until the first verdict, ~70
#      ticks in 2 s). Skipped where the device cannot be opened.
#   5. --pre kill:acct, then openat forbidden through syscall(SYS_seccomp):
#      no wait at all, the agent serves within its own verdict (in poll,
#      no CPU); status says what the filter took (no /proc figures).
# The target checks every block it allocated (errors=0) and lives on.
# Covers: payload/sys/seccomp_watch.c, cli/process/seccomp_gate.c, common/seccomp_gate_calls.c, payload/interpose/hooks_sandbox.c
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

SAID='installed a seccomp filter after attach'

agent_tid() { grep -lx heapinject /proc/"$TPID"/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5; }
ticks() { awk '{print $14 + $15}' "/proc/$TPID/task/$1/stat"; }
# wait_syscall TID PATTERN SECONDS: /proc/PID/task/TID/syscall matches.
wait_syscall() {
    local i
    for ((i = 0; i < $3 * 20; i++)); do
        grep -q -- "$2" "/proc/$TPID/task/$1/syscall" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
# asleep NAME TID [serving]: ~0 CPU ticks in 2 s and state S; an agent
# still serving wakes at each tick (its poll has a timeout), so its state
# may read R at the look: only its CPU counts then.
asleep() {
    local c0 c1 st
    c0=$(ticks "$2"); sleep 2; c1=$(ticks "$2")
    st=$(awk '{print $3}' "/proc/$TPID/task/$2/stat")
    echo "$1: agent $2: $((c1 - c0)) ticks of CPU in 2 s, state $st, syscall $(cut -d' ' -f1 "/proc/$TPID/task/$2/syscall")"
    [ $((c1 - c0)) -lt 20 ] || fail "$1: the sealed agent used $((c1 - c0)) ticks of CPU in 2 s: it spins"
    [ "$st" = S ] || [ "${3:-}" = serving ] || fail "$1: the sealed agent is in state $st, not asleep"
}

# 1. a filter at attach that allows our calls, then a sealing one.
rel_start rel_seccomp_late --pre kill:acct
"$HEAPINJECT" attach -p "$TPID" 2>"$TMP/a1.err" || fail "attach: $(cat "$TMP/a1.err")"
atid=$(agent_tid); [ -n "$atid" ] || fail "1: no agent thread"
rel_cmd 'filter-raw openat' '^filtered' >/dev/null
# Sealed, it reads a page of its userfaultfd: blocked, in no system call.
wait_syscall "$atid" '^-1 ' 10 ||
    fail "1: the sealed agent does not wait in a fault: syscall '$(cat "/proc/$TPID/task/$atid/syscall")'"
asleep 1 "$atid"
"$HEAPINJECT" status -p "$TPID" >"$TMP/st1.out" 2>"$TMP/st1.err"
rc=$?
echo "1: status: exit $rc: $(cat "$TMP/st1.err")"
[ "$rc" = 5 ] || fail "1: status exit $rc, want 5"
grep -q "$SAID" "$TMP/st1.err" || fail "1: the filter is not said"
assert_alive "$TPID"
"$HEAPINJECT" detach -p "$TPID" >/dev/null 2>"$TMP/d1.err"
echo "1: detach: exit $?: $(cat "$TMP/d1.err")"
assert_alive "$TPID"
rel_quit

# 2. no userfaultfd at attach (the filter answers EPERM), then poll and
#    openat forbidden: no poll to park in, a futex wait instead.
rel_start rel_seccomp_late --pre errno:userfaultfd,ioctl
"$HEAPINJECT" attach -p "$TPID" 2>"$TMP/a2.err" || fail "attach: $(cat "$TMP/a2.err")"
atid=$(agent_tid); [ -n "$atid" ] || fail "2: no agent thread"
rel_cmd 'filter poll,openat' '^filtered' >/dev/null
# No command yet: the installing thread wrote the verdict itself.
wait_syscall "$atid" '^202 ' 10 ||
    fail "2: before any command, the agent does not sleep in futex: syscall '$(cat "/proc/$TPID/task/$atid/syscall")', state $(awk '{print $3}' "/proc/$TPID/task/$atid/stat")"
asleep 2-before "$atid"
"$HEAPINJECT" status -p "$TPID" >"$TMP/st2.out" 2>"$TMP/st2.err"
rc=$?
echo "2: status: exit $rc: $(cat "$TMP/st2.err")"
[ "$rc" = 5 ] || fail "2: status exit $rc, want 5"
grep -q "$SAID" "$TMP/st2.err" || fail "2: the filter is not said"
grep -q "asleep in a futex wait" "$TMP/st2.err" || fail "2: the agent's futex sleep is not said"
wait_syscall "$atid" '^202 ' 10 ||
    fail "2: the agent does not sleep in futex: syscall '$(cat "/proc/$TPID/task/$atid/syscall")'"
asleep 2 "$atid"
assert_alive "$TPID"
rel_quit
# 3. case 1 through gdb (`attach --via gdb`): the filters at attach used
#    to be read only on the ptrace path, so the agent made no userfaultfd
#    and spun once sealed (~200 ticks in 2 s). The injector now holds a
#    thread for that look before gdb comes (injector/inject.c gdb_uffd_ok).
# sealed_agent_sleeps N PRE [ATTACH_ARGS...]: the target started with the
# filter PRE, attached, then sealed by a filter on openat: the agent waits
# in a fault (no system call, no CPU) and detach says what it cannot undo.
sealed_agent_sleeps() {
    local n=$1 pre=$2 rc; shift 2
    rel_start rel_seccomp_late --pre "$pre"
    "$HEAPINJECT" attach -p "$TPID" "$@" 2>"$TMP/a$n.err" || fail "$n: attach $*: $(cat "$TMP/a$n.err")"
    atid=$(agent_tid); [ -n "$atid" ] || fail "$n: no agent thread"
    rel_cmd 'filter-raw openat' '^filtered' >/dev/null
    wait_syscall "$atid" '^-1 ' 10 ||
        fail "$n: the sealed agent does not wait in a fault: syscall '$(cat "/proc/$TPID/task/$atid/syscall")'"
    asleep "$n" "$atid"
    "$HEAPINJECT" detach -p "$TPID" >/dev/null 2>"$TMP/d$n.err"
    rc=$?
    echo "$n: detach: exit $rc: $(cat "$TMP/d$n.err")"
    [ "$rc" = 5 ] || fail "$n: detach exit $rc, want 5"
    assert_alive "$TPID"
    rel_quit
}
sealed_agent_sleeps 3 kill:acct --via gdb
# 4. the userfaultfd system call refused at attach: /dev/userfaultfd.
if [ -r /dev/userfaultfd ] && [ -w /dev/userfaultfd ]; then
    sealed_agent_sleeps 4 errno:userfaultfd
else
    echo "4: skipped: /dev/userfaultfd cannot be opened here"
fi
# 5. through a slot of ours: the verdict is the installer's, the agent
#    serves on within it (poll is allowed), with no wait and no CPU.
rel_start rel_seccomp_late --pre kill:acct
"$HEAPINJECT" attach -p "$TPID" 2>"$TMP/a5.err" || fail "attach: $(cat "$TMP/a5.err")"
atid=$(agent_tid); [ -n "$atid" ] || fail "5: no agent thread"
rel_cmd 'filter openat' '^filtered' >/dev/null
wait_syscall "$atid" '^7 ' 10 ||
    fail "5: the agent does not serve in poll: syscall '$(cat "/proc/$TPID/task/$atid/syscall")'"
asleep 5 "$atid" serving
"$HEAPINJECT" status -p "$TPID" >"$TMP/st5.out" 2>"$TMP/st5.err"
rc=$?
echo "5: status: exit $rc: $(cat "$TMP/st5.err")"
[ "$rc" = 5 ] || fail "5: status exit $rc, want 5"
grep -q "$SAID" "$TMP/st5.err" || fail "5: the filter is not said"
grep -q "no RSS figures" "$TMP/st5.err" || fail "5: what openat's refusal takes is not said"
grep -q "spun" "$TMP/st5.err" && fail "5: a spin is said: $(cat "$TMP/st5.err")"
line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "5: $line"
"$HEAPINJECT" detach -p "$TPID" >/dev/null 2>"$TMP/d5.err"
echo "5: detach: exit $?: $(cat "$TMP/d5.err")"
assert_alive "$TPID"
rel_quit
ok "a sealed agent sleeps when a filter was there at attach: in a fault on its userfaultfd, or in a futex wait"
