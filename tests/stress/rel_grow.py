"""rel_grow.py DIR - a Python program whose memory keeps growing, for
tests/e2e/rel_real_python.sh (run by Debian's /usr/bin/python3).

Builds records (strings of 10 to 700 bytes, so that both pymalloc and
malloc serve them, in small dicts with lists) and keeps the string of one
in 64 forever, with its CRC. Every 0.25 s prints "tick PHASE OPS_PER_S",
where PHASE is the highest N for which DIR/phase.N exists (0 if none).
Stops when DIR/stop exists (or after 300 s), checks every record it kept,
and prints "done kept=N errors=E", exiting 0 when E is 0.
"""
import os
import sys
import time
import zlib

d = sys.argv[1]
kept = []
ops = 0
phase = 0
t_tick = t0 = time.monotonic()
print("ready", flush=True)
while True:
    for i in range(2000):
        n = ops + i
        s = ("%07d|" % n) * (1 + n % 87)
        rec = {"n": n, "s": s, "l": [n, n * 2, str(n)]}
        if n % 64 == 0:
            # a tuple of atoms: the cyclic GC stops tracking it, so the
            # program does not slow down as it grows (for the before/after
            # comparison of its speed)
            kept.append((n, rec["s"], zlib.crc32(s.encode())))
    ops += 2000
    now = time.monotonic()
    if now - t_tick >= 0.25:
        while os.path.exists(os.path.join(d, "phase.%d" % (phase + 1))):
            phase += 1
        print("tick %d %d" % (phase, int(ops / (now - t_tick))), flush=True)
        ops = 0
        t_tick = now
        if os.path.exists(os.path.join(d, "stop")) or now - t0 > 300:
            break
errors = 0
for n, s, crc in kept:
    if zlib.crc32(s.encode()) != crc or not s.startswith("%07d|" % n):
        errors += 1
print("done kept=%d errors=%d" % (len(kept), errors), flush=True)
sys.exit(1 if errors else 0)
