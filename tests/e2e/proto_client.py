#!/usr/bin/env python3
"""proto_client.py - a small, independent client of the heapinject wire
protocol (common/proto.h), for the payload's end-to-end tests.

  hello SOCK                  print the agent's HELLO
  snapshot SOCK [-o FILE]     take a snapshot; write JSON (symbolized stacks)
  sum FILE FUNC [--top]       totals of the buckets whose stack contains FUNC
                              (--top: FUNC must be the innermost frame)
  show FILE                   print a snapshot JSON readably
  set-rate SOCK RATE          SET_RATE, expect ACK
  watch SOCK N                WATCH, print N ticks
  detach SOCK                 DETACH, expect ACK and the connection closing
  own SOCK                    HELLO + OWN_SESSION, then hold the connection
  hostile SOCK KIND           send a bad message; print what came back
  got PID                     malloc-family GOT slots of PID (ELF + /proc/PID/mem)
"""
import json
import os
import socket
import struct
import subprocess
import sys
import time

MAGIC = 0x4A4E4948
import os
import re
# The version the agent speaks, from the header both sides are built with.
# (a copy of this file run as another user finds it beside itself).
_here = os.path.dirname(os.path.abspath(__file__))
_hdr = next(p for p in (os.path.join(_here, "..", "..", "common", "proto.h"), os.path.join(_here, "proto.h"))
            if os.path.exists(p))
with open(_hdr) as _h:
    _text = _h.read()
    VERSION = int(re.search(r"^#define HI_PROTO_VERSION (\d+)", _text, re.M).group(1))
    MAX_REQUEST_BODY = int(re.search(r"^#define HI_MAX_REQUEST_BODY (\d+)u", _text, re.M).group(1))
HDR = struct.Struct("<IHHI")
T = dict(HELLO=1, SNAPSHOT_REQ=2, SET_RATE=3, WATCH=4, DETACH=5, OWN_SESSION=6, ALLOC_STATS_REQ=7, TRIM_REQ=8,
         ACK=16, ERROR=17,
         TICK=18, SNAP_BEGIN=32, SNAP_THREAD=33, SNAP_HIST=34, SNAP_BUCKET=35, SNAP_MAPS=36, SNAP_END=37,
         SNAP_MMAP=44, ALLOC_STATS=48, TRIM_DONE=49)
NAMES = {v: k for k, v in T.items()}
HIST_CLASSES = 48
GROWTH = 8
HELLO = struct.Struct("<IiQQQQIIII")
TOTALS_FIELDS = ["exact_alloc_bytes", "exact_alloc_calls", "exact_free_bytes", "exact_free_calls",
                 "est_alloc_bytes", "est_alloc_objects", "est_free_bytes", "est_free_objects",
                 "est_live_bytes", "est_live_objects", "raw_samples", "dropped_samples", "buckets",
                 "payload_mem_bytes"]
TOTALS = struct.Struct("<14Q")
TICK = struct.Struct("<QQ" + "14Q" + "Q")
BEGIN = struct.Struct("<iIQQQQQ" + "14Q")
THREAD = struct.Struct("<iI16s4Q")
HISTS = struct.Struct("<%dQ%dQ" % (HIST_CLASSES, HIST_CLASSES))
BUCKET = struct.Struct("<10Q%dqiI" % GROWTH)
BUCKET_FIELDS = ["raw_live_bytes", "raw_live_objects", "raw_alloc_bytes", "raw_alloc_objects",
                 "est_live_bytes", "est_live_objects", "est_alloc_bytes", "est_alloc_objects",
                 "oldest_live_ns", "live_age_sum_ms"]
ERROR = struct.Struct("<i120s")


class ProtoError(Exception):
    pass


