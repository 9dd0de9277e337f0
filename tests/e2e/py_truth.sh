#!/usr/bin/env bash
# py_truth: heapinject's Python lines agree with tracemalloc (issue 29).
# tests/targets/py_truth/app.py runs tracemalloc itself and keeps 16 KiB
# bytearrays from five lines (1600/1200/800/500/300 of them) after we
# attach at --rate 1; the top 5 lines by live bytes (innermost Python
# frame of each stack) must be tracemalloc's top 5, each within 10%.
# On Debian's python3 (3.11) and pyenv's 3.13. Blocks are 16 KiB, not
# 4 KiB: tracemalloc's own trace table grows (a 256 KiB calloc at ~4096
# entries) under whichever line is running then; heapinject rightly
# counts it, tracemalloc does not (3.11: +3.4% on keep_d's line; with
# 4 KiB blocks it was +13.6%, over the 10% bound).
. "$(dirname "$0")/lib.sh"

cp "$ROOT/tests/targets/py_truth/app.py" "$TMP/app.py"
checked=0
run() {
    local py=$1 name=$2
    rm -f "$TMP/go.$name" "$TMP/stop.$name"
    (cd "$TMP" && exec "$py" app.py "$TMP/go.$name" "$TMP/stop.$name" >"$TMP/$name.out" 2>"$TMP/$name.err") &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/$name.out" '^ready' 30 || fail "$name did not get ready: $(cat "$TMP/$name.err")"
    "$HEAPINJECT" attach -p "$TPID" --rate 1 >/dev/null 2>"$TMP/$name.aerr" || fail "$name: attach: $(cat "$TMP/$name.aerr")"
    touch "$TMP/go.$name"
    wait_for_line "$TMP/$name.out" '^done' 60 || fail "$name did not allocate: $(cat "$TMP/$name.err")"
    "$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/$name.json" 2>"$TMP/$name.serr" ||
        fail "$name: snapshot: $(cat "$TMP/$name.serr")"
    "$HEAPINJECT" detach -p "$TPID" >/dev/null 2>"$TMP/$name.derr" || fail "$name: detach: $(cat "$TMP/$name.derr")"
    touch "$TMP/stop.$name"
    wait "$TPID" || fail "$name: target exited $?: $(tail -3 "$TMP/$name.err")"
    grep -q '^checked 4400 ok$' "$TMP/$name.out" || fail "$name: target's check: $(cat "$TMP/$name.out")"
    python3 "$ROOT/tests/e2e/py_truth_check.py" "$TMP/$name.json" "$TMP/$name.out" >"$TMP/$name.check" 2>&1 ||
        fail "$name: $(cat "$TMP/$name.check")"
    cat "$TMP/$name.check"
    ok "$name: top 5 Python lines agree with tracemalloc within 10%"
    checked=$((checked + 1))
}

[ -x /usr/bin/python3 ] && run /usr/bin/python3 debian
for py in /root/.pyenv/versions/3.13.*/bin/python3; do
    [ -x "$py" ] && run "$py" pyenv3.13
done
[ "$checked" -ge 2 ] || fail "fewer than two CPython versions checked ($checked)"
