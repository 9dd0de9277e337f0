#!/usr/bin/env bash
# format_html_census: `heapinject census --format html`, as headless
# Chromium shows it, on tests/targets/census_cxx (50,000 Session objects
# held, 20,000 Request objects leaked): the summary says in use, free and
# unreachable; the table by type has Request with ~20,000 blocks, all of
# them unreachable, and Session reachable; the unreachable table names
# Request; the roots table has g_cache. A profile taken with --census shows
# the same census under its own views. The target's data checks out after.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"
. "$(dirname "$0")/format_html_lib.bash"
need_reader chromium chromium

start_target census_cxx
"$HEAPINJECT" census -q -p "$TPID" --format html -o "$TMP/c.html" 2>"$TMP/c.err" || fail "census --format html: $(cat "$TMP/c.err")"
assert_alive "$TPID"
render "$TMP/c.html" "$TMP/c.dom"
dom_py "$TMP/c.dom" "
s = dom.texts['census-summary']
print(s)
assert s.startswith('in use ') and ' free ' in s and ' unreachable ' in s, s
types = {r[0]: r for r in dom.tables['census-types'][1:]}
req, ses = types['Request'], types['Session']
blocks = lambda r: int(r[1].replace(',', ''))
assert abs(blocks(req) - 20000) <= 200, req
assert abs(blocks(ses) - 50000) <= 500, ses
assert req[3] == req[2] and ses[3] in ('0 B', ''), (req, ses)
un = [r[0] for r in dom.tables['census-unreachable'][1:]]
assert 'Request' in un, un
roots = [r[0] for r in dom.tables['census-roots'][1:]]
assert any(r.startswith('g_cache ') for r in roots), roots
" || fail "the census page does not show the leaked Request objects"
# The same census inside a profile's page (heapinject -p PID --census): the
# census tables under the profile's own views.
"$HEAPINJECT" -p "$TPID" --duration 1 --census -q --format html -o "$TMP/p.html" 2>"$TMP/p.err" ||
    fail "heapinject -p --census --format html: $(cat "$TMP/p.err")"
assert_alive "$TPID"
render "$TMP/p.html" "$TMP/p.dom"
dom_py "$TMP/p.dom" "
assert 'functions' in dom.tables and 'flame' in dom.attrs, 'not a profile page'
types = {r[0]: r for r in dom.tables['census-types'][1:]}
assert abs(int(types['Request'][1].replace(',', '')) - 20000) <= 200, types.get('Request')
" || fail "the profile's page does not show its census"
kill -USR1 "$TPID"
wait_for_line "$TMP/census_cxx.out" "verify" 10 && grep -q "verify ok" "$TMP/census_cxx.out" || fail "C++ target data damaged"
ok "census page: Request 20,000 blocks all unreachable, Session reachable, g_cache a root; the same census in a profile's page"
