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
command -v objcopy >/dev/null || skip "objcopy (binutils) is needed"
D="$TMP/libs"
mkdir -p "$D/.debug"
cat >"$TMP/h.c" <<'C'
#include <stdlib.h>
#include <string.h>
/* Most of the target's time is spent here, so that the injector finds the
 * thread stopped inside this library and unwinds through its file. */
void hostile_spin(void)
{
    for (volatile unsigned long i = 0; i < 20000000ul; i++)
        ;
}
__attribute__((noinline)) void *hostile_keep(size_t n)
{
    void *p = malloc(n);
    if (p)
        memset(p, 1, n);
    return p;
}
C
gcc -shared -fPIC -O1 -o "$D/libdl.so" "$TMP/h.c" || fail "cannot build the library"
echo placeholder >"$D/libdl.debug"
objcopy --add-gnu-debuglink="$D/libdl.debug" "$D/libdl.so" || fail "objcopy --add-gnu-debuglink failed"
rm -f "$D/libdl.debug"
mkfifo "$D/libdl.debug" "$D/.debug/libdl.debug"
cat >"$TMP/target.py" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.hostile_keep.restype = ctypes.c_void_p
kept = []
print("ready", flush=True)
while True:
    for _ in range(16):
        kept.append(lib.hostile_keep(65536))
    lib.hostile_spin()
    if len(kept) > 20000:
        kept = kept[-10000:]
PY
python3 "$TMP/target.py" "$D/libdl.so" >"$TMP/t.out" 2>"$TMP/t.err" &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/t.out" ready 20 || fail "the target did not start: $(cat "$TMP/t.err")"

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
