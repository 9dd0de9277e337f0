#!/usr/bin/env bash
# cli_oneshot: `heapinject -p PID` on a leaking program, stopped by SIGINT:
# the report ranks the leaking stack first with an estimate within 10% of
# what the program knows it leaked; the program runs on, detached.
. "$(dirname "$0")/lib.sh"

start_target cli_leaky --burst 33554432
"$HEAPINJECT" -p "$TPID" --rate 16K --duration 120 --format json -o "$TMP/out.json" \
    >"$TMP/cli.out" 2>"$TMP/cli.err" &
CLI=$!
PIDS+=("$CLI")
wait_for_line "$TMP/cli.err" "attached to pid $TPID" 30 || fail "no 'attached' message: $(cat "$TMP/cli.err")"

kill -USR1 "$TPID"
wait_for_line "$TMP/cli_leaky.out" "burst done" 30 || fail "target did not finish its burst"
truth=$(sed -n 's/^burst done leaked=//p' "$TMP/cli_leaky.out")
[ "$truth" -gt 0 ] || fail "no truth from the target"

kill -INT "$CLI"
wait "$CLI"; rc=$?
cat "$TMP/cli.err"
[ "$rc" -eq 0 ] || fail "heapinject exited $rc after SIGINT"
grep -q "detached from pid $TPID" "$TMP/cli.err" || fail "no 'detached' message"
grep -q "(interrupted)" "$TMP/cli.err" || fail "the stop by SIGINT is not mentioned"
[ -s "$TMP/out.json" ] || fail "no report written"

python3 - "$TMP/out.json" "$truth" <<'PY' || fail "report check failed"
import hi_profile, json, sys
d = hi_profile.load(sys.argv[1])
truth = int(sys.argv[2])
top = d["stacks"][0]
names = [f["function"] for f in top["frames"]]
assert names[0] == "leak_in_burst", f"top stack is {names}"
assert "main" in names, names
assert all("libheapinject" not in (f["module"] or "") for s in d["stacks"] for f in s["frames"]), "payload frames in report"
assert top["frames"][0]["file"].endswith("cli_leaky.c") and top["frames"][0]["line"] > 0, top["frames"][0]
est = top["live_bytes"]
err = abs(est - truth) / truth
print(f"truth {truth} estimate {est} error {err:.1%}")
assert err <= 0.10, f"estimate {est} is {err:.1%} off the truth {truth}"
lives = [s["live_bytes"] for s in d["stacks"]]
assert lives == sorted(lives, reverse=True), "stacks not sorted by live bytes"
assert d["pid"] > 0 and d["rate"] == 16384 and d["duration_s"] > 0
for k in ("alloc_bytes", "alloc_objects", "free_bytes", "free_objects", "live_bytes", "live_objects"):
    assert k in d["totals"], k
assert isinstance(d["ticks"], list)
PY

sleep 0.5
assert_alive "$TPID"
assert_not_traced "$TPID"
"$HEAPINJECT" status -p "$TPID" >"$TMP/status.out" 2>&1; rc=$?
[ "$rc" -eq 7 ] || fail "status after the session: exit $rc, want 7 (not attached): $(cat "$TMP/status.out")"
[ ! -e "/tmp/heapinject-0/$TPID.sock" ] || fail "socket left behind"
ok "leak ranked first within 10%, clean detach on SIGINT"

# The status line on a terminal: RSS with what backs it (the kernel's
# anonymous / file counters), redrawn every tick.
if command -v script >/dev/null; then
    script -qc "$HEAPINJECT -p $TPID --duration 1.5 -o $TMP/tty.txt" /dev/null >"$TMP/tty.out" 2>&1 ||
        fail "one-shot under a terminal failed: $(tail -3 "$TMP/tty.out")"
    tr '\r' '\n' <"$TMP/tty.out" | grep -a "live heap since attach" | tail -1 >"$TMP/tty.line"
    grep -Eq 'RSS [0-9.]+ [KMG]iB \(anonymous [0-9.]+ [KMG]?i?B, files [0-9.]+ [KMG]iB' "$TMP/tty.line" ||
        fail "status line without the RSS split: $(cat "$TMP/tty.line")"
    ok "status line: $(sed 's/.*\(RSS .*\)/\1/' "$TMP/tty.line")"
else
    echo "no script(1): the terminal status line is not checked"
fi
