#!/usr/bin/env bash
# cli_target_messages: what a user sees for a process heapinject cannot or
# should not work on, each with what to do and the exit status of its
# class (README's table):
#  1. a thread id as -p, for every command: exit 2, names the process and
#     says "use -p N"; nothing is loaded, status prints no other process's
#     figures;
#  2. a stopped process (SIGSTOP): exit 6, says it is stopped and
#     "kill -CONT"; it is left stopped and untraced;
#  3. a process that names itself with terminal escape sequences
#     (prctl PR_SET_NAME): every message shows the name escaped (\x1b);
#  4. a process that execs itself in a loop: exit 3, says it exec'd and
#     what to do;
#  5. plurals: one stack is "1 distinct stack", never "1 objects",
#     "1 calls", "1 stacks", "1 frames".
. "$(dirname "$0")/lib.sh"
H=$HEAPINJECT
ESC=$'\e' BEL=$'\a'
cat >"$TMP/named.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}
/* One stack: a 1 MiB block every 0.7 s, kept (sampled at any rate). */
int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL))
        return 1;
    prctl(PR_SET_NAME, "h\033]0;PWN\a\033[31m");
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    for (;;) {
        char *p = malloc(1 << 20);
        if (p)
            memset(p, 1, 1 << 20);
        usleep(700000);
    }
}
C
gcc -O1 -g -pthread -o "$TMP/named" "$TMP/named.c" || fail "cannot build the target"
"$TMP/named" >"$TMP/named.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/named.out" ready 10 || fail "the target did not start"
TID=$(ls "/proc/$TPID/task" | grep -vx "$TPID" | head -1)
[ -n "$TID" ] || fail "the target has no second thread"

no_raw() { # FILE...: no raw ESC or BEL byte
    if grep -q "[$ESC$BEL]" "$@"; then fail "a raw escape sequence reached the terminal: $(cat -v "$@" | head -5)"; fi
}

# --- 1. a thread id ------------------------------------------------------------
for cmd in "" attach status snapshot detach "rate --rate 4K" trim census; do
    extra=""
    [ -z "$cmd" ] && extra="--duration 1"
    # shellcheck disable=SC2086
    timeout -s KILL 60 "$H" $cmd -p "$TID" $extra >"$TMP/t.out" 2>"$TMP/t.err"
    rc=$?
    echo "${cmd:-one-shot} -p TID: exit $rc: $(cat "$TMP/t.err")"
    [ "$rc" = 2 ] || fail "${cmd:-one-shot} -p TID: exit $rc, want 2"
    grep -q "$TID is a thread .* of process $TPID .*use -p $TPID" "$TMP/t.err" ||
        fail "${cmd:-one-shot}: the message does not name the process: $(cat -v "$TMP/t.err")"
    [ -s "$TMP/t.out" ] && fail "${cmd:-one-shot}: printed a report for a thread id: $(head -3 "$TMP/t.out")"
    no_raw "$TMP/t.err"
done
grep -q libheapinject "/proc/$TPID/maps" && fail "the profiler was loaded after a thread id"
assert_not_traced "$TPID"
ok "a thread id: every command refuses it (exit 2) and names process $TPID"

# --- 2 and 3. a stopped process whose name holds escapes ---------------------------
kill -STOP "$TPID"
for _ in $(seq 40); do [ "$(awk '/^State:/{print $2}' "/proc/$TPID/status")" = T ] && break; sleep 0.05; done
timeout -s KILL 60 "$H" -p "$TPID" --duration 1 >"$TMP/s.out" 2>"$TMP/s.err"
rc=$?
echo "stopped: exit $rc: $(cat -v "$TMP/s.err")"
[ "$rc" = 6 ] || fail "a stopped process: exit $rc, want 6"
grep -q "is stopped" "$TMP/s.err" && grep -q "kill -CONT $TPID" "$TMP/s.err" ||
    fail "the message does not say it is stopped and what to do: $(cat -v "$TMP/s.err")"
