#!/usr/bin/env bash
# rel_fork_after: a process attached once forks as it did before (issue 25,
# item 6). Measured in the target (pl_forkcost): the Private_Dirty of a
# fork child (its own /proc/self/smaps_rollup, read right after the fork)
# before the attach, during the session and after the detach, and the time
# of 200 fork + _exit + waitpid before the attach and after the detach
# (shown only: the page faults of the child are the measure judged).
# A child forked during the session and kept: its Private_Dirty after the
# parent's detach against one forked before the attach.
# Was: children carried 3,584 KiB more (the child's atfork handler read all
# 4,096 thread slots) and 200 forks took 5x as long. Also after the detach:
# no socket directory left in /tmp that was not there before, and
# SIGSEGV's action (sa_flags included) as before the attach.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

# kb LINE: the number after private_dirty_kb=.
kb() { sed -n 's/.*private_dirty_kb=\([0-9-]*\).*/\1/p' <<<"$1"; }
flt() { sed -n 's/.*minflt=\([0-9-]*\).*/\1/p' <<<"$1"; }
# forks_ms: the best of three runs of 200 forks (the machine is shared).
forks_ms() {
    local best=999999 r line ms
    for r in 1 2 3; do
        line=$(pl_cmd "forks 200" '^forks 200')
        ms=${line##*ms=}
        ((ms < best)) && best=$ms
    done
    echo "$best"
}

uid=$(id -u)
sockdir=/tmp/heapinject-$uid
[ -d /run/user/$uid ] && sockdir=/run/user/$uid/heapinject
dir_before=absent; [ -e "$sockdir" ] && dir_before=present

pl_start pl_forkcost
pl_cmd alloc '^done alloc' >/dev/null
seg_before=$(pl_cmd sigsegv '^sigsegv')
line=$(pl_cmd forkmem '^forkmem')
mem_before=$(kb "$line") flt_before=$(flt "$line")
ms_before=$(forks_ms)
pl_cmd keep '^kept [0-9]' >/dev/null
pl_cmd measure '^kept private' >/dev/null
kept_before=$(kb "$(grep '^kept private' "$TOUT" | tail -1)")

"$HEAPINJECT" -v -p "$TPID" --rate 1 --duration 600 -o "$TMP/report.txt" 2>"$TMP/cli.err" &
cli=$!
PIDS+=("$cli")
wait_for_line "$TMP/cli.err" "background snapshot" 30 || fail "no background snapshot: $(cat "$TMP/cli.err")"
pl_cmd alloc '^done alloc' >/dev/null
pl_cmd "hold 100000" '^done hold' 60 >/dev/null
pl_cmd unhold '^done unhold' 60 >/dev/null
kept=$(pl_cmd keep '^kept [0-9]' | awk '{print $2}')
PIDS+=("$kept")
line=$(pl_cmd forkmem '^forkmem')
mem_during=$(kb "$line") flt_during=$(flt "$line")
kill -INT "$cli"
wait "$cli" || fail "the session failed: $(tail -3 "$TMP/cli.err")"

pl_cmd measure '^kept private' >/dev/null
kept_after=$(kb "$(grep '^kept private' "$TOUT" | tail -1)")
pl_cmd alloc '^done alloc' >/dev/null
line=$(pl_cmd forkmem '^forkmem')
mem_after=$(kb "$line") flt_after=$(flt "$line")
ms_after=$(forks_ms)
seg_after=$(pl_cmd sigsegv '^sigsegv')
dir_after=absent; [ -e "$sockdir" ] && dir_after=present
assert_alive "$TPID"

echo "fork child Private_Dirty: $mem_before kB before attach, $mem_during kB during, $mem_after kB after detach"
echo "fork child's page faults up to its first line: $flt_before before attach, $flt_during during, $flt_after after detach"
echo "a child kept from its fork to after the detach: $kept_before kB private forked before attach, $kept_after kB forked during the session (RATE=1, 100,000 blocks held and freed before)"
echo "200 forks: $ms_before ms before attach, $ms_after ms after detach"
echo "SIGSEGV before: $seg_before; after: $seg_after"
echo "$sockdir: $dir_before before, $dir_after after"
((mem_before > 0)) || fail "no Private_Dirty read before the attach"
# A few pages of ours may be written in the child (flags in .data): 64 kB.
# The child's fork handlers touch no page of our tables: a few dozen
# faults more at most, glibc's included (was: 896 more, the pages of
# the thread registry read by our handler).
((flt_during <= flt_before + 64)) || fail "a child forked during the session took $flt_during page faults, $flt_before before"
((flt_after <= flt_before + 64)) || fail "a child forked after the detach took $flt_after page faults, $flt_before before"
((mem_during <= mem_before + 64)) || fail "a child forked during the session has $mem_during kB private, $mem_before kB before"
((mem_after <= mem_before + 64)) || fail "a child forked after the detach has $mem_after kB private, $mem_before kB before"
# Our tables in a child forked during the session were shared with the
# parent until its detach, then the child's own (was: ~20 MB here).
((kept_after <= kept_before + 512)) || fail "a child forked during the session has $kept_after kB private after the detach, $kept_before kB forked before"
# The times are shown, not judged: at a load of 20 on 2 cores (8 helpers)
# they scatter 2-5x between runs; the page faults above are what made
# the forks slow (was 72 -> 1720 ms on a quiet machine) and are exact.
[ "$seg_after" = "$seg_before" ] || fail "SIGSEGV's action after detach '$seg_after', before attach '$seg_before'"
[ "$dir_after" = "$dir_before" ] || fail "$sockdir is $dir_after after the detach, was $dir_before before"
ok "forks after attach and detach cost what they did before; nothing left in /tmp"
