#!/usr/bin/env bash
# format_html_live: a live one-shot `heapinject -p PID --format html -o
# page.html` session (not a saved JSON) draws the memory chart from its own
# ticks, and a stack that stopped rising keeps its line (issue 30).
# cli_tick_rise fall rises from rise_then_fall() for 1.5 s, then frees half
# of its blocks and stays flat, in a 5 s session (10 ticks). In headless
# Chromium: the chart has the ticks; the riser's series has points after
# its peak (the agent keeps past risers and sends their live bytes each
# tick, hi_tick_kept) and shows the fall.
# Covers: payload/record/bucket.c
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"
. "$(dirname "$0")/format_html_lib.bash"

need_reader chromium chromium
start_rise fall fall 1.5
"$HEAPINJECT" -p "$TPID" --duration 5 -q --rate 16K --format html -o "$TMP/page.html" 2>"$TMP/hi.err" &
HIPID=$!
PIDS+=("$HIPID")
wait_payload "$TPID"
kill -USR1 "$TPID" # it rises from now on
wait "$HIPID" || fail "heapinject exited $?: $(cat "$TMP/hi.err")"
wait_for_line "$TMP/fall.out" "fell kept=[1-9][0-9]* ok" 30 || fail "the target's blocks: $(cat "$TMP/fall.out")"
assert_alive "$TPID"
assert_not_traced "$TPID"

render "$TMP/page.html" "$TMP/dom.html"
python3 - "$TMP/dom.html" <<'PY' || fail "the live page's chart does not draw the riser on after its rise"
import re, sys
dom = open(sys.argv[1]).read()
ticks = re.search(r'<polyline[^>]*data-series="live_bytes" data-ticks="(\d+)"', dom)
assert ticks and int(ticks.group(1)) >= 6, "the chart has %s ticks" % (ticks and ticks.group(1))
lines = {}
for m in re.findall(r'<polyline([^>]*data-series="stack"[^>]*)>', dom):
    a = dict(re.findall(r'([a-z-]+)="([^"]*)"', m))
    v = [int(x) for x in a["data-values"].split(",")]
    t = [float(x) for x in a["data-t"].split(",")]
    lines[a["data-fn"]] = [(x, y) for x, y in zip(t, v) if y >= 0]
assert "rise_then_fall" in lines, "no series for rise_then_fall: %s" % list(lines)
pts = lines["rise_then_fall"]
print("ticks:", ticks.group(1), "rise_then_fall:", pts)
peak = max(range(len(pts)), key=lambda i: pts[i][1])
after = pts[peak + 1:]
assert len(after) >= 3, "rise_then_fall has %d points after its peak at %.1f s: %s" % (len(after), pts[peak][0], pts)
assert after[-1][1] < 0.8 * pts[peak][1], "rise_then_fall does not show its fall: peak %d, last %d" % (pts[peak][1], after[-1][1])
PY
ok "the live page's chart has the ticks, and rise_then_fall's line goes on after its rise and shows the fall"

kill -TERM "$TPID"
wait_for_line "$TMP/fall.out" "done blocks=[1-9][0-9]* ok" 30 || fail "the target's blocks: $(cat "$TMP/fall.out")"
