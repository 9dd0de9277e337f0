#!/usr/bin/env python3
"""compare.py - two (or more) payload builds side by side on alloc_workload.

  python3 bench/compare.py [ROUNDS] NAME=PATH/libheapinject.so NAME=PATH ...

Each round starts one fresh alloc_workload per payload, in turn, and takes
the `overhead` section's paired windows (alone, attached, after detach) at
the default rate and at RATE=1; the cli loads the given build through
HEAPINJECT_PAYLOAD. Prints, per payload and rate, the median ratio per CPU
second and per wall-clock second with min and max. Keep a copy of the
build you compare against (cp build/libheapinject.so /tmp/before.so)
before rebuilding.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the bench's own helpers)

RATES = [("default rate", None), ("RATE=1", "1")]


def one_round(lib, res, name):
    os.environ["HEAPINJECT_PAYLOAD"] = lib
    w = run.Workload("alloc_workload", "--interval-ms", "250")
    try:
        w.window(1.5)
        for label, rate in RATES:
            b = w.window(run.WINDOW)
            bc = w.last_cpu_rate
            run.cli(*(["attach", "-p", str(w.pid)] + (["--rate", rate] if rate else [])))
            d = w.window(run.WINDOW)
            dc = w.last_cpu_rate
            run.cli("detach", "-p", str(w.pid))
            a = w.window(run.WINDOW)
            ac = w.last_cpu_rate
            res[(name, label)].append((2 * dc / (bc + ac), 2 * d / (b + a)))
    finally:
        w.stop()


def main(argv):
    rounds = int(argv[0]) if argv and argv[0].isdigit() else 4
    libs = [a.split("=", 1) for a in argv if "=" in a]
    if not libs:
        print(__doc__, file=sys.stderr)
        return 2
    for _, path in libs:
        if not os.path.isfile(path):
            print(f"compare: {path}: no such file", file=sys.stderr)
            return 2
    res = {(n, label): [] for n, _ in libs for label, _ in RATES}
    try:
        for _ in range(rounds):
            for name, path in libs:
                one_round(os.path.abspath(path), res, name)
    finally:
        shutil.rmtree(run.TMP, ignore_errors=True)
    for (name, label), v in res.items():
        print(f"{name:12s} {label:13s} per CPU second {run.summary([x[0] for x in v])}, "
              f"per wall-clock second {run.summary([x[1] for x in v])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
