#!/usr/bin/env bash
# cli_crash_snapshot: a target that crashes mid-session (a NULL dereference,
# abort()) leaves a report of what it did in its last second: the agent's
# handler for the fatal signal holds the dying thread while a snapshot goes
# to the cli, then the signal kills the process as it would have (same wait
# status, a core as without heapinject). The target allocates 64 MiB from
# last_gasp() in its last ~100 ms, about 1 s after a background snapshot
# (every 2 s): only the handler's snapshot can hold them; also when the
# fault is in a second thread. Also: a program's
# own SIGSEGV handler is left alone, a detach puts SIG_DFL back, a fork
# child does not keep our handler, --no-crash-snapshot installs none, and
# with the agent thread held (ptrace) the crash waits 1 s, not for ever.
. "$(dirname "$0")/lib.sh"
python3 -c 'import json' 2>/dev/null || skip "python3 is needed to read the JSON reports"

FATAL_SIGS="4 6 7 8 11" # SIGILL SIGABRT SIGBUS SIGFPE SIGSEGV

# caught PID SIG: status 0 when PID has a handler for SIG (SigCgt).
caught() {
    local m; m=$(awk '/^SigCgt:/{print $2}' "/proc/$1/status" 2>/dev/null) || return 2
    [ -n "$m" ] || return 2
    (( (16#$m >> ($2 - 1)) & 1 ))
}

# run_crash NAME TARGET_ARGS... -- CLI_ARGS...: cli_crash started from this
# shell, the cli on it; after the cli's first background snapshot the
# target is sent SIGUSR1 and dies 1 s later. Sets TPID, TSTATUS (this
# shell's wait status of it), CRC (the cli's exit status), HANDLED (the
# fatal signals that had a handler during the session).
run_crash() {
    local name=$1; shift
    local targs=()
    while [ "$1" != -- ]; do targs+=("$1"); shift; done
    shift
    : >"$TMP/$name.out"
    "$TARGETS/cli_crash" --delay 1 "${targs[@]}" >"$TMP/$name.out" 2>"$TMP/$name.terr" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/$name.out" ready 10 || fail "cli_crash did not get ready"
    "$HEAPINJECT" -v -p "$TPID" --duration 30 "$@" 2>"$TMP/$name.err" &
    local cli=$!
    PIDS+=("$cli")
    wait_for_line "$TMP/$name.err" "background snapshot" 20 || fail "no background snapshot: $(cat "$TMP/$name.err")"
    HANDLED=""
    local s
    for s in $FATAL_SIGS; do caught "$TPID" "$s" && HANDLED+="$s "; done
    kill -USR1 "$TPID"
    wait "$TPID"; TSTATUS=$?
    wait "$cli"; CRC=$?
    grep -v '^inject:' "$TMP/$name.err"
}

# check_json FILE SIG NAME: the report is the handler's snapshot of signal
# SIG, and holds last_gasp's 64 MiB.
check_json() {
    python3 - "$@" <<'PY' || fail "JSON report: see above"
import hi_profile, sys
path, sig, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = hi_profile.load(path)
x = d.get("target_exit")
assert x, "no target_exit in the report"
assert x.get("snapshot") == "signal", f"snapshot {x.get('snapshot')}, want signal: {x}"
assert x["snapshot_signal"] == sig and x["snapshot_si_code"] > 0, x
assert x["as_of_s_before"] < 1.0, x
want = f"killed by signal {sig} ({name}); snapshot taken in the signal handler"
assert want in d["note"], f"note {d['note']!r} lacks {want!r}"
gasp = sum(s["live_bytes"] for s in d["stacks"] if any(f.get("function") == "last_gasp" for f in s["frames"]))
assert gasp >= 48 << 20, f"last_gasp holds {gasp} bytes in the report, want about 64 MiB"
print(f"target_exit {x}; last_gasp {gasp / 2**20:.1f} MiB")
PY
}

# 1. SIGSEGV (NULL dereference), JSON report.
run_crash segv -- --format json -o "$TMP/segv.json"
[ "$HANDLED" = "$FATAL_SIGS " ] || fail "handlers during the session for signals '$HANDLED', want '$FATAL_SIGS '"
[ "$TSTATUS" -eq 139 ] || fail "the target's wait status is $TSTATUS, want 139 (SIGSEGV) as without heapinject"
[ "$CRC" -eq 3 ] || fail "heapinject exited $CRC, want 3 (the process exited)"
grep -q "got signal 11 (SIGSEGV): snapshot taken in the signal handler" "$TMP/segv.err" || fail "stderr does not say so"
check_json "$TMP/segv.json" 11 SIGSEGV
# Read back, the file says the same (report FILE --format json).
"$HEAPINJECT" report "$TMP/segv.json" --format json -o "$TMP/segv_again.json" 2>"$TMP/ra.err" ||
    fail "report FILE: $(cat "$TMP/ra.err")"
check_json "$TMP/segv_again.json" 11 SIGSEGV
ok "SIGSEGV: last_gasp in the report, wait status 139, exit 3; the same read back"

# 2. abort(): SIGABRT sent to itself, text report.
run_crash abort --how abort -- -o "$TMP/abort.txt"
head -3 "$TMP/abort.txt"
[ "$TSTATUS" -eq 134 ] || fail "the target's wait status is $TSTATUS, want 134 (SIGABRT)"
[ "$CRC" -eq 3 ] || fail "heapinject exited $CRC, want 3"
head -1 "$TMP/abort.txt" | grep -Eq '^NOTE: as of 0\.[0-9] s before the process was killed by signal 6 \(SIGABRT\); snapshot taken in the signal handler' ||
    fail "the text report does not start with the handler's snapshot of SIGABRT"
awk '/^#1 /{f=1; next} /^#2 /{f=0} f' "$TMP/abort.txt" | grep -q last_gasp || fail "last_gasp is not the first stack"
ok "SIGABRT: last_gasp first in the text report, wait status 134"

# 2b. The fault in a second thread, while the main thread allocates on.
run_crash thread --thread -- --format json -o "$TMP/thread.json"
[ "$TSTATUS" -eq 139 ] || fail "the target's wait status is $TSTATUS, want 139"
[ "$CRC" -eq 3 ] || fail "heapinject exited $CRC, want 3"
check_json "$TMP/thread.json" 11 SIGSEGV
ok "SIGSEGV in a second thread: last_gasp in the report"

# 3. The end is the one it has without heapinject: signal and core flag as
# its parent sees them (a python parent, cores allowed, in its own
# directory; a small last gasp keeps the cores small). For a fault (segv),
# abort(), raise(SIGSEGV) and a SIGSEGV sent by kill: the handler must put
# SIG_DFL back and send the signal again, as nothing else would (abort()
# raises again by itself, raise and kill do not).
mkdir -p "$TMP/core"
as_parent() { # OUT CMD...: OUT.pid, then OUT.status "signal N core C"
    (cd "$TMP/core" && python3 - "$@" <<'PY') &
import os, resource, sys
out, cmd = sys.argv[1], sys.argv[2:]
hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
pid = os.fork()
if pid == 0:
    fd = os.open(out + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.execv(cmd[0], cmd)
open(out + ".pid", "w").write(f"{pid}\n")
_, st = os.waitpid(pid, 0)
sig = os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0
open(out + ".status", "w").write(f"signal {sig} core {int(os.WCOREDUMP(st))}\n")
PY
    PIDS+=("$!")
}
for how in segv abort raise kill; do
    # kill: the program only runs; this shell sends it SIGSEGV
    targ=$how sig=USR1
    [ "$how" = kill ] && targ=none sig=SEGV
    as_parent "$TMP/plain_$how" "$TARGETS/cli_crash" --how "$targ" --delay 0.2 --gasp 1
    wait_for_line "$TMP/plain_$how.pid" '[0-9]$' 10 || fail "cli_crash did not start"
    wait_for_line "$TMP/plain_$how.out" ready 10 || fail "cli_crash did not get ready"
    kill -"$sig" "$(cat "$TMP/plain_$how.pid")"
    wait_for_line "$TMP/plain_$how.status" signal 20 || fail "no status without heapinject"
    as_parent "$TMP/hi_$how" "$TARGETS/cli_crash" --how "$targ" --delay 1 --gasp 1
    wait_for_line "$TMP/hi_$how.pid" '[0-9]$' 10 || fail "cli_crash did not start"
    wait_for_line "$TMP/hi_$how.out" ready 10 || fail "cli_crash did not get ready"
    p=$(cat "$TMP/hi_$how.pid")
    PIDS+=("$p") # killed at the end should it not die (its python parent would leave it)
    "$HEAPINJECT" -v -p "$p" --duration 30 -o "$TMP/hi_$how.txt" 2>"$TMP/hi_$how.err" &
    cli=$!
    wait_for_line "$TMP/hi_$how.err" "background snapshot" 20 || fail "no background snapshot"
    kill -"$sig" "$p"
    wait_for_line "$TMP/hi_$how.status" signal 20 || fail "$how: the process still runs 20 s after SIGSEGV/SIGUSR1 with heapinject: $(cat "$TMP/hi_$how.out")"
    wait "$cli"
    grep -q "snapshot taken in the signal handler" "$TMP/hi_$how.err" || fail "$how: no snapshot in the handler"
    a=$(cat "$TMP/plain_$how.status") b=$(cat "$TMP/hi_$how.status")
    [ "$a" = "$b" ] || fail "$how: its parent sees '$b' with heapinject, '$a' without"
    echo "$how: $b, as without heapinject"
done
rm -rf "$TMP/core"
ok "same signal and core dump as without heapinject (a fault, abort(), raise(SIGSEGV), kill -SEGV)"

# 4. A program with its own SIGSEGV handler keeps it: it reads it back
# every 50 ms during the session, and its handler is the one that runs.
# The other fatal signals, still SIG_DFL, get ours.
run_crash own --own-handler -- --format json -o "$TMP/own.json"
cat "$TMP/own.out"
grep -q "handler replaced" "$TMP/own.out" && fail "the program's SIGSEGV handler was replaced"
grep -q "own handler ran" "$TMP/own.out" || fail "the program's handler did not run"
[ "$TSTATUS" -eq 42 ] || fail "the target's wait status is $TSTATUS, want 42 (its handler's exit)"
[ "$HANDLED" = "$FATAL_SIGS " ] || fail "handlers during the session for '$HANDLED', want '$FATAL_SIGS '"
grep -q "snapshot taken in the signal handler" "$TMP/own.err" && fail "our handler ran for the program's SIGSEGV"
python3 -c 'import json,sys; x=json.load(open(sys.argv[1]))["target_exit"]; assert x["snapshot"]=="periodic", x' \
    "$TMP/own.json" || fail "the report is not the background snapshot"
ok "the program's own SIGSEGV handler is kept and runs"

# 5. Detach puts SIG_DFL back: SigCgt after the session is what it was
# before; a child forked during the session has none of ours.
start_target cli_crash --how none
before=$(awk '/^SigCgt:/{print $2}' "/proc/$TPID/status")
"$HEAPINJECT" -p "$TPID" --duration 3 -o "$TMP/detach.txt" 2>"$TMP/detach.err" &
cli=$!
wait_for_line "$TMP/detach.err" "attached to pid" 10 || fail "the cli did not attach"
during=$(awk '/^SigCgt:/{print $2}' "/proc/$TPID/status")
kill -USR2 "$TPID"
wait_for_line "$TMP/cli_crash.out" child 5 || fail "no child forked"
child=$(awk '/^child/{print $2}' "$TMP/cli_crash.out")
PIDS+=("$child")
for s in $FATAL_SIGS; do
    caught "$TPID" "$s" || fail "signal $s had no handler during the session (SigCgt $during)"
    caught "$child" "$s" && fail "the fork child kept our handler for signal $s"
done
wait "$cli" || fail "the session failed: $(cat "$TMP/detach.err")"
after=$(awk '/^SigCgt:/{print $2}' "/proc/$TPID/status")
echo "SigCgt before $before, during $during, after $after"
# Only the fatal signals: glibc installs its own handler for its internal
# signal 33 (SIGSETXID) at a process's first pthread_create, the agent's.
for s in $FATAL_SIGS; do
    b=0 a=0
    (( (16#$before >> (s - 1)) & 1 )) && b=1
    (( (16#$after >> (s - 1)) & 1 )) && a=1
    [ "$a" = "$b" ] || fail "signal $s: handled $a after detach, $b before attach (SigCgt $after, $before)"
done
assert_alive "$TPID"
ok "detach restores SIG_DFL; a fork child has none of our handlers"

# 6. --no-crash-snapshot: no handler, and the report is the background one.
run_crash off -- --no-crash-snapshot --format json -o "$TMP/off.json"
[ -z "$HANDLED" ] || fail "--no-crash-snapshot, yet handlers for signals $HANDLED"
[ "$TSTATUS" -eq 139 ] || fail "the target's wait status is $TSTATUS, want 139"
grep -q "snapshot taken in the signal handler" "$TMP/off.err" && fail "a handler snapshot with --no-crash-snapshot"
python3 -c 'import json,sys; x=json.load(open(sys.argv[1]))["target_exit"]; assert x["snapshot"]=="periodic", x' \
    "$TMP/off.json" || fail "the report is not the background snapshot"
ok "--no-crash-snapshot installs no handler"

# 7. The wait is bounded: the agent thread held in a ptrace stop (as a
# debugger could hold it) cannot send anything; the crashing thread waits
# its 1 s in the handler and the process dies of its SIGSEGV all the same.
start_target cli_crash --delay 0.2 --gasp 1
"$HEAPINJECT" -v -p "$TPID" --duration 30 -o "$TMP/frozen.txt" 2>"$TMP/frozen.err" &
cli=$!
PIDS+=("$cli")
wait_for_line "$TMP/frozen.err" "background snapshot" 20 || fail "no background snapshot"
python3 - "$TPID" >"$TMP/freeze.out" 2>&1 <<'PY' &
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
pid = int(sys.argv[1])
tid = next(int(t) for t in os.listdir(f"/proc/{pid}/task")
           if open(f"/proc/{pid}/task/{t}/comm").read().strip() == "heapinject")
WALL = 0x40000000
if libc.ptrace(0x4206, tid, None, None) or libc.ptrace(0x4207, tid, None, None):  # SEIZE, INTERRUPT
    print("cannot hold the agent thread:", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(1)
os.waitpid(tid, WALL)
print("frozen", tid, flush=True)
while True:  # held until the process dies (SIGKILL ends any stop)
    _, st = os.waitpid(tid, WALL)
    if os.WIFEXITED(st) or os.WIFSIGNALED(st):
        break
PY
freezer=$!
PIDS+=("$freezer")
wait_for_line "$TMP/freeze.out" "frozen\|cannot" 10 || fail "the agent thread was not held"
grep -q frozen "$TMP/freeze.out" || skip "$(cat "$TMP/freeze.out") (ptrace not allowed here)"
t0=$(date +%s%N)
kill -USR1 "$TPID"
wait "$TPID"; st=$?
ms=$((($(date +%s%N) - t0) / 1000000))
wait "$cli"; rc=$?
wait "$freezer"
grep -v '^inject:' "$TMP/frozen.err"
echo "SIGUSR1 to death: $ms ms (0.2 s of --delay, then the handler's wait)"
[ "$st" -eq 139 ] || fail "the target's wait status is $st, want 139"
[ "$rc" -eq 3 ] || fail "heapinject exited $rc, want 3"
((ms >= 1100)) || fail "it died $ms ms after SIGUSR1: the handler did not wait for the agent"
((ms < 6000)) || fail "it died $ms ms after SIGUSR1: the handler's wait is not bounded by 1 s"
ok "agent held: the crashing thread waited 1 s, then died of SIGSEGV"
