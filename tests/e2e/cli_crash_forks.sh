#!/usr/bin/env bash
# cli_crash_forks: the fatal signal handler (payload/serve/fatal.c) in the cases a
# program can hand it that are not a plain crash of the attached process
# (issue 25, item 5):
# 1. `old = signal(SIGSEGV, h); signal(SIGSEGV, old)` puts our handler back
#    without SA_SIGINFO; then raise(SIGSEGV) (the stack below poisoned, so
#    that a siginfo the kernel did not write looks like a fault) kills the
#    process with the wait status and core flag it has without heapinject
#    (was: "SURVIVED");
# 2. a detach after the idiom leaves no handler of ours, and SIGSEGV's
#    action is exactly what it was before the attach, flags included (was:
#    our handler stayed; SA_RESTORER added);
# 3. children made by _Fork(), clone(), syscall(SYS_fork) (no atfork
#    handler runs) and vfork() that fault die at once, not after the 1 s
#    the handler waits for the agent's snapshot, and the cli reports no
#    crash of the target it watches; a _Fork() or syscall(SYS_fork)
#    child under a seccomp filter that kills getpid dies of its SIGSEGV
#    too (was: SIGSYS, the handler's getpid).
. "$(dirname "$0")/lib.sh"

SEGV_BIT=$((1 << 10))
# sigcgt_segv PID: 1 when PID has a handler for SIGSEGV (SigCgt), else 0.
sigcgt_segv() {
    local m; m=$(awk '/^SigCgt:/{print $2}' "/proc/$1/status")
    echo $(( (16#$m & SEGV_BIT) != 0 ))
}

# A target on a fifo, its parent a python that writes its wait status:
# start OUT -> TPID, TIN (the fifo), OUT.out, later OUT.status.
start() {
    local out=$1
    TIN="$out.in"; rm -f "$TIN"; mkfifo "$TIN"
    sleep 100000 >"$TIN" &
    PIDS+=("$!")
    (cd "$TMP/core" && python3 - "$out" "$TARGETS/pl_forkcost" "$TIN" <<'PY') &
import os, resource, sys
out, prog, fifo = sys.argv[1:4]
hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
pid = os.fork()
if pid == 0:
    fd = os.open(out + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(os.open(fifo, os.O_RDONLY), 0)
    os.execv(prog, [prog])
open(out + ".pid", "w").write(f"{pid}\n")
_, st = os.waitpid(pid, 0)
sig = os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0
code = os.WEXITSTATUS(st) if os.WIFEXITED(st) else -1
open(out + ".status", "w").write(f"signal {sig} core {int(os.WCOREDUMP(st))} exit {code}\n")
PY
    PIDS+=("$!")
    wait_for_line "$out.pid" '[0-9]$' 10 || fail "pl_forkcost did not start"
    TPID=$(cat "$out.pid")
    PIDS+=("$TPID")
    wait_for_line "$out.out" '^ready' 10 || fail "pl_forkcost did not get ready"
}

# cmd OUT COMMAND PATTERN: sends COMMAND, prints the new line matching PATTERN.
cmd() {
    local before; before=$(wc -l <"$1.out")
    echo "$2" >"$TIN"
    local i line
    for ((i = 0; i < 600; i++)); do
        line=$(tail -n +"$((before + 1))" "$1.out" | grep -m1 -- "$3") && { echo "$line"; return 0; }
        sleep 0.05
    done
    fail "no '$3' after '$2': $(tail -3 "$1.out")"
}

# attach OUT: the cli on TPID for a long session; returns once its
# background snapshots (and so the crash handler's receiver) run. CLI=pid.
attach() {
    "$HEAPINJECT" -v -p "$TPID" --duration 600 -o "$1.report" 2>"$1.err" &
    CLI=$!
    PIDS+=("$CLI")
    wait_for_line "$1.err" "background snapshot" 30 || fail "no background snapshot: $(cat "$1.err")"
}

# detach OUT: Ctrl-C to the cli; it detaches and writes its report.
detach() {
    kill -INT "$CLI"
    wait "$CLI" || fail "the cli failed: $(tail -3 "$1.err")"
}

mkdir -p "$TMP/core"

# 1. The idiom, then raise(SIGSEGV): as without heapinject, every time.
start "$TMP/plain"
cmd "$TMP/plain" idiom '^idiom' >/dev/null
echo raise >"$TIN"
wait_for_line "$TMP/plain.status" signal 20 || fail "no status without heapinject"
want=$(cat "$TMP/plain.status")
echo "without heapinject: $want"
for run in 1 2 3 4; do
    o="$TMP/idiom$run"
    start "$o"
    attach "$o"
    [ "$(sigcgt_segv "$TPID")" = 1 ] || fail "no SIGSEGV handler of ours during the session"
    put=$(cmd "$o" idiom '^idiom')
    flags=$(cmd "$o" sigsegv '^sigsegv')
    echo "run $run: $put; $flags"
    echo raise >"$TIN"
    wait_for_line "$o.status" signal 20 || fail "run $run: raise(SIGSEGV) did not end the process: $(tail -2 "$o.out")"
    wait "$CLI"
    grep -q SURVIVED "$o.out" && fail "run $run: raise(SIGSEGV) returned under heapinject"
    got=$(cat "$o.status")
    [ "$got" = "$want" ] || fail "run $run: its parent sees '$got' with heapinject, '$want' without"
done
ok "signal(SIGSEGV) idiom, then raise(SIGSEGV): '$want' as without heapinject, 4 of 4"

# 2. Detach after the idiom: no handler of ours, the action as it was.
start "$TMP/detach"
before=$(cmd "$TMP/detach" sigsegv '^sigsegv')
cgt_before=$(sigcgt_segv "$TPID")
attach "$TMP/detach"
cmd "$TMP/detach" idiom '^idiom' >/dev/null
detach "$TMP/detach"
after=$(cmd "$TMP/detach" sigsegv '^sigsegv')
cgt_after=$(sigcgt_segv "$TPID")
echo "before attach: $before (SigCgt bit $cgt_before); after detach: $after (SigCgt bit $cgt_after)"
[ "$cgt_after" = "$cgt_before" ] || fail "SIGSEGV caught after detach: $cgt_after, before attach: $cgt_before"
[ "$after" = "$before" ] || fail "SIGSEGV's action after detach '$after', before attach '$before'"
ok "detach after the idiom: SIGSEGV's action exactly as before the attach"

# 3. Children of every kind of fork that fault die at once; the watched
# process lives on and the cli reports no crash.
ulimit -c 0
start "$TMP/forks"
attach "$TMP/forks"
for kind in _Fork clone sysfork vfork; do
    line=$(cmd "$TMP/forks" "forkfault $kind" "^forkfault $kind")
    echo "$line"
    case $line in *" sig=11 "*) ;; *) fail "the $kind child did not die of SIGSEGV: $line" ;; esac
    ms=${line##*ms=}
    ((ms < 600)) || fail "the $kind child died $ms ms after its fork: it waited in our handler"
done
# The same with a filter in the child that kills getpid: the handler
# tells a child of _Fork() by the tid in struct pthread, one of
# syscall(SYS_fork) by the mark our hook of libc's syscall() left in it,
# with no system call (was: getpid, the child died of SIGSYS). A child of
# clone or vfork holds (or shares) every byte of its parent's memory:
# there a getpid remains (DESIGN-NOTES).
for kind in ${CRASH_NOGETPID_KINDS:-_Fork sysfork}; do
    line=$(cmd "$TMP/forks" "forkfault-nogetpid $kind" "^forkfault-nogetpid $kind")
    echo "$line"
    case $line in *" sig=11 "*) ;; *) fail "the $kind child under a filter on getpid did not die of SIGSEGV: $line" ;; esac
    ms=${line##*ms=}
    ((ms < 600)) || fail "the $kind child died $ms ms after its fork: it waited in our handler"
done
cmd "$TMP/forks" alloc '^done alloc' >/dev/null
assert_alive "$TPID"
detach "$TMP/forks"
grep -v '^inject:' "$TMP/forks.err" | grep -i "signal\|crash" && fail "the cli reports a crash of pid $TPID"
assert_alive "$TPID"
ok "children of _Fork, clone, syscall(SYS_fork), vfork that fault die at once; no crash reported"

# 4. A vfork child's crash is not its parent's: the target, killed later by
# SIGTERM, is not said to have died of SIGSEGV.
start "$TMP/vfork"
attach "$TMP/vfork"
cmd "$TMP/vfork" "forkfault vfork" '^forkfault vfork' >/dev/null
kill -TERM "$TPID"
wait_for_line "$TMP/vfork.status" signal 20 || fail "SIGTERM did not end the target"
wait "$CLI"
grep -v '^inject:' "$TMP/vfork.err"
grep -q "pid $TPID got signal 11\|killed by signal 11" "$TMP/vfork.err" &&
    fail "the cli says pid $TPID got SIGSEGV: it was its vfork child"
grep -q "killed by signal 11" "$TMP/vfork.report" && fail "the report says the target died of SIGSEGV"
ok "a vfork child's crash is not reported as the target's"
