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

# A screenshot of the rendered flame graph: a real picture, not a blank page.
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile_dir" --window-size=1200,800 \
    --screenshot="$TMP/flame.png" "file://$TMP/flame.svg" >/dev/null 2>"$TMP/shot.err" ||
    fail "chromium screenshot failed: $(tail -5 "$TMP/shot.err")"
python3 - "$TMP/flame.png" <<'PY' || fail "the screenshot is not a rendered flame graph"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w, h = 8, b"", 0, 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and ctype in (2, 6), f"unexpected PNG type {depth}/{ctype}"
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours = set()
for y in range(h):  # undo the PNG row filters (None, Sub, Up, Average, Paeth)
    f = raw[y * (stride + 1)]
    cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = cur[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: cur[i] = (cur[i] + a) & 255
        elif f == 2: cur[i] = (cur[i] + b) & 255
        elif f == 3: cur[i] = (cur[i] + (a + b) // 2) & 255
        elif f == 4:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 8 == 0:
        for x in range(0, stride, bpp * 4):
            colours.add(bytes(cur[x:x + 3]))
    prev = cur
print(f"screenshot {w}x{h}, {len(colours)} distinct colours")
assert w >= 1000 and h >= 700, "screenshot too small"
assert len(colours) >= 4, "a blank or single-colour page"
PY
ok "chromium rendered the flame graph to a screenshot ($(stat -c %s "$TMP/flame.png") bytes)"
