#!/usr/bin/env bash
# svc_exit: nothing lost when a process exits during a one-shot session of
# several (issue 28, item 5). `heapinject -p MASTER --children` over a
# pre-fork server whose leaking worker is stopped mid-session and ends with
# exit(0): its leak is still in the report, credited to its pid only, and
# the process is marked with how and when it ended (JSON processes[].exit:
# exit_code 0, at_unix_s, snapshot_at_exit; the text table). Its last
# snapshot file is taken by the session: nothing of it stays behind; the
# others are detached as usual and every worker's data checks pass. Was:
# "exited during the session: its samples are lost".
# Covers: cli/session/exited.c
. "$(dirname "$0")/lib.sh"
FUID=$(id -u)
SOCKDIR=/tmp/heapinject-$FUID
[ -d /run/user/$FUID ] && SOCKDIR=/run/user/$FUID/heapinject
start_target svc_prefork 2 1 exit
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
LEAKER=$(awk '/^leaker /{print $2}' "$TMP/svc_prefork.out")
[ "${#W[@]}" = 2 ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
OTHER=${W[0]}; [ "$OTHER" = "$LEAKER" ] && OTHER=${W[1]}
T0=$(date +%s)
"$HEAPINJECT" -p "$TPID" --children --duration 100 --rate 64K --format json -o "$TMP/r.json" \
    2>"$TMP/r.err" &
H=$!
PIDS+=("$H")
wait_for_line "$TMP/r.err" "profiling for" 60 || fail "the session did not start: $(cat "$TMP/r.err")"
# The leaker leaks 512 blocks more while attached, then is stopped.
N=$(awk '/^leaked /{n=$2} END{print n+0}' "$TMP/svc_prefork.out")
wait_for_line "$TMP/svc_prefork.out" "^leaked $((N + 512 - N % 256))$" 60 || fail "the leaker did not leak on"
kill -TERM "$LEAKER"
wait_for_line "$TMP/svc_prefork.out" "worker $LEAKER ok" 20 || fail "the leaker's own checks: $(cat "$TMP/svc_prefork.out")"
wait_for_line "$TMP/r.err" "pid $LEAKER (svc_prefork) exited during the session" 20 ||
    fail "the session did not see the leaker exit: $(cat "$TMP/r.err")"
kill -INT "$H"
wait "$H" || fail "the session failed: $(cat "$TMP/r.err")"
cat "$TMP/r.err"
grep -q "pid $LEAKER (svc_prefork) exited during the session (exit code 0): the snapshot its profiler wrote as it ended stays in the report" "$TMP/r.err" ||
    fail "no line saying the leaker's last snapshot is kept"
python3 - "$TMP/r.json" "$LEAKER" "$TPID" "$OTHER" "$T0" <<'PY' || fail "the leaker's last snapshot is not in the report (above)"
import sys, time, hi_profile
d = hi_profile.load(sys.argv[1])
leaker, master, other, t0 = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
procs = {p["pid"]: p for p in d["processes"]}
assert sorted(procs) == sorted([master, leaker, other]), sorted(procs)
x = procs[leaker]["exit"]
assert x and x["exit_code"] == 0 and x["signal"] is None and x["snapshot_at_exit"] is True, x
assert t0 - 1 <= x["at_unix_s"] <= time.time() + 1, (x, t0)
assert procs[master]["exit"] is None and procs[other]["exit"] is None
leak = {}
for s in d["stacks"]:
    if any(f.get("function") == "svc_leak_request" for f in s["frames"]):
        leak[s["pid"]] = leak.get(s["pid"], 0) + s["live_bytes"]
assert list(leak) == [leaker], leak
# 512 blocks of 16 KiB leaked while attached at least; sampled at 64K.
assert leak[leaker] >= 4 << 20, leak
print("leaker", leaker, "live", leak[leaker], "exit", x)
PY
"$HEAPINJECT" report "$TMP/r.json" >"$TMP/r.txt" || fail "report of the saved profile failed"
grep -Eq "^$LEAKER .*\(exited during the session: exit code 0 at [0-9:]+; its snapshot at exit\)" "$TMP/r.txt" ||
    fail "the text table does not mark the leaker: $(head -20 "$TMP/r.txt")"
[ ! -e "$SOCKDIR/$LEAKER.last" ] && [ ! -e "$SOCKDIR/$LEAKER.sock" ] || fail "the leaker's files are left: $(ls -la "$SOCKDIR")"
for p in "$TPID" "$OTHER"; do
    assert_not_traced "$p"
    [ ! -e "$SOCKDIR/$p.sock" ] || fail "pid $p still has a socket"
done
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 2" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "the leaker's leak ($LEAKER) stayed in the report after it exited, marked exit code 0 with its time"

# A worker that ran as another user (nobody, as nginx's do) attached alone,
# ended and reaped by its master: plain `snapshot -p WORKER` finds its last
# snapshot in that user's directory. Was: root's directory only, "no such
# process".
if [ "$FUID" = 0 ] && command -v setpriv >/dev/null; then
    : >"$TMP/nobody.out"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$TARGETS/svc_prefork" 1 0 exit \
        >"$TMP/nobody.out" 2>"$TMP/nobody.err" &
    NM=$!
    PIDS+=("$NM")
    wait_for_line "$TMP/nobody.out" ready 30 || fail "svc_prefork as nobody did not get ready: $(cat "$TMP/nobody.err")"
    NW=$(awk '/^worker [0-9]+$/{print $2}' "$TMP/nobody.out")
    PIDS+=("$NW")
    "$HEAPINJECT" attach -q -p "$NW" --rate 64K 2>"$TMP/nattach.err" || fail "attach of nobody's $NW: $(cat "$TMP/nattach.err")"
    N=$(awk '/^leaked /{n=$2} END{print n+0}' "$TMP/nobody.out")
    wait_for_line "$TMP/nobody.out" "^leaked $((N + 512 - N % 256))$" 60 || fail "nobody's worker did not leak on"
    kill -TERM "$NM"
    wait_for_line "$TMP/nobody.out" "master ok 1" 30 || fail "nobody's master: $(cat "$TMP/nobody.out")"
    wait "$NM"
    [ ! -e "/proc/$NW" ] || fail "worker $NW was not reaped"
    "$HEAPINJECT" snapshot -p "$NW" --format json -o "$TMP/nw.json" 2>"$TMP/nw.err"; rc=$?
    [ "$rc" = 3 ] && grep -Eq "^heapinject: pid $NW exited at .*\(exit code 0\)" "$TMP/nw.err" ||
        fail "snapshot of nobody's reaped worker $NW: rc $rc, $(cat "$TMP/nw.err")"
    python3 - "$TMP/nw.json" <<'PY' || fail "the worker's last snapshot has not its data (above)"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
fns = {f.get("function") for s in d["stacks"] for f in s["frames"]}
assert "svc_leak_request" in fns, sorted(x for x in fns if x)[:20]
PY
    [ -z "$(ls /tmp/heapinject-65534/"$NW".last /run/user/65534/heapinject/"$NW".last 2>/dev/null)" ] ||
        fail "the last snapshot of $NW is left after it was read"
    ok "the last snapshot of nobody's reaped worker $NW was found by plain snapshot -p"
fi
