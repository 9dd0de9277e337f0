#!/usr/bin/env bash
# cli_agent_cmds: attach, status, snapshot and detach as separate invocations
# Covers: cli/cmd/detach.c, cli/cmd/rate.c, cli/cmd/snapshot.c, cli/link/fill.c, cli/link/memory_collect.c, cli/memory/payload_tables.c, cli/report/memory_text.c, cli/symbolize/scopes.c
# on one target, with the errors a user meets on the way.
. "$(dirname "$0")/lib.sh"

start_target cli_leaky --threads 1
H=$HEAPINJECT

"$H" attach -p "$TPID" --rate 16K 2>"$TMP/attach.err"; rc=$?
[ "$rc" -eq 0 ] || fail "attach exited $rc: $(cat "$TMP/attach.err")"
grep -q "attached to pid $TPID" "$TMP/attach.err" || fail "attach message: $(cat "$TMP/attach.err")"

"$H" attach -p "$TPID" 2>"$TMP/attach2.err"; rc=$?
[ "$rc" -eq 6 ] || fail "second attach exited $rc, want 6"
grep -q "already attached" "$TMP/attach2.err" || fail "second attach message: $(cat "$TMP/attach2.err")"
"$H" -p "$TPID" --duration 1 >/dev/null 2>"$TMP/oneshot.err"; rc=$?
[ "$rc" -eq 6 ] || fail "one-shot on an attached process exited $rc, want 6"
grep -q "already attached" "$TMP/oneshot.err" || fail "one-shot message: $(cat "$TMP/oneshot.err")"

kill -USR1 "$TPID"
wait_for_line "$TMP/cli_leaky.out" "burst done" 30 || fail "no burst"

"$H" status -p "$TPID" >"$TMP/status.out" 2>&1; rc=$?
cat "$TMP/status.out"
[ "$rc" -eq 0 ] || fail "status exited $rc"
for want in "attached for" "sampling 1 in 16.0 KiB" "RSS" "PSS" "USS" "worker-0" "cli_leaky" "ALLOC/s"; do
    grep -q -- "$want" "$TMP/status.out" || fail "status lacks '$want'"
done

"$H" snapshot -p "$TPID" >"$TMP/snap.txt" 2>"$TMP/snap.err"; rc=$?
[ "$rc" -eq 0 ] || fail "snapshot exited $rc: $(cat "$TMP/snap.err")"
awk '/^#1 /{f=1;next} /^#2 /{f=0} f' "$TMP/snap.txt" | grep -q "leak_in_burst .*cli_leaky.c:[0-9]" ||
    fail "text snapshot: leak_in_burst is not the first stack: $(head -30 "$TMP/snap.txt")"
grep -q "Functions by live bytes" "$TMP/snap.txt" || fail "no function table"

"$H" snapshot -p "$TPID" --leaks --format json -o "$TMP/leaks.json" 2>"$TMP/snap2.err"; rc=$?
[ "$rc" -eq 0 ] || fail "snapshot --leaks exited $rc: $(cat "$TMP/snap2.err")"
python3 - "$TMP/leaks.json" <<'PY' || fail "leaks json check failed"
import hi_profile, json, sys
d = hi_profile.load(sys.argv[1])
lk = d["leaks"]
assert lk, "no leaks"
top = d["stacks"][lk[0]["stack"]]
assert top["frames"][0]["function"] == "leak_in_burst", top["frames"][0]
assert lk[0]["oldest_age_s"] > 0 and lk[0]["mean_age_s"] > 0, lk[0]
assert "growing" in d
PY

# rate: the attached profiler's rate changes without a detach; the next
# snapshot and status say so, and the samples keep coming at the new rate.
"$H" rate -p "$TPID" 2>"$TMP/rate0.err"; rc=$?
[ "$rc" -eq 2 ] || fail "rate without --rate exited $rc, want 2"
grep -q -- "--rate BYTES is required" "$TMP/rate0.err" || fail "rate usage message: $(cat "$TMP/rate0.err")"
"$H" rate -p "$TPID" --rate 4K 2>"$TMP/rate.err"; rc=$?
[ "$rc" -eq 0 ] || fail "rate exited $rc: $(cat "$TMP/rate.err")"
grep -q "now samples 1 in 4.0 KiB allocated (was 1 in 16.0 KiB)" "$TMP/rate.err" || fail "rate message: $(cat "$TMP/rate.err")"
"$H" status -p "$TPID" >"$TMP/status_rate.out" 2>&1 || fail "status after rate failed"
grep -q "sampling 1 in 4.0 KiB" "$TMP/status_rate.out" || fail "status does not show the new rate: $(head -3 "$TMP/status_rate.out")"
"$H" snapshot -p "$TPID" --format json -o "$TMP/rate.json" 2>/dev/null || fail "snapshot after rate failed"
python3 -c "import hi_profile,json,sys; d=hi_profile.load(sys.argv[1]); assert d['rate'] == 4096, d['rate']" "$TMP/rate.json" ||
    fail "the snapshot's rate is not 4096"
ok "rate: 16K -> 4K while attached, status and snapshot follow"

"$H" detach -p "$TPID" 2>"$TMP/detach.err"; rc=$?
[ "$rc" -eq 0 ] || fail "detach exited $rc: $(cat "$TMP/detach.err")"
"$H" status -p "$TPID" >"$TMP/status2.out" 2>&1; rc=$?
[ "$rc" -eq 7 ] || fail "status after detach exited $rc, want 7"
grep -q "not attached" "$TMP/status2.out" || fail "status after detach: $(cat "$TMP/status2.out")"
"$H" snapshot -p "$TPID" >/dev/null 2>"$TMP/snap3.err"; rc=$?
[ "$rc" -eq 7 ] || fail "snapshot when not attached exited $rc, want 7"
grep -q "not attached" "$TMP/snap3.err" || fail "snapshot message: $(cat "$TMP/snap3.err")"
"$H" detach -p "$TPID" 2>/dev/null; rc=$?
[ "$rc" -eq 7 ] || fail "detach when not attached exited $rc, want 7"

# The library stays loaded: a new session reuses it.
"$H" attach -p "$TPID" 2>/dev/null || fail "re-attach failed"
"$H" snapshot -p "$TPID" >/dev/null 2>&1 || fail "snapshot after re-attach failed"
"$H" detach -p "$TPID" 2>/dev/null || fail "second detach failed"
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "attach/status/snapshot/detach from separate invocations"
