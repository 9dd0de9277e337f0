#!/usr/bin/env bash
# install: `make install PREFIX=...` puts the cli, the payload and the man
# page where they belong, and the installed cli finds its payload on its own.
. "$(dirname "$0")/lib.sh"

make -C "$ROOT" --no-print-directory -s install PREFIX="$TMP/prefix" >"$TMP/install.log" 2>&1 ||
    fail "make install failed: $(tail -5 "$TMP/install.log")"
for f in bin/heapinject lib/heapinject/libheapinject.so share/man/man1/heapinject.1; do
    [ -f "$TMP/prefix/$f" ] || fail "make install did not install $f"
done
if command -v man >/dev/null; then
    man -l "$TMP/prefix/share/man/man1/heapinject.1" 2>/dev/null | grep -q "heapinject" || fail "installed man page does not render"
fi

start_target demo_leaky
# HEAPINJECT_PAYLOAD unset: the installed cli must find ../lib/heapinject/libheapinject.so itself.
env -u HEAPINJECT_PAYLOAD "$TMP/prefix/bin/heapinject" -p "$TPID" --duration 1 -q >"$TMP/report.txt" 2>"$TMP/err.txt" ||
    fail "installed heapinject failed: $(cat "$TMP/err.txt")"
grep -q leak_session_buffer "$TMP/report.txt" || fail "installed heapinject's report lacks leak_session_buffer"
grep -q "$TMP/prefix/lib/heapinject/libheapinject.so" "/proc/$TPID/maps" ||
    fail "the target did not load the installed payload"
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "installed cli found its payload and profiled the demo"
