#!/usr/bin/env bash
# format_html_ticks_pids: in a profile of two processes, each series of the
# memory chart's top growing stacks names its own process's stack (issue
# 30). The ticks' top risers are bucket indices of one agent; two copies of
# cli_tick_rise started the same way both rise in bucket 0, one from
# rise_in_a(), the other from rise_in_b(). A one-shot `-p A,B` session,
# saved as JSON (each tick names its pid) and drawn by `report --format
# html` in headless Chromium: a series for each function, rising; each
# tick's top names stacks of its own process only.
# Covers: cli/profile/merge_ticks.c
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"
. "$(dirname "$0")/format_html_lib.bash"

need_reader chromium chromium
start_rise rise_a a
APID=$TPID
start_rise rise_b b
BPID=$TPID
"$HEAPINJECT" -p "$APID,$BPID" --duration 4 -q --rate 64K --format json -o "$TMP/saved.json" 2>"$TMP/hi.err" &
HIPID=$!
PIDS+=("$HIPID")
wait_payload "$APID" "$BPID"
kill -USR1 "$APID" "$BPID" # each rises from now on: its first sampled stack
wait "$HIPID" || fail "heapinject exited $?: $(cat "$TMP/hi.err")"
for p in "$APID" "$BPID"; do
    assert_alive "$p"
    assert_not_traced "$p"
done

python3 - "$TMP/saved.json" "$APID" "$BPID" <<'PY' || fail "the saved profile's ticks name other processes' stacks"
import json, sys
p = json.load(open(sys.argv[1]))
want = {int(sys.argv[2]): "rise_in_a", int(sys.argv[3]): "rise_in_b"}
frames = p["frames"]
def fn(s):
    return [frames[f].get("function", "") for f in s["frames"]]
ticks = p["ticks"]
pids = {t.get("pid") for t in ticks}
print("%d ticks, pids %s" % (len(ticks), sorted(x for x in pids if x)))
assert pids == set(want), "ticks of pids %s, want %s" % (pids, set(want))
named = {}
for t in ticks:
    for e in t.get("top", []):
        s = p["stacks"][e[0]]
        assert s["pid"] == t["pid"], "a tick of pid %d names a stack of pid %d" % (t["pid"], s["pid"])
        named.setdefault(t["pid"], set()).update(fn(s))
for pid, f in want.items():
    assert f in named.get(pid, ()), "pid %d's ticks never name %s: %s" % (pid, f, named.get(pid))
    other = want[[x for x in want if x != pid][0]]
    assert other not in named[pid], "pid %d's ticks name %s" % (pid, other)
PY
ok "each tick's top risers are stacks of its own process"

"$HEAPINJECT" report "$TMP/saved.json" --format html -o "$TMP/page.html" 2>"$TMP/report.err" ||
    fail "report --format html: $(cat "$TMP/report.err")"
render "$TMP/page.html" "$TMP/dom.html"
python3 - "$TMP/dom.html" <<'PY' || fail "the memory chart's series do not name each process's own stack"
import re, sys
dom = open(sys.argv[1]).read()
lines = {}
for m in re.findall(r'<polyline([^>]*data-series="stack"[^>]*)>', dom):
    a = dict(re.findall(r'([a-z-]+)="([^"]*)"', m))
    v = [int(x) for x in a["data-values"].split(",")]
    lines.setdefault(a["data-fn"], []).append([x for x in v if x >= 0])
print({fn: [len(v) for v in vs] for fn, vs in lines.items()})
for fn in ("rise_in_a", "rise_in_b"):
    assert fn in lines, "no series for %s: %s" % (fn, list(lines))
    assert len(lines[fn]) == 1, "%d series for %s" % (len(lines[fn]), fn)
    pts = lines[fn][0]
    assert len(pts) >= 3 and pts[-1] > pts[0], "%s does not rise: %s" % (fn, pts)
PY
ok "the chart has a rising series for rise_in_a and one for rise_in_b"

kill -TERM "$APID" "$BPID"
wait_for_line "$TMP/rise_a.out" "done blocks=[1-9][0-9]* ok" 30 || fail "target a's blocks: $(cat "$TMP/rise_a.out")"
wait_for_line "$TMP/rise_b.out" "done blocks=[1-9][0-9]* ok" 30 || fail "target b's blocks: $(cat "$TMP/rise_b.out")"
