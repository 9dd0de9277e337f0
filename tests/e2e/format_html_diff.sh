#!/usr/bin/env bash
# format_html_diff: `heapinject diff BASE FILE --format html`, as headless
# Covers: cli/cmd/diff.c, cli/profile/leaks.c
# Chromium shows it. Two snapshots of one session of the leaking target,
# a burst of 32 MiB leaked from leak_in_burst() between them: the page's
# "Grew" list starts with that stack, by what the two JSON profiles say
# it grew; it is listed among the new stacks too; the flame graph marks it
# new (data-grew > 0); and the target's own count of the burst is right.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"
. "$(dirname "$0")/format_html_lib.bash"
need_reader chromium chromium

start_target cli_leaky --steady 1000000
"$HEAPINJECT" attach -p "$TPID" --ttl 0 --rate 64K -q || fail "attach failed"
"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/base.json" 2>"$TMP/s.err" || fail "snapshot: $(cat "$TMP/s.err")"
kill -USR1 "$TPID"
wait_for_line "$TMP/cli_leaky.out" "burst done" 60 || fail "the target did not leak its burst"
"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/cur.json" 2>"$TMP/s.err" || fail "snapshot: $(cat "$TMP/s.err")"
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach failed"
assert_alive "$TPID"
grep -q "burst done leaked=33554432" "$TMP/cli_leaky.out" || fail "the target's burst: $(grep burst "$TMP/cli_leaky.out")"

"$HEAPINJECT" diff "$TMP/base.json" "$TMP/cur.json" --format html -o "$TMP/d.html" 2>"$TMP/d.err" || fail "diff: $(cat "$TMP/d.err")"
# what the profiles say leak_in_burst's stacks grew by
grew=$(python3 - "$TMP/base.json" "$TMP/cur.json" <<'PY'
import sys, hi_profile
def burst(path):
    d = hi_profile.load(path)
    return sum(s["live_bytes"] for s in d["stacks"] if s["frames"] and s["frames"][0]["function"] == "leak_in_burst")
print(int(burst(sys.argv[2]) - burst(sys.argv[1])))
PY
) || fail "cannot read the profiles"
echo "leak_in_burst grew by $grew bytes (JSON)"
[ "$grew" -gt 16000000 ] || fail "the profiles see only $grew bytes of the 32 MiB burst"

render "$TMP/d.html" "$TMP/d.dom"
dom_py "$TMP/d.dom" "
grew = dom.tables['diff-grew']
print('first rows of Grew:', grew[1:3])
assert len(grew) > 1 and grew[1][0].startswith('leak_in_burst <'), 'Grew does not start with leak_in_burst: %s' % grew[1:3]
mib = float(grew[1][3].lstrip('+').split()[0]) * {'MiB': 2**20, 'KiB': 2**10, 'GiB': 2**30}[grew[1][3].split()[1]]
assert abs(mib - $grew) < 0.002 * $grew + 2**20 * 0.05, 'change %s, the profiles say $grew' % grew[1][3]
new = dom.tables['diff-new']
assert any(r[0].startswith('leak_in_burst <') for r in new[1:]), 'leak_in_burst is not among the new stacks: %s' % new
assert 'diff-shrank' in dom.tables
fr = [f for f in dom.frames if f['data-n'] == 'leak_in_burst']
assert fr and int(fr[0]['data-grew']) > 0, 'flame graph: %s' % fr
" || fail "the diff page does not list the grown stack first"
ok "diff page: leak_in_burst first in Grew (by what the profiles say), among the new stacks, red in the flame graph"
kill "$TPID"
