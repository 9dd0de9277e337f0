# py_mem.py - a python3 target for the issue 14 tests (cli_python_mmap.sh); commands on stdin:
#   ctypes N KIB   N blocks of KIB KiB from libc.malloc looked up now (dlsym)
#                  -> done leaked=BYTES
#   grow N         N small objects kept (pymalloc arenas grow) -> done arenas=BYTES
import ctypes, os, re, sys, tempfile

libc = ctypes.CDLL("libc.so.6")
keep = []

def arena_bytes():
    """pymalloc's own count: arenas allocated now times the arena size."""
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
    cur = int(re.search(r"# arenas allocated current\s*=\s*([\d,]+)", text).group(1).replace(",", ""))
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
    before = arena_bytes()
    keep.append([(i, float(i)) for i in range(n)])
    return arena_bytes() - before

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
