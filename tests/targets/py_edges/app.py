# app.py - the honest edges of Python frames, for tests/e2e/py_edges.sh
# (issue 29): MODE deep keeps 64 KiB bytearrays from a function 500 calls
# deep (a chain past the 128 frames kept); MODE subinterp keeps them from
# a function a sub-interpreter runs (3.12+: _interpreters or
# _xxsubinterpreters), while the main interpreter's caller waits in
# run_string. Prints "ready", allocates when GO exists, prints "done",
# checks its data at STOP and prints "checked N ok".
import os
import sys
import time

mode, go, stop = sys.argv[1], sys.argv[2], sys.argv[3]
N = 400
kept = []


def deep_alloc(depth):
    if depth > 0:
        return deep_alloc(depth - 1)
    for i in range(N):
        kept.append(bytearray(b"d") * 65536)  # deep line
    return len(kept)


SUB = """
kept = []
def sub_alloc(n):
    for i in range(n):
        kept.append(bytearray(b"s") * 65536)  # sub line
    return len(kept)
assert sub_alloc(%d) == %d
""" % (N, N)
CHECK = """
assert len(kept) == %d and all(len(b) == 65536 and b.count(b"s") == 65536 for b in kept)
""" % N


try:
    import _interpreters as interps  # 3.13
except ImportError:
    import _xxsubinterpreters as interps  # 3.12


def run_sub(sub):
    interps.run_string(sub, SUB)  # main-interpreter line


print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
sys.setrecursionlimit(2000)
if mode == "deep":
    assert deep_alloc(500) == N
elif mode == "subinterp":
    sub = interps.create()
    run_sub(sub)
print("done", flush=True)
while not os.path.exists(stop):
    time.sleep(0.01)
if mode == "deep":
    ok = len(kept) == N and all(len(b) == 65536 and b.count(b"d") == 65536 for b in kept)
else:
    err = interps.run_string(sub, CHECK)  # 3.13 returns the error, 3.12 raises it
    ok = err is None
print("checked %d %s" % (N, "ok" if ok else "BAD"), flush=True)
