# py_pymalloc.py - a CPython target for the pymalloc tests (tests/e2e/py_pymalloc*.sh).
# Runs on 3.8 to 3.13 (Debian's python3 and pyenv's). Commands on stdin, one
# answer line each:
#   name          -> name=ALLOCATOR  (_PyMem_GetCurrentAllocatorName: pymalloc,
#                    or None while an allocator is put in front of it)
#   pre N         N small objects made now (before attach) -> pre bytes=B
#   keep N        N tuples of two floats kept by make_kept -> kept bytes=B
#                 (B: what pymalloc served them, by sys.getsizeof)
#   free_pre_half half of the pre objects freed now -> freed_pre ok
#   free_kept     the kept objects freed -> freed_kept ok
#   check         every object's value checked, pre and kept freed, a full
#                 gc, then new objects made and checked -> checked ok=1
#   hold S        keeps the GIL for S seconds inside a C call (PyDLL's
#                 sleep: the GIL is not let go) -> holding, then held
#   churn SECONDS build dicts and lists for SECONDS, -> churn iters=N cpu=S
#   threads N     N threads build, check and drop objects until join
#                 -> threads started
#   join          -> threads ok=1 rounds=R (every thread's checks passed)
import ctypes, gc, os, sys, threading, time

api = ctypes.pythonapi
api._PyMem_GetCurrentAllocatorName.restype = ctypes.c_char_p
api._PyMem_GetCurrentAllocatorName.argtypes = []
libc_gil = ctypes.PyDLL(None)  # calls through it keep the GIL
libc_gil.sleep.argtypes = [ctypes.c_uint]

pre = []
kept = []


def allocator_name():
    n = api._PyMem_GetCurrentAllocatorName()
    return n.decode() if n else "None"


def make_pre(n):
    global pre
    pre = [(float(i), str(i) * 2) for i in range(n)]
    return sum(sys.getsizeof(t) + sys.getsizeof(t[0]) + sys.getsizeof(t[1]) for t in pre)


def make_kept(n):
    # Floats come from the float free list only for the first ~100: the
    # rest, and every tuple of 2 (its free list holds 2,000), are pymalloc's.
    global kept
    kept = [(float(i) + 0.5, float(-i) - 0.5) for i in range(n)]
    return sum(sys.getsizeof(t) + sys.getsizeof(t[0]) + sys.getsizeof(t[1]) for t in kept)


def check():
    # pre may have lost its first half: each tuple checks against itself
    ok = all(t[1] == str(int(t[0])) * 2 for t in pre)
    ok = ok and all(t[0] == float(i) + 0.5 and t[1] == float(-i) - 0.5 for i, t in enumerate(kept))
    pre.clear()
    kept.clear()
    gc.collect()
    fresh = [{"k": i, "v": [i] * 3} for i in range(100000)]
    ok = ok and all(d["k"] == i and d["v"] == [i, i, i] for i, d in enumerate(fresh))
    del fresh
    gc.collect()
    return ok


def churn(seconds):
    end = time.monotonic() + seconds
    c0 = time.process_time()
    iters = 0
    while time.monotonic() < end:
        d = {}
        for i in range(1000):
            d[i] = [i, (i, str(i))]
        iters += 1
    return iters, time.process_time() - c0


stop = threading.Event()
workers = []
results = []


def worker(k):
    rounds, ok = 0, True
    while not stop.is_set():
        objs = [(k, i, str(i), [float(i)] * 2, {"i": i}) for i in range(2000)]
        ok = ok and all(o[1] == i and o[2] == str(i) and o[3][1] == float(i) and o[4]["i"] == i
                        for i, o in enumerate(objs))
        del objs[::2]
        ok = ok and all(o[1] % 2 == 1 for o in objs)
        rounds += 1
    results.append((ok, rounds))


print("ready pid=%d python=%d.%d" % (os.getpid(), sys.version_info[0], sys.version_info[1]), flush=True)
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "name":
        print("name=%s" % allocator_name(), flush=True)
    elif cmd[0] == "pre":
        print("pre bytes=%d" % make_pre(int(cmd[1])), flush=True)
    elif cmd[0] == "keep":
        print("kept bytes=%d" % make_kept(int(cmd[1])), flush=True)
    elif cmd[0] == "free_pre_half":
        del pre[: len(pre) // 2]
        print("freed_pre ok", flush=True)
    elif cmd[0] == "free_kept":
        kept.clear()
        print("freed_kept ok", flush=True)
    elif cmd[0] == "check":
        print("checked ok=%d" % check(), flush=True)
    elif cmd[0] == "hold":
        print("holding", flush=True)
        libc_gil.sleep(int(cmd[1]))
        print("held", flush=True)
    elif cmd[0] == "churn":
        it, cpu = churn(float(cmd[1]))
        print("churn iters=%d cpu=%.3f" % (it, cpu), flush=True)
    elif cmd[0] == "threads":
        stop.clear()
        results.clear()
        workers = [threading.Thread(target=worker, args=(k,)) for k in range(int(cmd[1]))]
        for w in workers:
            w.start()
        print("threads started", flush=True)
    elif cmd[0] == "join":
        stop.set()
        for w in workers:
            w.join()
        print("threads ok=%d rounds=%d" % (all(r[0] for r in results) and len(results) == len(workers),
                                           sum(r[1] for r in results)), flush=True)
    elif cmd[0] == "quit":
        break
