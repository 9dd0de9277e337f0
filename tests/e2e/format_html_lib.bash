# format_html_lib.bash - for the format_html*.sh tests (sourced after
# lib.sh and format_lib.bash; not a test itself): headless Chromium's
# document of a page, after its script ran, with no script error.

# render PAGE[#HASH] DOM: the rendered document of PAGE in DOM; fails on a
# script error (Chromium's console or the page's own #errors).
render() {
    local prof; prof=$(mktemp -d "$TMP/chromium.XXXXXX")
    timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$prof" --window-size=1200,800 --enable-logging=stderr --v=0 \
        --dump-dom "file://$1" >"$2" 2>"$2.err" || fail "chromium failed: $(tail -5 "$2.err")"
    grep -q 'Uncaught' "$2.err" && fail "script error: $(grep Uncaught "$2.err")"
    grep -q '<div id="errors"></div>' "$2" || fail "script error in the page: $(grep -o 'id="errors">[^<]*' "$2")"
}

# dom_py DOM PYTHON...: runs python with `dom` the parsed document (html_dom.py).
dom_py() {
    local dom=$1; shift
    python3 -c "import sys, html_dom; dom = html_dom.load(sys.argv[1]); $*" "$dom"
}
