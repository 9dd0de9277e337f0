#!/usr/bin/env python3
"""fork_cost.py - what one fork + child end + waitpid costs in CPU time
(issue 28: following forks must be cheap for a service that forks per
request). build/bench/fork_workload forks N children that malloc a few
blocks and end (exit() or _exit()), or allocate 4 MiB as a PostgreSQL
backend's start does ("busy": sampled about 8 times, a last snapshot at
its exit()); the figure is the CPU time of the
process (its threads, our agent's included) and its reaped children per
fork, the median of ROUNDS batches, and the minor page faults of the same
per fork: alone, attached without following, attached with
--follow-forks, with --follow-forks --lazy-children (no agent thread in a
child that ends within 150 ms), after detach.

Standalone: python3 bench/fork_cost.py [ROUNDS] [N]
"""
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Workload:
    def __init__(self, bench_dir):
        self.p = subprocess.Popen([os.path.join(bench_dir, "fork_workload")], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        line = self.p.stdout.readline()
        if not line.startswith("ready "):
            raise RuntimeError("fork_workload did not start: %r" % line)
        self.pid = self.p.pid

    def batch(self, n, mode):
        self.p.stdin.write("%d %s\n" % (n, mode))
        self.p.stdin.flush()
        line = self.p.stdout.readline().split()
        f = dict(kv.split("=") for kv in line[3:])
        if int(f["bad"]):
            raise RuntimeError("fork_workload: %s children failed" % f["bad"])
        return float(f["cpu_us"]), float(f["wall_us"]), float(f["minflt"])

    def stop(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def hi(heapinject, *args):
    r = subprocess.run([heapinject] + list(args), capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("heapinject %s: %s" % (" ".join(args), r.stderr.strip()))


def measure(heapinject, bench_dir, rounds=5, n=200):
    """{(state, mode): (median cpu_us, median wall_us, min cpu_us, max cpu_us, median minor faults)}
    per fork."""
    w = Workload(bench_dir)
    out = {}
    try:
        states = [("alone", None), ("attached", ["attach", "-q", "-p", str(w.pid)]),
                  ("following", ["attach", "-q", "-p", str(w.pid), "--follow-forks"]),
                  ("lazy", ["attach", "-q", "-p", str(w.pid), "--follow-forks", "--lazy-children"]),
                  ("after detach", None)]
        for state, attach in states:
            if attach:
                hi(heapinject, *attach)
            for mode in ("_exit", "exit", "busy"):
                cpu, wall, flt = [], [], []
                for _ in range(rounds):
                    c, t, f = w.batch(n, mode)
                    cpu.append(c)
                    wall.append(t)
                    flt.append(f)
                out[(state, mode)] = (statistics.median(cpu), statistics.median(wall), min(cpu), max(cpu),
                                      statistics.median(flt))
            if attach:
                hi(heapinject, "detach", "-q", "-p", str(w.pid))
    finally:
        w.stop()
    return out


def load():
    return open("/proc/loadavg").read().split()[0]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    res = measure(os.path.join(ROOT, "build", "heapinject"), os.path.join(ROOT, "build", "bench"), rounds, n)
    print("per fork (fork + child end + waitpid), median of %d batches of %d, load %s" % (rounds, n, load()))
    for (state, mode), (c, t, lo, hi_, f) in res.items():
        print("  %-13s %-6s cpu %6.0f us (min %.0f max %.0f)  wall %6.0f us  minor faults %5.1f" %
              (state, mode, c, lo, hi_, t, f))


if __name__ == "__main__":
    main()
