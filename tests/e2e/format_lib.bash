# format_lib.bash - helpers for the format_*.sh end-to-end tests: a leaking
# target, a snapshot in a given format, and the real readers of each format
# (sourced after lib.sh; not a test itself: run_e2e.sh only runs *.sh).
#
# The target is build/targets/cli_leaky with --steady: it leaks from
# leak_steady() at a steady rate while it churns (malloc/free) elsewhere, so
# leak_steady must come out on top of every reader's in-use view.

[ -x "$HEAPINJECT" ] || fail "$HEAPINJECT not built (run make)"
[ -x "$TARGETS/cli_leaky" ] || fail "$TARGETS/cli_leaky not built (run make targets)"
LEAKY="$TARGETS/cli_leaky"
LEAK_FN=leak_steady

# need_reader COMMAND PACKAGE: makes COMMAND available, installing PACKAGE
# with scripts/deps.sh when we are root; otherwise skips the test (exit 77).
need_reader() {
    command -v "$1" >/dev/null 2>&1 && return 0
    [ "$(id -u)" -eq 0 ] || skip "$1 is not installed (package $2) and installing needs root: apt-get install $2"
    echo "installing $2 for $1 ..."
    "$ROOT/scripts/deps.sh" "$2" || skip "could not install $2 (see /tmp/heapinject-apt.log)"
    command -v "$1" >/dev/null 2>&1 || skip "$2 is installed but $1 is still not found"
}

# start_leaky: starts the leaking target (sets TPID).
start_leaky() {
    start_target cli_leaky --steady 4000000
}

# snapshot FILE ARGS...: a one-shot session on $TPID writing FILE with the
# extra arguments (--format ...); fails the test when heapinject fails or the
# target does not survive.
snapshot() {
    local file=$1; shift
    "$HEAPINJECT" -p "$TPID" --duration 2 -q "$@" -o "$file" 2>"$TMP/hi.err"
    local rc=$?
    [ $rc -eq 0 ] || fail "heapinject $* exited $rc: $(cat "$TMP/hi.err")"
    [ -s "$file" ] || fail "heapinject $* wrote nothing to $file"
    assert_alive "$TPID"
    assert_not_traced "$TPID"
}

# first_function TEXT_FILE: the function of the first data row of a
# pprof-style "flat flat% sum% cum cum% name" table (go tool pprof -top,
# google-pprof --text, jeprof --text).
first_function() {
    awk '/^ *flat +flat%/ {table = 1; next}
         table && NF >= 6 {print $6; exit}
         /^Total:/ {table = 1; next}' "$1"
}

# largest_folded FILE: the line of a collapsed-stacks file with the largest value.
largest_folded() {
    awk '{v = $NF + 0; if (NR == 1 || v > max) {max = v; line = $0}} END {print line}' "$1"
}

# Go writes its caches under $HOME; keep them in the test's directory.
go_env() {
    export HOME="$TMP" PPROF_TMPDIR="$TMP" GOCACHE="$TMP/gocache" GOFLAGS=-mod=mod
}

# start_rise NAME MODE [SECONDS]: starts cli_tick_rise MODE with its output
# in $TMP/NAME.out; sets TPID.
start_rise() {
    local name=$1; shift
    start_target_as "$name" cli_tick_rise "$@"
}

# wait_payload PID...: waits until the payload is mapped in every PID.
wait_payload() {
    local p i
    for p in "$@"; do
        for ((i = 0; i < 600; i++)); do
            grep -q libheapinject "/proc/$p/maps" 2>/dev/null && break
            sleep 0.05
        done
        grep -q libheapinject "/proc/$p/maps" || fail "the payload never showed in pid $p's maps: $(cat "$TMP/hi.err")"
    done
}
