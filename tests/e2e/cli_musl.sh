#!/usr/bin/env bash
# cli_musl: a dynamically linked musl program is refused before anything is
# loaded into it, with a message that names musl (exit 5, unsupported),
# instead of a dlopen error about libunwind.so.8 (exit 1). The program runs
# on untouched.
. "$(dirname "$0")/lib.sh"
command -v musl-gcc >/dev/null || skip "musl-gcc (musl-tools) is not installed"
cat >"$TMP/m.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
    printf("ready\n");
    fflush(stdout);
    for (unsigned long n = 0;; n++) {
        free(malloc(1000));
        usleep(1000);
    }
}
C
musl-gcc -o "$TMP/m" "$TMP/m.c" || fail "musl-gcc failed"
"$TMP/m" >"$TMP/m.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/m.out" ready 10 || fail "the musl program did not start"
timeout -k 5 60 "$HEAPINJECT" -p "$TPID" --duration 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" = 5 ] || fail "expected exit 5 (unsupported), got $rc: $(cat "$TMP/err")"
grep -q "runs on musl libc" "$TMP/err" || fail "the message does not name musl: $(cat "$TMP/err")"
grep -q "libheapinject" "/proc/$TPID/maps" && fail "the profiler library was loaded into the musl program"
alive "$TPID" || fail "the musl program died"
ok "musl program refused (exit 5): $(head -1 "$TMP/err")"
