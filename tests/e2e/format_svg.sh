#!/usr/bin/env bash
# format_svg: `--format svg` is well-formed XML with leak_steady as the
# widest leaf, and renders in headless Chromium with its script running: a
# search given in the URL (#search=...) highlights the leak's frames and
# shows the matched share.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

start_leaky
snapshot "$TMP/flame.svg" --rate 64K --format svg

python3 - "$TMP/flame.svg" "$LEAK_FN" <<'PY' || fail "SVG structure check failed"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
frames = [g for g in root.iter(ns + "g") if g.get("class") == "f"]
assert frames, "no frames"
assert any(s.text and "function" in s.text for s in root.iter(ns + "script")), "no script"
names = [g.get("data-n") for g in frames]
assert "all" in names and "main" in names, names
widest = max((g for g in frames if g.get("data-n") != "all"), key=lambda g: (float(g.get("data-w")), int(g.get("data-d"))))
leak = [g for g in frames if g.get("data-n") == sys.argv[2]]
assert leak, f"no {sys.argv[2]} frame: {names}"
w = sum(float(g.get("data-w")) for g in leak)
print(f"frames {len(frames)}, {sys.argv[2]} width {w:.1%}")
assert w > 0.5, f"{sys.argv[2]} is only {w:.1%} wide"
PY
ok "SVG parses; $LEAK_FN holds most of the width"

need_reader chromium chromium
profile_dir=$(mktemp -d "$TMP/chromium.XXXXXX")
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile_dir" --window-size=1200,800 \
    --dump-dom "file://$TMP/flame.svg#search=$LEAK_FN" >"$TMP/dom.xml" 2>"$TMP/chromium.err" ||
    fail "chromium failed: $(tail -5 "$TMP/chromium.err")"
matched=$(sed -n 's/.*id="matched"[^>]*>Matched: \([0-9.]*\)%<.*/\1/p' "$TMP/dom.xml")
[ -n "$matched" ] || fail "the script did not run the search: $(grep -o 'id="matched"[^<]*' "$TMP/dom.xml")"
awk -v m="$matched" 'BEGIN {exit !(m > 50)}' || fail "search for $LEAK_FN matched only $matched%"
grep -q 'fill="rgb(230,0,230)"' "$TMP/dom.xml" || fail "no frame highlighted"
ok "chromium ran the flame graph's script: search for $LEAK_FN matched $matched%"
