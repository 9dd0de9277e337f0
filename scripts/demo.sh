#!/usr/bin/env bash
# demo.sh - start a small program that leaks, attach heapinject, print the report.
set -eu
cd "$(dirname "$0")/.."
demo=build/targets/demo_leaky
out=$(mktemp -d /tmp/heapinject-demo.XXXXXX)
"$demo" >"$out/demo.out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 100); do grep -q ready "$out/demo.out" && break; sleep 0.05; done
echo "demo: started $demo as pid $pid (it leaks from leak_session_buffer())"
echo "demo: \$ build/heapinject -p $pid --duration 3"
build/heapinject -p "$pid" --duration 3
echo
if kill -0 "$pid" 2>/dev/null; then
    echo "demo: pid $pid is still running after detach, as it should be."
else
    echo "demo: pid $pid is gone: that is a bug, please report it." >&2
    exit 1
fi
