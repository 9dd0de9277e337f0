# app.py - a Python program that crashes, for tests/e2e/py_pushed.sh
# (issue 29): at GO, last_gasp keeps 64 bytearrays of 1 MiB, checks them,
# prints "gasped" and then reads address 0 through ctypes (SIGSEGV, a real
# fault): only the snapshot the agent pushes from its signal handler can
# hold them, and it should name last_gasp at its line.
import ctypes
import os
import sys
import time

go = sys.argv[1]
kept = []


def last_gasp():
    for i in range(64):
        kept.append(bytearray(b"g") * (1 << 20))  # gasp line
    assert all(len(b) == 1 << 20 and b.count(b"g") == 1 << 20 for b in kept)


print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
last_gasp()
print("gasped %d ok" % len(kept), flush=True)
ctypes.string_at(0)
