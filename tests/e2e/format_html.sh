#!/usr/bin/env bash
# format_html: `--format html` is one self-contained page that headless
# Chromium runs without a script error: the summary names the process, the
# functions table names the leaking function, and a search given in the URL
# (#search=...) finds it.
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
