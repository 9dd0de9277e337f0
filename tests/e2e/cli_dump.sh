#!/usr/bin/env bash
# cli_dump: --dump-every and --dump-on-peak write a numbered series of
# profiles during one session, "also" (--help): -o FILE itself gets the
# report of the whole session at the end.
. "$(dirname "$0")/lib.sh"

start_target cli_leaky --steady 8000000
"$HEAPINJECT" -p "$TPID" --rate 64K --duration 4 --dump-every 20M --dump-on-peak --format json \
    -o "$TMP/p.json" >/dev/null 2>"$TMP/cli.err"; rc=$?
cat "$TMP/cli.err"
[ "$rc" -eq 0 ] || fail "session exited $rc"
ls "$TMP"/p.*.json
n=$(ls "$TMP"/p.*.json | wc -l)
[ "$n" -ge 3 ] || fail "only $n files in the series"
[ -s "$TMP/p.json" ] || fail "-o p.json was not written at the end"
python3 - "$TMP" "$n" <<'PY' || fail "series check failed"
import hi_profile, json, sys
tmp, n = sys.argv[1], int(sys.argv[2])
prev = -1
for i in range(1, n + 1):
    d = hi_profile.load(f"{tmp}/p.{i:04d}.json")
    assert d["duration_s"] >= prev, "series not in time order"
    prev = d["duration_s"]
last = hi_profile.load(f"{tmp}/p.json")
assert last["duration_s"] >= prev, "the final report is older than the series"
assert last["stacks"][0]["frames"][0]["function"] == "leak_steady", last["stacks"][0]["frames"][0]
PY
grep -q "new peak" "$TMP/cli.err" || fail "no dump on a new peak"
grep -q "MiB allocated;" "$TMP/cli.err" || fail "no dump for --dump-every"
assert_alive "$TPID"
ok "$n numbered profiles"
