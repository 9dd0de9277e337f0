#!/usr/bin/env bash
# format_html_flame: the HTML report's flame graph, as headless Chromium
# draws it. A saved profile of the leaking target, written again as a page:
# the leak_steady frame is there, as wide (its data-w and its width in
# pixels) as its share of the live bytes in the JSON profile; a search
# (#search=) marks exactly its frames and says its share; inverted, it is
# the widest root; in flame mode, roots are at the bottom; clicked (in
# allocated bytes, a few percent), it fills the width; a search typed in
# marks it; frames carry
# their module's kind; the top-down and bottom-up tables name it (the
# bottom-up one first). And the process selector: the same page with a
# made-up second pid for all stacks but leak_steady's shows a selector,
# and choosing that pid leaves leak_steady out.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"
. "$(dirname "$0")/format_html_lib.bash"
need_reader chromium chromium

start_leaky
snapshot "$TMP/p.json" --rate 64K --format json
"$HEAPINJECT" report "$TMP/p.json" --format html -o "$TMP/p.html" 2>"$TMP/r.err" || fail "report: $(cat "$TMP/r.err")"
# leak_steady's share of the live bytes, from the JSON profile
share=$(python3 - "$TMP/p.json" "$LEAK_FN" <<'PY'
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
tot = sum(s["live_bytes"] for s in d["stacks"])
leak = sum(s["live_bytes"] for s in d["stacks"] if any(f["function"] == sys.argv[2] for f in s["frames"]))
print(f"{leak / tot:.4f}")
PY
) || fail "cannot read the JSON profile"
echo "$LEAK_FN's share of the live bytes in the JSON: $share"

render "$TMP/p.html" "$TMP/plain.dom"
dom_py "$TMP/plain.dom" "
share, leak = float('$share'), html_dom.frames_named(dom, '$LEAK_FN')
assert leak, 'no $LEAK_FN frame in the flame graph: %s' % [f.get('data-n') for f in dom.frames]
w = sum(float(f['data-w']) for f in leak)
hostw = max(f['px']['left'] + f['px']['width'] for f in dom.frames) + 1
px = sum(f['px']['width'] + 1 for f in leak) / hostw
print('$LEAK_FN: data-w %.4f, %.4f of the width in pixels, JSON share %.4f' % (w, px, share))
assert abs(w - share) < 0.01, 'data-w %.4f is not its share %.4f' % (w, share)
assert abs(px - share) < 0.01, 'drawn %.4f of the width, not its share %.4f' % (px, share)
kinds = {f['data-n']: f['data-kind'] for f in dom.frames}
assert kinds['$LEAK_FN'] == 'program' and kinds.get('__libc_start_main') == 'runtime', kinds
assert not [f for f in dom.frames if 'match' in f['class']], 'frames marked without a search'
td = dom.tables['topdown']
assert any(r and r[0].endswith('$LEAK_FN') for r in td), 'top-down table has no $LEAK_FN row: %s' % td[:8]
" || fail "the flame graph does not show $LEAK_FN as wide as its share"
ok "$LEAK_FN drawn as wide as its share of the live bytes ($share), coloured as the program's; top-down table names it"

render "$TMP/p.html#search=$LEAK_FN&mode=flame" "$TMP/search.dom"
dom_py "$TMP/search.dom" "
marked = [f['data-n'] for f in dom.frames if 'match' in f['class'].split()]
assert marked and set(marked) == {'$LEAK_FN'}, 'marked frames: %s' % marked
m = dom.attrs['flame-matched']
assert abs(float(m['data-share']) - float('$share')) < 0.01, 'search says %s, the share is $share' % m
print(dom.texts['flame-matched'])
top = {f['data-n']: f['px']['top'] for f in dom.frames}
assert top['$LEAK_FN'] < top['main'], 'flame mode: $LEAK_FN (top %s) is not above main (%s)' % (top['$LEAK_FN'], top['main'])
" || fail "a search for $LEAK_FN does not mark its frames (only) with its share, or flame mode has the roots on top"
ok "a search marks $LEAK_FN's frames and no other, and says its share; flame mode: callers at the bottom"

render "$TMP/p.html#inverted=1&bottomup=1" "$TMP/inv.dom"
dom_py "$TMP/inv.dom" "
roots = sorted((f for f in dom.frames if f['px']['top'] == 0), key=lambda f: -float(f['data-w']))
assert roots and roots[0]['data-n'] == '$LEAK_FN', 'inverted: widest root %s' % [(f['data-n'], f['data-w']) for f in roots]
bu = dom.tables['bottomup']
assert bu[1][0].endswith('$LEAK_FN'), 'bottom-up table: first row %s' % bu[1]
" || fail "inverted, $LEAK_FN is not the widest root / first bottom-up row"
ok "inverted: $LEAK_FN is the widest root and the first row of the bottom-up table"


