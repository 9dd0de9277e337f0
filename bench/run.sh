#!/usr/bin/env bash
# run.sh - `make bench`: installs heaptrack for the comparison, runs bench/run.py.
set -eu
cd "$(dirname "$0")/.."
command -v heaptrack >/dev/null || scripts/deps.sh heaptrack || echo "bench: heaptrack comparison will be skipped" >&2
exec python3 bench/run.py "$@"
