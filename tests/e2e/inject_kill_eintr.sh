#!/usr/bin/env bash
# inject_kill_eintr: heapinject -p is SIGKILLed at each stage of an
# injection (ptrace and --via gdb), over and over, into a thread that naps
# in 30 s nanosleeps; no nap may fail with EINTR or end early. The stages
# alternate so that a kill which lets the kernel restart the sleep (the
# thread then continues it in restart_syscall) is followed by kills that
# make the thread restore itself through the rescue frame, whose
# rt_sigreturn empties the restart block: a frame that re-ran
# restart_syscall turned the sleep into EINTR (injector/arch_x86_64.c,
# restarted_syscall).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
KILLER="python3 $ROOT/tests/stress/rel_killer.py"
kills=0

rel_start inj_wait naps 30
for round in 1 2; do
    for stage in "seized thread" "rescue frame at" 'calling dlopen\(' "calling heapinject_start" \
                 "attached to pid" "gdb: HI_THREAD" "seized thread" "gdb: HI_HANDLE"; do
        via=ptrace
        [[ $stage == gdb:* ]] && via=gdb
        $KILLER --timeout 60 "$stage" -- "$HEAPINJECT" -p "$TPID" -v --via "$via" --duration 30 \
            -o "$TMP/never.txt" >/dev/null 2>"$TMP/kill.err"
        grep -q '^killer: exit -9' "$TMP/kill.err" ||
            fail "stage '$stage' never came, or the cli ended: $(tail -5 "$TMP/kill.err")"
        for _ in $(seq 100); do pgrep -f "gdb .*-p $TPID " >/dev/null || break; sleep 0.1; done
        rel_detached_within "$TPID" 5000 "$(rel_kill_time "$TMP/kill.err")" >/dev/null ||
            fail "profiler still attached 5 s after a kill at '$stage'"
        rel_untraced "$TPID"
        kills=$((kills + 1))
        bad=$(grep -m1 'bad nap' "$TOUT") &&
            fail "after $kills kills (last at '$stage', round $round) the target saw: $bad"
    done
done
sleep 1   # a thread restored last shows its nap's result at once; be sure
bad=$(grep -m1 'bad nap' "$TOUT") && fail "after the last kill the target saw: $bad"
echo "$kills kills; the target's naps: $(grep -c 'bad nap' "$TOUT") bad"
ok "$kills kills of the cli at every stage; no nanosleep saw EINTR or ended early"
