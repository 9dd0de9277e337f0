#!/usr/bin/env bash
# rel_single_again: a single-threaded program that forks is single-threaded
# again for glibc after the detach (issue 25, item 6).
# Covers: payload/serve/single_again.c
# glibc sets its single-threaded flags false at the first pthread_create
# (our start helper and agent) and never back: the program then forked and
# malloc'd by glibc's multi-threaded paths for good after the detach (every
# arena locked around each fork, the stdio list, nss: 2 -> 6 minor faults
# per fork in the parent, 22 -> 28 in the child, with a plain program).
# The target (pl_single) reports glibc's flags as it sees them
# (__libc_single_threaded, libc's own byte, the TCB's multiple_threads),
# its kernel thread count and the page faults per fork of 100 forks
# whose children malloc, check and free blocks, before the attach, during
# the session and after the detach; it checks its own blocks and its
# children's data each time. After the detach the flags must read
# single-threaded again and the parent's faults per fork be back to the
# level before the attach, and the children's within a fault or two: the
# page of our text their atfork and exit handlers run (payload/sys/
# fork_text.h; was +6, those handlers spread over a dozen files' pages,
# sysconf's and a write to a flag of ours).
# Then a second session during which the program starts a thread of its
# own: after that detach the flags stay false while its thread lives (the
# reset needs the forking thread alone), and are put back at the first
# fork after the program joined it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
forks() { pl_cmd "forks 100" '^forks 100' 120; }

pl_start pl_single
before=$(forks)
echo "before attach: $before"
[ "$(field single "$before")$(field own "$before")$(field tcb "$before")" = 110 ] ||
    fail "the target is not single-threaded for glibc before the attach: $before"

"$HEAPINJECT" -v -p "$TPID" --duration 600 -o "$TMP/report.txt" 2>"$TMP/cli.err" &
cli=$!
PIDS+=("$cli")
wait_for_line "$TMP/cli.err" "background snapshot" 30 || fail "no background snapshot: $(cat "$TMP/cli.err")"
during=$(forks)
echo "attached:      $during"
kill -INT "$cli"
wait "$cli" || fail "the session failed: $(tail -3 "$TMP/cli.err")"

# The agent's end is the thread's own: wait until the kernel counts one.
for ((i = 0; i < 200; i++)); do
    [ "$(awk '/^Threads:/{print $2}' /proc/"$TPID"/status)" = 1 ] && break
    sleep 0.05
done
after=$(forks)
echo "after detach:  $after"
assert_alive "$TPID"

for line in "$before" "$during" "$after"; do
    [ "$(field bad "$line")" = 0 ] || fail "a child's blocks read back wrong: $line"
    [ "$(field data "$line")" = ok ] || fail "the target's own blocks read back wrong: $line"
done
[ "$(field threads "$after")" = 1 ] || fail "the target has $(field threads "$after") threads after the detach"
[ "$(field single "$after")" = 1 ] || fail "__libc_single_threaded is $(field single "$after") after the detach (1 before)"
[ "$(field own "$after")" = 1 ] || fail "libc's own single-threaded byte is $(field own "$after") after the detach"
[ "$(field tcb "$after")" = 0 ] || fail "the TCB's multiple_threads is $(field tcb "$after") after the detach (0 before)"
pb=$(field parent_flt10 "$before") pa=$(field parent_flt10 "$after")
cb=$(field child_flt10 "$before") ca=$(field child_flt10 "$after")
# x10 figures. The parent: within 1 fault per fork (multi-threaded: +4).
((pa <= pb + 10)) || fail "the parent takes $((pa / 10)).$((pa % 10)) faults per fork after the detach, $((pb / 10)).$((pb % 10)) before"
# The child: the page of our fork text, one more where it straddles a
# fault-around window, and one of slack (was +6 before fork_text.h;
# multi-threaded: 6-9 more on top).
((ca <= cb + 30)) || fail "a child takes $((ca / 10)).$((ca % 10)) faults after the detach, $((cb / 10)).$((cb % 10)) before"
# session NAME: attach, COMMANDS while attached, detach; waits for the agent's end.
session() {
    "$HEAPINJECT" -v -p "$TPID" --duration 600 -o "$TMP/report$1.txt" 2>"$TMP/cli$1.err" &
    local c=$! i
    PIDS+=("$c")
    wait_for_line "$TMP/cli$1.err" "background snapshot" 30 || fail "no background snapshot: $(cat "$TMP/cli$1.err")"
    shift
    for cmd in "$@"; do pl_cmd "$cmd" "^${cmd}ed" >/dev/null; done
    kill -INT "$c"
    wait "$c" || fail "the session failed: $(tail -3 "$TMP/cli$1.err")"
}
session 2 spawn
for ((i = 0; i < 200; i++)); do
    [ "$(awk '/^Threads:/{print $2}' /proc/"$TPID"/status)" = 2 ] && break
    sleep 0.05
done
with_thread=$(forks)
echo "own thread after detach: $with_thread"
joined=$(pl_cmd join '^joined')
[ "$joined" = "joined 1" ] || fail "the program's thread: $joined"
pl_cmd "forks 1" '^forks 1 ' >/dev/null
after_join=$(forks)
echo "after its join: $after_join"
[ "$(field threads "$with_thread")" = 2 ] || fail "expected the program's thread and its main: $with_thread"
[ "$(field single "$with_thread")$(field own "$with_thread")" = 00 ] ||
    fail "glibc's flags say single-threaded while the program's own thread lives: $with_thread"
[ "$(field single "$after_join")$(field own "$after_join")$(field tcb "$after_join")" = 110 ] ||
    fail "not single-threaded for glibc after the program joined its thread: $after_join"
for line in "$with_thread" "$after_join"; do
    [ "$(field bad "$line")" = 0 ] && [ "$(field data "$line")" = ok ] || fail "data read back wrong: $line"
done
ok "single-threaded for glibc again after the detach; parent faults per fork $pb -> $pa, child $cb -> $ca (x10)"
