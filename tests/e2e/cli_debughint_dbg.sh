#!/usr/bin/env bash
# cli_debughint_dbg: python3.11's interpreter belongs to python3.11-minimal,
# whose debug symbols Debian ships in the main archive as python3.11-dbg.
# The hint used to name python3.11-minimal-dbgsym behind the debug
# archive (which apt here does not list); it now names python3.11-dbg,
# which apt knows, without sending the user to the debug archive.
. "$(dirname "$0")/lib.sh"
export DEBUGINFOD_URLS= # no network: libdw would wait on each server
PY=/usr/bin/python3.11 # the distribution's (a pyenv shim on PATH is not)
[ -x "$PY" ] || skip "no /usr/bin/python3.11"
command -v apt-cache >/dev/null && command -v dpkg-query >/dev/null || skip "no apt-cache or dpkg-query"
PKG=$(dpkg-query -S "$(readlink -f "$PY")" 2>/dev/null | head -1 | cut -d: -f1)
[ "$PKG" = python3.11-minimal ] || skip "python3.11 is not from python3.11-minimal ($PKG)"
apt-cache show --no-all-versions python3.11-dbg >/dev/null 2>&1 || skip "apt does not know python3.11-dbg"
b=$(readelf -n "$(readlink -f "$PY")" | awk '/Build ID/{print $3}')
[ -e "/usr/lib/debug/.build-id/${b:0:2}/${b:2}.debug" ] && skip "python3.11's debug information is installed"
cat >"$TMP/alloc.py" <<'P'
import signal, sys
keep = []
print("ready", flush=True)
check = []
signal.signal(signal.SIGUSR1, lambda *a: check.append(1))
i = 0
while True:
    keep.append(bytearray(b"x" * 4000))
    if len(keep) > 2000:
        keep.pop(0)
    i += 1
    if check:
        check.clear()
        print("data", "ok" if all(len(k) == 4000 and k[0] == 120 for k in keep) else "BAD", flush=True)
P
"$PY" "$TMP/alloc.py" >"$TMP/py.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/py.out" ready 20 || fail "python did not start"
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --duration 1 -q --rate 64K >"$TMP/r.txt" 2>"$TMP/err.txt" ||
    fail "heapinject failed: $(cat "$TMP/err.txt")"
sed -n '/^Debug information missing/,/^$/p' "$TMP/r.txt" | tee "$TMP/hint.txt"
line=$(grep "^  $(basename "$(readlink -f "$PY")"): " "$TMP/hint.txt") || fail "no hint line for the interpreter"
grep -q "install python3.11-dbg (debug symbols of package python3.11-minimal)" <<<"$line" ||
    fail "the hint does not name python3.11-dbg: $line"
if grep -q 'dbgsym\|debian-debug' <<<"$line"; then fail "the hint still sends the user to the debug archive: $line"; fi
kill -USR1 "$TPID"
wait_for_line "$TMP/py.out" '^data ' 20 || fail "python did not check its data"
grep -q '^data ok' "$TMP/py.out" || fail "python's data changed"
assert_alive "$TPID"
ok "python3.11: the hint names the main archive's python3.11-dbg"
