#!/usr/bin/env python3
"""run.py - heapinject's benchmarks (`make bench`).

Everything is measured side by side in one run, on this machine, now:
the workload alone vs. the workload with heapinject attached (default rate,
64 KiB, every allocation), after detach, and with heaptrack -p attached.
Each ratio is the median of paired windows (before/during, same process)
with min and max. Figures are printed as a table at the end; nothing here is
a pass/fail test (the machine is shared and noisy).

Environment: BENCH_ROUNDS (default 3), BENCH_WINDOW seconds (default 3),
BENCH_SKIP_HEAPTRACK=1 to skip the heaptrack comparison.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HI = os.path.join(ROOT, "build", "heapinject")
BENCH = os.path.join(ROOT, "build", "bench")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
WINDOW = float(os.environ.get("BENCH_WINDOW", "3"))
TMP = tempfile.mkdtemp(prefix="heapinject-bench.")
results = []  # (section, name, value-string)


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def record(section, name, value):
    results.append((section, name, value))
    log(f"{section}: {name} = {value}")


def summary(values, fmt="{:.3f}"):
    if not values:
        return "n/a"
    return (fmt + " (min " + fmt + ", max " + fmt + ", n={})").format(
        statistics.median(values), min(values), max(values), len(values))


class Workload:
    """A bench program whose stdout lines are collected with arrival times."""

    def __init__(self, name, *args):
        self.lines = []
        self.proc = subprocess.Popen([os.path.join(BENCH, name), *args],
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.pid = self.proc.pid
        threading.Thread(target=self._reader, daemon=True).start()
        self.wait_for("ready", 20)

    def _reader(self):
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.strip()))

    def wait_for(self, prefix, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for _, l in self.lines:
                if l.startswith(prefix):
                    return l
            if self.proc.poll() is not None:
                raise RuntimeError(f"workload exited ({self.proc.returncode})")
            time.sleep(0.02)
        raise RuntimeError(f"workload never printed {prefix!r}")

    def ticks_between(self, t0, t1):
        """(ops_per_s, max_gap_ms) of tick lines that arrived in [t0, t1]."""
        out = []
        for t, l in list(self.lines):
            if t0 <= t <= t1 and l.startswith("tick "):
                f = l.split()
                out.append((float(f[3]), float(f[5])))
        return out

    def window(self, seconds):
        """Median ops/s over a window; the first tick is skipped (it spans the change)."""
        t0 = time.monotonic()
        time.sleep(seconds)
        ticks = self.ticks_between(t0, time.monotonic())[1:]
        return statistics.median(o for o, _ in ticks) if ticks else float("nan")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def cli(*args, check=True):
    t0 = time.monotonic()
    p = subprocess.run([HI, *args], capture_output=True, text=True)
    dt = time.monotonic() - t0
    if check and p.returncode != 0:
        raise RuntimeError(f"heapinject {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()}")
    return p, dt


def bench_overhead():
    w = Workload("alloc_workload", "--interval-ms", "250")
    try:
        w.window(2)  # warm up: the allocator's arenas and the CPU settle
        base_all, after_all = [], []
        attach_lat, detach_lat, stalls = [], [], []
        for label, rate in (("default rate (512 KiB)", None), ("RATE=64 KiB", "65536"), ("RATE=1", "1")):
            ratios, afters = [], []
            for _ in range(ROUNDS):
                before = w.window(WINDOW)
                args = ["attach", "-p", str(w.pid)] + (["--rate", rate] if rate else [])
                t_attach = time.monotonic()
                _, lat = cli(*args)
                during = w.window(WINDOW)
                stall = max((g for _, g in w.ticks_between(t_attach, t_attach + 1.0)), default=float("nan"))
                _, dlat = cli("detach", "-p", str(w.pid))
                after = w.window(WINDOW)
                ratios.append(during / before)
                afters.append(after / before)
                base_all.append(before)
                if rate is None:
                    attach_lat.append(lat * 1000)
                    detach_lat.append(dlat * 1000)
                    stalls.append(stall)
            record("throughput attached/alone", label, summary(ratios))
            after_all += afters
        record("throughput attached/alone", "after detach", summary(after_all))
        record("workload", "ops/s alone (malloc+free pairs)", summary(base_all, "{:.3g}"))
        record("latency", "attach: command start to hooks live (ms)", summary(attach_lat, "{:.1f}"))
        record("latency", "detach (ms)", summary(detach_lat, "{:.1f}"))
        record("latency", "target's longest stall around attach (ms, 1 ms sleeper)", summary(stalls, "{:.1f}"))
    finally:
        w.stop()


def bench_heaptrack():
    if os.environ.get("BENCH_SKIP_HEAPTRACK"):
        record("heaptrack -p", "skipped", "BENCH_SKIP_HEAPTRACK set")
        return
    if not shutil.which("heaptrack"):
        record("heaptrack -p", "skipped", "heaptrack not installed (apt-get install heaptrack)")
        return
    ratios, lat, stalls = [], [], []
    for _ in range(ROUNDS):
        w = Workload("alloc_workload", "--interval-ms", "250")
        ht = None
        try:
            w.window(2)
            before = w.window(WINDOW)
            t0 = time.monotonic()
            ht = subprocess.Popen(["heaptrack", "-o", os.path.join(TMP, "ht"), "-p", str(w.pid)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
            for line in ht.stdout:
                if "injection finished" in line:
                    break
            lat.append((time.monotonic() - t0) * 1000)
            stalls.append(max((g for _, g in w.ticks_between(t0, time.monotonic() + 0.5)), default=float("nan")))
            during = w.window(WINDOW)
            ratios.append(during / before)
        finally:
            if ht:
                ht.send_signal(signal.SIGTERM)
                try:
                    ht.wait(60)
                except subprocess.TimeoutExpired:
                    ht.kill()
            w.stop()
    record("heaptrack -p", "throughput attached/alone", summary(ratios))
    record("heaptrack -p", "attach: command start to injection finished (ms)", summary(lat, "{:.1f}"))
    record("heaptrack -p", "target's longest stall around attach (ms)", summary(stalls, "{:.1f}"))


def frames_functions(stack):
    """Function names of a stack, with compiler clone suffixes (.constprop.0,
    .isra.0, ...) removed so they match the source names."""
    return [(f.get("function") or "").split(".")[0] for f in stack.get("frames", [])]


def bench_accuracy():
    w = Workload("accuracy_workload")
    try:
        cli("attach", "-p", str(w.pid))
        os.kill(w.pid, signal.SIGUSR1)
        w.wait_for("done", 300)
        truth = {}
        for _, l in w.lines:
            if l.startswith("truth "):
                f = l.split()
                truth[f[1]] = (int(f[3]), int(f[5]))
        out = os.path.join(TMP, "acc.json")
        cli("snapshot", "-p", str(w.pid), "--format", "json", "-o", out)
        cli("detach", "-p", str(w.pid))
        prof = json.load(open(out))
        for fn, (t_alloc, t_live) in truth.items():
            est_alloc = est_live = 0
            for s in prof["stacks"]:
                if fn in frames_functions(s):
                    est_alloc += s["alloc_bytes"]
                    est_live += s["live_bytes"]
            record("accuracy at default rate (1 GiB allocated)", f"{fn}: error of total / live bytes",
                   f"{100 * (est_alloc - t_alloc) / t_alloc:+.2f}% / {100 * (est_live - t_live) / t_live:+.2f}%")
    finally:
        w.stop()


def bench_snapshot_cost():
    w = Workload("stacks_workload")
    try:
        cli("attach", "-p", str(w.pid), "--rate", "1")
        os.kill(w.pid, signal.SIGUSR1)
        line = w.wait_for("done", 120)
        out = os.path.join(TMP, "stacks.json")
        p, dt = cli("snapshot", "-p", str(w.pid), "--format", "json", "-o", out, "-v")
        cli("detach", "-p", str(w.pid))
        prof = json.load(open(out))
        wire = [l for l in p.stderr.splitlines() if "bytes" in l and "received" in l]
        record("snapshot", f"distinct stacks made / in profile", f"{line.split()[-1]} / {len(prof['stacks'])}")
        record("snapshot", "time incl. symbolization and JSON (s)", f"{dt:.2f}")
        record("snapshot", "wire", wire[-1].strip() if wire else "n/a (cli printed no byte count)")
    finally:
        w.stop()


def bench_payload_memory():
    w = Workload("alloc_workload", "--interval-ms", "250")
    try:
        cli("attach", "-p", str(w.pid), "--rate", "1")
        out = os.path.join(TMP, "mem.json")
        calls = 0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            time.sleep(0.5)
            cli("snapshot", "-p", str(w.pid), "--format", "json", "-o", out)
            prof = json.load(open(out))
            calls = prof["totals"].get("exact_alloc_calls", 0)
            if calls >= 10_000_000:
                break
        mem = prof["totals"].get("profiler_bytes")
        cli("detach", "-p", str(w.pid))
        record("payload memory", f"mmap'ed bytes at RATE=1 after {calls:.3g} allocations",
               f"{mem / 2**20:.1f} MiB" if mem else "n/a")
    finally:
        w.stop()


def bench_symbolize():
    exe = os.path.join(ROOT, "build", "bench", "symbolize_bench")
    if not os.path.exists(exe):
        record("symbolization", "skipped", "build/bench/symbolize_bench missing")
        return
    p = subprocess.run([exe, "100000"], capture_output=True, text=True)
    record("symbolization", "100,000 distinct PCs", p.stdout.strip() or p.stderr.strip())


def main():
    sections = [bench_overhead, bench_heaptrack, bench_accuracy, bench_snapshot_cost,
                bench_payload_memory, bench_symbolize]
    only = sys.argv[1:]
    for fn in sections:
        if only and fn.__name__.replace("bench_", "") not in only:
            continue
        try:
            fn()
        except Exception as e:  # a failed section is reported, the others still run
            record(fn.__name__.replace("bench_", ""), "FAILED", str(e))
    print("\n| section | figure | value |\n|---|---|---|")
    for s, n, v in results:
        print(f"| {s} | {n} | {v} |")
    shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
