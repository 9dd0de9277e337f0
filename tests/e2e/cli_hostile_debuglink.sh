#!/usr/bin/env bash
# cli_hostile_debuglink: a library the target loads names a separate debug
# file (.gnu_debuglink), and the target's user put FIFOs where it is looked
# for (beside the library and in its .debug/). libunwind, which the
# injector uses to find a safe point, and libdw, which the cli symbolizes
# with, open those with a plain open() that waits for a writer: the
# injector, running as root, hung for ever with the target held in a
# ptrace stop. Now the session ends, the target runs on untraced, and the
# library's function is named from its own symbol table; --via gdb (gdb
# opens them the same way) is refused with exit 5 before gdb runs.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the target"
D="$TMP/libs"
mkdir -p "$D"
build_hostile_lib "$D/libdl.so"
fifo_debuglink "$D/libdl.so"
start_hostile_lib_target "$D/libdl.so"

for i in 1 2; do
    timeout -s KILL 60 "$HEAPINJECT" -p "$TPID" --rate 64K --duration 1.5 >"$TMP/r.txt" 2>"$TMP/r.err"
    rc=$?
    [ "$rc" = 137 ] && fail "session $i: the cli hung (killed after 60 s); target state: $(grep State "/proc/$TPID/status")"
    [ "$rc" = 0 ] || fail "session $i: exit $rc: $(cat "$TMP/r.err")"
    assert_alive "$TPID"
    assert_not_traced "$TPID"
    grep -Eq '^ +hostile_keep +libdl\.so' "$TMP/r.txt" || fail "session $i: hostile_keep is not named: $(head -40 "$TMP/r.txt")"
done
# gdb opens the same files and has no switch to skip them: --via gdb is
# refused before gdb starts (exit 5), nothing loaded.
if command -v gdb >/dev/null; then
    timeout -s KILL 60 "$HEAPINJECT" -p "$TPID" --via gdb --duration 1 >"$TMP/g.txt" 2>"$TMP/g.err"
    rc=$?
    echo "--via gdb: exit $rc: $(cat "$TMP/g.err")"
    [ "$rc" = 137 ] && fail "--via gdb: hung (killed after 60 s)"
    [ "$rc" = 5 ] || fail "--via gdb: exit $rc, want 5: $(cat "$TMP/g.err")"
    grep -q "libdl.so, and it or the debug file it names .* is not a regular file" "$TMP/g.err" &&
        grep -q -- "--via ptrace" "$TMP/g.err" || fail "--via gdb: the message does not say why and what to do"
    assert_alive "$TPID"
    assert_not_traced "$TPID"
    ok "--via gdb refused before gdb ran (exit 5)"
fi
st=$(awk '/^State:/{print $2}' "/proc/$TPID/status")
[ "$st" = R ] || [ "$st" = S ] || fail "the target is left in state $st"
ok "debug links to FIFOs: two sessions ended, the target runs on untraced, hostile_keep named"
