#!/bin/bash
# rel_limits.sh - a process at the end of its limits (issue 25, item 9c):
# Covers: cli/process/limits.c
# with every descriptor in use (RLIMIT_NOFILE 64 reached) and with as many
# tasks as its user's RLIMIT_NPROC allows, `heapinject -p`, `attach` and
# `census` each say what is wrong in words and exit 6 (README: busy, out of
# file descriptors / processes), nothing loaded, the target's data intact.
# Before: "dlopen(...) failed ... Too many open files", exit 1 (NOFILE).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

# refused_all WHAT PATTERN: the three commands on $TPID, each exit 6 with PATTERN.
refused_all() {
    local c rc
    for c in "-p $TPID --duration 1 -o $TMP/x.txt" "attach -p $TPID" "census -p $TPID"; do
        timeout -k 5 60 "$HEAPINJECT" $c >/dev/null 2>"$TMP/r.err"; rc=$?
        echo "$1 [$c]: exit $rc: $(tail -1 "$TMP/r.err")"
        [ "$rc" = 6 ] || fail "$1 [$c]: exit $rc, want 6: $(cat "$TMP/r.err")"
        grep -q "$2" "$TMP/r.err" || fail "$1 [$c]: no clear message: $(cat "$TMP/r.err")"
        ! grep -q libheapinject "/proc/$TPID/maps" || fail "$1 [$c]: the profiler got loaded"
        alive "$TPID" || fail "$1 [$c]: the target died"
    done
}

# --- no free descriptor ---------------------------------------------------------
TIN="$TMP/nofile.in"; TOUT="$TMP/nofile.out"; TERR="$TMP/nofile.err"
mkfifo "$TIN"; sleep 100000 >"$TIN" & PIDS+=("$!")
prlimit --nofile=64 "$TARGETS/rel_states" threads <"$TIN" >"$TOUT" 2>"$TERR" &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TOUT" '^ready' 20 || fail "rel_states did not get ready: $(cat "$TERR")"
rel_cmd exhaust '^exhausted' >/dev/null
refused_all nofile "pid $TPID has no free file descriptor (RLIMIT_NOFILE 64 reached): the profiler cannot be loaded nor open its socket"
rel_cmd release '^released' >/dev/null
rel_cmd check '^check ok' | grep -q errors=0 || fail "data damaged"
rel_quit

# --- RLIMIT_NPROC reached ---------------------------------------------------------
# A user of its own, so that its task count is the target's 6 tasks.
U=$((40000 + $$ % 20000))
TIN="$TMP/nproc.in"; TOUT="$TMP/nproc.out"; TERR="$TMP/nproc.err"
mkfifo "$TIN"; chmod 644 "$TIN"; sleep 100000 >"$TIN" & PIDS+=("$!")
prlimit --nproc=6 setpriv --reuid="$U" --regid="$U" --clear-groups "$TARGETS/rel_states" threads <"$TIN" >"$TOUT" 2>"$TERR" &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TOUT" '^ready' 20 || fail "rel_states did not get ready under --nproc=6: $(cat "$TERR")"
n=$(ls "/proc/$TPID/task" | wc -l)
[ "$n" = 6 ] || skip "rel_states runs $n tasks, not 6: the test's limit does not fit"
refused_all nproc "pid $TPID's user (uid $U) has 6 processes and threads, and its RLIMIT_NPROC is 6"
rel_cmd check '^check ok' | grep -q errors=0 || fail "data damaged"
rel_quit
ok "no free descriptor, RLIMIT_NPROC reached: -p, attach and census refused in words, exit 6, target intact"
