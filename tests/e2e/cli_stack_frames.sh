#!/usr/bin/env bash
# cli_stack_frames: a frame whose return address lies in stack memory (code
# copied onto a stack and run, as trampolines are) was named after the
# mapping's kind, "[anon]+0x1e3d0" (or "[jit]" for an executable stack). It
# is now named as the maps name stacks: "[stack]" for the main thread's,
# "[stack:TID]" for another thread's (the thread whose stack pointer is
# in that mapping). The program checks the blocks it allocated.
. "$(dirname "$0")/lib.sh"
cat >"$TMP/s.c" <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define N 400
static unsigned char *blocks[2][N];
static int nblocks[2];
static volatile int go, which;
static __attribute__((noinline)) void helper(void)
{
    unsigned char *b = malloc(8192);
    if (!b)
        return;
    memset(b, 'a' + which, 8192);
    blocks[which][nblocks[which]++] = b;
    __asm__ volatile("" ::: "memory");
}
/* sub rsp, 8; movabs rax, helper; call rax; add rsp, 8; ret: run from a
 * buffer on this stack (the sub keeps helper's stack 16-byte aligned) */
static __attribute__((noinline)) void run_on_stack(int who)
{
    unsigned char code[32];
    uint64_t target = (uint64_t)(uintptr_t)helper;
    static const unsigned char head[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0xb8 };
    static const unsigned char tail[] = { 0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
    memcpy(code, head, sizeof(head));
    memcpy(code + sizeof(head), &target, 8);
    memcpy(code + sizeof(head) + 8, tail, sizeof(tail));
    __builtin___clear_cache((char *)code, (char *)code + sizeof(code));
    which = who;
    for (int i = 0; i < N; i++)
        ((void (*)(void))(uintptr_t)code)();
    __asm__ volatile("" ::: "memory");
}
static void *thread_main(void *arg)
{
    (void)arg;
    while (!go)
        usleep(1000);
    run_on_stack(1);
    printf("thread done %d\n", (int)gettid());
    fflush(stdout);
    for (;;)
        pause();
}
static volatile sig_atomic_t start, check;
static void on_sig(int s) { if (s == SIGUSR1) start = 1; else check = 1; }
int main(void)
{
    pthread_t t;
    signal(SIGUSR1, on_sig);
    signal(SIGUSR2, on_sig);
    pthread_create(&t, NULL, thread_main, NULL);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pause();
        if (start) {
            start = 0;
            run_on_stack(0);
            go = 1;
        }
        if (check) {
            check = 0;
            int good = nblocks[0] == N && nblocks[1] == N;
            for (int w = 0; w < 2; w++)
                for (int i = 0; i < nblocks[w]; i++)
                    for (int k = 0; k < 8192; k++)
                        good &= blocks[w][i][k] == 'a' + w;
            printf("data %s\n", good ? "ok" : "BAD");
            fflush(stdout);
        }
    }
}
C
gcc -O1 -g -fno-omit-frame-pointer -pthread -z execstack -o "$TMP/s" "$TMP/s.c" 2>"$TMP/cc.err" || fail "cannot build: $(cat "$TMP/cc.err")"
"$TMP/s" >"$TMP/s.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/s.out" ready 10 || fail "the program did not start: $(cat "$TMP/s.out")"
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --rate 4K --duration 3 >"$TMP/r.txt" 2>"$TMP/r.err" &
HI=$!
wait_for_line "$TMP/r.err" 'attached to pid' 60 || fail "no attach: $(cat "$TMP/r.err")"
kill -USR1 "$TPID"
wait_for_line "$TMP/s.out" '^thread done' 30 || fail "the thread did not allocate"
TID=$(awk '/^thread done/{print $3}' "$TMP/s.out")
wait "$HI" || fail "the session failed: $(cat "$TMP/r.err")"
grep -E '^\s+\[' "$TMP/r.txt" | sort | uniq -c | head
grep -Eq '^ +\[stack\]\+0x[0-9a-f]+ +mapping at 0x' "$TMP/r.txt" || fail "no frame named [stack] for the main thread's stack code: $(sed -n '/^#1 /,/^$/p' "$TMP/r.txt")"
grep -Eq "^ +\[stack:$TID\]\+0x[0-9a-f]+ +mapping at 0x" "$TMP/r.txt" || fail "no frame named [stack:$TID] for the thread's stack code: $(sed -n '/^#1 /,/^$/p' "$TMP/r.txt")"
if grep -Eq '^ +\[(anon|jit)\]\+' "$TMP/r.txt"; then fail "a stack frame is still named [anon] or [jit]: $(grep -E '\[(anon|jit)\]' "$TMP/r.txt" | head -3)"; fi
kill -USR2 "$TPID"
wait_for_line "$TMP/s.out" '^data ' 20 || fail "the program did not check its data"
grep -q '^data ok' "$TMP/s.out" || fail "the program's data changed"
assert_alive "$TPID"
ok "frames in stack memory are named [stack] and [stack:$TID], as the maps name stacks"
