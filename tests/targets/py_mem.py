# py_mem.py - a python3 target for the issue 14 tests (cli_python_mmap.sh); commands on stdin:
#   ctypes N KIB   N blocks of KIB KiB from libc.malloc looked up now (dlsym)
#                  -> done leaked=BYTES
#   grow N         N small objects kept (pymalloc arenas grow) -> done arenas=BYTES
#                  (pymalloc's count; while an allocator is in front of it,
#                  which hides that count, the anonymous memory mapped meanwhile)
import ctypes, os, re, sys, tempfile

libc = ctypes.CDLL("libc.so.6")
keep = []

class Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]

libc.mallinfo2.restype = Mallinfo2


def mapped_not_malloc():
    """Anonymous memory mapped now (maps lines without a path) less glibc's
    mmapped chunks (mallinfo2's hblkhd): pymalloc's arenas and the like."""
    total = 0
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) == 5 and fields[1].startswith("rw"):
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                total += hi - lo
    return total - libc.mallinfo2().hblkhd


def arena_bytes():
    """pymalloc's own count: arenas allocated now times the arena size.
    None when sys._debugmallocstats has no pymalloc section: it prints one
    only while pymalloc is the object allocator itself, not while one is
    put in front of it (heapinject's, issue 29; tracemalloc's)."""
    with tempfile.TemporaryFile(mode="w+") as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read()
    m = re.search(r"# arenas allocated current\s*=\s*([\d,]+)", text)
    if not m:
        return None
    cur = int(m.group(1).replace(",", ""))
    size = int(re.search(r"arenas \* ([\d,]+) bytes/arena", text).group(1).replace(",", ""))
    return cur * size

def leak_through_ctypes(n, kib):
    m = libc.malloc  # the first use looks it up: dlsym now
    m.restype = ctypes.c_void_p
    m.argtypes = [ctypes.c_size_t]
    for _ in range(n):
        p = m(kib << 10)
        ctypes.memset(p, 1, kib << 10)
        keep.append(p)
    return n * (kib << 10)

def grow(n):
    before, before_mapped = arena_bytes(), mapped_not_malloc()
    keep.append([(i, float(i)) for i in range(n)])
    after = arena_bytes()
    if before is None or after is None:  # another allocator in front of pymalloc
        return mapped_not_malloc() - before_mapped
    return after - before

print("ready", flush=True)
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "ctypes":
        print("done leaked=%d" % leak_through_ctypes(int(cmd[1]), int(cmd[2])), flush=True)
    elif cmd[0] == "grow":
        print("done arenas=%d" % grow(int(cmd[1])), flush=True)
    elif cmd[0] == "quit":
        break
