# py_fork_codes app: keeps bytearrays from a known function (so that
# sampled allocations carry Python frames and the profiler's table of code
# objects fills), then forks a worker with os.fork(). The worker keeps
# allocating and checks its own data; both wait for a stop file.
# argv: go-file fork-file stop-file
import os, sys, time

go, fork_file, stop = sys.argv[1:4]
kept = []


def keep_blocks(n, tag):
    for i in range(n):
        kept.append(bytearray([tag]) * 65536)


def check(tag_of):
    return all(b[0] == tag_of(i) and b[-1] == tag_of(i) for i, b in enumerate(kept))


def wait_file(path):
    while not os.path.exists(path):
        time.sleep(0.02)


print("ready", flush=True)
wait_file(go)
keep_blocks(200, 7)
print("kept", flush=True)
wait_file(fork_file)
pid = os.fork()
if pid == 0:
    keep_blocks(100, 7)  # the worker allocates after the fork too
    print("child %d" % os.getpid(), flush=True)
    wait_file(stop)
    ok = check(lambda i: 7)
    os._exit(0 if ok else 3)
print("forked %d" % pid, flush=True)
wait_file(stop)
_, status = os.waitpid(pid, 0)
print("child status %d" % status, flush=True)
print("checked %d %s" % (len(kept), "ok" if check(lambda i: 7) else "BAD"), flush=True)
