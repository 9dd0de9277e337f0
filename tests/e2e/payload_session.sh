#!/usr/bin/env bash
# payload_session.sh - the session's life cycle: start status codes
# (bad config, already attached, unsafe socket directory or path), WATCH
# ticks, SET_RATE, OWN_SESSION (a second owner refused; the owner killed ->
# detach within 2 s), the time-to-live, heapinject_stop when detached.
# The start codes are checked through the target's own heapinject_start
# call (the injector reports the same int).
# Covers: payload/record/session.c, payload/serve/start.c, payload/serve/teardown.c, payload/serve/agent.c, payload/serve/sock.c
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

start_rc() { pl_cmd "attach $1" '^attached' | cut -d' ' -f2; }
wait_gone() { # wait_gone PATH SECONDS
    local i; for ((i = 0; i < $2 * 20; i++)); do [ -e "$1" ] || return 0; sleep 0.05; done; return 1
}

pl_start pl_basic
# The first command resolves pl_basic's own dlsym slot (lazy binding: it
# holds the PLT stub until then), and the slots now compared include
# dlsym's; so the slots are read after one failed start, and the five
# failed starts that follow are checked against them.
[ "$(start_rc "v=$PL_V rate=abc sock=$SOCK")" = -1001 ] || fail "bad rate accepted"
pl_got_dump "$TMP/got.before"

[ "$(start_rc "v=$PL_V sock=relative/path")" = -1001 ] || fail "relative socket path accepted"
[ "$(start_rc "v=999 sock=$SOCK")" = -1001 ] || fail "wrong protocol version accepted"
# unsafe socket locations: ESOCKET, nothing patched
mkdir -p "$TMP/real"; chmod 700 "$TMP/real"; ln -s "$TMP/real" "$TMP/link"
[ "$(start_rc "v=$PL_V sock=$TMP/link/a.sock")" = -1004 ] || fail "symlinked socket directory accepted"
mkdir -p "$TMP/open"; chmod 755 "$TMP/open"
[ "$(start_rc "v=$PL_V sock=$TMP/open/a.sock")" = -1004 ] || fail "group/other-accessible directory accepted"
touch "$TMP/real/file.sock"
[ "$(start_rc "v=$PL_V sock=$TMP/real/file.sock")" = -1004 ] || fail "a regular file at the socket path was replaced"
[ -f "$TMP/real/file.sock" ] || fail "the regular file was removed"
pl_got_dump "$TMP/got.failed"
diff "$TMP/got.before" "$TMP/got.failed" || fail "a failed start left slots patched"
[ "$(pl_cmd stop '^stopped' | cut -d' ' -f2)" = -3 ] || fail "heapinject_stop while detached did not say ESRCH"

# a stale socket of ours is replaced
python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind('$TMP/real/stale.sock')"
[ "$(start_rc "v=$PL_V tick_ms=100 sock=$TMP/real/stale.sock")" = 0 ] || fail "stale socket not replaced"
[ "$(start_rc "v=$PL_V sock=$TMP/real/other.sock")" = -1002 ] || fail "second start did not say EALREADY"
$CLIENT detach "$TMP/real/stale.sock" >/dev/null || fail "DETACH failed"
wait_gone "$TMP/real/stale.sock" 5 || fail "socket not removed"

# WATCH and SET_RATE
pl_got_dump "$TMP/got.before_own"
pl_attach "$(pl_config rate=1048576)"
# the agent thread blocks every signal, so the target's signals reach its own threads
agent_task=$(grep -l '^heapinject$' /proc/"$TPID"/task/*/comm | head -1)
[ -n "$agent_task" ] || fail "no agent thread named heapinject"
sigblk=$(awk '/^SigBlk:/{print $2}' "$(dirname "$agent_task")/status")
python3 -c "
m = int('$sigblk', 16)
for sig in (1, 2, 3, 10, 12, 13, 14, 15, 17, 28, 34, 64):
    assert m & (1 << (sig - 1)), 'signal %d not blocked in the agent: %x' % (sig, m)" || fail "agent signal mask"
$CLIENT set-rate "$SOCK" 4096 >/dev/null || fail "SET_RATE failed"
$CLIENT hello "$SOCK" | grep -q '"rate": 4096,' || fail "rate not changed"
pl_cmd run '^done run' >/dev/null
$CLIENT watch "$SOCK" 3 >"$TMP/ticks" || fail "WATCH failed"
cat "$TMP/ticks"
python3 - "$TMP/ticks" <<'PY' || fail "ticks wrong"
import json, sys
ticks = [json.loads(l) for l in open(sys.argv[1])]
assert len(ticks) == 3
assert all(t["rate"] == 4096 and t["rss_bytes"] > 0 for t in ticks)
assert ticks[0]["now_ns"] < ticks[1]["now_ns"] < ticks[2]["now_ns"]
t = ticks[-1]["totals"]
assert t["exact_alloc_calls"] >= 3010 and t["raw_samples"] > 0 and t["payload_mem_bytes"] > 0, t
PY
# growth history: the agent shifted est_live_bytes in every tick
pl_snapshot "$TMP/s.json"
python3 -c "
import json; s=json.load(open('$TMP/s.json'))
b=[b for b in s['buckets'] if b['symbols'][0].startswith('big_c')][0]
assert b['growth'][-1] == b['est_live_bytes'] or b['growth'][-2] == b['est_live_bytes'], b['growth']
assert b['growth'][-1] > 0 and b['live_age_sum_ms'] >= 0 and b['oldest_live_ns'] > 0, b" || fail "growth history"

# OWN_SESSION: a second owner is refused; killing the owner detaches
$CLIENT own "$SOCK" >"$TMP/own.out" 2>&1 &
own_pid=$!
wait_for_line "$TMP/own.out" owned 10 || fail "OWN_SESSION failed: $(cat "$TMP/own.out")"
$CLIENT hello "$SOCK" | grep -q '"owned": 1,' || fail "HELLO does not show the owner"
timeout 10 $CLIENT own "$SOCK" >"$TMP/own2.out" 2>&1
grep -q 'ERROR -16' "$TMP/own2.out" || fail "second owner not refused: $(cat "$TMP/own2.out")"
kill -9 "$own_pid"; wait "$own_pid" 2>/dev/null
wait_gone "$SOCK" 4 || fail "owner killed but the agent did not detach"
pl_got_dump "$TMP/got.owner"
diff "$TMP/got.before_own" "$TMP/got.owner" || fail "slots not restored after the owner went away"
assert_alive "$TPID"

# time-to-live: detaches by itself when nobody owns the session
pl_got_dump "$TMP/got.before_ttl"
pl_attach "$(pl_config ttl=1)"
wait_gone "$SOCK" 10 || fail "ttl=1 but still attached"
pl_got_dump "$TMP/got.ttl"
diff "$TMP/got.before_ttl" "$TMP/got.ttl" || fail "slots not restored after the time-to-live"
pl_cmd run '^done run' >/dev/null
assert_alive "$TPID"
ok "session life cycle"
