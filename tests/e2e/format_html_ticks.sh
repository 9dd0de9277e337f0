#!/usr/bin/env bash
# format_html_ticks: the memory chart's top growing stacks cover the whole
# session, not only the last 8 ticks the stacks' growth points keep (issue
# 30). cli_twophase leaks from grow_all_along() throughout an 8 s session
# (16 ticks) and from grow_early_only() for its first 3 s only. The session
# is saved as JSON (the ticks keep their top risers) and `report --format
# html` draws it: both stacks are series with more than 8 points; the early
# grower's points rise to a peak in the first half, its line flat after it;
# the steady one's run from the first seconds to the end.
# Covers: cli/profile/tick_top.c
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

need_reader chromium chromium
start_target cli_twophase 3
"$HEAPINJECT" -p "$TPID" --duration 8 -q --rate 64K --format json -o "$TMP/saved.json" 2>"$TMP/hi.err" &
HIPID=$!
PIDS+=("$HIPID")
# the early grower starts once the payload is in the target
for ((i = 0; i < 600; i++)); do
    grep -q libheapinject "/proc/$TPID/maps" 2>/dev/null && break
    sleep 0.05
done
grep -q libheapinject "/proc/$TPID/maps" || fail "the payload never showed in the target's maps: $(cat "$TMP/hi.err")"
kill -USR1 "$TPID"
wait "$HIPID" || fail "heapinject exited $?: $(cat "$TMP/hi.err")"
wait_for_line "$TMP/cli_twophase.out" "early done blocks=[1-9][0-9]* ok" 30 ||
    fail "the target's early blocks: $(cat "$TMP/cli_twophase.out")"
assert_alive "$TPID"
assert_not_traced "$TPID"

"$HEAPINJECT" report "$TMP/saved.json" --format html -o "$TMP/page.html" 2>"$TMP/report.err" ||
    fail "report --format html: $(cat "$TMP/report.err")"
profile_dir=$(mktemp -d "$TMP/chromium.XXXXXX")
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile_dir" --window-size=1200,800 --enable-logging=stderr --v=0 \
    --dump-dom "file://$TMP/page.html" >"$TMP/dom.html" 2>"$TMP/chromium.err" ||
    fail "chromium failed: $(tail -5 "$TMP/chromium.err")"
grep -q 'Uncaught' "$TMP/chromium.err" && fail "script error: $(grep Uncaught "$TMP/chromium.err")"
grep -q '<div id="errors"></div>' "$TMP/dom.html" || fail "script error in the page: $(grep -o 'id="errors">[^<]*' "$TMP/dom.html")"

python3 - "$TMP/dom.html" <<'PY' || fail "the memory chart's growing stacks do not cover the session"
import re, sys
dom = open(sys.argv[1]).read()
ticks = re.search(r'<polyline[^>]*data-series="live_bytes" data-ticks="(\d+)"', dom)
lines = {}
for m in re.findall(r'<polyline([^>]*data-series="stack"[^>]*)>', dom):
    a = dict(re.findall(r'([a-z-]+)="([^"]*)"', m))
    v = [int(x) for x in a["data-values"].split(",")]
    t = [float(x) for x in a["data-t"].split(",")]
    lines[a["data-fn"]] = [(x, y) for x, y in zip(t, v) if y >= 0], len(v)
print("ticks:", ticks and ticks.group(1), {fn: (n, pts[0], pts[-1]) for fn, (pts, n) in lines.items() if pts})
for fn in ("grow_all_along", "grow_early_only"):
    assert fn in lines, "no series for %s: %s" % (fn, list(lines))
    assert lines[fn][1] > 8, "%s has %d points, the last 8 ticks only" % (fn, lines[fn][1])
steady, _ = lines["grow_all_along"]
early, _ = lines["grow_early_only"]
end = float(re.findall(r'data-t="([^"]*)"', dom)[0].split(",")[-1])
assert steady[0][0] < 3 and steady[-1][0] > end - 1.5, "grow_all_along spans %.1f..%.1f s of %.1f" % (steady[0][0], steady[-1][0], end)
assert len(early) >= 3, "grow_early_only has %d points" % len(early)
# it rises to its peak within the first half, then its line goes on flat
peak = max(range(len(early)), key=lambda i: early[i][1])
rise = early[:peak + 1]
assert len(rise) >= 3 and rise[-1][0] < end / 2 + 1, "grow_early_only rose after the first half: %s" % early
assert all(b[1] > a[1] for a, b in zip(rise, rise[1:])), "grow_early_only not rising: %s" % early
assert all(p[1] <= early[peak][1] for p in early[peak:]), "grow_early_only rose again: %s" % early
PY
ok "the chart's growing stacks span the session: grow_early_only rising in its first half, grow_all_along to its end"

python3 - "$TMP/saved.json" <<'PY' || fail "the saved profile's ticks do not keep their top risers"
import json, sys
p = json.load(open(sys.argv[1]))
ticks = p["ticks"]
with_top = [t for t in ticks if t.get("top")]
print("%d ticks, %d with top risers" % (len(ticks), len(with_top)))
assert len(ticks) > 8 and len(with_top) >= len(ticks) // 2
assert all(0 <= e[0] < len(p["stacks"]) and e[1] > 0 for t in with_top for e in t["top"])
PY

kill -TERM "$TPID"
wait_for_line "$TMP/cli_twophase.out" "steady blocks=[1-9][0-9]* ok" 30 ||
    fail "the target's blocks: $(cat "$TMP/cli_twophase.out")"
