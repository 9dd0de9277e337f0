#!/usr/bin/env bash
# svc_notice: a master is never silent about its children (issue 28).
# `heapinject -p MASTER` without --children on a pre-fork server says, on
# stderr and in the report (text and JSON), how many children it has,
# their pids and RSS, and the exact command that profiles them all; and
# that command works.
. "$(dirname "$0")/lib.sh"
start_target svc_prefork 3 1
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
[ "${#W[@]}" = 3 ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --duration 1 >"$TMP/r.txt" 2>"$TMP/r.err" ||
    fail "the session failed: $(cat "$TMP/r.err")"
cat "$TMP/r.err"
grep -q "^heapinject: pid $TPID has 3 child processes" "$TMP/r.err" || fail "stderr does not say the 3 children"
for w in "${W[@]}"; do
    grep -Eq "pid $w \(svc_prefork, [0-9.]+ [KMG]iB" "$TMP/r.err" || fail "stderr does not list child $w with its RSS"
    grep -Eq "^  pid $w +RSS +[0-9.]+ [KMG]iB +svc_prefork$" "$TMP/r.txt" || fail "the report does not list child $w: $(cat "$TMP/r.txt")"
done
CMD="heapinject -p $TPID --children --duration 10"
grep -qF "  $CMD" "$TMP/r.err" || fail "stderr does not give the command to profile them all"
grep -qF "$CMD" "$TMP/r.txt" || fail "the report does not give the command: $(cat "$TMP/r.txt")"
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --duration 1 --format json -o "$TMP/r.json" 2>/dev/null || fail "json session failed"
python3 - "$TMP/r.json" "$TPID" "${W[@]}" <<'PY' || fail "the JSON report does not carry the children"
import sys, json
d = json.load(open(sys.argv[1]))
c = d["children"]
assert c["count"] == 3 and sorted(x["pid"] for x in c["largest"]) == sorted(int(x) for x in sys.argv[3:]), c
assert all(x["rss_bytes"] > 0 for x in c["largest"]) and c["rss_bytes"] > 0, c
assert c["command"] == "heapinject -p %s --children --duration 10" % sys.argv[2], c["command"]
PY
# The command given works (with a shorter duration).
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --children --duration 1 >"$TMP/all.txt" 2>"$TMP/all.err" ||
    fail "the command given failed: $(cat "$TMP/all.err")"
grep -q "^heapinject: 4 processes" "$TMP/all.txt" || fail "the command given does not profile all 4: $(head "$TMP/all.txt")"
assert_alive "$TPID"
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 3" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "the master's session names its 3 children (pids, RSS) and the command that profiles them all, which works"
