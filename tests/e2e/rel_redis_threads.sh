#!/usr/bin/env bash
# rel_redis_threads: an attach and a detach leave redis-server (jemalloc
# with background threads) with the threads it had. jemalloc gives a
# thread's first call an arena of its own while it has arenas to spare, and
# a background thread to each new arena (up to its maximum); the start
# helper's pthread_create of the agent thread (a calloc of its TLS vector)
# was such a first call: 5 threads before attach, 6 after detach. The agent
# thread is now made by the thread that calls heapinject_start.
# The allocator figures of a report (mallctl "epoch", "stats.*") were such a
# first call too, on the agent thread (5 -> 6 after a `heapinject -p`
# session): they are now read by a thread of redis in its next malloc or
# free (payload/allocstats.c, the hand-off). Second part: a full session
# while clients use redis; its report still has jemalloc's figures.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    "$ROOT/scripts/deps.sh" redis-server redis-tools >"$TMP/deps.log" 2>&1 ||
        skip "redis-server / redis-tools not installed and cannot be: $(tail -2 "$TMP/deps.log")"
fi

port=$((20000 + ($$ + RANDOM) % 20000))
redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --daemonize no --dir "$TMP" \
    >"$TMP/redis.log" 2>&1 &
TPID=$!
PIDS+=("$TPID")
for ((i = 0; i < 600; i++)); do # up to 60 s on a loaded machine
    redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
    sleep 0.1
done
redis-cli -p "$port" set k v >/dev/null || fail "redis did not start: $(tail -3 "$TMP/redis.log")"
threads() { local t; for t in /proc/"$TPID"/task/*; do cat "$t/comm"; done | sort | tr '\n' ' '; }
before=$(threads)
grep -q jemalloc_bg_thd <<<"$before" || skip "this redis-server runs no jemalloc background thread: $before"

SOCK="$TMP/sock/agent.sock"
mkdir -p -m 700 "$TMP/sock"
"$HEAPINJECT" inject -p "$TPID" "$PAYLOAD" heapinject_start "$(pl_config)" >"$TMP/inject.log" 2>&1 ||
    fail "inject failed: $(cat "$TMP/inject.log")"
grep -q '= 0$' "$TMP/inject.log" || fail "heapinject_start failed: $(cat "$TMP/inject.log")"
wait_for_sock || fail "no socket"
$CLIENT snapshot "$SOCK" -o "$TMP/s.json" >/dev/null || fail "snapshot failed"
during=$(threads)
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
for ((i = 0; i < 100; i++)); do grep -q heapinject <<<"$(threads)" || break; sleep 0.05; done
after=$(threads)
[ "$(redis-cli -p "$port" get k)" = v ] || fail "redis lost its key"
echo "threads before attach: $before"
echo "during:                $during"
echo "after detach:          $after"
[ "$after" = "$before" ] || fail "threads after detach '$after', before attach '$before'"
ok "attach, snapshot, detach: redis-server has the threads it had"

# --- a full session (its report reads jemalloc's figures), then detach ----
# Clients keep redis busy (as when one profiles it); none alive after.
( for ((i = 0; i < 100000; i++)); do
      redis-cli -p "$port" set "key$((i % 50))" "value$i" >/dev/null 2>&1 || break
      [ -e "$TMP/stop_clients" ] && break
  done ) &
CLIENTS=$!
PIDS+=("$CLIENTS")
"$HEAPINJECT" -p "$TPID" --duration 2 -o "$TMP/report.txt" 2>"$TMP/session.err" ||
    fail "session failed: $(cat "$TMP/session.err")"
touch "$TMP/stop_clients"
wait "$CLIENTS"
grep -q "allocator: jemalloc .*its own figures" "$TMP/report.txt" &&
    grep -q "allocated .*, active .*, resident .*, mapped .*[0-9]* arenas" "$TMP/report.txt" ||
    fail "the report has no jemalloc figures: $(grep -i -A1 'allocator' "$TMP/report.txt")"
for ((i = 0; i < 100; i++)); do grep -q heapinject <<<"$(threads)" || break; sleep 0.05; done
after2=$(threads)
[ "$(redis-cli -p "$port" get k)" = v ] || fail "redis lost its key after the session"
echo "after a full session:  $after2"
grep -o "allocated .* arenas" "$TMP/report.txt"
[ "$after2" = "$before" ] || fail "threads after a full session '$after2', before attach '$before'"
ok "a full session with jemalloc's figures in its report: redis-server has the threads it had"

# --- idle: two sessions with no client ------------------------------------
# With no thread calling malloc or free within 1 s the agent reads the
# figures itself (jemalloc may then give it an arena and a background
# thread); the arena has no thread once the agent is gone and the next
# session's agent is given it: at most one thread more, whatever the count
# of sessions.
count() { wc -w <<<"$1"; }
for n in 1 2; do
    "$HEAPINJECT" -p "$TPID" --duration 1 -o "$TMP/idle$n.txt" 2>"$TMP/idle$n.err" ||
        fail "idle session $n failed: $(cat "$TMP/idle$n.err")"
    grep -q "allocator: jemalloc .*its own figures" "$TMP/idle$n.txt" ||
        fail "idle session $n: no jemalloc figures: $(grep -i -A1 'allocator' "$TMP/idle$n.txt")"
    for ((i = 0; i < 100; i++)); do grep -q heapinject <<<"$(threads)" || break; sleep 0.05; done
    idle[n]=$(threads)
    echo "after idle session $n: ${idle[n]} ($(grep -o 'its own figures, read in [0-9.]* ms' "$TMP/idle$n.txt"))"
done
[ "${idle[2]}" = "${idle[1]}" ] && [ "$(count "${idle[2]}")" -le $(($(count "$before") + 1)) ] ||
    fail "idle sessions: threads '${idle[1]}', then '${idle[2]}' (before attach: '$before')"
[ "$(redis-cli -p "$port" get k)" = v ] || fail "redis lost its key after the idle sessions"
ok "two idle sessions: $(count "${idle[2]}") threads after each (before attach $(count "$before"))"
