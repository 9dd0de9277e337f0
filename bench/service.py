"""service.py - the bench's "service" section (issue 28, item 3): a real
PostgreSQL under `pgbench -c 8`, the whole server attached by one command.

The server is the e2e tests' (tests/e2e/pg_lib.bash: initdb in a temporary
directory, a unix socket only, no JIT). Measured, in interleaved rounds:
  (a) `heapinject attach -p POSTMASTER --children`: from the command's
      start until it returns with the postmaster, its auxiliary processes
      and all 8 backends attached (median and spread; goal < 300 ms), and
      where each process's time went (HEAPINJECT_TIMING=1: the cli's
      checks, the injector's preparation, the wait for a safe point, the
      dlopen, the payload's start). With BENCH_SERVICE_BASELINE=DIR (a
      directory with another build's heapinject and libheapinject.so,
      e.g. main's), that build attaches too in every round, after the
      round's windows, for a before/after in the same run;
  (b) pgbench's tps with all of them attached against the mean of the
      windows just before and just after (goal >= 0.95);
  (c) new connections per second (`pgbench -C -S`: one connection per
      select-only transaction, so the connection is most of the cost) with
      the server attached, and after detach, each against the window
      before (goal >= 0.95 both);
  (d) heaptrack -p on the same 8 backends, when heaptrack is installed:
      the time until all 8 said "injection finished", and the tps ratio.
pgbench reports its tps every second (-P 1 --progress-timestamp); a
window's tps is the mean of the seconds that lie inside it.
"""
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG_LIB = os.path.join(ROOT, "tests", "e2e", "pg_lib.bash")
CLIENTS = 8


