#!/usr/bin/env bash
# cli_private_build: heapinject built in a directory the target's user
# cannot enter (a 0700 home, where people build) still profiles another
# user's process: the payload reaches the target through a copy the
# target can read, and the copy is gone afterwards.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to run a target as another user"
command -v setpriv >/dev/null || skip "no setpriv"
PRIV=$(mktemp -d /var/tmp/hi-e2e-priv.XXXXXX)
OUTSIDE_DIR=$PRIV   # lib.sh's cleanup removes it
chmod 700 "$PRIV"
cp "$HEAPINJECT" "$ROOT/build/libheapinject.so" "$PRIV/" || fail "cannot copy the build"
copies() { ls -d /tmp/.heapinject-65534/* /dev/shm/.heapinject-65534/* /var/tmp/.heapinject-65534/* 2>/dev/null; }
[ -z "$(copies)" ] || fail "copies from an earlier run: $(copies)"

: >"$TMP/t.out"
setpriv --reuid=65534 --regid=65534 --clear-groups "$TARGETS/cli_leaky" \
    >"$TMP/t.out" 2>"$TMP/t.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/t.out" ready 10 || fail "target did not start: $(cat "$TMP/t.err")"
[ "$(awk '/^Uid:/{print $3}' /proc/$TPID/status)" = 65534 ] || fail "target does not run as nobody"
setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$PRIV/libheapinject.so" &&
    fail "nobody can read $PRIV/libheapinject.so: the test proves nothing"

"$PRIV/heapinject" -p "$TPID" --duration 1 >"$TMP/prof.txt" 2>"$TMP/prof.err" ||
    fail "one-shot from a 0700 directory: $(cat "$TMP/prof.err")"
grep -q "churn_alloc .*cli_leaky.c:[0-9]" "$TMP/prof.txt" || fail "no profile: $(head -20 "$TMP/prof.txt")"
[ -z "$(copies)" ] || fail "a copy of the payload was left behind: $(copies)"

"$PRIV/heapinject" attach -p "$TPID" --rate 16K 2>"$TMP/attach.err" || fail "attach: $(cat "$TMP/attach.err")"
[ -z "$(copies)" ] || fail "a copy of the payload stays while attached: $(copies)"
"$PRIV/heapinject" snapshot -p "$TPID" >"$TMP/snap.txt" 2>&1 || fail "snapshot: $(cat "$TMP/snap.txt")"
grep -q "churn_alloc" "$TMP/snap.txt" || fail "snapshot lacks churn_alloc"
"$PRIV/heapinject" detach -p "$TPID" 2>/dev/null || fail "detach failed"
assert_alive "$TPID"
kill -TERM "$TPID"
wait "$TPID"; rc=$?
[ "$rc" -eq 0 ] || fail "target exited $rc after SIGTERM"
grep -q "^truth " "$TMP/t.out" || fail "target printed no truth line"
ok "profiled another user's process from a 0700 build directory; no copy left"
