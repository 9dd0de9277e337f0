#!/bin/bash
# py_offsets.sh - the payload's CPython layouts (payload/python/offsets.c,
# issue 29 item 1) against the interpreters installed here: for each of
# Debian's python3.11 and pyenv's 3.8 to 3.12, a probe built with that
# version's own headers prints the offsets the payload's table claims; for
# 3.13 the payload parses the _PyRuntime.debug_offsets of the real
# libpython3.13 and must agree with the headers too. Versions outside the
# table (3.7, 3.14) are refused with a reason. Needs at least two versions.
. "$(dirname "$0")/lib.sh"

OBJ="$ROOT/build/pic/payload/python/offsets.o"
[ -f "$OBJ" ] || fail "$OBJ not built (make all)"
cc -std=gnu11 -I"$ROOT" -o "$TMP/dump" "$ROOT/tests/e2e/py_offsets_dump.c" "$OBJ" -ldl ||
    fail "cannot build py_offsets_dump"

# check INCLUDE_DIR WHAT: the payload's offsets for that version (WHAT: a
# minor number, or a libpython for 3.13) equal its headers'.
checked=0
check() {
    local inc=$1 what=$2
    [ -f "$inc/Python.h" ] || return 0
    cc -w -I"$inc" -I"$inc/internal" -o "$TMP/probe" "$ROOT/tests/e2e/py_offsets_probe.c" ||
        fail "cannot build the probe against $inc"
    local want got
    want=$("$TMP/probe") || fail "probe of $inc failed"
    got=$("$TMP/dump" "$what") || fail "the payload refused $what: $got"
    [ "$want" = "$got" ] || fail "offsets for $what differ from $inc's headers:
headers: $want
payload: $got"
    ok "$inc: $got"
    checked=$((checked + 1))
}

check /usr/include/python3.11 11
for v in /root/.pyenv/versions/3.{8,9,10,11,12}.*; do
    [ -d "$v" ] || continue
    minor=$(basename "$v" | cut -d. -f2)
    check "$v/include/python3.$minor" "$minor"
done
for v in /root/.pyenv/versions/3.13.*; do
    [ -d "$v" ] || continue
    lib=$(ls "$v"/lib/libpython3.13.so.1.0 2>/dev/null) || continue
    check "$v/include/python3.13" "$lib"
done
[ "$checked" -ge 2 ] || fail "fewer than two CPython versions with headers installed ($checked)"

for minor in 7 14; do
    out=$("$TMP/dump" "$minor") && fail "3.$minor accepted: $out"
    grep -q "not supported" <<<"$out" || fail "3.$minor refused without its reason: $out"
done
# 3.13 is read from the runtime, never from the table.
out=$("$TMP/dump" 13) && fail "3.13 taken from the table: $out"
grep -q "debug_offsets" <<<"$out" || fail "3.13's refusal says no why: $out"
ok "3.7 and 3.14 refused with a reason, 3.13 read from its runtime ($checked versions checked)"
