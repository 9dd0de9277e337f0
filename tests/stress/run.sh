#!/usr/bin/env bash
# run.sh - `make stress`: the long variants of the reliability tests.
#   rel_cycles        1000 attach/snapshot/detach cycles (REL_CYCLES)
#   rel_attach_while  10 attach rounds in each awkward state (REL_ATTACH_ROUNDS)
#   rel_kill_cli, rel_kill_target, rel_seccomp   three times each
#   rel_hostile       three times, with different mutation seeds (REL_SEED)
#   rel_kill_anywhere 300 kills of the cli or the target at random moments
#   rel_real_redis, rel_real_python              once each
#   payload_storm     200 quick attach/detach cycles under the allocation
#                     and dlopen/dlclose storm (STORM_QUICK_CYCLES)
# Logs in build/stress-logs/; a summary line per run and the RESULT lines.
set -u
cd "$(dirname "$0")/../.."
export HEAPINJECT="$PWD/build/heapinject" TARGETS="$PWD/build/targets" ROOT="$PWD"
mkdir -p build/stress-logs
pass=0 failn=0
run() { # NAME LOGNAME [VAR=VALUE...]
    local name=$1 log=build/stress-logs/$2.log start rc; shift 2
    start=$(date +%s)
    env "$@" timeout -k 10 3600 bash "tests/e2e/$name.sh" >"$log" 2>&1; rc=$?
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); echo "PASS $(basename "$log" .log) ($(($(date +%s) - start))s)"
    else
        failn=$((failn + 1)); echo "FAIL $(basename "$log" .log) (rc=$rc); last lines of $log:"; tail -15 "$log" | sed 's/^/    /'
    fi
    grep '^RESULT' "$log" | sed 's/^/    /'
}
run rel_cycles rel_cycles_1000 REL_CYCLES=1000
run rel_attach_while rel_attach_while_10 REL_ATTACH_ROUNDS=10
for i in 1 2 3; do
    run rel_kill_cli "rel_kill_cli_$i"
    run rel_kill_target "rel_kill_target_$i"
    run rel_seccomp "rel_seccomp_$i"
    run rel_hostile "rel_hostile_$i" REL_SEED=$((i * 101))
done
run rel_kill_anywhere rel_kill_anywhere_300 REL_KILL_ROUNDS=300
run payload_storm payload_storm_200 STORM_QUICK_CYCLES=200
run rel_real_redis rel_real_redis
run rel_real_python rel_real_python
echo "stress: $pass passed, $failn failed"
[ $failn -eq 0 ]