class Conn:
    def __init__(self, path, timeout=30.0):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)

    def send(self, mtype, body=b"", version=VERSION, magic=MAGIC, length=None):
        self.s.sendall(HDR.pack(magic, version, mtype, len(body) if length is None else length) + body)

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed after %d of %d bytes" % (len(buf), n))
            buf += chunk
        return buf

    def recv(self):
        magic, version, mtype, length = HDR.unpack(self.recv_exact(HDR.size))
        if magic != MAGIC or version != VERSION:
            raise ProtoError("bad header from agent: %x %d" % (magic, version))
        if length > 64 * 1024 + 4096:
            raise ProtoError("record too long: %d" % length)
        body = self.recv_exact(length)
        if mtype == T["ERROR"]:
            code, msg = ERROR.unpack(body[:ERROR.size])
            raise ProtoError("ERROR %d: %s" % (code, msg.rstrip(b"\0").decode()))
        return mtype, body

    def expect(self, mtype):
        t, body = self.recv()
        if t != mtype:
            raise ProtoError("expected %s, got %s" % (NAMES.get(mtype), NAMES.get(t, t)))
        return body

    def hello(self):
        self.send(T["HELLO"], struct.pack("<I", VERSION))
        f = HELLO.unpack(self.expect(T["HELLO"])[:HELLO.size])
        keys = ["version", "pid", "rate", "attach_ns", "now_ns", "ttl_ns", "slots_patched",
                "modules_patched", "owned", "tick_ms"]
        return dict(zip(keys, f))

    def ack(self, mtype):
        (t,) = struct.unpack("<H", self.expect(T["ACK"])[:2])
        if t != mtype:
            raise ProtoError("ACK for %d, expected %d" % (t, mtype))


def totals(vals):
    return dict(zip(TOTALS_FIELDS, vals))


def snapshot(conn):
    conn.send(T["SNAPSHOT_REQ"])
    b = BEGIN.unpack(conn.expect(T["SNAP_BEGIN"])[:BEGIN.size])
    snap = dict(pid=b[0], nthreads=b[1], rate=b[2], attach_ns=b[3], now_ns=b[4], nbuckets=b[5],
                rss_bytes=b[6], totals=totals(b[7:]), threads=[], buckets=[], mmap_buckets=[], maps="")
    for _ in range(snap["nthreads"]):
        tid, alive, name, ab, ac, fb, fc = THREAD.unpack(conn.expect(T["SNAP_THREAD"])[:THREAD.size])
        snap["threads"].append(dict(tid=tid, alive=alive, name=name.rstrip(b"\0").decode(errors="replace"),
                                    alloc_bytes=ab, alloc_calls=ac, free_bytes=fb, free_calls=fc))
    h = HISTS.unpack(conn.expect(T["SNAP_HIST"])[:HISTS.size])
    snap["hist_calls"], snap["hist_bytes"] = list(h[:HIST_CLASSES]), list(h[HIST_CLASSES:])
    maps = []
    while True:
        t, body = conn.recv()
        if t == T["SNAP_BUCKET"]:
            f = BUCKET.unpack(body[:BUCKET.size])
            nframes = f[-1]
            base = BUCKET.size + 8 * nframes
            # kind malloc: exactly the PCs; another kind: a trailer of at
            # least its u32 kind (hi_snap_bucket_ext)
            if len(body) != base and len(body) < base + 4:
                raise ProtoError("bucket length %d for %d frames" % (len(body), nframes))
            d = dict(zip(BUCKET_FIELDS, f[:10]))
            d["growth"] = list(f[10:10 + GROWTH])
            d["first_tid"] = f[10 + GROWTH]
            d["frames"] = list(struct.unpack("<%dQ" % nframes, body[BUCKET.size:base]))
            d["kind"] = struct.unpack("<I", body[base:base + 4])[0] if len(body) > base else 0
            # the malloc family's buckets in "buckets" (what the totals
            # count), direct mmap's apart
            snap["buckets" if d["kind"] == 0 else "mmap_buckets"].append(d)
        elif t == T["SNAP_MMAP"]:
            snap["mmap"] = dict(zip(("map_calls", "map_bytes", "unmap_calls", "remap_calls", "tracked",
                                     "dropped"), struct.unpack("<6Q", body[:48])))
        elif t == T["SNAP_MAPS"]:
            maps.append(body.decode(errors="replace"))
        elif t == T["SNAP_END"]:
            (sent,) = struct.unpack("<Q", body[:8])
            got = len(snap["buckets"]) + len(snap["mmap_buckets"])
            if sent != got:
                raise ProtoError("SNAP_END says %d buckets, got %d" % (sent, got))
            break
        else:
            raise ProtoError("unexpected %s in snapshot" % NAMES.get(t, t))
    snap["maps"] = "".join(maps)
    return snap


