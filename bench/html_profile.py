"""html_profile - a saved profile (docs/JSON.md) of N distinct stacks drawn
from a made-up call graph, for `make bench`'s HTML page figures
(bench/run.py bench_html): 5,000 functions in 40 modules, each calling 2 to
6 others; a stack is a walk from main of 8 to 40 calls. Unlike
bench/stacks_workload (whose left() and right() the compiler merges into
one function), every stack is a distinct path of functions, so the page's
call tree has about as many nodes as a real large profile's.

usage: python3 bench/html_profile.py TEMPLATE.json N OUT.json [SEED]
(TEMPLATE: any saved profile; its header, totals and maps are kept)."""
import json
import random
import sys


def make(template, n, seed=1):
    rnd = random.Random(seed)
    d = json.load(open(template))
    nfun, nmod = 5000, 40
    mods = ["/usr/lib/x86_64-linux-gnu/libmade%02d.so.1" % i for i in range(nmod)]
    mods[0] = "/usr/bin/made-up-server"
    frames = []
    for f in range(nfun):
        m = 0 if f < 1500 else rnd.randrange(1, nmod)
        frames.append({"addr": "0x%x" % (0x400000 + 64 * f), "function": "ns%d::Class%d::method_%d" % (f % 37, f % 211, f),
                       "module": mods[m], "module_offset": "0x%x" % (64 * f), "file": "src/file%d.cc" % (f % 700),
                       "line": 10 + f % 900, "inlined": False})
    callees = [rnd.sample(range(1, nfun), rnd.randint(2, 6)) for _ in range(nfun)]
    seen, stacks = set(), []
    while len(stacks) < n:
        path, f = [0], 0
        for _ in range(rnd.randint(8, 40)):
            f = rnd.choice(callees[f])
            path.append(f)
        key = tuple(path)
        if key in seen:
            continue
        seen.add(key)
        live = rnd.choice([0, 16, 48, 128, 4096]) * rnd.randint(1, 50)
        alloc = live + rnd.randint(0, 100000)
        stacks.append({"id": len(stacks), "kind": "malloc", "live_bytes": live, "live_objects": live // 16,
                       "alloc_bytes": alloc, "alloc_objects": alloc // 16,
                       "sampled": {"live_bytes": live, "live_objects": live // 16, "alloc_bytes": alloc,
                                   "alloc_objects": alloc // 16},
                       "first_tid": d["pid"], "oldest_live_ns": 0, "live_age_sum_ms": 0,
                       "growth": [-1] * 8, "frames": path[::-1]})
    stacks.sort(key=lambda s: (-s["live_bytes"], -s["alloc_bytes"]))
    for i, s in enumerate(stacks):
        s["id"] = i
    d["frames"], d["stacks"] = frames, stacks
    d["totals"]["stacks"] = n
    d["totals"]["live_bytes"] = sum(s["live_bytes"] for s in stacks)
    d["totals"]["alloc_bytes"] = sum(s["alloc_bytes"] for s in stacks)
    d.pop("debuginfo_missing", None)
    return d


if __name__ == "__main__":
    json.dump(make(sys.argv[1], int(sys.argv[2]), int(sys.argv[4]) if len(sys.argv) > 4 else 1), open(sys.argv[3], "w"))
