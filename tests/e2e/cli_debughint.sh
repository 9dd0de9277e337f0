#!/usr/bin/env bash
# cli_debughint: a module in the stacks without debug information gets one
# line in the report (once, however many frames it has) naming what would
# give its frames file:line: the owning package's debug package (dpkg -S),
# its build-id debug file path, or DEBUGINFOD_URLS; JSON has the same in
# "debuginfo_missing". Modules with debug information get no line.
# dpkg-query (a PATH shim logs what it is asked) is asked about files in
# Debian's package paths only, all in one call: a program outside them
# (here under $TMP; pyenv's under /root/.pyenv) cost a dpkg-query call of
# its own that could never name a package.
. "$(dirname "$0")/lib.sh"
export DEBUGINFOD_URLS= # no network: libdw would wait on each server

debug_file() { # FILE: the build-id path libdw looks at, "" without build id
    local b; b=$(readelf -n "$1" 2>/dev/null | awk '/Build ID/{print $3}')
    [ -n "$b" ] && echo "/usr/lib/debug/.build-id/${b:0:2}/${b:2}.debug"
}

if REAL_DPKG=$(command -v dpkg-query); then
    mkdir -p "$TMP/shim"
    cat >"$TMP/shim/dpkg-query" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >>"$TMP/dpkg-args.txt"
exec "$REAL_DPKG" "\$@"
EOF
    chmod +x "$TMP/shim/dpkg-query"
    export PATH="$TMP/shim:$PATH"
fi

# 1. libstdc++ (operator new) from a package, when its -dbgsym is absent.
start_target cli_stl_map
STDCXX=$(awk '$6 ~ /libstdc\+\+\.so/ {print $6; exit}' "/proc/$TPID/maps")
[ -n "$STDCXX" ] || fail "libstdc++ is not mapped in the C++ target"
if [ -e "$(debug_file "$STDCXX")" ] || ! command -v dpkg-query >/dev/null; then
    echo "(libstdc++'s debug information is installed, or no dpkg: part 1 not tried)"
else
    PKG=$(dpkg-query -S "$STDCXX" | head -1 | cut -d: -f1)
    "$HEAPINJECT" -p "$TPID" --duration 1 -q --rate 16K >"$TMP/cxx.txt" 2>"$TMP/err.txt" ||
        fail "heapinject failed: $(cat "$TMP/err.txt")"
    sed -n '/^Debug information missing/,/^$/p' "$TMP/cxx.txt" | tee "$TMP/hint.txt"
    n=$(grep -cF "  $(basename "$STDCXX"): " "$TMP/hint.txt")
    [ "$n" = 1 ] || fail "expected one line for $(basename "$STDCXX"), got $n"
    grep -q "install $PKG-dbgsym (debug symbols of package $PKG)" "$TMP/hint.txt" ||
        fail "the line does not name $PKG-dbgsym"
    grep -qF "$(debug_file "$STDCXX")" "$TMP/hint.txt" || fail "the line does not give the build-id path"
    grep -q 'DEBUGINFOD_URLS' "$TMP/hint.txt" || fail "the line does not mention DEBUGINFOD_URLS"
    # The program itself has its DWARF: no line for it.
    grep -q '^  cli_stl_map: ' "$TMP/hint.txt" && fail "a hint for a module that has debug information"
    # the shim saw the question (else part 2's check below proves nothing)
    grep -qF -- "-S $STDCXX" "$TMP/dpkg-args.txt" || fail "dpkg-query was not asked about $STDCXX: $(cat "$TMP/dpkg-args.txt" 2>&1)"
fi
kill -9 "$TPID"

# 2. A stripped program no package owns: build-id path and DEBUGINFOD_URLS.
cp "$TARGETS/cli_leaky" "$TMP/stripped_leaky"
strip --strip-debug "$TMP/stripped_leaky" || fail "strip failed"
"$TMP/stripped_leaky" >"$TMP/leaky.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/leaky.out" ready 10 || fail "target did not start"
"$HEAPINJECT" -p "$TPID" --duration 1 -q --rate 16K >"$TMP/leaky.txt" 2>"$TMP/err.txt" ||
    fail "heapinject failed: $(cat "$TMP/err.txt")"
sed -n '/^Debug information missing/,/^$/p' "$TMP/leaky.txt" | tee "$TMP/hint2.txt"
grep -c '^  stripped_leaky: ' "$TMP/hint2.txt" | grep -qx 1 || fail "not exactly one line for the stripped program"
grep '^  stripped_leaky: ' "$TMP/hint2.txt" | grep -qF "put its debug file at $(debug_file "$TMP/stripped_leaky"), or set DEBUGINFOD_URLS" ||
    fail "the stripped program's line does not give its build-id path and DEBUGINFOD_URLS"
grep '^  stripped_leaky: ' "$TMP/hint2.txt" | grep -q 'install' && fail "a package named for a file no package owns"
"$HEAPINJECT" -p "$TPID" --duration 1 -q --rate 16K --format json -o "$TMP/p.json" 2>"$TMP/err.txt" ||
    fail "json failed: $(cat "$TMP/err.txt")"
python3 - "$TMP/p.json" "$TMP/stripped_leaky" "$(debug_file "$TMP/stripped_leaky")" <<'PY' || fail "JSON debuginfo_missing wrong"
import json, sys
d, exe, dbg = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
m = [h for h in d["debuginfo_missing"] if h["module"] == exe]
assert len(m) == 1, d["debuginfo_missing"]
h = m[0]
print(h)
assert h["debug_file"] == dbg and h["package"] is None and h["debug_package"] is None, h
assert "DEBUGINFOD_URLS" in h["hint"], h
PY
if [ -e "$TMP/dpkg-args.txt" ] && grep -F "$TMP/" "$TMP/dpkg-args.txt"; then
    fail "dpkg-query was asked about a file outside Debian's package paths (above)"
fi
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "modules without debug information get one line naming the package, build-id file or DEBUGINFOD_URLS"
