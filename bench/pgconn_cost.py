#!/usr/bin/env python3
"""pgconn_cost.py - what a followed PostgreSQL backend costs (issue 28,
item 3: `pgbench -C` connections/s at least 0.95 of alone while attached
with --children). For each heapinject build given (the first is usually
main's, the second a branch's), a PostgreSQL server of its own (two
builds' payloads are never loaded into one server); rounds interleave the
builds, and within a round: alone, following (`attach -p POSTMASTER
--children`), after detach. Each window runs `pgbench -n -C -S -c 2` for
WINDOW seconds and records connections/s and the server's CPU time per
connection (the postmaster's own and its reaped children's: every
backend's, its agent thread's included), which is steadier than the
rate on a loaded machine, and their minor page faults per connection,
a count of work that the load does not swing at all.

python3 bench/pgconn_cost.py [--rounds N] [--window S] HEAPINJECT [HEAPINJECT...]

A HEAPINJECT may carry options of its attach after it, in one argument
("build/heapinject --lazy-children"): the same build compared with and
without them.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import service  # noqa: E402  (its Server: tests/e2e/pg_lib.bash)

def server_faults(pid):
    """Minor page faults of the postmaster and of its reaped children
    (every ended backend's): a count of work that a loaded machine does
    not swing, unlike CPU time."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[7]) + int(f[8])


def window(server, seconds):
    """(connections/s, server CPU ms per connection, server minor faults
    per connection) of one pgbench -C run."""
    f0 = server_faults(server.master)
    rate, cpu = service.connections_cpu(server, seconds)
    return rate, cpu, (server_faults(server.master) - f0) / max(1.0, rate * seconds)


def init(server):
    p = subprocess.run([os.path.join(server.bin, "pgbench"), *server.args(), "-i", "-q", "-s", "1", "postgres"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("pgbench -i failed: " + p.stderr.strip()[-300:])


def hi(heapinject, *args):
    r = subprocess.run([heapinject, *args], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"heapinject {' '.join(args)}: {r.stderr.strip()[-400:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--window", type=float, default=5)
    ap.add_argument("builds", nargs="+")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pgconn-")
    os.chmod(tmp, 0o755)  # the servers run as postgres
    servers = []
    try:
        for i, b in enumerate(a.builds):
            os.environ["PG_PORT"] = str(21000 + os.getpid() % 10000 + i)
            d = os.path.join(tmp, f"b{i}")
            os.mkdir(d)
            os.chmod(d, 0o755)
            s = service.Server(d, None)
            servers.append(s)
            init(s)
            window(s, 2)  # warm up
        res = {(i, st): [] for i in range(len(a.builds)) for st in ("alone", "following", "after")}
        loads = []
        for _ in range(a.rounds):
            for i, (b, s) in enumerate(zip(a.builds, servers)):
                loads.append(os.getloadavg()[0])
                res[(i, "alone")].append(window(s, a.window))
                path, *extra = shlex.split(b)
                hi(path, "attach", "-q", "-p", str(s.master), "--children", *extra)
                res[(i, "following")].append(window(s, a.window))
                hi(path, "detach", "-q", "-p", str(s.master), "--children")
                res[(i, "after")].append(window(s, a.window))
        print(f"pgbench -n -C -S -c 2, {a.rounds} interleaved rounds of {a.window:.0f} s, load "
              f"{min(loads):.1f}-{max(loads):.1f}")
        for i, b in enumerate(a.builds):
            alone = res[(i, "alone")]
            print(f"{b}:")
            for st in ("alone", "following", "after"):
                r = res[(i, st)]
                ratio = [x[0] / y[0] for x, y in zip(r, alone)]
                print(f"  {st:9s} conn/s {statistics.median(x[0] for x in r):6.0f}  ratio to alone "
                      f"{statistics.median(ratio):.3f} ({min(ratio):.3f}-{max(ratio):.3f})  server CPU per "
                      f"connection {statistics.median(x[1] for x in r):5.2f} ms "
                      f"({min(x[1] for x in r):.2f}-{max(x[1] for x in r):.2f}), minor faults "
                      f"{statistics.median(x[2] for x in r):5.0f} ({min(x[2] for x in r):.0f}-{max(x[2] for x in r):.0f})")
            extra = [f[1] - a[1] for f, a in zip(res[(i, "following")], alone)]
            print(f"  following's extra server CPU per connection (same round's alone subtracted) "
                  f"{statistics.median(extra):5.2f} ms ({min(extra):.2f}-{max(extra):.2f})")
            extra_f = [f[2] - a[2] for f, a in zip(res[(i, "following")], alone)]
            print(f"  following's extra minor faults per connection "
                  f"{statistics.median(extra_f):5.0f} ({min(extra_f):.0f}-{max(extra_f):.0f})")
        crash = [c for s in servers for c in s.crashed()]
        print("server logs: crashed backends or restarts:", len(crash))
    finally:
        for s in servers:
            s.stop()


if __name__ == "__main__":
    main()
