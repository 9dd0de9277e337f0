# app.py - keeps known amounts from five lines, for tests/e2e/py_truth.sh
# (issue 29): the truth is tracemalloc's own count. Blocks are 16 KiB
# bytearrays (over 512 bytes, so pymalloc hands them to malloc, where
# heapinject's hooks see them even while tracemalloc holds the allocator).
# Waits for GO before allocating (heapinject is attached by then), prints
# "done", then at STOP prints tracemalloc's top 5 lines as "tm FILE LINE
# BYTES", checks its data and exits.
import os
import sys
import time
import tracemalloc

go, stop = sys.argv[1], sys.argv[2]
kept = []


def keep_a(n):
    for i in range(n):
        kept.append(bytearray(b"a") * 16384)  # line a


def keep_b(n):
    for i in range(n):
        kept.append(bytearray(b"b") * 16384)  # line b


def keep_c(n):
    for i in range(n):
        kept.append(bytearray(b"c") * 16384)  # line c


def keep_d(n):
    for i in range(n):
        kept.append(bytearray(b"d") * 16384)  # line d


def keep_e(n):
    for i in range(n):
        kept.append(bytearray(b"e") * 16384)  # line e


tracemalloc.start()
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
keep_a(1600)
keep_b(1200)
keep_c(800)
keep_d(500)
keep_e(300)
print("done", flush=True)
while not os.path.exists(stop):
    time.sleep(0.01)
for st in tracemalloc.take_snapshot().statistics("lineno")[:5]:
    fr = st.traceback[0]
    print("tm %s %d %d" % (os.path.basename(fr.filename), fr.lineno, st.size), flush=True)
ok = len(kept) == 4400 and all(len(b) == 16384 and b.count(b[0]) == 16384 for b in kept)
print("checked %d %s" % (len(kept), "ok" if ok else "BAD"), flush=True)
