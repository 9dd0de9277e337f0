#!/usr/bin/env bash
# payload_storm.sh - attach, snapshot, SET_RATE, DETACH and heapinject_stop
# while 4 threads allocate through every entry point and a ninth loads and
# unloads a library with malloc slots: no crash, no corrupted block, no
# hang, every slot of the executable and libc restored each time; then
# quick attach/detach cycles (STORM_QUICK_CYCLES).
# Schedule: first (one of the longest: started early so that the lanes end together)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

# end_session WHAT BY_DETACH: the session ends by the cli's DETACH (1) or
# the program's heapinject_stop (0), under load; no socket left, alive.
end_session() {
    if [ "$2" = 1 ]; then
        $CLIENT detach "$SOCK" >/dev/null || fail "$1: DETACH under load"
        for ((i = 0; i < 100; i++)); do [ -e "$SOCK" ] || break; sleep 0.05; done
    else
        [ "$(pl_cmd stop '^stopped')" = "stopped 0" ] || fail "$1: heapinject_stop under load"
    fi
    [ -e "$SOCK" ] && fail "socket left after $1"
    assert_alive "$TPID"
}

pl_start pl_storm
pl_cmd storm '^done storm' >/dev/null
sleep 0.3 # every entry point called once: lazy slots are bound now
pl_got_dump "$TMP/got.before"
for cycle in 1 2 3 4; do
    case $cycle in 1 | 3) rate=1 ;; *) rate=65536 ;; esac
    echo "$(date +%T.%N) cycle $cycle attach"
    pl_attach "$(pl_config rate=$rate)"
    echo "$(date +%T.%N) attached"
    sleep 0.5
    pl_snapshot "$TMP/s$cycle.json"
    $CLIENT set-rate "$SOCK" 4096 >/dev/null || fail "SET_RATE under load"
    pl_snapshot "$TMP/t$cycle.json"
    python3 -c "
import json; s=json.load(open('$TMP/t$cycle.json')); t=s['totals']
assert t['raw_samples'] > 0 and t['exact_alloc_calls'] > 0, t
print('cycle $cycle: samples', t['raw_samples'], 'calls', t['exact_alloc_calls'], 'buckets', t['buckets'], 'dropped', t['dropped_samples'])
" || fail "cycle $cycle: nothing sampled"
    echo "$(date +%T.%N) snapshots done"
    end_session "cycle $cycle" $((cycle % 2))
done
# Quick cycles: attach, one HELLO, detach or stop, as fast as they go.
# Each start patches every module while libz is dlclosed and dlopened at
# the same address; the pages' protections were once read outside the
# loader's lock and a read-only moment of the new libz's mapping was put
# on its .got.plt/.data page: it died in its own destructor's store to
# .bss (2 crashes in 53 such cycles; none in 300 since).
# STORM_QUICK_CYCLES (20; `make stress` runs 200).
quick=${STORM_QUICK_CYCLES:-20}
for ((cycle = 1; cycle <= quick; cycle++)); do
    pl_attach "$(pl_config rate=$((cycle % 2 ? 65536 : 4096)))" >/dev/null
    $CLIENT hello "$SOCK" >/dev/null || fail "quick cycle $cycle: no HELLO answer"
    end_session "quick cycle $cycle" $((cycle % 2))
done
echo "$quick quick cycles"
out=$(pl_cmd calm '^done calm' 60)
echo "$out"
[ "$(pl_field "$out" corrupt)" = 0 ] || fail "corrupted blocks: $out"
# slots of the target's own modules are back (libz is not loaded any more)
pl_got_dump "$TMP/got.after"
grep -v '^libz' "$TMP/got.after" | diff <(grep -v '^libz' "$TMP/got.before") - || fail "slots not restored"
ok "attach/detach cycles under an allocation storm"
