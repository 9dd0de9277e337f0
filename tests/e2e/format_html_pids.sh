#!/usr/bin/env bash
# format_html_pids: the HTML report of several real processes, as headless
# Chromium draws it. Two workers of a pre-fork server, only one of which
# leaks (svc_leak_request): `heapinject report A.json B.json --format html`
# and `heapinject -p A,B --format html` each give a page with a process
# selector naming both pids (and their comm); choosing the other worker
# leaves svc_leak_request out of the flame graph, choosing the leaker
# keeps it, and "all" shows both workers' svc_serve_request.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"
. "$(dirname "$0")/format_html_lib.bash"
need_reader chromium chromium

start_target svc_prefork 2 0
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
LEAKER=$(awk '/^leaker /{print $2}' "$TMP/svc_prefork.out")
OTHER=${W[1]}
[ "$LEAKER" = "${W[0]}" ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
for w in "$LEAKER" "$OTHER"; do
    timeout -k 5 120 "$HEAPINJECT" -p "$w" --duration 1 --rate 64K --format json -o "$TMP/$w.json" 2>"$TMP/$w.err" ||
        fail "session of $w failed: $(cat "$TMP/$w.err")"
done
"$HEAPINJECT" report "$TMP/$LEAKER.json" "$TMP/$OTHER.json" --format html -o "$TMP/m.html" 2>"$TMP/m.err" ||
    fail "report A B --format html: $(cat "$TMP/m.err")"
timeout -k 5 120 "$HEAPINJECT" -p "$LEAKER,$OTHER" --duration 1 --rate 64K --format html -o "$TMP/live.html" 2>"$TMP/live.err" ||
    fail "-p A,B --format html: $(cat "$TMP/live.err")"

# check PAGE WHAT: the selector and what each choice draws.
check() {
    local sel='<select id="process"><option value="0">all 2 processes</option>'
    sel+="<option value=\"$LEAKER\">pid $LEAKER (svc_prefork)</option><option value=\"$OTHER\">pid $OTHER (svc_prefork)</option>"
    [ "$LEAKER" -lt "$OTHER" ] || sel='<select id="process"><option value="0">all 2 processes</option>'"<option value=\"$OTHER\">pid $OTHER (svc_prefork)</option><option value=\"$LEAKER\">pid $LEAKER (svc_prefork)</option>"
    render "$1" "$TMP/all.dom"
    grep -qF "$sel" "$TMP/all.dom" ||
        fail "$2: no selector of pids $LEAKER and $OTHER: $(grep -o '<select id="process".\{0,300\}' "$TMP/all.dom" || echo none)"
    dom_py "$TMP/all.dom" "
names = {f['data-n'] for f in dom.frames}
assert {'svc_leak_request', 'svc_serve_request'} <= names, names
" || fail "$2: all processes: the flame graph lacks a worker's function"
    render "$1#pid=$OTHER" "$TMP/other.dom"
    dom_py "$TMP/other.dom" "
names = {f['data-n'] for f in dom.frames}
assert 'svc_leak_request' not in names and 'svc_serve_request' in names, names
" || fail "$2: pid $OTHER chosen, the flame graph still has the leaker's svc_leak_request (or no svc_serve_request)"
    render "$1#pid=$LEAKER" "$TMP/leaker.dom"
    dom_py "$TMP/leaker.dom" "
names = {f['data-n'] for f in dom.frames}
assert 'svc_leak_request' in names, names
" || fail "$2: pid $LEAKER chosen, no svc_leak_request"
    ok "$2: a selector of pids $LEAKER and $OTHER (svc_prefork); each shows only its own stacks"
}
check "$TMP/m.html" "report A.json B.json --format html"
check "$TMP/live.html" "-p A,B --format html"

assert_alive "$TPID"
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 2" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "the workers' data intact"
