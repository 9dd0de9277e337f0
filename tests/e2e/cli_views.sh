#!/usr/bin/env bash
# cli_views: --by function|module|thread on a leaking program, through every
# Covers: cli/report/views.c
# reporting command (heapinject -p, snapshot, report, diff): the leaking
# function ranks first by function, the target binary first by module, the
# main thread (which made the leak) first by thread; json carries "by" and
# "groups" whose flat values add up to the stacks'.
. "$(dirname "$0")/lib.sh"

BIN=$(readlink -f "$TARGETS/cli_leaky")
start_target cli_leaky --burst 16777216 --threads 2

# heapinject -p: a one-shot session during which the program leaks.
"$HEAPINJECT" -p "$TPID" --rate 16K --duration 120 --by module >"$TMP/oneshot.txt" 2>"$TMP/oneshot.err" &
CLI=$!
PIDS+=("$CLI")
wait_for_line "$TMP/oneshot.err" "attached to pid $TPID" 30 || fail "no 'attached' message: $(cat "$TMP/oneshot.err")"
kill -USR1 "$TPID"
wait_for_line "$TMP/cli_leaky.out" "burst done" 30 || fail "target did not finish its first burst"
kill -INT "$CLI"
wait "$CLI" || fail "heapinject -p --by module failed: $(cat "$TMP/oneshot.err")"
grep -q "modules; top" "$TMP/oneshot.txt" || fail "no module table: $(cat "$TMP/oneshot.txt")"
row=$(grep -m1 '^1 ' "$TMP/oneshot.txt")
[ "${row##* }" = "$BIN" ] || fail "one-shot --by module: first row is not the target binary: $row"

# attach + snapshot: before and after a second burst.
"$HEAPINJECT" attach -p "$TPID" --rate 16K >"$TMP/attach.out" 2>&1 || fail "attach: $(cat "$TMP/attach.out")"
"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/base.json" 2>"$TMP/snap.err" || fail "snapshot: $(cat "$TMP/snap.err")"
kill -USR1 "$TPID"
for _ in $(seq 1 600); do
    [ "$(grep -c 'burst done' "$TMP/cli_leaky.out")" -ge 2 ] && break
    sleep 0.05
done
[ "$(grep -c 'burst done' "$TMP/cli_leaky.out")" -ge 2 ] || fail "target did not finish its second burst"
truth=$(sed -n 's/^burst done leaked=//p' "$TMP/cli_leaky.out" | tail -1)

for v in function module thread; do
    "$HEAPINJECT" snapshot -p "$TPID" --by $v --format json -o "$TMP/$v.json" 2>>"$TMP/snap.err" ||
        fail "snapshot --by $v --format json: $(cat "$TMP/snap.err")"
done
"$HEAPINJECT" snapshot -p "$TPID" --by function --top 3 >"$TMP/function.txt" 2>>"$TMP/snap.err" || fail "snapshot --by function"
"$HEAPINJECT" snapshot -p "$TPID" --by thread >"$TMP/thread.txt" 2>>"$TMP/snap.err" || fail "snapshot --by thread"
"$HEAPINJECT" detach -p "$TPID" >/dev/null 2>&1 || fail "detach failed"

# report and diff of the saved profiles.
"$HEAPINJECT" report "$TMP/function.json" --by module >"$TMP/report.txt" 2>&1 || fail "report --by module: $(cat "$TMP/report.txt")"
"$HEAPINJECT" diff "$TMP/base.json" "$TMP/function.json" --by function --format json -o "$TMP/diff.json" \
    2>"$TMP/diff.err" || fail "diff --by function: $(cat "$TMP/diff.err")"

row=$(grep -m1 '^1 ' "$TMP/function.txt")
case "$row" in *" leak_in_burst  (cli_leaky)") ;; *) fail "text --by function: first row is not leak_in_burst: $row" ;; esac
grep -q "more functions: --top N shows more" "$TMP/function.txt" || fail "--top 3 did not cut the table: $(cat "$TMP/function.txt")"
row=$(grep -m1 '^1 ' "$TMP/thread.txt")
case "$row" in *"(tid $TPID)") ;; *) fail "text --by thread: the main thread (tid $TPID) is not first: $row" ;; esac
row=$(grep -m1 '^1 ' "$TMP/report.txt")
[ "${row##* }" = "$BIN" ] || fail "report --by module: first row is not the target binary: $row"

python3 - "$TMP" "$BIN" "$truth" "$TPID" <<'PY' || fail "json views check failed"
import json, sys
tmp, binary, truth, tpid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def load(name):
    return json.load(open(f"{tmp}/{name}.json"))

f = load("function")
assert f["by"] == "function", f.get("by")
g = f["groups"]
top = g[0]
assert top["name"] == "leak_in_burst", [x["name"] for x in g[:5]]
assert top["module"] == binary, top["module"]
ratio = top["live_bytes"] / truth
print(f"leak_in_burst flat live {top['live_bytes']} (truth {truth}, x{ratio:.2f})")
assert 0.8 <= ratio <= 1.25, ratio
main = [x for x in g if x["name"] == "main"]
assert main and main[0]["live_bytes"] == 0 and main[0]["cum_live_bytes"] >= top["live_bytes"], main
for x in g:
    for k in ("live_bytes", "live_objects", "alloc_bytes", "alloc_objects"):
        assert x["cum_" + k] >= x[k], (x["name"], k)
    assert "libheapinject" not in (x["module"] or ""), x
# Flat values share out the stacks: they add up to the stacks' own.
for k in ("live_bytes", "alloc_bytes"):
    flat, stacks = sum(x[k] for x in g), sum(s[k] for s in f["stacks"])
    assert abs(flat - stacks) <= len(g) + len(f["stacks"]), (k, flat, stacks)

m = load("module")
assert m["by"] == "module" and m["groups"][0]["name"] == binary, m["groups"][:2]
assert all("libheapinject" not in x["name"] for x in m["groups"]), m["groups"]

t = load("thread")
assert t["by"] == "thread" and t["groups"][0]["tid"] == tpid, t["groups"][:2]
assert t["groups"][0]["name"] == "cli_leaky", t["groups"][0]
assert all(x["cum_live_bytes"] == x["live_bytes"] for x in t["groups"])

d = load("diff")
assert d["by"] == "function" and d["groups"][0]["name"] == "leak_in_burst", d["groups"][:3]
assert "by" not in load("base"), "json without --by has no groups"
PY

assert_alive "$TPID"
ok "leak_in_burst first by function, $(basename "$BIN") first by module, main thread first by thread"
