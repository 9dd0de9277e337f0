# app.py - a Python program that keeps memory from known lines, for
# tests/e2e/py_frames.sh (issue 29): grow_cache keeps bytearrays (line
# marked "keep: bytes") and dicts (line marked "keep: dict"); it is called
# from a generator, driven by an async function, run by a thread, so that
# one stack holds all three. The cache is a ring: memory stays bounded and
# allocation goes on. At the stop file the worker ends and every entry
# kept is checked against what was written ("checked N ok"). Meanwhile
# the main thread starts threads that hold no Python state (pthread_create
# through ctypes, running libc's strdup of 256 KiB): their samples have no
# Python frames, and each copy is checked.
import asyncio
import ctypes
import os
import sys
import threading
import time

RING = 2048
cache = [None] * RING
made = 0
errors = []


def grow_cache(n, tag):
    global made
    for _ in range(n):
        i = made
        blob = bytearray(b"%08d" % i) * 512  # keep: bytes
        meta = {"i": i, "tag": tag, "len": len(blob)}  # keep: dict
        cache[i % RING] = (blob, meta)
        made = i + 1


def producer(tag):
    while True:
        grow_cache(4, tag)
        yield made


async def fill(gen, rounds):
    for _ in range(rounds):
        next(gen)
        await asyncio.sleep(0)


def worker(stop):
    gen = producer("w")
    while not os.path.exists(stop):
        asyncio.run(fill(gen, 64))
        time.sleep(0.001)


libc = ctypes.CDLL(None)
libc.pthread_create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
libc.pthread_join.argtypes = [ctypes.c_ulong, ctypes.POINTER(ctypes.c_void_p)]
libc.free.argtypes = [ctypes.c_void_p]
STRDUP = ctypes.cast(libc.strdup, ctypes.c_void_p)
SOURCE = ctypes.create_string_buffer(b"n" * (1 << 18))


def native_round():
    t = ctypes.c_ulong()
    if libc.pthread_create(ctypes.byref(t), None, STRDUP, ctypes.addressof(SOURCE)) != 0:
        return False
    copy = ctypes.c_void_p()
    if libc.pthread_join(t, ctypes.byref(copy)) != 0 or not copy.value:
        return False
    good = ctypes.string_at(copy.value, 1 << 18) == SOURCE.value
    libc.free(copy)
    return good


def check():
    n = 0
    for e in cache:
        if e is None:
            continue
        blob, meta = e
        i = meta["i"]
        if blob != bytearray(b"%08d" % i) * 512 or meta["len"] != 4096 or meta["tag"] != "w":
            errors.append(i)
        n += 1
    return n


def main():
    stop = sys.argv[1]
    t = threading.Thread(target=worker, args=(stop,), name="grower")
    t.start()
    while made < RING:
        time.sleep(0.01)
    print("ready", sys.version_info[0], sys.version_info[1], flush=True)
    rounds = bad = 0
    while t.is_alive():
        rounds += 1
        bad += not native_round()
        time.sleep(0.02)
    t.join()
    n = check()
    print("native %d %s" % (rounds, "ok" if not bad else "errors=%d" % bad), flush=True)
    print("checked %d %s" % (n, "ok" if not errors else "errors=%d" % len(errors)), flush=True)
    return 1 if errors or bad else 0


if __name__ == "__main__":
    sys.exit(main())