# Click to focus, through a real click: #click= makes the page dispatch a
# MouseEvent 'click' at the element under a frame's centre (elementFromPoint,
# as a pointer lands), which bubbles to the flame graph's own listener. In
# allocated bytes (#metric=2: churn_alloc's churn is nearly all of them, and
# it always has some, where its live bytes may be none), $LEAK_FN is a few
# percent; clicked, it fills the width and churn_alloc is not drawn.
render "$TMP/p.html#metric=2&click=$LEAK_FN" "$TMP/click.dom"
grep -q "data-clicked=\"$LEAK_FN\"" "$TMP/click.dom" ||
    fail "the click did not land on $LEAK_FN's frame: $(grep -o 'data-clicked="[^"]*"' "$TMP/click.dom")"
dom_py "$TMP/click.dom" "
hostw = max(f['px']['left'] + f['px']['width'] for f in dom.frames) + 1
lk = [f for f in dom.frames if f['data-n'] == '$LEAK_FN']
assert len(lk) == 1 and 'focus' in lk[0]['class'].split(), lk
assert (lk[0]['px']['width'] + 1) / hostw > 0.99 and float(lk[0]['data-w']) < 0.5, lk
assert not html_dom.frames_named(dom, 'churn_alloc'), 'focused on $LEAK_FN, churn_alloc still drawn'
" || fail "clicking $LEAK_FN does not zoom to it"
ok "a click on $LEAK_FN (a share of $(dom_py "$TMP/click.dom" "print([f['data-w'] for f in dom.frames if f['data-n'] == '$LEAK_FN'][0])") of the allocated bytes) makes it fill the width"

# A search typed into the box (its 'input' event, #bench_search=) marks the
# frames already drawn: exactly $LEAK_FN's, and says its share.
render "$TMP/p.html#bench_search=$LEAK_FN" "$TMP/typed.dom"
dom_py "$TMP/typed.dom" "
marked = [f['data-n'] for f in dom.frames if 'match' in f['class'].split()]
assert marked and set(marked) == {'$LEAK_FN'}, 'marked frames: %s' % marked
m = dom.attrs['flame-matched']
assert abs(float(m['data-share']) - float('$share')) < 0.01, 'search says %s, the share is $share' % m
" || fail "a search typed into the box does not mark $LEAK_FN's frames (only)"
ok "a search typed into the box marks $LEAK_FN's frames and no other"

# The process selector, on the viewer alone: the page's data given a
# "pids" array (as a profile of several processes has), $LEAK_FN's stacks
# in one process and every other stack in another.
python3 - "$TMP/p.html" "$TMP/pids.html" "$LEAK_FN" <<'PY' || fail "cannot make the two-process page"
import json, re, sys
page = open(sys.argv[1]).read()
m = re.search(r'(<script type="application/json" id="hi-data">\n)(.*?)(</script>)', page, re.S)
d = json.loads(m.group(2))
def varints(s):
    out, v, sh = [], 0, 0
    for ch in s:
        c = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".index(ch)
        v |= (c & 31) << sh
        if c & 32: sh += 5
        else: out.append(v); v, sh = 0, 0
    return out
names = {i: d["strings"][d["frames"][5 * i]] for i in range(len(d["frames"]) // 5)}
nodes, frame_of = varints(d["nodes"]), []
i = 0
while i < len(nodes):
    cnt = nodes[i + 1]; frame_of += nodes[i + 2:i + 2 + cnt]; i += 2 + cnt
st = varints(d["stacks"])
d["pids"] = [111 if names[frame_of[st[j]]] == sys.argv[3] else 222 for j in range(0, len(st), 5)]
assert 111 in d["pids"] and 222 in d["pids"], d["pids"]
d["processes"] = [111, 222]
data = json.dumps(d).replace("<", "\\u003c")
open(sys.argv[2], "w").write(page[:m.start(2)] + data + page[m.end(2):])
PY
# pid 222's stacks are the target's churn: their live bytes may all be
# freed at the snapshot (then the live graph is empty, ci19), their
# allocated bytes never are: that graph is the one checked (metric=2).
render "$TMP/pids.html#pid=222&metric=2" "$TMP/pid222.dom"
grep -q '<select id="process"><option value="0">all 2 processes</option><option value="111">pid 111</option><option value="222">pid 222</option>' "$TMP/pid222.dom" ||
    fail "no process selector: $(grep -o '<select id="process".\{0,200\}' "$TMP/pid222.dom")"
dom_py "$TMP/pid222.dom" "
names = {f['data-n'] for f in dom.frames}
assert '$LEAK_FN' not in names and 'main' in names, names
" || fail "pid 222 selected, the flame graph still has $LEAK_FN (or nothing)"
render "$TMP/pids.html#pid=111" "$TMP/pid111.dom"
dom_py "$TMP/pid111.dom" "
leaf = [f for f in dom.frames if f['data-n'] == '$LEAK_FN']
assert leaf and float(leaf[0]['data-w']) > 0.999, [(f['data-n'], f['data-w']) for f in dom.frames]
" || fail "pid 111 selected, $LEAK_FN is not the whole graph"
ok "two processes in the data: a selector; each pid shows only its stacks"
kill "$TPID"