class Server:
    """A PostgreSQL server of the bench's own, in dir (pg_lib.bash)."""

    def __init__(self, tmp, preexec):
        self.dir = os.path.join(tmp, "pg")
        p = subprocess.run(["bash", "-c", f'. "{PG_LIB}" && pg_start "$1" && pg_env', "pg", self.dir],
                           capture_output=True, text=True, env=dict(os.environ, PG_OPTIONS="-c max_connections=60"))
        env = dict(l.split("=", 1) for l in p.stdout.splitlines() if "=" in l)
        if p.returncode != 0 or "MASTER" not in env:
            raise RuntimeError("cannot start PostgreSQL: " + (p.stdout + p.stderr).strip()[-400:])
        self.bin, self.port, self.master = env["PGB"], env["PORT"], int(env["MASTER"])
        self.preexec = preexec

    def args(self):
        return ["-h", self.dir, "-p", self.port, "-U", "postgres"]

    def pgbench(self, *args, **kw):
        return subprocess.Popen([os.path.join(self.bin, "pgbench"), *self.args(), *args, "postgres"],
                                preexec_fn=self.preexec, **kw)

    def children(self):
        """{pid: its ps title} of the postmaster's children."""
        out = {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                if ppid != self.master:
                    continue
                with open(f"/proc/{d}/cmdline") as f:
                    out[int(d)] = f.read().replace("\0", " ").strip()
            except (OSError, ValueError, IndexError):
                pass
        return out

    def backends(self):
        """The pids of client backends ("postgres: USER DB [local] ...")."""
        return sorted(p for p, t in self.children().items() if "[local]" in t)

    def crashed(self):
        log = open(os.path.join(self.dir, "server.log")).read()
        return re.findall(r".*(?:terminated by signal|was terminated|all server processes terminated|"
                          r"reinitializing).*", log)

    def stop(self):
        subprocess.run(["bash", "-c", f'. "{PG_LIB}" && PGB="$1" PGDIR="$2" pg_stop', "pg", self.bin, self.dir],
                       capture_output=True)


class Load:
    """pgbench -c 8 running for the whole section; its per-second tps."""

    def __init__(self, server, seconds):
        self.tps = []  # (CLOCK_REALTIME of the second's end, tps)
        self.other = []  # pgbench's other lines (its errors)
        self.p = server.pgbench("-n", "-c", str(CLIENTS), "-j", "2", "-T", str(int(seconds)), "-P", "1",
                                "--progress-timestamp", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, bufsize=1)
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        for line in self.p.stderr:
            m = re.match(r"progress: ([0-9.]+) s, ([0-9.]+) tps", line)
            if m:
                self.tps.append((float(m.group(1)), float(m.group(2))))
            else:
                self.other.append(line.strip())

    def window(self, seconds):
        """Mean tps of the whole seconds inside the next `seconds`."""
        t0 = time.time()
        time.sleep(seconds)
        t1 = time.time()
        time.sleep(1.1)  # the last second's line
        vals = [v for t, v in list(self.tps) if t0 + 1 <= t <= t1]
        return statistics.mean(vals) if vals else float("nan")

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def connections_per_s(server, seconds):
    """`pgbench -C -S -c 2`: select-only transactions, each on a new
    connection, for `seconds`: its tps is connections per second."""
    p = server.pgbench("-n", "-C", "-S", "-c", "2", "-j", "1", "-T", str(int(seconds)),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.communicate(timeout=seconds + 120)[0]
    m = re.search(r"tps = ([0-9.]+)", out)
    if p.returncode != 0 or not m:
        raise RuntimeError("pgbench -C failed: " + out.strip()[-300:])
    return float(m.group(1))


def server_cpu_ms(pid):
    """The postmaster's CPU time and its reaped children's (every ended
    backend's, our agent threads' included), in ms."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in f[11:15]) * 1000.0 / os.sysconf("SC_CLK_TCK")


def connections_cpu(server, seconds):
    """(connections/s, the server's CPU ms per connection) of one
    connections_per_s window."""
    c0 = server_cpu_ms(server.master)
    rate = connections_per_s(server, seconds)
    return rate, (server_cpu_ms(server.master) - c0) / max(1.0, rate * seconds)


def children_cpu_ms():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1000


def hi(heapinject, *args, cpu=None, env=None):
    """Runs the cli: (wall ms, stderr); its CPU time (user + system, its
    own children's included: they are reaped before it ends) appended to
    cpu when given, the figure a loaded machine does not swing."""
    c0 = children_cpu_ms()
    t0 = time.monotonic()
    p = subprocess.run([heapinject, *args], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    ms = (time.monotonic() - t0) * 1000
    if cpu is not None:
        cpu.append(children_cpu_ms() - c0)
    if p.returncode != 0:
        raise RuntimeError(f"heapinject {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()[-600:]}")
    return ms, p.stderr


PHASES = [("begun", "waiting for an attach thread (from main)", "main"),
          ("checked", "the cli's checks (process, libc, heap, allocator, limits)", "begun"),
          ("prepared", "the injector's preparation (library path, maps, libc's symbols)", "checked"),
          ("safe", "seize to a safe point", "prepared"),
          ("loaded", "dlopen of the payload", "safe"),
          ("detached", "the payload's start and the detach", "loaded"),
          ("connected", "the agent's first answer", "detached")]


def timing_phases(err, into):
    """Each process's phases (ms) from the cli's HEAPINJECT_TIMING lines,
    appended to into[phase]."""
    for line in err.splitlines():
        if not line.startswith("heapinject: timing (CLOCK_MONOTONIC ns):") or "begun=" not in line:
            continue
        ts = {k: int(v) for k, v in (kv.split("=") for kv in line.split(":", 2)[2].split())}
        for key, _, since in PHASES:
            if ts.get(key) and ts.get(since):
                into.setdefault(key, []).append((ts[key] - ts[since]) / 1e6)


def baseline_cli():
    """(heapinject, its environment) of BENCH_SERVICE_BASELINE, or None."""
    d = os.environ.get("BENCH_SERVICE_BASELINE")
    if not d:
        return None
    cli, lib = os.path.join(d, "heapinject"), os.path.join(d, "libheapinject.so")
    if not (os.access(cli, os.X_OK) and os.path.isfile(lib)):
        raise RuntimeError(f"BENCH_SERVICE_BASELINE={d}: no heapinject and libheapinject.so there")
    return cli, {"HEAPINJECT_PAYLOAD": lib}


def heaptrack_round(server, load, backends, tmp, window, preexec):
    """heaptrack -p on each backend at once: (ms until all 8 injected, tps
    ratio attached/before)."""
    before = load.window(window)
    t0 = time.monotonic()
    procs = [subprocess.Popen(["heaptrack", "-o", os.path.join(tmp, f"ht.{b}"), "-p", str(b)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                              preexec_fn=preexec) for b in backends]
    done = []

    def wait_injected(p):
        for line in p.stdout:
            if "injection finished" in line:
                done.append(time.monotonic())
                break
        for _ in p.stdout:  # keep the pipe drained
            pass

    th = [threading.Thread(target=wait_injected, args=(p,), daemon=True) for p in procs]
    for t in th:
        t.start()
    for t in th:
        t.join(120)
    ms = (max(done) - t0) * 1000 if len(done) == len(procs) else float("nan")
    during = load.window(window)
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(120)
        except subprocess.TimeoutExpired:
            p.kill()
    return ms, during / before


def run(heapinject, tmp, rounds, window, record, figure, summary, preexec):
    sec = "service (PostgreSQL, pgbench -c 8)"
    if not shutil.which("pgbench") and not os.path.isdir("/usr/lib/postgresql"):
        record(sec, "skipped", "PostgreSQL is not installed (scripts/deps.sh postgresql)")
        return
    window = max(3.0, window)
    server = Server(tmp, preexec)
    load = None
    try:
        p = subprocess.run([os.path.join(server.bin, "pgbench"), *server.args(), "-i", "-q", "-s", "4",
                            "postgres"], capture_output=True, text=True, preexec_fn=preexec)
        if p.returncode != 0:
            raise RuntimeError("pgbench -i failed: " + p.stderr.strip()[-300:])
        rounds = max(rounds, 3)
        per_round = 3 * (window + 1.2) + 10
        load = Load(server, rounds * per_round + 4 * (3 * window + 60) + 60)
        deadline = time.monotonic() + 30
        while len(server.backends()) < CLIENTS and time.monotonic() < deadline:
            time.sleep(0.05)
        if len(server.backends()) < CLIENTS:
            raise RuntimeError(f"pgbench's {CLIENTS} backends did not appear: {server.children()}")
        load.window(2)  # warm up
        attach_ms, detach_ms, tps_ratio, tps_alone, nprocs, slowest = [], [], [], [], [], []
        attach_cpu, loads, phases = [], [], {}
        base = baseline_cli()
        base_ms, base_cpu, base_loads = [], [], []
        for _ in range(rounds):
            before = load.window(window)
            backends = server.backends()
            loads.append(os.getloadavg()[0])
            ms, err = hi(heapinject, "attach", "-p", str(server.master), "--children", cpu=attach_cpu,
                         env={"HEAPINJECT_TIMING": "1"})
            timing_phases(err, phases)
            done = {int(x) for x in re.findall(r"attached to pid (\d+) ", err)}
            missing = [b for b in [server.master] + backends if b not in done]
            if missing:
                raise RuntimeError(f"not attached after the command: {missing}\n{err[-600:]}")
            each = [float(x) for x in re.findall(r"attached to pid \d+ \(.*?\) in (\d+) ms", err)]
            nprocs.append(len(each))
            slowest.append(max(each, default=float("nan")))
            attach_ms.append(ms)
            during = load.window(window)
            ms, _ = hi(heapinject, "detach", "-p", str(server.master), "--children")
            detach_ms.append(ms)
            after = load.window(window)
            tps_ratio.append(during / ((before + after) / 2))
            tps_alone.append(before)
            if base:
                # outside the tps windows, the same server state
                base_loads.append(os.getloadavg()[0])
                ms, _ = hi(base[0], "attach", "-p", str(server.master), "--children", cpu=base_cpu, env=base[1])
                base_ms.append(ms)
                hi(base[0], "detach", "-p", str(server.master), "--children", env=base[1])
        record(sec, f"attach -p POSTMASTER --children: command start to all attached (ms; "
                    f"{statistics.median(nprocs):.0f} processes, {CLIENTS} of them backends; goal < 300 at the "
                    f"median)", summary(attach_ms, "{:.0f}"))
        record(sec, "the slowest process's own attach in those commands (ms)", summary(slowest, "{:.0f}"))
        for key, what, _ in PHASES:
            if phases.get(key):
                record(sec, f"  per process: {what} (ms)", summary(phases[key], "{:.1f}"))
                figure(f"service_attach_phase_{key}_ms", statistics.median(phases[key]))
        cpu_each = [c / n for c, n in zip(attach_cpu, nprocs) if n]
        record(sec, f"  the cli's CPU time for those commands (ms, user + system; load {min(loads):.1f}-"
                    f"{max(loads):.1f})", summary(attach_cpu, "{:.0f}"))
        record(sec, "  the cli's CPU time per process attached (ms)", summary(cpu_each, "{:.1f}"))
        if base:
            record(sec, f"  the same command by {os.environ['BENCH_SERVICE_BASELINE']}'s build, interleaved (ms; "
                        f"load {min(base_loads):.1f}-{max(base_loads):.1f})", summary(base_ms, "{:.0f}"))
            record(sec, "  that build's CPU time for those commands (ms, user + system)", summary(base_cpu, "{:.0f}"))
            figure("service_attach_ms_baseline", statistics.median(base_ms))
            figure("service_attach_cpu_ms_baseline", statistics.median(base_cpu))
        record(sec, "detach -p POSTMASTER --children (ms)", summary(detach_ms, "{:.0f}"))
        record(sec, "pgbench -c 8 tps, every process attached / alone (interleaved; goal >= 0.95)",
               summary(tps_ratio))
        record(sec, "pgbench -c 8 tps alone", summary(tps_alone, "{:.0f}"))
        figure("service_attach_ms", statistics.median(attach_ms))
        figure("service_attach_ms_max", max(attach_ms))
        figure("service_attach_cpu_ms", statistics.median(attach_cpu))
        figure("service_attach_cpu_ms_per_process", statistics.median(cpu_each))
        figure("service_attach_load", statistics.median(loads))
        figure("service_attach_processes", statistics.median(nprocs))
        figure("service_tps_ratio", statistics.median(tps_ratio))

        # (c) new connections per second: before, attached, after detach.
        load.stop()
        load = None
        connections_per_s(server, 2)  # warm up
        c_att, c_after, c_alone, cpu_alone, cpu_att = [], [], [], [], []
        for _ in range(rounds):
            before, cb = connections_cpu(server, window)
            hi(heapinject, "attach", "-p", str(server.master), "--children")
            during, cd = connections_cpu(server, window)
            hi(heapinject, "detach", "-p", str(server.master), "--children")
            after = connections_per_s(server, window)
            c_att.append(during / before)
            c_after.append(after / before)
            c_alone.append(before)
            cpu_alone.append(cb)
            cpu_att.append(cd)
        record(sec, "pgbench -C -S new connections/s, postmaster attached / before (goal >= 0.95)", summary(c_att))
        record(sec, "pgbench -C -S new connections/s, after detach / before (goal >= 0.95)", summary(c_after))
        record(sec, "pgbench -C -S new connections/s alone", summary(c_alone, "{:.0f}"))
        record(sec, "  the server's CPU per connection, alone (ms; postmaster and ended backends)",
               summary(cpu_alone, "{:.2f}"))
        record(sec, "  the server's CPU per connection, every new backend followed (ms)", summary(cpu_att, "{:.2f}"))
        figure("service_connect_ratio_attached", statistics.median(c_att))
        figure("service_connect_ratio_after", statistics.median(c_after))
        figure("service_connect_cpu_ms_alone", statistics.median(cpu_alone))
        figure("service_connect_cpu_ms_attached", statistics.median(cpu_att))

        # (d) heaptrack -p on the same 8 backends.
        if os.environ.get("BENCH_SKIP_HEAPTRACK") or not shutil.which("heaptrack"):
            record(sec, "heaptrack -p on the 8 backends", "skipped (not installed, or BENCH_SKIP_HEAPTRACK)")
        else:
            ht_ms, ht_ratio = [], []
            for _ in range(min(rounds, 2)):
                load = Load(server, 3 * window + 200)
                deadline = time.monotonic() + 30
                while len(server.backends()) < CLIENTS and time.monotonic() < deadline:
                    time.sleep(0.05)
                load.window(2)
                ms, ratio = heaptrack_round(server, load, server.backends(), tmp, window, preexec)
                ht_ms.append(ms)
                ht_ratio.append(ratio)
                if ratio != ratio:  # NaN: no pgbench second inside a window
                    why = "pgbench " + ("exited: " if load.p.poll() is not None else "printed no progress: ")
                    record(sec, "heaptrack -p round without a tps figure", why + " / ".join(load.other[-3:]))
                load.stop()
                load = None
            record(sec, "heaptrack -p on each of the 8 backends at once: start to all injected (ms)",
                   summary(ht_ms, "{:.0f}"))
            record(sec, "heaptrack -p on the 8 backends: pgbench tps attached / before", summary(ht_ratio))
            figure("service_heaptrack_attach_ms", statistics.median(ht_ms))
            figure("service_heaptrack_tps_ratio", statistics.median(ht_ratio))
        crash = server.crashed()
        record(sec, "server log: crashed backends or restarts", str(len(crash)) + (": " + crash[0] if crash else ""))
    finally:
        if load:
            load.stop()
        server.stop()
