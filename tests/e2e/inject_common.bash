# inject_common.bash - helpers for the inject_*.sh end-to-end tests
# (sourced; not a test itself: run_e2e.sh only runs *.sh).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -x "$HEAPINJECT" ] || fail "$HEAPINJECT not built (run make)"
[ -x "$TARGETS/inj_wait" ] || fail "$TARGETS/inj_wait not built (run make targets)"

# build_testlib [NAME]: compiles tests/e2e/inject_testlib.c into $TMP/NAME
# (default libinjtest.so) and sets LIB to its path.
build_testlib() {
    LIB="$TMP/${1:-libinjtest.so}"
    gcc -shared -fPIC -O1 -o "$LIB" "$ROOT/tests/e2e/inject_testlib.c" || fail "cannot build $LIB"
}

# inject ARGS...: runs `heapinject inject ARGS`; output in $TMP/inj.out and
# $TMP/inj.err, exit status in RC.
inject() {
    "$HEAPINJECT" inject "$@" >"$TMP/inj.out" 2>"$TMP/inj.err"
    RC=$?
    echo "+ heapinject inject $* -> $RC"; sed 's/^/  out: /' "$TMP/inj.out"; sed 's/^/  err: /' "$TMP/inj.err"
}

# expect_rc N: the last inject exited with N.
expect_rc() {
    [ "$RC" = "$1" ] || fail "expected exit $1, got $RC: $(cat "$TMP/inj.err")"
}

# expect_out PATTERN / expect_err PATTERN: grep -E in the last inject's output.
expect_out() { grep -Eq -- "$1" "$TMP/inj.out" || fail "stdout lacks /$1/: $(cat "$TMP/inj.out" "$TMP/inj.err")"; }
expect_err() { grep -Eq -- "$1" "$TMP/inj.err" || fail "stderr lacks /$1/: $(cat "$TMP/inj.err")"; }

# assert_loaded PID PATH: the library is mapped in the target.
assert_loaded() { grep -q -- "$2" "/proc/$1/maps" || fail "$2 is not mapped in pid $1"; }
assert_not_loaded() { ! grep -q -- "$2" "/proc/$1/maps" || fail "$2 is mapped in pid $1"; }

# assert_fine PID: alive, not traced, not stopped.
assert_fine() {
    assert_alive "$1"
    assert_not_traced "$1"
    local st; st=$(awk '/^State:/{print $2}' "/proc/$1/status")
    case "$st" in T|t) fail "target $1 is left stopped (state $st)";; esac
}

# wait_exit PID SECONDS: waits for a background child to exit; sets WRC.
wait_exit() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        alive "$1" || break
        sleep 0.05
    done
    alive "$1" && fail "pid $1 did not exit within $2 s"
    wait "$1"; WRC=$?
}

# start_target_stdin FILE NAME [ARGS...]: start_target with stdin from FILE
# (a background job's stdin would otherwise be /dev/null).
start_target_stdin() {
    local in=$1 name=$2; shift 2
    "$TARGETS/$name" "$@" <"$in" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/$name.out" ready 10 || fail "$name did not get ready: $(cat "$TMP/$name.err")"
}