# ---- symbolization: /proc maps text + ELF program headers + nm ----------

class Symbolizer:
    def __init__(self, maps_text):
        self.maps = []
        for line in maps_text.splitlines():
            parts = line.split(None, 5)
            if len(parts) < 6 or not parts[5].startswith("/"):
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            self.maps.append((lo, hi, int(parts[2], 16), parts[5].strip()))
        self.syms = {}
        self.elf = {}

    def elf_info(self, path):
        if path not in self.elf:
            info = None
            try:
                with open(path, "rb") as f:
                    e = f.read(64)
                    etype = struct.unpack_from("<H", e, 16)[0]
                    phoff = struct.unpack_from("<Q", e, 32)[0]
                    phentsize, phnum = struct.unpack_from("<HH", e, 54)
                    f.seek(phoff)
                    ph = f.read(phentsize * phnum)
                    loads = []
                    for i in range(phnum):
                        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", ph, i * phentsize)
                        if p_type == 1:
                            loads.append((p_offset, p_vaddr, p_filesz))
                    info = (etype, loads)
            except OSError:
                pass
            self.elf[path] = info
        return self.elf[path]

    def table(self, path):
        if path not in self.syms:
            tab = []
            for args in (["nm", "-C", "--defined-only", "-n", path], ["nm", "-C", "-D", "--defined-only", "-n", path]):
                try:
                    out = subprocess.run(args, capture_output=True, text=True, timeout=60).stdout
                except (OSError, subprocess.SubprocessError):
                    out = ""
                for line in out.splitlines():
                    p = line.split(" ", 2)
                    if len(p) == 3 and p[1] in "TtWwi":
                        tab.append((int(p[0], 16), p[2].split("@")[0]))
                if tab:
                    break
            tab.sort()
            self.syms[path] = tab
        return self.syms[path]

    def lookup(self, pc):
        for lo, hi, off, path in self.maps:
            if lo <= pc < hi:
                info = self.elf_info(path)
                if not info:
                    return "?", path
                etype, loads = info
                if etype == 2:
                    vaddr = pc
                else:
                    foff = pc - lo + off
                    vaddr = None
                    for p_off, p_vaddr, p_filesz in loads:
                        if p_off <= foff < p_off + max(p_filesz, 1):
                            vaddr = foff - p_off + p_vaddr
                    if vaddr is None:
                        vaddr = foff
                tab = self.table(path)
                name = "?"
                lo_i, hi_i = 0, len(tab)
                while lo_i < hi_i:
                    mid = (lo_i + hi_i) // 2
                    if tab[mid][0] <= vaddr:
                        lo_i = mid + 1
                    else:
                        hi_i = mid
                if lo_i:
                    name = tab[lo_i - 1][1]
                return name, path
        return "?", ""


def symbolize(snap):
    sym = Symbolizer(snap["maps"])
    for b in snap["buckets"]:
        names = []
        for pc in b["frames"]:
            # every PC is a return address (proto.h): look up the call itself
            name, path = sym.lookup(pc - 1)
            names.append("%s@%s" % (name, os.path.basename(path)))
        b["symbols"] = names


def name_is(name, func):
    """A symbol is FUNC (C), or FUNC(args) (demangled C++)."""
    return name == func or name.startswith(func + "(")


def bucket_matches(b, func, top):
    names = [s.split("@")[0] for s in b["symbols"]]
    if top:
        return bool(names) and name_is(names[0], func)
    return any(name_is(n, func) for n in names)


def cmd_sum(path, func, top=False):
    snap = json.load(open(path))
    keys = BUCKET_FIELDS[:8]
    tot = dict((k, 0) for k in keys)
    n = 0
    for b in snap["buckets"]:
        if bucket_matches(b, func, top):
            n += 1
            for k in keys:
                tot[k] += b[k]
    print("buckets=%d " % n + " ".join("%s=%d" % (k, tot[k]) for k in keys))


