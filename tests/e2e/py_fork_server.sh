#!/usr/bin/env bash
# py_fork_server: the gunicorn case (py_gunicorn.sh) without a package: a
# plain Python pre-fork server (py_fork_server.py: os.fork, an accept loop
# in each of 2 workers) serving py_gunicorn_app.py's handlers while the
# client sends /leak (about 2 KiB kept per request) and /ok and checks
# every answer (issues 28 and 29).
# `heapinject -p MASTER --children` lists the master and both workers; the
# leak is under the workers only; each worker's largest malloc stack starts
# with leak_handler (py_gunicorn_app.py:LINE), a Python frame, in JSON and
# text; the Python line counts all three. With --pymalloc the leak's
# strings are stacks of kind pymalloc at their line. Afterwards: nothing
# traced, no socket, no slot hooked, threads as before.
# Then workers that exit after 100 requests, replaced by the master: one
# forked during the session joins it with leak_handler among its Python
# frames; one that exits during the session is kept with its exit, or said
# lost on stderr. At SIGTERM every worker checks what it kept.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
. "$ROOT/tests/e2e/py_workers_lib.bash"

cp "$ROOT/tests/e2e/py_gunicorn_app.py" "$ROOT/tests/e2e/py_fork_server.py" "$TMP/"
BYTES_LINE=$(grep -n '# leak: bytes$' "$TMP/py_gunicorn_app.py" | cut -d: -f1)
SMALL_LINE=$(grep -n '# leak: small$' "$TMP/py_gunicorn_app.py" | cut -d: -f1)
export PY_APP_LOG="$TMP/checked.log"

# start_server NAME MAX: the server with 2 workers, each answering at most
# MAX requests (0: no limit); sets G (the master), WORKERS, PORT.
start_server() {
    (cd "$TMP" && exec python3 py_fork_server.py 2 "$2" >"$TMP/$1.sout" 2>"$TMP/$1.serr") &
    G=$!
    PIDS+=("$G")
    wait_for_line "$TMP/$1.sout" '^ready$' 60 || fail "the server did not start: $(cat "$TMP/$1.serr")"
    PORT=$(awk '/^port /{print $2}' "$TMP/$1.sout")
    mapfile -t WORKERS < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/$1.sout")
    [ -n "$PORT" ] && [ "${#WORKERS[@]}" = 2 ] || fail "the server did not say its port and workers: $(cat "$TMP/$1.sout")"
}

# stop NAME: the client stops (every answer right), then the server; its
# master saw every worker exit 0 and each that answered checked its data.
stop() {
    stop_client "$1"
    kill -TERM "$G"
    wait "$G" || fail "the server's exit: $(tail -5 "$TMP/$1.serr")"
    grep -q '^master ok ' "$TMP/$1.sout" || fail "the server's workers: $(tail -5 "$TMP/$1.sout")"
    workers_checked "$1"
}

start_server a 0
start_client a
declare -A T_BEFORE
for p in "$G" "${WORKERS[@]}"; do T_BEFORE[$p]=$(threads "$p"); done
echo "master $G, workers ${WORKERS[*]}, port $PORT"

# 1. The leak named, under the workers, by its Python line.
timeout -k 5 120 "$HEAPINJECT" -p "$G" --children --duration 3 --rate 8K --format json -o "$TMP/a1.json" \
    2>"$TMP/a1.err" || fail "session 1: $(cat "$TMP/a1.err")"
cat "$TMP/a1.err"
python3 "$ROOT/tests/e2e/py_workers_check.py" leak "$TMP/a1.json" malloc "$BYTES_LINE" "$G" "${WORKERS[@]}" ||
    fail "session 1's report (above)"
"$HEAPINJECT" report "$TMP/a1.json" --top 100 -o "$TMP/a1.txt" 2>"$TMP/a1.rerr" || fail "report 1: $(cat "$TMP/a1.rerr")"
for w in "${WORKERS[@]}"; do
    awk -v w="$w" '/^#[0-9]+ /{s = ($3 == w)} s' "$TMP/a1.txt" | grep -Eq "^ +leak_handler +py_gunicorn_app\.py:$BYTES_LINE\$" ||
        fail "the text report has no leak_handler py_gunicorn_app.py:$BYTES_LINE under $w"
done
grep -Eq "^  Python 3\.[0-9]+: [0-9]+ of [0-9]+ samples carry Python frames" "$TMP/a1.txt" ||
    fail "the text report has no Python line: $(sed -n '1,14p' "$TMP/a1.txt")"
left_behind "$G" "${WORKERS[@]}"

# 2. --pymalloc: the leak's small objects, kind pymalloc, at their line.
timeout -k 5 120 "$HEAPINJECT" -p "$G" --children --pymalloc --duration 3 --rate 8K --format json -o "$TMP/a2.json" \
    2>"$TMP/a2.err" || fail "session 2: $(cat "$TMP/a2.err")"
python3 "$ROOT/tests/e2e/py_workers_check.py" leak "$TMP/a2.json" pymalloc "$SMALL_LINE" "$G" "${WORKERS[@]}" ||
    fail "session 2's report (above)"
"$HEAPINJECT" report "$TMP/a2.json" --top 100 -o "$TMP/a2.txt" 2>"$TMP/a2.rerr" || fail "report 2: $(cat "$TMP/a2.rerr")"
grep -Eq "^ +leak_handler +py_gunicorn_app\.py:$SMALL_LINE\$" "$TMP/a2.txt" ||
    fail "the text report has no leak_handler py_gunicorn_app.py:$SMALL_LINE"
left_behind "$G" "${WORKERS[@]}"
stop a
ok "master and workers in one session; the leak under the workers at py_gunicorn_app.py:$BYTES_LINE (malloc) and :$SMALL_LINE (pymalloc)"

# 3. Workers replaced during the session (100 requests each, the client at
# most about 100 a second); once one forked during the session has joined
# it and answered 40 /leak, the client stops and the session is ended.
: >"$PY_APP_LOG"
start_server b 100
unset T_BEFORE; declare -A T_BEFORE; T_BEFORE[$G]=$(threads "$G")
"$HEAPINJECT" -p "$G" --children --duration 120 --rate 4K --format json -o "$TMP/b.json" 2>"$TMP/b.err" &
H=$!
wait_for_line "$TMP/b.err" "profiling for" 60 || fail "session 3 did not start: $(cat "$TMP/b.err")"
start_client b 20
wait_for_line "$TMP/b.err" "appeared during the session" 60 || fail "no worker was followed: $(cat "$TMP/b.err")"
NEW=$(sed -n 's/.*pid \([0-9]*\) ([^)]*) appeared during the session.*/\1/p' "$TMP/b.err" | head -1)
wait_for_line "$TMP/b.cout" "^pid $NEW leak 40\$" 60 || fail "worker $NEW did not answer 40 /leak: $(tail -3 "$TMP/b.cout")"
stop_client b
kill -INT "$H"
wait "$H" || fail "session 3: $(cat "$TMP/b.err")"
cat "$TMP/b.err"
python3 "$ROOT/tests/e2e/py_workers_check.py" recycle "$TMP/b.json" "$G" "$NEW" "$TMP/b.err" ||
    fail "session 3's report (above)"
left_behind "$G"
followed_left_behind "$TMP/b.err"
stop b
ok "workers replaced during the session: $NEW followed, with leak_handler's Python frames; all checked their data"
