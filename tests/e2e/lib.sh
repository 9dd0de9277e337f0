# lib.sh - shared helpers for end-to-end tests (sourced, not run).
# Environment from tests/run_e2e.sh: HEAPINJECT, TARGETS, ROOT.
set -u
: "${ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${HEAPINJECT:=$ROOT/build/heapinject}"
: "${TARGETS:=$ROOT/build/targets}"
# tests/e2e/hi_profile.py reads JSON profiles of either schema version
export PYTHONPATH="$ROOT/tests/e2e${PYTHONPATH:+:$PYTHONPATH}"
TMP=$(mktemp -d /tmp/hi-e2e.XXXXXX)
PIDS=()

cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${KEEP_TMP:-}" ] && { echo "kept $TMP"; return; }
    rm -rf "$TMP"
    [ -n "${OUTSIDE_DIR:-}" ] && rm -rf "$OUTSIDE_DIR"
}
trap cleanup EXIT

# outside_tmp NAME: copies $TARGETS/NAME into a directory that is not under
# /tmp and sets OUTSIDE_BIN to the copy. For targets that get a private /tmp
# (mount namespace tests): the checkout itself may live under /tmp, and a
# tmpfs mounted there would hide the binary.
outside_tmp() {
    [ -n "${OUTSIDE_DIR:-}" ] || OUTSIDE_DIR=$(mktemp -d /var/tmp/hi-e2e-bin.XXXXXX)
    cp "$TARGETS/$1" "$OUTSIDE_DIR/$1" || fail "cannot copy $1 to $OUTSIDE_DIR"
    OUTSIDE_BIN="$OUTSIDE_DIR/$1"
}

fail() { echo "FAIL: $*" >&2; fail_context >&2; exit 1; }
# fail_context: the last lines each program of the test wrote to its
# stderr file in $TMP (a target that died says how, our crash handler
# too): CI keeps only the test's log.
fail_context() {
    local f
    for f in "$TMP"/*.err; do
        [ -s "$f" ] || continue
        echo "--- ${f##*/}, its last lines:"
        tail -n 5 "$f"
    done
    # A core a crashed target left in $TMP (payload_lib.bash's pl_start;
    # where /proc/sys/kernel/core_pattern writes plain files): its stacks.
    for f in "$TMP"/core*; do
        [ -f "$f" ] && [ -n "${TARGET_EXE:-}" ] && command -v gdb >/dev/null || continue
        echo "--- $f: the crashed target's stacks:"
        timeout 60 gdb -q -batch -ex "thread apply all bt 12" "$TARGET_EXE" "$f" 2>&1 |
            grep -v '^\[New LWP\|^Signal .*Stop\|^warning: ' | head -n 80
    done
}
skip() { echo "skip: $*"; exit 77; }
ok()   { echo "ok: $*"; }

# start_target NAME [ARGS...]: runs $TARGETS/NAME in the background with its
# stdout in $TMP/NAME.out; sets TPID. Targets print "ready" when set up.
start_target() {
    start_target_as "$1" "$@"
}

# start_target_as OUT NAME [ARGS...]: start_target with the output in
# $TMP/OUT.out (two targets of one program side by side).
start_target_as() {
    local out=$1 name=$2; shift 2
    # Emptied first: a second target of the same name must not be taken as
    # ready on the first one's line (the child's own '>' comes later).
    : >"$TMP/$out.out"
    "$TARGETS/$name" "$@" >"$TMP/$out.out" 2>"$TMP/$out.err" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/$out.out" ready 10 || fail "$name $* did not get ready: $(cat "$TMP/$out.err")"
}

# wait_for_line FILE PATTERN SECONDS: waits until FILE has a line matching PATTERN.
wait_for_line() {
    local i
    for ((i = 0; i < $3 * 20; i++)); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# alive PID: process exists and is not a zombie (a zombie main thread with
# live threads, after pthread_exit in main, is a running process).
alive() {
    [ -d "/proc/$1" ] || return 1
    local st t; st=$(awk '/^State:/{print $2}' "/proc/$1/status" 2>/dev/null)
    [ -n "$st" ] || return 1
    [ "$st" != Z ] && return 0
    for t in /proc/"$1"/task/*/status; do
        st=$(awk '/^State:/{print $2}' "$t" 2>/dev/null)
        [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && return 0
    done
    return 1
}

assert_alive() { alive "$1" || fail "target $1 died: $(cat "$TMP"/*.err 2>/dev/null | tail -5)"; }

# threads_untraced PID: every thread of PID has TracerPid 0 and is not in a
# tracing stop (state t); status 1 otherwise.
threads_untraced() {
    local s rc
    for s in /proc/"$1"/task/*/status; do
        # A thread that ends between the listing and the read (the last
        # session's agent on its way out) is no traced thread: awk's 2
        # (cannot open) is not a failure, only its 1 is.
        rc=0
        awk '/^TracerPid:/ && $2 != 0 {exit 1} /^State:/ && $2 == "t" {exit 1}' "$s" 2>/dev/null || rc=$?
        [ "$rc" = 1 ] && return 1
    done
    return 0
}

# assert_threads_untraced PID: threads_untraced, or fail naming the states.
assert_threads_untraced() {
    threads_untraced "$1" ||
        fail "a thread of $1 is still traced or stopped: $(grep -h -E 'State|TracerPid' /proc/"$1"/task/*/status 2>/dev/null | sort | uniq -c)"
}

# not_traced PID: TracerPid is 0 (we detached).
assert_not_traced() {
    local t; t=$(awk '/^TracerPid:/{print $2}' "/proc/$1/status")
    [ "$t" = 0 ] || fail "target $1 still traced by $t"
}

# build_hostile_lib OUT [GCC_FLAGS...]: tests/e2e/hostile_lib.c as a shared
# library at OUT (any name, escapes included).
build_hostile_lib() {
    local out=$1; shift
    gcc -shared -fPIC -O1 "$@" -o "$out" "$ROOT/tests/e2e/hostile_lib.c" || fail "cannot build $out"
}

# fifo_debuglink LIB: gives LIB a .gnu_debuglink naming BASENAME.debug and
# puts FIFOs where readers look for it (beside LIB and in .debug/): a
# plain open() of either waits for ever.
fifo_debuglink() {
    local dir base
    dir=$(dirname "$1") base=$(basename "$1" .so)
    command -v objcopy >/dev/null || skip "objcopy (binutils) is needed for the debuglink case"
    mkdir -p "$dir/.debug"
    echo placeholder >"$dir/$base.debug"
    objcopy --add-gnu-debuglink="$dir/$base.debug" "$1" || fail "objcopy --add-gnu-debuglink failed"
    rm -f "$dir/$base.debug"
    mkfifo "$dir/$base.debug" "$dir/.debug/$base.debug"
}

# start_hostile_lib_target LIB: python allocating through LIB
# (tests/e2e/hostile_lib_target.py); sets TPID.
start_hostile_lib_target() {
    command -v python3 >/dev/null || skip "python3 is needed for the target"
    python3 "$ROOT/tests/e2e/hostile_lib_target.py" "$1" >"$TMP/t.out" 2>"$TMP/t.err" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/t.out" ready 20 || fail "the target did not start: $(cat "$TMP/t.err")"
}
