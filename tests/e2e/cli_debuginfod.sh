#!/usr/bin/env bash
# cli_debuginfod: a stripped program whose debug information exists only on
# a debuginfod server (as distributions serve it). With DEBUGINFOD_URLS set,
# heapinject's symbolizer (libdw) fetches it by build id and the report names
# the functions and lines; without it, the same report has none.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

need_reader debuginfod debuginfod
mkdir -p "$TMP/dbg"
cp "$TARGETS/cli_leaky" "$TMP/stripped_leaky"
objcopy --only-keep-debug "$TMP/stripped_leaky" "$TMP/dbg/leaky.debug" || fail "objcopy failed"
strip --strip-all "$TMP/stripped_leaky" || fail "strip failed"
bid=$(readelf -n "$TMP/stripped_leaky" | awk '/Build ID/{print $3}')
[ -n "$bid" ] || fail "the target has no build id"

# A private server on a free port, indexing only our debug file.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F "$TMP/dbg" -p "$port" -d "$TMP/db.sqlite" -t 0 >"$TMP/server.log" 2>&1 &
PIDS+=("$!")
export DEBUGINFOD_CACHE_PATH="$TMP/cache"
url="http://127.0.0.1:$port"
# The server indexes in the background: ask until it answers (a fresh
# probe cache each time: the client caches a "not found" for minutes).
for ((i = 0; i < 100; i++)); do
    rm -rf "$TMP/probe-cache"
    DEBUGINFOD_CACHE_PATH="$TMP/probe-cache" DEBUGINFOD_URLS=$url debuginfod-find debuginfo "$bid" \
        >/dev/null 2>&1 && break
    sleep 0.2
done
((i < 100)) || fail "the debuginfod server never served the debug file: $(tail -5 "$TMP/server.log")"

"$TMP/stripped_leaky" >"$TMP/leaky.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/leaky.out" ready 10 || fail "target did not start"

DEBUGINFOD_URLS='' "$HEAPINJECT" -p "$TPID" --duration 1 --rate 16K -q -o "$TMP/bare.txt" 2>"$TMP/bare.err" ||
    fail "profiling without debuginfod: $(cat "$TMP/bare.err")"
grep -q churn_alloc "$TMP/bare.txt" && fail "names without any debug information: the test proves nothing"
DEBUGINFOD_URLS=$url "$HEAPINJECT" -p "$TPID" --duration 1 --rate 16K -q -o "$TMP/named.txt" 2>"$TMP/named.err" ||
    fail "profiling with debuginfod: $(cat "$TMP/named.err")"
grep -q "churn_alloc .*cli_leaky.c:[0-9]" "$TMP/named.txt" || fail "no names from debuginfod: $(head -20 "$TMP/named.txt")"
ls "$TMP/cache/$bid/debuginfo" >/dev/null 2>&1 || fail "libdw did not fetch into the cache"
assert_alive "$TPID"
ok "a stripped program's functions and lines come from a debuginfod server"
