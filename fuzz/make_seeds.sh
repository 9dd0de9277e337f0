#!/usr/bin/env bash
# make_seeds.sh - (re)creates the seed corpora under fuzz/corpus/ from a real
# session on build/targets/cli_leaky: the bytes a real agent sends (for
# fuzz_client), real requests (fuzz_agent_request), and real profile files
# in JSON, pprof and heap formats (fuzz_profile_*). Needs `make all targets`.
# The seeds are committed; run this again when the protocol or a format
# changes.
set -eu
cd "$(dirname "$0")/.."
H=build/heapinject
C=fuzz/corpus
T=$(mktemp -d)
trap 'kill -9 $TP 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p $C/fuzz_client $C/fuzz_agent_request $C/fuzz_profile_read $C/fuzz_profile_json \
         $C/fuzz_profile_pprof $C/fuzz_profile_heap

build/targets/cli_leaky >"$T/out" 2>&1 &
TP=$!
sleep 0.5
$H attach -p "$TP" --rate 4K >/dev/null
sleep 1
SOCK=$(ls /tmp/heapinject-0/$TP.sock /run/user/0/heapinject/$TP.sock 2>/dev/null | head -1)

# The agent's bytes for each conversation fuzz_client can run (its first
# byte chooses; see fuzz/fuzz_client.c), maps trimmed to keep seeds small.
python3 - "$SOCK" "$C/fuzz_client" <<'PY'
import socket, struct, sys
path, out = sys.argv[1], sys.argv[2]
H = struct.Struct("<IHHI")
def conv(requests):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.settimeout(5)
    got = b""
    def read_msg():
        nonlocal got
        hdr = b""
        while len(hdr) < 12: hdr += s.recv(12 - len(hdr))
        m, v, t, n = H.unpack(hdr)
        body = b""
        while len(body) < n: body += s.recv(n - len(body))
        return t, hdr, body
    for t, body, until in requests:
        s.sendall(H.pack(0x4a4e4948, 1, t, len(body)) + body)
        while True:
            mt, hdr, b = read_msg()
            if mt == 36 and len(b) > 600:        # SNAP_MAPS: keep a slice of it
                b = b[:600]; hdr = H.pack(0x4a4e4948, 1, 36, 600)
            if mt == 18 and until != 18:
                continue                          # ticks: only where wanted
            got += hdr + b
            if mt == until:
                break
    s.close()
    return got
HELLO = (1, struct.pack("<I", 1), 1)
SNAP = (2, b"", 37)
ack = lambda t, body=b"": (t, body, 16)
seeds = {
    "hello_2snaps": (0x00, [HELLO, SNAP, SNAP]),
    "hello_snap_rate": (0x04, [HELLO, SNAP, ack(3, struct.pack("<Q", 4096))]),
    "watch_ticks": (0x0e, [HELLO, ack(4), (2, b"", 18), (2, b"", 18)]),
    "own_snap_detach": (0x08, [HELLO, ack(6), SNAP, ack(5)]),  # last: it detaches
}
for name, (script, reqs) in seeds.items():
    data = conv(reqs)
    open("%s/%s" % (out, name), "wb").write(bytes([script]) + data)
PY

# Requests as a cli sends them (4 read-size bytes first: see the harness).
python3 - "$C/fuzz_agent_request" <<'PY'
import struct, sys
out = sys.argv[1]
H = lambda t, b=b"": struct.pack("<IHHI", 0x4a4e4948, 1, t, len(b)) + b
HELLO = H(1, struct.pack("<I", 1))
seeds = {
    "session": HELLO + H(6) + H(4) + H(2) + H(5),
    "rate": HELLO + H(3, struct.pack("<Q", 4096)) + H(2),
    "nohello": H(2) + HELLO,
    "big_hello": H(1, struct.pack("<I", 1) + b"\0" * 252),
}
for i, (name, data) in enumerate(seeds.items()):
    open("%s/%s" % (out, name), "wb").write(bytes([0, 1, 7, 12 + i]) + data)
PY

$H attach -p "$TP" --rate 4K >/dev/null 2>&1
sleep 1
$H snapshot -p "$TP" --format json -o "$T/p.json" 2>/dev/null
$H snapshot -p "$TP" --format pprof -o "$T/p.pb.gz" 2>/dev/null
$H snapshot -p "$TP" --format heap -o "$T/p.heap" 2>/dev/null
$H detach -p "$TP" >/dev/null 2>&1
# Keep them small: the first maps lines and stacks are enough to start from.
python3 - "$T/p.json" "$C/fuzz_profile_json/session.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["stacks"] = p.get("stacks", [])[:6]
if isinstance(p.get("maps"), str):
    p["maps"] = "\n".join(p["maps"].splitlines()[:12]) + "\n"
p["ticks"] = p.get("ticks", [])[:4]
open(sys.argv[2], "w").write(json.dumps(p, indent=1))
PY
head -c 6000 "$T/p.heap" >"$C/fuzz_profile_heap/session.heap"
gzip -dc "$T/p.pb.gz" >"$C/fuzz_profile_pprof/session.pb"
cp "$C/fuzz_profile_json/session.json" "$C/fuzz_profile_read/session.json"
cp "$T/p.pb.gz" "$C/fuzz_profile_read/session.pb.gz"
cp "$C/fuzz_profile_heap/session.heap" "$C/fuzz_profile_read/session.heap"
ls -la $C/*