def show(snap, out=sys.stdout):
    t = snap["totals"]
    print("pid %d rate %d buckets %d rss %d" % (snap["pid"], snap["rate"], snap["nbuckets"], snap["rss_bytes"]), file=out)
    print("totals " + " ".join("%s=%d" % (k, t[k]) for k in TOTALS_FIELDS), file=out)
    for th in snap["threads"]:
        print("thread %(tid)d alive=%(alive)d name=%(name)s alloc_bytes=%(alloc_bytes)d alloc_calls=%(alloc_calls)d "
              "free_bytes=%(free_bytes)d free_calls=%(free_calls)d" % th, file=out)
    for b in sorted(snap["buckets"], key=lambda b: -b["raw_alloc_bytes"]):
        print("bucket raw_alloc=%d/%d raw_live=%d/%d est_alloc=%d/%d est_live=%d/%d first_tid=%d" % (
            b["raw_alloc_objects"], b["raw_alloc_bytes"], b["raw_live_objects"], b["raw_live_bytes"],
            b["est_alloc_objects"], b["est_alloc_bytes"], b["est_live_objects"], b["est_live_bytes"],
            b["first_tid"]), file=out)
        for pc, s in zip(b["frames"], b.get("symbols", [""] * len(b["frames"]))):
            print("    %#x %s" % (pc, s), file=out)


# ---- GOT slots through /proc/PID/mem ------------------------------------

FUNCS = {"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
         "memalign", "valloc", "pvalloc",
         "mmap", "mmap64", "munmap", "mremap", "dlsym", "dlvsym"}  # every hooked function (payload/family.c)


def elf_slots(path):
    """(r_offset, func) of JUMP_SLOT/GLOB_DAT relocations of malloc-family symbols, and e_type."""
    with open(path, "rb") as f:
        data = f.read()
    etype = struct.unpack_from("<H", data, 16)[0]
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for s in secs:
        if s[1] != 4:  # SHT_RELA
            continue
        symtab = secs[s[6]]
        strtab = secs[symtab[6]]
        for off in range(s[4], s[4] + s[5], 24):
            r_offset, r_info, _ = struct.unpack_from("<QQq", data, off)
            rtype, symi = r_info & 0xffffffff, r_info >> 32
            if rtype not in (6, 7) or symi == 0:
                continue
            st_name = struct.unpack_from("<I", data, symtab[4] + symi * 24)[0]
            end = data.index(b"\0", strtab[4] + st_name)
            name = data[strtab[4] + st_name:end].decode()
            if name in FUNCS:
                out.append((r_offset, name))
    return etype, out


def live_task_dir(pid):
    """/proc/PID/task/TID of a live thread: a zombie main thread's maps and
    mem read empty."""
    for tid in sorted(os.listdir("/proc/%d/task" % pid), key=int):
        try:
            st = open("/proc/%d/task/%s/status" % (pid, tid)).read()
        except OSError:
            continue
        state = st.split("\nState:")[1].split()[0]
        if state not in ("Z", "X"):
            return "/proc/%d/task/%s" % (pid, tid)
    return "/proc/%d" % pid


def cmd_got(pid):
    # A thread of a target that starts and ends threads may be gone between
    # choosing it and reading its maps or mem: choose again.
    for attempt in range(20):
        try:
            lines = got_lines(live_task_dir(pid))
        except OSError:
            continue
        print("\n".join(lines)) if lines else None
        return
    raise SystemExit("got: no thread of %d stayed alive long enough to read its GOT slots" % pid)


def got_lines(d):
    bases = {}
    for line in open(d + "/maps"):
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/") and int(parts[2], 16) == 0:
            path = parts[5].strip()
            bases.setdefault(path, int(parts[0].split("-")[0], 16))
    out = []
    with open(d + "/mem", "rb") as mem:
        for path, base in sorted(bases.items()):
            try:
                etype, slots = elf_slots(path)
            except (OSError, ValueError, struct.error, IndexError):
                continue
            bias = 0 if etype == 2 else base
            lines = []
            try:
                for r_offset, name in slots:
                    mem.seek(bias + r_offset)
                    (v,) = struct.unpack("<Q", mem.read(8))
                    lines.append("%s %s %#x %#x" % (os.path.basename(path), name, bias + r_offset, v))
            except (OSError, struct.error):
                continue  # the module was unloaded while we read it (dlclose in a loop)
            out.extend(lines)
    if not os.path.exists(d):  # gone while we read: some modules may be missing
        raise OSError("thread %s is gone" % d)
    return out