grep -qF 'h\x1b]0;PWN\x07\x1b[31m' "$TMP/s.err" || fail "the process's name is not shown escaped: $(cat -v "$TMP/s.err")"
no_raw "$TMP/s.err"
[ "$(awk '/^State:/{print $2}' "/proc/$TPID/status")" = T ] || fail "the stopped process was resumed"
assert_not_traced "$TPID"
grep -q libheapinject "/proc/$TPID/maps" && fail "the profiler was loaded into a stopped process"
kill -CONT "$TPID"
ok "a stopped process: exit 6, 'kill -CONT $TPID', left stopped, its name escaped"

# --- 5 (and 3). plurals; the name in the cli's own lines ------------------------
timeout -s KILL 120 "$H" -p "$TPID" --rate 64K --duration 1.5 >"$TMP/r.txt" 2>"$TMP/r.err" ||
    fail "the session failed: $(cat -v "$TMP/r.err")"
no_raw "$TMP/r.txt" "$TMP/r.err"
grep -qF 'h\x1b]0;PWN\x07\x1b[31m' "$TMP/r.err" || fail "the attach line does not show the name escaped: $(cat -v "$TMP/r.err")"
grep -q "; 1 distinct stack;" "$TMP/r.txt" || fail "one stack is not '1 distinct stack': $(head -12 "$TMP/r.txt")"
if grep -Eq '(^|[^0-9.])1 (objects|calls|stacks|samples|frames|modules|functions|threads|mappings)\b' "$TMP/r.txt"; then
    fail "a plural after 1: $(grep -E '(^|[^0-9.])1 (objects|calls|stacks|samples|frames|modules|functions|threads|mappings)\b' "$TMP/r.txt")"
fi
"$H" attach -p "$TPID" >/dev/null 2>"$TMP/a.err" || fail "attach: $(cat -v "$TMP/a.err")"
no_raw "$TMP/a.err"
"$H" status -p "$TPID" >"$TMP/st.out" 2>&1 || fail "status: $(cat -v "$TMP/st.out")"
no_raw "$TMP/st.out"
grep -qF 'h\x1b]0;PWN\x07\x1b[31m' "$TMP/st.out" || fail "status does not show the name escaped: $(head -3 "$TMP/st.out" | cat -v)"
if grep -Eq '(^|[^0-9.])1 (objects|calls|threads)\b' "$TMP/st.out"; then
    fail "status: a plural after 1: $(grep -E '(^|[^0-9.])1 (objects|calls|threads)\b' "$TMP/st.out")"
fi
"$H" detach -p "$TPID" >/dev/null 2>&1 || fail "detach"
ok "plurals right; the process's name escaped in the attach line and status"

# --- 4. an exec loop -----------------------------------------------------------------
cat >"$TMP/loop.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("LOOPING")) {
        setenv("LOOPING", "1", 1);
        printf("ready\n");
        fflush(stdout);
    }
    for (int i = 0; i < 20; i++) {
        free(malloc(100));
        usleep(1000);
    }
    execv("/proc/self/exe", argv);
    return 1;
}
C
gcc -O1 -o "$TMP/loop" "$TMP/loop.c" || fail "cannot build the exec loop"
"$TMP/loop" >"$TMP/loop.out" 2>&1 &
LPID=$!; PIDS+=("$LPID")
wait_for_line "$TMP/loop.out" ready 10 || fail "the exec loop did not start"
seen=""
for i in 1 2 3; do
    timeout -s KILL 60 "$H" -p "$LPID" --duration 1 >"$TMP/l.out" 2>"$TMP/l.err"
    rc=$?
    echo "exec loop, try $i: exit $rc: $(cat "$TMP/l.err")"
    assert_alive "$LPID"
    [ "$rc" = 0 ] && continue # it may hold still for a whole second
    [ "$rc" = 3 ] || fail "exec loop: exit $rc, want 3"
    grep -q "again and again" "$TMP/l.err" || fail "the message does not say what to do: $(cat "$TMP/l.err")"
    seen=1
done
[ -n "$seen" ] || skip "the exec loop never exec'd during a session (3 tries)"
assert_not_traced "$LPID"
ok "an exec loop: exit 3, says it exec'd and what to do"
