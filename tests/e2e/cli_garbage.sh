#!/usr/bin/env bash
# cli_garbage: garbage, oversized and truncated messages on the profiler's
# socket leave the target running and the profiler serving the cli.
. "$(dirname "$0")/lib.sh"

start_target cli_leaky
"$HEAPINJECT" attach -p "$TPID" 2>/dev/null || fail "attach failed"
sock=$(ls /tmp/heapinject-0/"$TPID".sock /run/user/0/heapinject/"$TPID".sock 2>/dev/null | head -1)
[ -n "$sock" ] || fail "no socket"

python3 - "$sock" <<'PY' || fail "could not send the garbage"
import os, socket, struct, sys, time
path = sys.argv[1]
MAGIC, VERSION = 0x4a4e4948, 1
def conn():
    # A full listen backlog makes a unix connect fail with EAGAIN: retry.
    for _ in range(500):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            s.settimeout(5)
            return s
        except BlockingIOError:
            s.close()
            time.sleep(0.01)
    raise SystemExit("the profiler stopped accepting connections")
def drain(s):
    try:
        while s.recv(65536):
            pass
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
cases = [
    os.urandom(4096),                                        # random bytes
    b"GET / HTTP/1.1\r\n\r\n",                              # another protocol
    struct.pack("<IHHI", MAGIC, VERSION, 1, 0xFFFFFFF0),     # oversized HELLO
    struct.pack("<IHHI", MAGIC, VERSION, 2, 1 << 30) + b"x" * 100,  # oversized request
    struct.pack("<IHHI", MAGIC, 99, 1, 4) + b"\1\0\0\0",     # wrong version
    struct.pack("<IHHI", MAGIC, VERSION, 77, 0),             # unknown type
    struct.pack("<IHHI", MAGIC, VERSION, 1, 4) + b"\1\0",    # truncated body, then close
    struct.pack("<IHHI", MAGIC, VERSION, 1, 4) + b"\1\0\0\0" + struct.pack("<IHHI", MAGIC, VERSION, 3, 8) + b"\0" * 8,  # SET_RATE 0
]
for data in cases:
    s = conn()
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    if data.endswith(b"\1\0"):
        s.close()
    else:
        s.shutdown(socket.SHUT_WR)
        drain(s)
# Many connections that say nothing and go.
for _ in range(50):
    conn().close()
PY

assert_alive "$TPID"
"$HEAPINJECT" status -p "$TPID" >"$TMP/status.out" 2>&1; rc=$?
[ "$rc" -eq 0 ] || fail "status after garbage exited $rc: $(cat "$TMP/status.out")"
grep -q "sampling 1 in 512 KiB" "$TMP/status.out" || fail "the rate changed: $(cat "$TMP/status.out")"
"$HEAPINJECT" snapshot -p "$TPID" >"$TMP/snap.txt" 2>&1 || fail "snapshot after garbage failed"
"$HEAPINJECT" detach -p "$TPID" 2>/dev/null || fail "detach after garbage failed"
assert_alive "$TPID"
ok "garbage on the socket changed nothing"
