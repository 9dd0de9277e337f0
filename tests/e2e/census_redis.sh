#!/bin/bash
# census_redis.sh - a census of a real program we did not write: Debian's
# redis-server after loading 100,000 keys. As shipped it runs on jemalloc:
# the census refuses with the allocator's name. Run on glibc malloc (a
# libjemalloc.so.2 that defines only mallctl, malloc_stats_print and
# nallocx, first on LD_LIBRARY_PATH: census_redis_shim.c), the census finds
# at least the keys' blocks in use, almost nothing unreachable, and most of
# the heap held through redis's own global `server`; every key is intact
# after, and no child or tracer is left behind.
. "$(dirname "$0")/lib.sh"

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    "$ROOT/scripts/deps.sh" redis-server redis-tools >"$TMP/deps.log" 2>&1 ||
        skip "redis-server / redis-tools not installed and cannot be: $(tail -2 "$TMP/deps.log")"
fi
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['census']; print(eval(sys.argv[2]))" "$@"; }
mkdir -p "$TMP/lib"
gcc -shared -fPIC -O2 -Wall -Werror -Wl,-soname,libjemalloc.so.2 -o "$TMP/lib/libjemalloc.so.2" \
    "$ROOT/tests/e2e/census_redis_shim.c" || fail "cannot build the shim"

# start_redis [ENV...]: a redis-server on a free loopback port; sets RPID, PORT.
start_redis() {
    PORT=$((20000 + ($$ + RANDOM) % 20000))
    for _ in 1 2 3 4 5; do
        ss -ltn 2>/dev/null | grep -q ":$PORT " || break
        PORT=$((PORT + 1))
    done
    env "$@" redis-server --bind 127.0.0.1 --port "$PORT" --save "" --appendonly no --daemonize no \
        --dir "$TMP" >"$TMP/redis.$PORT.log" 2>&1 &
    RPID=$!
    PIDS+=("$RPID")
    for _ in $(seq 100); do
        redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && return
        sleep 0.1
    done
    fail "redis did not start: $(tail -5 "$TMP/redis.$PORT.log")"
}
load_keys() {
    seq 1 100000 | awk '{printf "SET key:%d value:%d:%s\r\n", $1, $1, "payload-payload-payload-payload"}' |
        redis-cli -p "$PORT" --pipe >"$TMP/pipe.log" 2>&1 || fail "loading keys: $(cat "$TMP/pipe.log")"
    [ "$(redis-cli -p "$PORT" dbsize)" = 100000 ] || fail "redis holds $(redis-cli -p "$PORT" dbsize) keys"
}

# --- as shipped: jemalloc, a clear refusal ----------------------------------
start_redis
load_keys
"$HEAPINJECT" census -p "$RPID" >"$TMP/je.out" 2>"$TMP/je.err"; rc=$?
cat "$TMP/je.err"
[ $rc = 5 ] || fail "census of redis on jemalloc: exit $rc, wanted 5 (unsupported)"
grep -q "census supports glibc malloc; this process uses jemalloc" "$TMP/je.err" ||
    fail "no clear refusal for jemalloc: $(cat "$TMP/je.err")"
assert_not_traced "$RPID"
[ "$(redis-cli -p "$PORT" get key:777)" = "value:777:payload-payload-payload-payload" ] || fail "redis lost data"
kill "$RPID"; wait "$RPID" 2>/dev/null

# --- on glibc malloc: the heap as it is -------------------------------------
start_redis LD_LIBRARY_PATH="$TMP/lib"
grep -q "$TMP/lib/libjemalloc.so.2" "/proc/$RPID/maps" || fail "the shim is not loaded"
load_keys
"$HEAPINJECT" census -p "$RPID" --format json -o "$TMP/c.json" 2>"$TMP/c.err" || fail "census failed: $(cat "$TMP/c.err")"
cat "$TMP/c.err"
inuse=$(jq_ "$TMP/c.json" "d['in_use']['bytes']")
blocks=$(jq_ "$TMP/c.json" "d['in_use']['blocks']")
lost=$(jq_ "$TMP/c.json" "d['unreachable']['bytes']")
# What only 'server' reaches, and what it shares with other roots (the
# epoll registrations' data reach the clients, and through them the db):
# the shared records name it.
server=$(jq_ "$TMP/c.json" "sum(r['retained_bytes'] for r in d['roots'] if r['name'].startswith('server ') or (r['kind'] == 'shared' and 'server (' in r['name']))")
echo "in use $inuse bytes in $blocks blocks, unreachable $lost, held through 'server' $server," \
    "stall $(jq_ "$TMP/c.json" "d['stall_ms']") ms, scan $(jq_ "$TMP/c.json" "d['scan_ms']") ms"
# each key is at least a dict entry, its key and its value object
[ "$blocks" -ge 300000 ] || fail "only $blocks blocks in use for 100,000 keys"
[ "$((lost * 100))" -le "$inuse" ] || fail "$lost of $inuse bytes unreachable in redis (more than 1%)"
[ "$((server * 10))" -ge "$((inuse * 8))" ] || fail "redis's global 'server' holds only $server of $inuse bytes"
"$HEAPINJECT" census -q -p "$RPID" >"$TMP/c.txt" || fail "text census failed"
# server's own row, or (when another root also reaches the db: a client's
# epoll data, a word left on a thread's stack) the shared row that names it
grep -Eq "^ +[0-9.]+ [KMG]iB +[0-9.]+k blocks +(server \(|shared: reachable from more than one root, among them server \()" "$TMP/c.txt" ||
    fail "the text census does not name redis's global server: $(cat "$TMP/c.txt")"
# redis is unharmed: every key intact, no child, no tracer
bad=$(redis-cli -p "$PORT" eval 'local bad = 0
for i = 1, 100000 do
  if redis.call("GET", "key:" .. i) ~= "value:" .. i .. ":payload-payload-payload-payload" then bad = bad + 1 end
end
return bad' 0)
[ "$bad" = 0 ] || fail "$bad keys damaged after the census"
[ -z "$(ps -o pid= --ppid "$RPID")" ] || fail "the census left a child of redis"
assert_not_traced "$RPID"
assert_alive "$RPID"
ok "redis census: $blocks blocks, $lost bytes unreachable, 'server' holds $server of $inuse bytes"
