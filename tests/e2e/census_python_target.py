# census_python_target.py - a CPython process whose objects are known, made
# before any attach (tests/e2e/census_python.sh): 50,000 instances of a
# class of its own, 20,000 dicts, 5,000 lists, 3,000 large tuples and 2,000
# instances of 656 bytes (glibc blocks, past pymalloc's 512 bytes). On SIGUSR1 it checks its data and
# prints a line.
import gc, os, signal, sys, time


class Point:
    def __init__(self, i):
        self.x = i
        self.y = -i


class Node:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


class Big:  # 656-byte instances: glibc blocks, not pymalloc's
    __slots__ = tuple("s%d" % i for i in range(80))


gc.disable()  # nothing collected or moved while the census runs
points = [Point(i) for i in range(50000)]
dicts = [{"k": i} for i in range(20000)]
lists = [[i, i + 1] for i in range(5000)]
nodes = [Node(i) for i in range(7000)]
bigs = [tuple(range(i, i + 100)) for i in range(3000)]
large = [Big() for i in range(2000)]
for i, b in enumerate(large):
    b.s0 = i


def check(signum, frame):
    good = (len(points) == 50000 and all(p.x == i and p.y == -i for i, p in enumerate(points))
            and all(d["k"] == i for i, d in enumerate(dicts))
            and all(l == [i, i + 1] for i, l in enumerate(lists))
            and all(n.v == i for i, n in enumerate(nodes))
            and all(t[0] == i and len(t) == 100 for i, t in enumerate(bigs))
            and all(b.s0 == i for i, b in enumerate(large)))
    print("checked", "ok" if good else "BAD", flush=True)


signal.signal(signal.SIGUSR1, check)
print("ready", sys.version_info[0], sys.version_info[1], flush=True)
while True:
    time.sleep(0.2)
