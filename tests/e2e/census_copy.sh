#!/bin/bash
# census_copy.sh - the program must not see the census's copy (issue 25):
# - a supervisor that reaps every child it has (waitpid(-1, __WALL |
#   WNOHANG) in one thread, waitid(P_ALL, WEXITED | __WALL) in another)
#   reaped the copy in 2 and 3 censuses of 5 (and the census was lost):
#   now none is, in a plain supervisor and in a child subreaper; every
#   census succeeds;
# - a program with a userfaultfd with UFFD_FEATURE_EVENT_FORK got a fork
#   event and a new descriptor, all its threads held 2 s: the census is now
#   refused, exit 5, saying why, with no event and no descriptor more; the
#   same program without the feature has its census taken;
# - a server closing and re-binding its listening port every 2 ms got
#   EADDRINUSE while a copy held its descriptors (18 times in 3 censuses
#   with 18k descriptors): now never;
# - the cli killed while the copy walks: the copy is gone at once (it
#   walked on for 8.6 s before);
# - the program killed while the copy walks: the copy is gone at once too
#   (it was before, by PR_SET_PDEATHSIG; now by its own watchdog).
# Each target checks its own data after the censuses.
# Schedule: alone (the copy must go within 1 s of its cli or program)
. "$(dirname "$0")/lib.sh"
N=${CENSUS_COPY_ROUNDS:-5}
PARTS=" ${CENSUS_COPY_PARTS:-1 2 3 4 5} " # a subset, to see each part fail on its own
part() { [[ "$PARTS" == *" $1 "* ]]; }

# run_with_fifo NAME ARGS...: starts $TARGETS/NAME reading commands from a
# FIFO on fd 7; TPID, output in $TMP/NAME.out.
run_with_fifo() {
    local name=$1; shift
    exec 7>&-
    rm -f "$TMP/in.fifo"; mkfifo "$TMP/in.fifo"
    : >"$TMP/$name.out"
    "$TARGETS/$name" "$@" <"$TMP/in.fifo" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    TPID=$!
    PIDS+=("$TPID")
    exec 7>"$TMP/in.fifo"
    OUT=$TMP/$name.out
    if ! wait_for_line "$OUT" ready 10; then
        alive "$TPID" || { wait "$TPID"; [ $? = 77 ] && skip "$name: $(cat "$OUT")"; }
        fail "$name did not get ready: $(cat "$TMP/$name.err")"
    fi
}

status() {
    local before; before=$(grep -c '^status' "$OUT")
    echo status >&7
    for _ in $(seq 200); do
        [ "$(grep -c '^status' "$OUT")" -gt "$before" ] && break
        sleep 0.05
    done
    grep '^status' "$OUT" | tail -1
}

# copy_pid: the census's copy among the children of $TPARENT (where it is)
# and of $TPID (where it was before).
copy_pid() { ps -o pid=,comm= --ppid "$TPARENT,$TPID" | awk '$2 == "heapinject-cen" {print $1; exit}'; }

census_ok() { # WHAT I: a census that must succeed
    "$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/err" ||
        fail "$1: census $2 failed: $(cat "$TMP/err")"
}

# 1. Supervisors: the copy is never theirs to reap.
if part 1; then
    for mode in plain subreaper; do
        run_with_fifo census_reaper "$mode"
        for ((i = 1; i <= N; i++)); do census_ok "supervisor ($mode)" "$i"; done
        line=$(status)
        echo "supervisor ($mode), $N censuses: $line"
        case "$line" in *"strays=0 own_alive=1 data=ok"*) ;; *) fail "supervisor ($mode): $line $(grep ^stray "$OUT")" ;; esac
        assert_alive "$TPID"
        kill -9 "$TPID"; wait "$TPID" 2>/dev/null
    done
    ok "supervisors reaping with waitpid(-1, __WALL) and waitid(P_ALL, __WALL): no copy reaped in $((2 * N)) censuses"
fi

# 2. A userfaultfd with UFFD_FEATURE_EVENT_FORK: refused, nothing seen.
if part 2; then
    run_with_fifo census_uffd
    before=$(status)
    "$HEAPINJECT" census -q -p "$TPID" >"$TMP/c.txt" 2>"$TMP/err"
    rc=$?
    [ "$rc" = 5 ] || fail "uffd EVENT_FORK: census exit $rc, expected 5 (refused): $(cat "$TMP/err")"
    grep -q "userfaultfd.*UFFD_FEATURE_EVENT_FORK.*nothing was attached" "$TMP/err" ||
        fail "uffd: the refusal does not say why: $(cat "$TMP/err")"
    ! grep -q libheapinject "/proc/$TPID/maps" || fail "uffd: libheapinject.so was loaded into the process"
    after=$(status)
    echo "uffd EVENT_FORK: refused ($(head -c 160 "$TMP/err")); before: $before; after: $after"
    case "$after" in *"forks=0 "*"data=ok"*) ;; *) fail "uffd: the program saw a fork event: $after" ;; esac
    [ "${before#*fds=}" = "${after#*fds=}" ] || fail "uffd: the program's descriptors changed: $before -> $after"
    assert_alive "$TPID"
    kill -9 "$TPID"; wait "$TPID" 2>/dev/null
    run_with_fifo census_uffd nofork
    census_ok "uffd without EVENT_FORK" 1
    line=$(status)
    case "$line" in *"forks=0 "*"data=ok"*) ;; *) fail "uffd without EVENT_FORK: $line" ;; esac
    kill -9 "$TPID"; wait "$TPID" 2>/dev/null
    ok "a userfaultfd with EVENT_FORK refuses the census (exit 5, no event, no descriptor); without it the census is taken"
