#!/usr/bin/env bash
# payload_hostile.sh - hostile peers never harm the target or the agent:
# garbage, bad magic/version/type, oversized, short, truncated and stalled
# messages, a peer that never reads, too many connections, another user
# (kept out by the 0700 directory and, through a hard link, by SO_PEERCRED).
# After each, the target is alive and the agent answers the next client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

pl_start pl_basic
pl_attach "$(pl_config rate=4096)"

still_serving() {
    assert_alive "$TPID"
    $CLIENT hello "$SOCK" >/dev/null || fail "agent stopped serving after: $1"
}

for kind in garbage badmagic badversion badtype agenttype oversized short nohello zerorate; do
    out=$(timeout 20 $CLIENT hostile "$SOCK" "$kind" 2>&1)
    echo "$kind: $out"
    grep -q '^ERROR -[0-9]' <<<"$out" || fail "$kind: no ERROR before close: $out"
    still_serving "$kind"
done
out=$(timeout 20 $CLIENT hostile "$SOCK" truncated 2>&1)
still_serving truncated

# A peer stuck in the middle of a message does not block others.
STALL_SECONDS=6 timeout 20 $CLIENT hostile "$SOCK" stall >"$TMP/stall.out" 2>&1 &
stall_pid=$!
sleep 0.5
timeout 10 $CLIENT hello "$SOCK" >/dev/null || fail "agent blocked by a stalled peer"
# A peer that asks for snapshots and never reads is dropped.
STALL_SECONDS=5 timeout 30 $CLIENT hostile "$SOCK" noread >"$TMP/noread.out" 2>&1 &
noread_pid=$!
sleep 1
timeout 20 $CLIENT hello "$SOCK" >/dev/null || fail "agent blocked by a peer that never reads"
pl_cmd run '^done run' >/dev/null
still_serving "stall/noread"
wait "$stall_pid" "$noread_pid" # both hostile peers gone
grep -q noread-done "$TMP/noread.out" || fail "noread client: $(cat "$TMP/noread.out")"

# Too many connections: the ninth is told so; the others are served.
python3 -c "
import sys; sys.path.insert(0, '$ROOT/tests/e2e'); import proto_client as pc
conns = [pc.Conn('$SOCK') for _ in range(8)]
for c in conns: c.hello()
extra = pc.Conn('$SOCK')
try:
    extra.recv(); sys.exit('ninth connection was served')
except pc.ProtoError as e:
    assert 'EBUSY' in str(e) or '-16' in str(e), e
print('ninth refused')
" || fail "connection limit not enforced"
still_serving "connection limit"

# Another user: the socket directory is 0700, connect() fails. The client
# runs under a python that uid 65534 can execute (not a per-user install).
PUB=$(mktemp -d /tmp/hi-pub.XXXXXX); chmod 755 "$PUB"
trap 'rm -rf "$PUB"; cleanup' EXIT
cp "$ROOT/tests/e2e/proto_client.py" "$ROOT/common/proto.h" "$PUB/"; chmod 644 "$PUB/proto_client.py" "$PUB/proto.h"
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
PY=""
for p in /usr/bin/python3 /usr/local/bin/python3 "$(command -v python3)"; do
    if [ -x "$p" ] && $NOBODY "$p" -c 'pass' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || skip "no python3 that uid 65534 can run"
if $NOBODY "$PY" "$PUB/proto_client.py" hello "$SOCK" >"$TMP/nobody.out" 2>&1; then
    fail "uid 65534 could talk to the agent"
fi
tail -1 "$TMP/nobody.out"
grep -q 'PermissionError' "$TMP/nobody.out" || fail "unexpected: $(cat "$TMP/nobody.out")"
# Even through a hard link in a public directory, SO_PEERCRED refuses it.
ln "$SOCK" "$PUB/link.sock" || fail "cannot hard-link the socket"
chmod 0777 "$PUB/link.sock"
$NOBODY "$PY" "$PUB/proto_client.py" hostile "$PUB/link.sock" listen >"$TMP/nobody2.out" 2>&1
cat "$TMP/nobody2.out" | tail -1
grep -q 'ERROR -13: permission denied' "$TMP/nobody2.out" || fail "no SO_PEERCRED refusal: $(cat "$TMP/nobody2.out")"
rm -f "$PUB/link.sock"
still_serving "other uid"

pl_snapshot "$TMP/s.json"
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
assert_alive "$TPID"
ok "hostile peers handled"
