#!/usr/bin/env bash
# rel_seccomp_strict: a process whose thread runs in seccomp strict mode
# (only read, write, exit and rt_sigreturn; any other call kills it). The
# kernel shows no filter for it (PTRACE_SECCOMP_GET_FILTER fails with
# EINVAL, as for a thread without seccomp), so the injector reads the
# thread's Seccomp: line: `heapinject -p` and `--via gdb` are refused
# (exit 5) with a message that says strict mode, and the process answers
# on its stdin afterwards as before, untraced, with nothing of ours mapped.
# Before: the injector took it for "filters unreadable", went on, and its
# first mmap killed the process. The same when the strict thread is not
# the main one (`rel_strict worker`): the injection may hold the main
# thread, but the hooks would run in the worker; every thread's Seccomp:
# line is read before any is held.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

for mode in main worker; do
    [ "$mode" = main ] && rel_start rel_strict || rel_start rel_strict worker
    line=$(rel_cmd x '^alive') || exit 1
    [ "$line" = "alive 1" ] || fail "the target's first answer: $line"
    strict_tid=$(grep -l '^Seccomp:[[:space:]]*1' /proc/"$TPID"/task/*/status | awk -F/ '{print $5}')
    for via in ptrace gdb; do
        "$HEAPINJECT" -p "$TPID" --via "$via" --duration 1 -o "$TMP/never.txt" >/dev/null 2>"$TMP/$via.err"
        rc=$?
        cat "$TMP/$via.err"
        alive "$TPID" || fail "--via $via killed the strict-mode process"
        [ "$rc" = 5 ] || fail "--via $via: exit $rc, want 5 (refused): $(cat "$TMP/$via.err")"
        grep -q "seccomp strict mode" "$TMP/$via.err" || fail "--via $via: the message does not say strict mode"
        grep -q "(thread $strict_tid)" "$TMP/$via.err" || fail "--via $via: the message does not name thread $strict_tid"
        grep -q "nothing was done" "$TMP/$via.err" || fail "--via $via: the message does not say nothing was done"
        rel_untraced "$TPID"
        grep -q libheapinject "/proc/$TPID/maps" && fail "--via $via: the payload is mapped"
        line=$(rel_cmd y '^alive') || exit 1
        echo "after --via $via: $line"
    done
    echo q >"$TIN"
    for _ in $(seq 100); do alive "$TPID" || break; sleep 0.05; done
    if [ "$mode" = main ]; then
        alive "$TPID" && fail "the target did not end on q"
        wait "$TPID"; rc=$?
        [ "$rc" = 0 ] || fail "the target exited $rc"
    else
        kill "$TPID"
    fi
    echo "strict thread in $mode: refused both ways"
done
ok "a thread in seccomp strict mode (the main one, or a worker): refused with ptrace and with gdb, the process answers after each"