fi

# 3. The copy holds none of the program's descriptors.
if part 3; then
    run_with_fifo census_rebind 18000
    for ((i = 1; i <= 3; i++)); do census_ok "rebinding server" "$i"; done
    line=$(status)
    echo "rebinding server with 18000 descriptors, 3 censuses: $line"
    case "$line" in *"eaddrinuse=0 "*"data=ok"*) ;; *) fail "rebinding server: the port stayed bound: $line" ;; esac
    case "$line" in *"rebinds=0 "*) fail "the server never re-bound: $line" ;; esac
    assert_alive "$TPID"
    kill -9 "$TPID"; wait "$TPID" 2>/dev/null
    ok "a server re-binding its port every 2 ms: no EADDRINUSE in 3 censuses"
fi

# 4. The cli killed while the copy walks: the copy goes at once (it walked
# on to its end before, seconds with a large heap: the supervisor holds
# 8 million blocks here), and the supervisor still reaps no copy.
if part 4; then
    run_with_fifo census_reaper plain 8000000
    TPARENT=$(ps -o ppid= -p "$TPID" | tr -d ' ')
    "$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/k.json" 2>"$TMP/k.err" &
    CLI=$!
    cp=
    for _ in $(seq 6000); do
        cp=$(copy_pid); [ -n "$cp" ] && break
        kill -0 "$CLI" 2>/dev/null || break
        sleep 0.005
    done
    [ -n "$cp" ] || fail "the copy was never seen walking: $(cat "$TMP/k.err")"
    kill -9 "$CLI"; wait "$CLI" 2>/dev/null
    t0=$(date +%s%N)
    while [ -d "/proc/$cp" ] && [ "$(awk '{print $3}' "/proc/$cp/stat" 2>/dev/null)" != Z ]; do
        [ $(( ($(date +%s%N) - t0) / 1000000 )) -gt 60000 ] && fail "the copy $cp walks on after its cli was killed"
        sleep 0.01
    done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "copy $cp gone ${ms} ms after its cli was killed"
    [ "$ms" -lt 1000 ] || fail "the copy took $ms ms to go after its cli was killed"
    census_ok "supervisor with a large heap" "after the kill"
    line=$(status)
    echo "after: $line"
    case "$line" in *"strays=0 own_alive=1 data=ok"*) ;; *) fail "supervisor after the kill: $line" ;; esac
    assert_alive "$TPID"
    ok "the cli killed mid-walk: the copy was gone in $ms ms; the next census works; no copy reaped"
fi

# 5. The program killed while the copy walks: the copy goes at once.
if part 5; then
    run_with_fifo census_reaper plain 8000000
    TPARENT=$(ps -o ppid= -p "$TPID" | tr -d ' ')
    "$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/k.json" 2>"$TMP/k.err" &
    CLI=$!
    cp=
    for _ in $(seq 6000); do
        cp=$(copy_pid); [ -n "$cp" ] && break
        kill -0 "$CLI" 2>/dev/null || break
        sleep 0.005
    done
    [ -n "$cp" ] || fail "the copy was never seen walking: $(cat "$TMP/k.err")"
    kill -9 "$TPID"; wait "$TPID" 2>/dev/null
    t0=$(date +%s%N)
    while [ -d "/proc/$cp" ] && [ "$(awk '{print $3}' "/proc/$cp/stat" 2>/dev/null)" != Z ]; do
        [ $(( ($(date +%s%N) - t0) / 1000000 )) -gt 60000 ] && fail "the copy $cp walks on after the program was killed"
        sleep 0.01
    done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "copy $cp gone ${ms} ms after the program was killed"
    [ "$ms" -lt 1000 ] || fail "the copy took $ms ms to go after the program was killed"
    wait "$CLI"; rc=$?
    [ "$rc" != 0 ] || fail "the census of a killed program succeeded"
    ok "the program killed mid-walk: the copy was gone in $ms ms; the cli said: $(head -c 200 "$TMP/k.err")"
fi
