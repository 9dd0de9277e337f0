#!/usr/bin/env bash
# programs we did not write: coreutils `sleep 1000` and a python3 script
# Covers: injector/debuglink.c
# sleeping and then reading stdin. The call runs inside them and they carry
# on as before.
source "$(dirname "$0")/inject_common.bash"
build_testlib

# --- sleep 1000 ---------------------------------------------------------------
SLEEP=$(command -v sleep)
"$SLEEP" 1000 &
S=$!; PIDS+=("$S")
sleep 0.3
inject -p "$S" "$LIB" hi_test_getpid
expect_rc 0
expect_out "^called hi_test_getpid\(NULL\) = $S\$"
inject -p "$S" "$LIB" hi_test_negative
expect_rc 0
expect_out '^called hi_test_negative\(NULL\) = -42$'
assert_loaded "$S" "$LIB"
assert_fine "$S"
sleep 0.5
st=$(awk '/^State:/{print $2}' "/proc/$S/status")
[ "$st" = S ] || fail "sleep is in state $st, expected S (sleeping)"
ok "sleep 1000"

# --- python3 --------------------------------------------------------------------
PY=$(command -v python3) || skip "python3 not installed"
# Resolve wrappers (pyenv shims) to the interpreter so that $! is python.
PY=$("$PY" -c 'import sys; print(sys.executable)')
mkfifo "$TMP/pyin"
exec 3<>"$TMP/pyin"
"$PY" -c '
import sys, time
print("ready", flush=True)
t = time.monotonic()
time.sleep(2.5)
print("slept %.3f" % (time.monotonic() - t), flush=True)
print("line: " + sys.stdin.readline().strip(), flush=True)
' <"$TMP/pyin" >"$TMP/py.out" 2>"$TMP/py.err" &
P=$!; PIDS+=("$P")
wait_for_line "$TMP/py.out" ready 20 || fail "python did not start: $(cat "$TMP/py.err")"
sleep 0.3
inject -p "$P" "$LIB" hi_test_strlen "from heapinject"
expect_rc 0
expect_out '^called hi_test_strlen\("from heapinject"\) = 15$'
assert_loaded "$P" "$LIB"
assert_fine "$P"
wait_for_line "$TMP/py.out" '^slept' 15 || fail "python did not finish sleeping"
# Now python blocks in read(): inject again, then feed it.
sleep 0.3
inject -p "$P" "$LIB" hi_test_getpid
expect_rc 0
expect_out "^called hi_test_getpid\(NULL\) = $P\$"
echo "hello python" >&3
wait_exit "$P" 15
cat "$TMP/py.out" "$TMP/py.err"
[ "$WRC" = 0 ] || fail "python exited with $WRC"
awk '/^slept/{exit !($2 >= 2.5)}' "$TMP/py.out" || fail "python's sleep was cut short"
grep -qx 'line: hello python' "$TMP/py.out" || fail "python lost its input"
ok "python3"
