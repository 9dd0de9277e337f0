#!/usr/bin/env python3
"""fake_agent.py - something other than heapinject's profiler serving the
agent socket of its own process, as the target's user can: the cli, often
root, must treat everything it says as hostile.

  fake_agent.py KIND READY_FILE [ARG]

Binds the socket the cli looks for (/run/user/UID/heapinject/PID.sock or
/tmp/heapinject-UID/PID.sock, PID being this process, so that the cli's
SO_PEERCRED check passes), writes its pid to READY_FILE, and answers HELLO,
ALLOC_STATS_REQ and SNAPSHOT_REQ on any number of connections. KIND is
what a snapshot looks like:

  buckets      SNAP_BEGIN claims 10 M stacks, then stacks of no frames
               without end
  big          the same with 128 frames a stack (the most a stack may have)
  threads      SNAP_THREAD records without end
  maps_lines   one-line records of maps text without end
  maps_line    one maps line that never ends
  nodes        (stacks as nodes, issue 17) SNAP_NODES records without end
  deep_nodes   a chain of 129 nodes: deeper than any stack may be
  unsent_node  a stack that names a node never sent
  depth_lie    a stack whose frame count is not its node's depth
  census       (to CENSUS_PREP) READY, then (to CENSUS_REQ) census groups without end
  modules ARG  a whole, small snapshot whose maps text names the files in
               ARG (':'-separated PATH[@HEXOFFSET]; a FIFO, a library with
               escape sequences in its name, ...), one executable mapping
               each, and a one-frame stack each, at the return address
               HEXOFFSET + 1 (default 0x1000) of the file; the thread's name
               and the allocator's answer hold escape sequences; when
               the cli asks for stack nodes (SNAPSHOT_REQ's flags), the
               first stack comes as a SNAP_BUCKET (as past a full node
               table) and the others as SNAP_NODES + SNAP_STACKS
"""
import os
import signal
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proto_client as pc  # noqa: E402

T = dict(pc.T, CENSUS_REQ=9, CENSUS_PREP=10, CENSUS_READY=59, SNAP_NODES=45, SNAP_STACKS=46)
WANT_NODES = 1
NODE = struct.Struct("<QI")  # struct hi_snap_node
HOSTILE = b"\x1b]0;PWNED\x07\x1b[31m"
BASE = 0x7F0000000000
STEP = 0x100000


def msg(t, body=b""):
    return pc.HDR.pack(pc.MAGIC, pc.VERSION, t, len(body)) + body


def sock_path():
    uid = os.getuid()
    run = "/run/user/%d" % uid
    if os.path.isdir(run):
        d = run + "/heapinject"
    else:
        d = "/tmp/heapinject-%d" % uid
    os.makedirs(d, mode=0o700, exist_ok=True)
    return "%s/%d.sock" % (d, os.getpid())


def totals():
    return struct.pack("<14Q", *([0] * 14))


def hello():
    now = time.monotonic_ns()
    return msg(T["HELLO"], pc.HELLO.pack(pc.VERSION, os.getpid(), 4096, now - 10**9, now, 0, 1, 1, 0, 1000))


def begin(nbuckets):
    now = time.monotonic_ns()
    return msg(T["SNAP_BEGIN"], struct.pack("<iIQQQQQ", os.getpid(), 1, 4096, now - 10**9, now, nbuckets, 1 << 20)
               + totals())


def bucket(pcs, live=4096):
    growth = [-1] * pc.GROWTH
    head = pc.BUCKET.pack(live, 1, live, 1, live, 1, live, 1, 0, 0, *growth, os.getpid(), len(pcs))
    return msg(T["SNAP_BUCKET"], head + b"".join(struct.pack("<Q", p) for p in pcs))


def nodes(parent_pc):
    return msg(T["SNAP_NODES"], b"".join(NODE.pack(p, parent) for parent, p in parent_pc))


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80])
        v >>= 7
    return out + bytes([v])


def zigzag(v):
    return (v << 1) ^ (v >> 63)


def stacks(node_depth_live):
    """SNAP_STACKS of (node, nframes, live) entries: 22 varints each
    (common/proto.h): node, nframes, kind, zigzag(tid), 4 raw and 4
    estimated counters, oldest_live_ns, live_age_sum_ms, 8 zigzag growth
    points."""
    out = b""
    for node, depth, live in node_depth_live:
        fields = [node, depth, 0, zigzag(os.getpid()), live, 1, live, 1, live, 1, live, 1, 0, 0]
        fields += [zigzag(-1)] * pc.GROWTH
        out += b"".join(varint(f) for f in fields)
    return msg(T["SNAP_STACKS"], out)


def thread(name):
    return msg(T["SNAP_THREAD"], pc.THREAD.pack(os.getpid(), 1, name[:16], 4096, 1, 0, 0))


