#!/usr/bin/env bash
# rel_real_redis: a program we did not write, under its own load. Debian's
# redis-server (jemalloc through libjemalloc.so, stripped, 4 threads) on
# loopback, driven by redis-benchmark with bounded request counts. While a
# benchmark runs, a one-shot `heapinject -p` session and an attach /
# snapshot / detach round: every benchmark completes with every request
# answered and no error reply (INFO errorstats), a fixed data set written
# before is intact after (a Lua check of all its 20000 keys), and the
# reports name redis's own functions.
# Throughput after detach against before attach, made fair on a shared,
# noisy machine: a second, identical redis-server that is never profiled
# (the control), pinned to the same core as the target, is benchmarked at
# the same time as the target, in windows
# of about a second, 5 before attach and 5 after detach. Each window gives
# target/control, so whatever else the machine does hits both; the result
# is median(after) / median(before). Only a clear loss fails (below 0.8):
# one window's target/control scatters by about +-10% here, the medians by
# less. (Hooks left in place are checked directly, slot by slot.)
# Schedule: alone (redis throughput after detach compared with a control: another test beside it skews the pair)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
    "$ROOT/scripts/deps.sh" redis-server redis-tools >"$TMP/deps.log" 2>&1 ||
        skip "redis-server / redis-tools not installed and cannot be: $(tail -2 "$TMP/deps.log")"
fi
# Both servers on the same core: what else runs on the machine slows both
# alike (unpinned, one may get a core to itself for seconds).
PIN=(); command -v taskset >/dev/null && PIN=(taskset -c "$(($(nproc) - 1))")
# start_redis: a redis-server on a free port of loopback; prints the port
# and sets SPID to its pid.
start_redis() {
    local port=$((20000 + ($$ + RANDOM) % 20000)) i
    for _ in 1 2 3 4 5; do
        ss -ltn 2>/dev/null | grep -q ":$port " || break
        port=$((port + 1))
    done
    "${PIN[@]}" redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --daemonize no \
        --dir "$TMP" --enable-debug-command yes >"$TMP/redis.$port.log" 2>&1 &
    SPID=$!
    PIDS+=("$SPID")
    for ((i = 0; i < 100; i++)); do
        redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG && break
        sleep 0.1
    done
    redis-cli -h 127.0.0.1 -p "$port" ping | grep -q PONG || fail "redis did not start: $(tail -5 "$TMP/redis.$port.log")"
    PORT_=$port
}
start_redis; PORT=$PORT_ RPID=$SPID
start_redis; CPORT=$PORT_ CPID=$SPID
CLI=(redis-cli -h 127.0.0.1 -p "$PORT")

# A fixed data set in db 0; the benchmarks use db 1.
for p in "$PORT" "$CPORT"; do
    seq 1 20000 | awk '{printf "SET k:%d v:%d:%s\r\n", $1, $1, "payload-payload-payload"}' |
        redis-cli -h 127.0.0.1 -p "$p" --pipe >"$TMP/pipe.log" 2>&1 || fail "loading the data set: $(cat "$TMP/pipe.log")"
done
CHECK_LUA='local bad = 0
for i = 1, 20000 do
  if redis.call("GET", "k:" .. i) ~= "v:" .. i .. ":payload-payload-payload" then bad = bad + 1 end
end
return bad'

# bench PORT N [TAG]: redis-benchmark of N requests per test against PORT;
# prints the mean req/s over the 7 tests.
bench() {
    local out="$TMP/bench.$1${3:-}"
    redis-benchmark -h 127.0.0.1 -p "$1" --dbnum 1 -n "$2" -c 16 -r 100000 -d 64 \
        -t set,get,incr,lpush,lpop,sadd,hset -q --csv >"$out.csv" 2>"$out.err"
    local rc=$?
    [ "$rc" = 0 ] || fail "redis-benchmark exited $rc: $(cat "$out.err")"
    [ ! -s "$out.err" ] || fail "redis-benchmark complained: $(head -5 "$out.err")"
    awk -F'","' 'NR > 1 {gsub(/"/, "", $2); s += $2; n++} END {if (n < 7) exit 1; printf "%d\n", s / n}' \
        "$out.csv" || fail "redis-benchmark gave no numbers: $(cat "$out.csv")"
}

