"""py_truth_check.py JSON TMOUT [BOUND] - top 5 Python lines by live bytes
(each stack counted at its innermost Python frame) against tracemalloc's
top 5 printed by tests/targets/py_truth/app*.py: same lines, each within
BOUND (default 0.10)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import hi_profile

d = hi_profile.load(sys.argv[1])
bound = float(sys.argv[3]) if len(sys.argv) > 3 else 0.10
by = {}
for s in d["stacks"]:
    py = [f for f in s["frames"] if f.get("runtime") == "python"]
    if py:
        k = (os.path.basename(py[0]["file"] or ""), py[0]["line"])
        by[k] = by.get(k, 0) + s["live_bytes"]
hi = sorted(by.items(), key=lambda kv: -kv[1])[:5]
tm = {}
for ln in open(sys.argv[2]):
    if ln.startswith("tm "):
        _, f, line, size = ln.split()
        tm[(f, int(line))] = int(size)
print("%-20s %12s %12s" % ("line", "heapinject", "tracemalloc"))
for k, v in hi:
    print("%-20s %12d %12s" % ("%s:%d" % k, v, tm.get(k, "-")))
assert len(tm) == 5, tm
assert set(k for k, _ in hi) == set(tm), "top 5 lines differ: %r vs %r" % ([k for k, _ in hi], list(tm))
for k, v in hi:
    assert abs(v - tm[k]) <= bound * tm[k], "%s:%d: %d vs tracemalloc %d" % (k + (v, tm[k]))
print("top 5 agree within %g%%; worst %+.1f%%" % (100 * bound, max((100.0 * (v - tm[k]) / tm[k] for k, v in hi),
                                                               key=abs)))
