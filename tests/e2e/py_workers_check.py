"""py_workers_check.py - checks the JSON profile of a Python pre-fork
service (tests/e2e/py_gunicorn.sh, py_fork_server.sh) whose workers run
py_gunicorn_app.py's handlers.
  py_workers_check.py leak JSON KIND LINE MASTER WORKER...
    the report has the master and the workers, nothing else; the leak
    (leak_handler) is under the workers only, each of them; each worker's
    largest stack of KIND (malloc or pymalloc) by live bytes starts, above
    the interpreter's C frames, with leak_handler (py_gunicorn_app.py:LINE),
    a frame of "runtime": "python", called by answer.
  py_workers_check.py recycle JSON MASTER FOLLOWED STDERR
    FOLLOWED, a worker forked during the session that served /leak, is in
    the report, started during the session, with leak_handler among the
    Python frames of its stacks; every worker started during the session
    is the master's child; at least one worker exited during the session,
    and each is either in the report marked with its exit or named on
    STDERR as lost (which one: printed)."""
import os
import re
import sys

import hi_profile

APP = "py_gunicorn_app.py"


def python_frames(s):
    return [f for f in s["frames"] if f.get("runtime") == "python"]


def is_leak(s):
    return any(f["function"] == "leak_handler" for f in python_frames(s))


def leak(path, kind, line, master, workers):
    d = hi_profile.load(path)
    procs = {p["pid"]: p for p in d["processes"]}
    assert sorted(procs) == sorted([master] + workers), ("processes", sorted(procs), [master] + workers)
    assert all(procs[w]["ppid"] == master for w in workers), [procs[w] for w in workers]
    # The Python line of the session: every process's samples, one version.
    py = d.get("python")
    assert py and py["frames"] is True and py["version"].startswith("3."), "python: %r" % (py,)
    with_py = sum(1 for s in d["stacks"] if python_frames(s))
    assert py["samples_with_frames"] >= with_py > 0, (py, with_py)
    pm = d.get("pymalloc") or {}
    if kind == "malloc":  # not asked for: the report says how
        assert "--pymalloc" in (pm.get("why") or ""), "pymalloc: %r" % (pm,)
    else:
        assert pm.get("sampled") is True and pm.get("live_bytes", 0) > 0, "pymalloc: %r" % (pm,)
    print("python: %s, %d samples with Python frames; pymalloc: %s" % (
        py["version"], py["samples_with_frames"], pm.get("why") or "sampled"))
    leaking = {s["pid"] for s in d["stacks"] if is_leak(s)}
    assert leaking == set(workers), ("leak_handler's stacks are under", sorted(leaking), "not", workers)
    for w in workers:
        mine = sorted((s for s in d["stacks"] if s["pid"] == w and s["kind"] == kind), key=lambda s: -s["live_bytes"])
        assert mine and mine[0]["live_bytes"] > 0, "pid %d: no live stack of kind %s" % (w, kind)
        pyf = python_frames(mine[0])
        assert pyf, "pid %d: the top %s stack has no Python frame: %s" % (
            w, kind, [f["function"] for f in mine[0]["frames"]][:12])
        top = (pyf[0]["function"], os.path.basename(pyf[0]["file"] or ""), pyf[0]["line"])
        assert top == ("leak_handler", APP, line), "pid %d: top %s stack's first Python frame %r, not leak_handler %s:%d" % (
            w, kind, top, APP, line)
        assert len(pyf) > 1 and pyf[1]["function"] == "answer", [f["function"] for f in pyf]
        # above it: the interpreter's C frames (the allocator's callers)
        assert mine[0]["frames"][0].get("runtime") is None, mine[0]["frames"][0]
        lk = sum(s["live_bytes"] for s in d["stacks"] if s["pid"] == w and s["kind"] == kind and is_leak(s))
        print("pid %d: top %s stack leak_handler (%s:%d), %d B live; leak_handler's %s stacks %d B live" % (
            w, kind, APP, line, mine[0]["live_bytes"], kind, lk))


def recycle(path, master, followed, errfile):
    d = hi_profile.load(path)
    err = open(errfile).read()
    procs = {p["pid"]: p for p in d["processes"]}
    assert followed in procs, "worker %d, forked during the session, is not in the report: %s" % (followed, sorted(procs))
    new = [p for p in procs.values() if p["started_during_session"]]
    for p in new:
        assert p["ppid"] == master, p
        mine = [s for s in d["stacks"] if s["pid"] == p["pid"]]
        withpy = [s for s in mine if python_frames(s)]
        assert withpy or p["pid"] != followed, "pid %d (new): none of its %d stacks has Python frames" % (
            p["pid"], len(mine))
        names = {f["function"] for s in withpy for f in python_frames(s)}
        assert p["pid"] != followed or "leak_handler" in names, (
            "pid %d (new) served /leak, but leak_handler is not among %s" % (p["pid"], sorted(names)))
        print("new worker %d: %d stacks, %d with Python frames%s" % (
            p["pid"], len(mine), len(withpy), ", leak_handler among them" if "leak_handler" in names else ""))
    assert procs[followed]["started_during_session"] is True, procs[followed]
    gone = [int(x) for x in re.findall(r"pid (\d+) \(\S+\) exited during the session", err)]
    assert gone, "no worker exited during the session"
    for pid in gone:
        if pid in procs:
            assert procs[pid].get("exit"), ("exited but not marked", procs[pid])
            print("exited worker %d: kept, %s" % (pid, procs[pid]["exit"]))
        else:
            # _exit (os._exit in a forked worker) runs no exit handler, so
            # no last snapshot: said, with the reason.
            assert re.search(r"pid %d \(\S+\) exited during the session(: | without a last snapshot .*: )its samples are lost"
                             % pid, err), pid
            print("exited worker %d: its samples are lost (said on stderr)" % pid)


if sys.argv[1] == "leak":
    leak(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), [int(x) for x in sys.argv[6:]])
elif sys.argv[1] == "recycle":
    recycle(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
else:
    sys.exit("usage: see the docstring")
