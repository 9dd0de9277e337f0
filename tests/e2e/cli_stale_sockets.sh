#!/bin/bash
# cli_stale_sockets.sh - sockets left by agents of processes that are gone
# (a target killed while attached) are removed at the next attach: only
# <pid>.sock sockets of dead pids that nobody listens on; a live agent's
# socket, a socket of a live pid nobody listens on, and other files stay.
. "$(dirname "$0")/lib.sh"

DIR=/tmp/heapinject-$(id -u)
mkdir -p "$DIR"; chmod 700 "$DIR"
# an attached agent of another live process
start_target cli_leaky --burst 4096 --threads 1
OTHER=$TPID
"$HEAPINJECT" attach -p "$OTHER" >/dev/null 2>&1 || fail "attach to the other target"
# a real stale socket: a target killed while attached
start_target cli_leaky --burst 4096 --threads 1
VICTIM=$TPID
"$HEAPINJECT" attach -p "$VICTIM" >/dev/null 2>&1 || fail "attach to the victim"
[ -S "$DIR/$VICTIM.sock" ] || fail "no socket for the victim at $DIR/$VICTIM.sock"
kill -9 "$VICTIM"; wait "$VICTIM" 2>/dev/null
[ -S "$DIR/$VICTIM.sock" ] || fail "the killed target's socket is already gone: nothing to test"
# a socket of a live pid that nobody listens on, and a file that is no socket
start_target inj_wait nanosleep 60
LIVE=$TPID
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$DIR/$LIVE.sock"
DEAD=$(( $(cat /proc/sys/kernel/pid_max) - 7 ))
kill -0 "$DEAD" 2>/dev/null && fail "pid $DEAD exists"
echo "not a socket" >"$DIR/$DEAD.sock"
start_target cli_leaky --burst 4096 --threads 1
"$HEAPINJECT" attach -v -p "$TPID" >/dev/null 2>"$TMP/a.err" || fail "attach: $(cat "$TMP/a.err")"
grep -q "removed 1 stale socket" "$TMP/a.err" || fail "no word of the stale socket: $(grep -i stale "$TMP/a.err")"
[ ! -e "$DIR/$VICTIM.sock" ] || fail "the dead target's socket is still there"
[ -S "$DIR/$LIVE.sock" ] || fail "the socket of a live pid was removed"
[ -f "$DIR/$DEAD.sock" ] || fail "a file that is no socket was removed"
[ -S "$DIR/$OTHER.sock" ] || fail "a live agent's socket was removed"
"$HEAPINJECT" status -p "$OTHER" >/dev/null 2>&1 || fail "the other agent is no longer reachable"
"$HEAPINJECT" detach -p "$OTHER" >/dev/null 2>&1
"$HEAPINJECT" detach -p "$TPID" >/dev/null 2>&1
rm -f "$DIR/$LIVE.sock" "$DIR/$DEAD.sock"
ok "stale socket of a killed target removed at the next attach; live, foreign-pid and non-socket files kept"
