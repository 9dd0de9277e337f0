#!/usr/bin/env bash
# format_html: `--format html` is one self-contained page that headless
# Chromium runs without a script error: the summary names the process, the
# functions table names the leaking function, and a search given in the URL
# (#search=...) finds it. Names from the target are data, never markup: a
# program at a path with "</script><b>pwn</b>" in it, named "<i>x<", gives a
# page whose data block is whole and whose document has no element of theirs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

start_leaky
snapshot "$TMP/report.html" --rate 64K --format html

grep -Eq '<(script|link|img)[^>]* (src|href)=' "$TMP/report.html" && fail "the page loads an external file"
grep -q 'id="hi-data"' "$TMP/report.html" || fail "no data block"

need_reader chromium chromium
profile_dir=$(mktemp -d "$TMP/chromium.XXXXXX")
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile_dir" --window-size=1200,800 --enable-logging=stderr --v=0 \
    --dump-dom "file://$TMP/report.html#search=$LEAK_FN" >"$TMP/dom.html" 2>"$TMP/chromium.err" ||
    fail "chromium failed: $(tail -5 "$TMP/chromium.err")"
grep -q 'Uncaught' "$TMP/chromium.err" && fail "script error: $(grep Uncaught "$TMP/chromium.err")"
grep -q '<div id="errors"></div>' "$TMP/dom.html" || fail "script error in the page: $(grep -o 'id="errors">[^<]*' "$TMP/dom.html")"
grep -q "id=\"summary\">duration [0-9.]* s" "$TMP/dom.html" || fail "no summary in the page"
grep -q "<td class=\"n\">$LEAK_FN</td>" "$TMP/dom.html" || fail "the functions table does not name $LEAK_FN"
grep -q 'id="matched">Matched: [1-9]' "$TMP/dom.html" || fail "search for $LEAK_FN found nothing: $(grep -o 'id="matched"[^<]*' "$TMP/dom.html")"
grep -q '<polyline[^>]*data-series="live_bytes" data-ticks="[1-9]' "$TMP/dom.html" || fail "no memory chart with ticks"
grep -q "<li>$LEAK_FN: " "$TMP/dom.html" || fail "the leak ranking does not name $LEAK_FN: $(grep -o '<ol id="leaks">.\{0,200\}' "$TMP/dom.html")"
ok "chromium rendered the page: $LEAK_FN in the table and the leak ranking, found by a search; the memory chart has the ticks"

# The top growing stacks over the ticks: the target leaks 4,000,000 B/s from
# $LEAK_FN alone, so its stack is the first series, rising at each tick, at
# about that rate (64 KiB sampling: within 35%).
python3 - "$TMP/dom.html" "$LEAK_FN" <<'PY' || fail "the memory chart has no rising series for $LEAK_FN"
import html, re, sys
dom, fn = open(sys.argv[1]).read(), sys.argv[2]
lines = [dict(re.findall(r'([a-z-]+)="([^"]*)"', m)) for m in re.findall(r'<polyline([^>]*data-series="stack"[^>]*)>', dom)]
assert lines, "no stack series in the memory chart"
first = lines[0]
v = [int(x) for x in first["data-values"].split(",")]
t = [float(x) for x in first["data-t"].split(",")]
print("series:", [(l["data-fn"], l["data-values"]) for l in lines])
assert first["data-fn"] == fn, "first series is %s, not %s" % (first["data-fn"], fn)
pts = [(a, b) for a, b in zip(t, v) if b >= 0]
assert len(pts) >= 3, "only %d points" % len(pts)
assert all(b2 > b1 for (_, b1), (_, b2) in zip(pts, pts[1:])), "not rising at each tick: %s" % v
rate = (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])
print("%s rose %.0f B/s over %d ticks (the target leaks 4000000 B/s)" % (fn, rate, len(pts)))
assert abs(rate / 4e6 - 1) < 0.35, "rate %.0f B/s" % rate
legend = re.search(r'<ol[^>]*id="tick-stacks-legend"[^>]*><li>(.*?)</li>', dom)
assert legend and html.unescape(re.sub("<[^>]*>", "", legend.group(1))).split(" ", 1)[1].startswith(fn + " < "), \
    "the legend does not name %s first: %s" % (fn, legend and legend.group(1))
PY
ok "the memory chart's first growing stack is $LEAK_FN's, rising at each tick at the target's leak rate"

render() { # render PAGE DOM: headless Chromium's document of PAGE, no script error
    local prof; prof=$(mktemp -d "$TMP/chromium.XXXXXX")
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$prof" --window-size=1200,800 --enable-logging=stderr --v=0 \
        --dump-dom "file://$1" >"$2" 2>"$2.err" || fail "chromium failed: $(tail -5 "$2.err")"
    grep -q 'Uncaught' "$2.err" && fail "script error: $(grep Uncaught "$2.err")"
    grep -q '<div id="errors"></div>' "$2" || fail "script error in the page: $(grep -o 'id="errors">[^<]*' "$2")"
}
kill "$TPID"; wait "$TPID" 2>/dev/null
hostile_dir="$TMP/h/</script><b>pwn</b>"
mkdir -p "$hostile_dir" && cp "$TARGETS/cli_leaky" "$hostile_dir/<i>x<" || fail "cannot make the hostile path"
TARGETS=$hostile_dir start_target "<i>x<" --steady 4000000
snapshot "$TMP/hostile.html" --rate 64K --format html
grep -q '</script><b>pwn' "$TMP/hostile.html" && fail "the target's path closes the data block: $(grep -o '.\{40\}</script><b>pwn.\{20\}' "$TMP/hostile.html" | head -2)"
grep -q 'pwn' "$TMP/hostile.html" || fail "the hostile path is not in the page at all (nothing tested)"
render "$TMP/hostile.html" "$TMP/hostile.dom"
grep -q "<td class=\"n\">$LEAK_FN</td>" "$TMP/hostile.dom" || fail "the page of the hostile target did not render its table"
grep -Eq '<b>pwn|<i>x' "$TMP/hostile.dom" && fail "a name from the target became markup: $(grep -Eo '.{30}(<b>pwn|<i>x).{10}' "$TMP/hostile.dom" | head -2)"
ok "a target at a path with </script> and markup in its name: the data block whole, no element of theirs"