# ---- hostile peers -------------------------------------------------------

def hostile(path, kind):
    c = Conn(path, timeout=10)
    if kind == "garbage":
        try:
            c.s.sendall(os.urandom(7) + b"\xff" * 1000)
        except OSError:
            pass
    elif kind == "listen":
        pass  # send nothing: print what the agent says first (a refusal)
    elif kind == "badmagic":
        c.send(T["HELLO"], struct.pack("<I", VERSION), magic=0xdeadbeef)
    elif kind == "badversion":
        c.send(T["HELLO"], struct.pack("<I", VERSION), version=99)
    elif kind == "badtype":
        c.hello()
        c.send(99)
    elif kind == "agenttype":
        c.hello()
        c.send(T["SNAP_END"], struct.pack("<Q", 0))
    elif kind == "oversized":
        c.send(T["HELLO"], b"", length=1 << 20)
        try:
            c.s.sendall(b"\0" * 4096)
        except OSError:
            pass  # the agent may have closed already; its ERROR is still readable
    elif kind == "short":
        c.send(T["SET_RATE"], b"\1\2")
    elif kind == "nohello":
        c.send(T["SNAPSHOT_REQ"])
    elif kind == "zerorate":
        c.hello()
        c.send(T["SET_RATE"], struct.pack("<Q", 0))
    elif kind == "truncated":
        # half a header, then the connection closes
        c.s.sendall(HDR.pack(MAGIC, VERSION, T["HELLO"], 4)[:5])
        c.s.close()
        print("closed")
        return
    elif kind == "stall":
        # a header announcing a body that never comes; hold the connection
        c.send(T["HELLO"], b"", length=4)
        time.sleep(float(os.environ.get("STALL_SECONDS", "3")))
        print("stalled")
        return
    elif kind == "noread":
        # many snapshot requests, never reading the answers
        c.hello()
        for _ in range(2000):
            try:
                c.send(T["SNAPSHOT_REQ"])
            except OSError:
                break
        time.sleep(float(os.environ.get("STALL_SECONDS", "8")))
        print("noread-done")
        return
    else:
        raise SystemExit("unknown kind " + kind)
    try:
        while True:
            t, body = c.recv()
            print("got", NAMES.get(t, t))
    except ProtoError as e:
        print(e)
    except (EOFError, ConnectionResetError) as e:
        print("closed:", e)


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    cmd = argv[1]
    if cmd == "hello":
        print(json.dumps(Conn(argv[2]).hello()))
    elif cmd == "snapshot":
        c = Conn(argv[2])
        c.hello()
        snap = snapshot(c)
        symbolize(snap)
        if len(argv) > 4 and argv[3] == "-o":
            with open(argv[4], "w") as f:
                json.dump(snap, f)
        else:
            show(snap)
    elif cmd == "show":
        show(json.load(open(argv[2])))
    elif cmd == "sum":
        cmd_sum(argv[2], argv[3], top="--top" in argv[4:])
    elif cmd == "set-rate":
        c = Conn(argv[2])
        c.hello()
        c.send(T["SET_RATE"], struct.pack("<Q", int(argv[3])))
        c.ack(T["SET_RATE"])
        print("ok")
    elif cmd == "watch":
        c = Conn(argv[2])
        c.hello()
        c.send(T["WATCH"])
        c.ack(T["WATCH"])
        for _ in range(int(argv[3])):
            f = TICK.unpack(c.expect(T["TICK"])[:TICK.size])
            print(json.dumps(dict(now_ns=f[0], rate=f[1], totals=totals(f[2:16]), rss_bytes=f[16])))
    elif cmd == "detach":
        c = Conn(argv[2])
        c.hello()
        c.send(T["DETACH"])
        c.ack(T["DETACH"])
        try:
            extra = c.s.recv(1)
        except OSError:
            extra = b""
        print("detached" if not extra else "unexpected data after DETACH")
    elif cmd == "own":
        c = Conn(argv[2])
        c.hello()
        c.send(T["OWN_SESSION"])
        c.ack(T["OWN_SESSION"])
        print("owned", flush=True)
        time.sleep(3600)
    elif cmd == "hostile":
        hostile(argv[2], argv[3])
    elif cmd == "got":
        cmd_got(int(argv[2]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
