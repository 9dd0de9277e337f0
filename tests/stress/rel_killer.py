#!/usr/bin/env python3
"""rel_killer.py - run a command and SIGKILL a process the moment the
command's stderr shows a line matching a pattern (reliability tests).

  rel_killer.py [--victim cli|child|PID] [--delay-ms MS] [--timeout S] PATTERN -- CMD...

Reads CMD's stderr line by line (its stdout goes to our stdout). When a line
matches PATTERN (a Python regex), waits MS milliseconds (default 0) and
sends SIGKILL to the victim: the command itself ("cli", the default), its
one child ("child": the cli when the command is strace) or the given PID. Prints, on our stderr, every line the command wrote, then
"killer: hit LINE" (or "killer: no match") and "killer: exit STATUS" (the
command's exit code, or -9 when it was the victim), and after a kill
"killer: killed at NS" (CLOCK_REALTIME in nanoseconds, as `date +%s%N`,
taken right after kill(): what rel_detached_within measures from). Exits
0 unless CMD ran
longer than the timeout (then it is killed and we exit 2).
"""
import os
import re
import select
import signal
import subprocess
import sys
import time


def victim_pid(victim, cmd_pid):
    """The process to kill: the command, its one child (a command run
    under strace), or a given PID."""
    if victim == "cli":
        return cmd_pid
    if victim == "child":
        with open("/proc/%d/task/%d/children" % (cmd_pid, cmd_pid)) as f:
            kids = f.read().split()
        if len(kids) != 1:
            raise SystemExit("killer: %d has children %s, not one" % (cmd_pid, kids))
        return int(kids[0])
    return int(victim)


def main(argv):
    victim, delay, timeout = "cli", 0.0, 60.0
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--victim":
            victim = argv.pop(0)
        elif opt == "--delay-ms":
            delay = float(argv.pop(0)) / 1000.0
        elif opt == "--timeout":
            timeout = float(argv.pop(0))
        else:
            raise SystemExit(__doc__)
    pattern = re.compile(argv.pop(0))
    if not argv or argv.pop(0) != "--":
        raise SystemExit(__doc__)
    p = subprocess.Popen(argv, stderr=subprocess.PIPE, bufsize=0)
    deadline = time.monotonic() + timeout
    buf, hit, killed_ns = b"", None, None
    fd = p.stderr.fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            p.kill()
            p.wait()
            sys.stderr.write("killer: timeout after %.0f s\n" % timeout)
            return 2
        r, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not r:
            if p.poll() is not None:
                break
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode(errors="replace")
            sys.stderr.write(text + "\n")
            if hit is None and pattern.search(text):
                hit = text
                if delay:
                    time.sleep(delay)
                os.kill(victim_pid(victim, p.pid), signal.SIGKILL)
                killed_ns = time.time_ns()
    if buf:
        sys.stderr.write(buf.decode(errors="replace") + "\n")
    rc = p.wait()
    sys.stderr.write("killer: hit %s\n" % hit if hit is not None else "killer: no match\n")
    sys.stderr.write("killer: exit %d\n" % rc)
    if killed_ns is not None:
        sys.stderr.write("killer: killed at %d\n" % killed_ns)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