def alloc_stats():
    why = (b"not glibc " + HOSTILE).ljust(96, b"\0")
    return msg(T["ALLOC_STATS"], struct.pack("<IIiI13Q", 0, 0, -95, 0, *([0] * 13)) + why)


def flood(c, one):
    """Sends `one()` until the cli hangs up."""
    try:
        c.sendall(begin(10_000_000))
        while True:
            c.sendall(one())
    except OSError:
        pass


def modules_snapshot(files, want_nodes):
    out = [begin(len(files)), thread(b"w" + HOSTILE)]
    out.append(msg(T["SNAP_HIST"], pc.HISTS.pack(*([0] * (2 * pc.HIST_CLASSES)))))
    maps = b""
    nnodes = 0
    for i, f in enumerate(files):
        lo = BASE + i * STEP
        f, _, off = f.partition("@")
        maps += b"%x-%x r-xp 00000000 00:00 %d %s\n" % (lo, lo + STEP, 1000 + i, f.encode())
        ret = lo + int(off or "1000", 16) + 1
        if want_nodes and i > 0:
            out.append(nodes([(0, ret)]))
            nnodes += 1
            out.append(stacks([(nnodes, 1, 4096 * (i + 1))]))
        else:
            out.append(bucket([ret], live=4096 * (i + 1)))
    out.append(msg(T["SNAP_MAPS"], maps))
    out.append(msg(T["SNAP_END"], struct.pack("<Q", len(files))))
    return b"".join(out)


def serve(c, kind, arg):
    buf = b""
    while True:
        while len(buf) < pc.HDR.size:
            d = c.recv(4096)
            if not d:
                return
            buf += d
        magic, version, t, length = pc.HDR.unpack(buf[:pc.HDR.size])
        while len(buf) < pc.HDR.size + length:
            d = c.recv(4096)
            if not d:
                return
            buf += d
        body = buf[pc.HDR.size:pc.HDR.size + length]
        buf = buf[pc.HDR.size + length:]
        if t == T["HELLO"]:
            c.sendall(hello())
        elif t == T["ALLOC_STATS_REQ"]:
            c.sendall(alloc_stats())
        elif t == T["CENSUS_PREP"] and kind == "census":
            # ready: the cli may hold this process's other threads (none)
            c.sendall(msg(T["CENSUS_READY"], struct.pack("<iI", threading.get_native_id(), 0)))
        elif t == T["CENSUS_REQ"] and kind == "census":
            group = msg(56, struct.pack("<6Q32s32sQII8Q", 64, 0, 1, 0, 0, 0, b"", b"", 0, 0, 0, *([0] * 8)))
            try:
                while True:
                    c.sendall(group)
            except OSError:
                return
        elif t == T["SNAPSHOT_REQ"]:
            if kind == "buckets":
                flood(c, lambda: bucket([]))
            elif kind == "big":
                one = bucket([BASE + 0x1001] * 128)
                flood(c, lambda: one)
            elif kind == "threads":
                one = thread(b"t")
                flood(c, lambda: one)
            elif kind == "maps_lines":
                one = msg(T["SNAP_MAPS"], b"7f0000000000-7f0000001000 r--p 00000000 00:00 0\n" * 1300)
                flood(c, lambda: one)
            elif kind == "maps_line":
                one = msg(T["SNAP_MAPS"], b"/" * 65536)
                flood(c, lambda: one)
            elif kind == "nodes":
                one = nodes([(0, BASE + 0x1001)] * 5000)
                flood(c, lambda: one)
            elif kind in ("deep_nodes", "unsent_node", "depth_lie"):
                snap = [begin(1)]
                if kind == "deep_nodes":
                    snap.append(nodes([(i, BASE + 0x1001 + i) for i in range(129)]))
                elif kind == "unsent_node":
                    snap += [nodes([(0, BASE + 0x1001)]), stacks([(7, 1, 4096)])]
                else:
                    snap += [nodes([(0, BASE + 0x1001)]), stacks([(1, 3, 4096)])]
                snap.append(msg(T["SNAP_END"], struct.pack("<Q", 1)))
                try:
                    c.sendall(b"".join(snap))
                except OSError:
                    pass
            else:
                flags = struct.unpack("<I", body[:4])[0] if len(body) >= 4 else 0
                c.sendall(modules_snapshot(arg.split(":"), flags & WANT_NODES))
            return
        else:
            c.sendall(msg(T["ERROR"], struct.pack("<i120s", -95, b"not supported")))


def main():
    kind, ready = sys.argv[1], sys.argv[2]
    arg = sys.argv[3] if len(sys.argv) > 3 else ""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the finally below removes the socket
    path = sock_path()
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(8)
    with open(ready + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(ready + ".tmp", ready)
    try:
        while True:
            c, _ = s.accept()
            try:
                serve(c, kind, arg)
            except OSError:
                pass
            c.close()
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
