#!/usr/bin/env bash
# rel_seccomp_strict: a process whose thread runs in seccomp strict mode
# (only read, write, exit and rt_sigreturn; any other call kills it). The
# kernel shows no filter for it (PTRACE_SECCOMP_GET_FILTER fails with
# EINVAL, as for a thread without seccomp), so the injector reads the
# thread's Seccomp: line: `heapinject -p` and `--via gdb` are refused
# (exit 5) with a message that says strict mode, and the process answers
# on its stdin afterwards as before, untraced, with nothing of ours mapped.
# Before: the injector took it for "filters unreadable", went on, and its
# first mmap killed the process.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

rel_start rel_strict
line=$(rel_cmd x '^alive') || exit 1
[ "$line" = "alive 1" ] || fail "the target's first answer: $line"
for via in ptrace gdb; do
    "$HEAPINJECT" -p "$TPID" --via "$via" --duration 1 -o "$TMP/never.txt" >/dev/null 2>"$TMP/$via.err"
    rc=$?
    cat "$TMP/$via.err"
    alive "$TPID" || fail "--via $via killed the strict-mode process"
    [ "$rc" = 5 ] || fail "--via $via: exit $rc, want 5 (refused): $(cat "$TMP/$via.err")"
    grep -q "seccomp strict mode" "$TMP/$via.err" || fail "--via $via: the message does not say strict mode"
    grep -q "nothing was done" "$TMP/$via.err" || fail "--via $via: the message does not say nothing was done"
    rel_untraced "$TPID"
    grep -q libheapinject "/proc/$TPID/maps" && fail "--via $via: the payload is mapped"
    line=$(rel_cmd y '^alive') || exit 1
    echo "after --via $via: $line"
done
echo q >"$TIN"
for _ in $(seq 100); do alive "$TPID" || break; sleep 0.05; done
alive "$TPID" && fail "the target did not end on q"
wait "$TPID"; rc=$?
[ "$rc" = 0 ] || fail "the target exited $rc"
ok "strict-mode process: refused with ptrace and with gdb, it answers after each, exits 0"
