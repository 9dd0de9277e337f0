# py_workers_lib.bash - shared by py_gunicorn.sh and py_fork_server.sh
# (sourced after lib.sh and tests/stress/rel_lib.bash): the client of a
# Python pre-fork server, and what a session must not leave behind.
# The caller sets PORT (the server's) and PY_APP_LOG.
SOCKDIR=/tmp/heapinject-$(id -u)

# start_client NAME [PACE_MS]: py_http_client.py (2 threads) against PORT,
# answered once; sets CLIENT.
start_client() {
    python3 "$ROOT/tests/e2e/py_http_client.py" "$PORT" "$TMP/$1.stop" "$TMP/$1.served" 200 2 "${2:-0}" \
        >"$TMP/$1.cout" 2>"$TMP/$1.cerr" &
    CLIENT=$!
    PIDS+=("$CLIENT")
    wait_for_line "$TMP/$1.cout" '^serving' 60 || fail "no answer from the server: $(cat "$TMP/$1.cerr")"
}

# stop_client NAME: the client stops and had every answer right.
stop_client() {
    [ -n "$CLIENT" ] || return 0
    touch "$TMP/$1.stop"
    wait "$CLIENT" || fail "the client found wrong answers: $(cat "$TMP/$1.cout" "$TMP/$1.cerr")"
    CLIENT=
    grep '^done' "$TMP/$1.cout"
}

# workers_checked NAME: each worker that answered the client (NAME.served)
# checked what it kept as it exited, pymalloc as Python's allocator.
workers_checked() {
    local w
    for w in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))))' "$TMP/$1.served"); do
        grep -Eq "^checked $w [0-9]+ ok allocator pymalloc$" "$PY_APP_LOG" ||
            fail "worker $w did not check its data: $(grep "^checked $w " "$PY_APP_LOG")"
    done
}

# threads PID: how many threads PID has.
threads() { ls "/proc/$1/task" | wc -l; }

# left_behind PID...: not traced, no socket, every slot restored, as many
# threads as T_BEFORE[PID] says.
left_behind() {
    local p
    for p in "$@"; do
        rel_untraced "$p"
        [ ! -e "$SOCKDIR/$p.sock" ] || fail "pid $p's socket is left behind"
        rel_hooks_gone "$p" >/dev/null
        [ "$(threads "$p")" = "${T_BEFORE[$p]}" ] || fail "pid $p has $(threads "$p") threads, ${T_BEFORE[$p]} before"
    done
}

# followed_left_behind ERRFILE: the workers a session followed (named in
# its stderr) that are still alive are not traced, have no socket and no
# hooked slot.
followed_left_behind() {
    local p
    for p in $(sed -n 's/.*pid \([0-9]*\) ([^)]*) appeared during the session.*/\1/p' "$1"); do
        alive "$p" || continue # recycled since
        rel_untraced "$p"
        [ ! -e "$SOCKDIR/$p.sock" ] || fail "pid $p's socket is left behind"
        rel_hooks_gone "$p" >/dev/null
    done
}