# windows K: K paired windows, each benchmarking the target and the control
# at the same time; prints "target control ratio" per window.
windows() {
    local k t c
    for ((k = 0; k < $1; k++)); do
        bench "$PORT" 5000 .w >"$TMP/w.t" &
        local bt=$!
        bench "$CPORT" 5000 .w >"$TMP/w.c" || fail "control benchmark failed"
        wait "$bt" || fail "target benchmark failed"
        read -r t <"$TMP/w.t"; read -r c <"$TMP/w.c"
        awk -v t="$t" -v c="$c" 'BEGIN {printf "%d %d %.3f\n", t, c, t / c}'
    done
}
median_ratio() { awk '{print $3}' "$1" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

bench "$PORT" 2000 >/dev/null; bench "$CPORT" 2000 >/dev/null # warm up
windows 5 >"$TMP/before"
before=$(median_ratio "$TMP/before")
echo "before attach (target control target/control): $(tr '\n' ';' <"$TMP/before") median $before"

# Under load (benchmarks back to back until the sessions are over): a
# one-shot session, then attach / snapshot / detach.
(
    n=0 sum=0
    while [ ! -e "$TMP/stop" ]; do
        r=$(bench "$PORT" 10000) || exit 1
        n=$((n + 1)); sum=$((sum + r))
    done
    echo "$((sum / (n ? n : 1))) $n"
) >"$TMP/during" &
BENCH=$!
sleep 1
"$HEAPINJECT" -p "$RPID" --rate 64K --duration 3 -o "$TMP/session.txt" 2>"$TMP/session.err" ||
    fail "session failed: $(cat "$TMP/session.err")"
"$HEAPINJECT" attach -p "$RPID" --rate 16K >/dev/null 2>"$TMP/a.err" || fail "attach: $(cat "$TMP/a.err")"
sleep 1
"$HEAPINJECT" snapshot -p "$RPID" --by function -o "$TMP/byfn.txt" 2>"$TMP/s.err" || fail "snapshot: $(cat "$TMP/s.err")"
"$HEAPINJECT" detach -p "$RPID" 2>"$TMP/d.err" || fail "detach: $(cat "$TMP/d.err")"
touch "$TMP/stop"
wait "$BENCH" || fail "a benchmark under the profiler failed: $(cat "$TMP/bench.$PORT.err")"
read -r during nbench <"$TMP/during"
[ "${nbench:-0}" -ge 1 ] || fail "no benchmark ran during the sessions"
echo "during the sessions: $during req/s ($nbench benchmarks)"
rel_untraced "$RPID"
rel_hooks_gone "$RPID" >/dev/null

windows 5 >"$TMP/after"
after=$(median_ratio "$TMP/after")
echo "after detach (target control target/control): $(tr '\n' ';' <"$TMP/after") median $after"

errs=$("${CLI[@]}" info stats | tr -d '\r' | sed -n 's/^total_error_replies://p')
[ "$errs" = 0 ] || fail "redis answered $errs requests with an error: $("${CLI[@]}" info errorstats)"
bad=$("${CLI[@]}" eval "$CHECK_LUA" 0)
[ "$bad" = 0 ] || fail "$bad keys of the data set are wrong"
grep -Eq "zmalloc|ztrymalloc|zcalloc|zrealloc|sdsnewlen|sdsMakeRoomFor|createStringObject|createObject|listAddNode|dictAdd|quicklist" \
    "$TMP/session.txt" || fail "the report names no redis function: $(head -40 "$TMP/session.txt")"
grep -Eq "zmalloc|sds|createStringObject|createObject|dict|quicklist|listpack|lp[A-Z]" "$TMP/byfn.txt" ||
    fail "the by-function snapshot names no redis function: $(head -30 "$TMP/byfn.txt")"
grep -m3 -E "zmalloc|sds|createStringObject|quicklist|dict" "$TMP/session.txt"
ratio=$(awk -v a="$after" -v b="$before" 'BEGIN {printf "%.2f", a / b}')
echo "throughput after detach / before attach, each against the control: $ratio"
awk -v r="$ratio" 'BEGIN {exit !(r >= 0.8)}' ||
    fail "throughput after detach is $ratio of before (against an untouched redis at the same time)"
"${CLI[@]}" shutdown nosave >/dev/null 2>&1
redis-cli -h 127.0.0.1 -p "$CPORT" shutdown nosave >/dev/null 2>&1
bt=$(awk '{s += $1} END {printf "%d", s / NR}' "$TMP/before"); at=$(awk '{s += $1} END {printf "%d", s / NR}' "$TMP/after")
echo "RESULT rel_real_redis before_rps=$bt during_rps=$during after_rps=$at ratio=$ratio error_replies=0 bad_keys=0"
ok "redis-server under redis-benchmark: no error, data intact, ratio $ratio"
