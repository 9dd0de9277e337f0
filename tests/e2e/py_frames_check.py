"""py_frames_check.py - checks a JSON profile of tests/targets/py_frames/app.py
(tests/e2e/py_frames.sh): the top live stack starts, above the allocator's C
frames, with grow_cache at the line marked "keep: bytes", then the
generator, the async function and the thread that called it, each a frame
of "runtime": "python" with its file; every run of Python frames sits
where the eval loop runs them (before a _PyEval_EvalFrameDefault frame);
a thread without Python state has native frames only, counted.
usage: py_frames_check.py JSON LINE MINOR"""
import os
import sys

import hi_profile

path, line, minor = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = hi_profile.load(path)
py = d.get("python")
assert py and py["frames"] is True and py["version"] == "3.%d" % minor, "python: %r" % (py,)
stacks = sorted(d["stacks"], key=lambda s: -s["live_bytes"])
top = stacks[0]["frames"]
pyf = [f for f in top if f.get("runtime") == "python"]
names = [f["function"] for f in pyf]
assert pyf, "no Python frame on the top live stack: %s" % [f.get("function") for f in top]
first = pyf[0]
assert (first["function"], os.path.basename(first["file"] or ""), first["line"]) == ("grow_cache", "app.py", line), \
    "top Python frame: %r (want grow_cache app.py:%d)" % (first, line)
want = ["grow_cache", "producer", "fill", "worker", "Thread.run" if minor >= 11 else "run"]
k = 0
for w in want:  # in this order, innermost first (asyncio's own "run" lies between)
    assert w in names[k:], "callers %s not in order in %s" % (want, names)
    k = names.index(w, k) + 1
for f in pyf:
    assert f["file"] and f["line"] > 0 and f["module"] is None, "a Python frame without its place: %r" % f
# Python frames come where the eval loop runs them: each run of them is
# followed by the loop's native frame.
for s in d["stacks"]:
    fr = s["frames"]
    for k, f in enumerate(fr):
        if f.get("runtime") == "python" and k + 1 < len(fr) and fr[k + 1].get("runtime") != "python":
            j = k + 1  # the physical frame: inlined callees of the loop come first
            while j + 1 < len(fr) and fr[j].get("inlined"):
                j += 1
            nxt = fr[j]["function"] or ""
            cut = py["samples_no_eval_frame"] > 0 and all(g.get("runtime") == "python" for g in fr[k + 1:])
            assert nxt == "_PyEval_EvalFrameDefault" or cut, "a Python frame before %s" % nxt
native_only = [s for s in d["stacks"] if any("strdup" in (f["function"] or "") for f in s["frames"])]
assert native_only, "no sample of the threads without Python state"
for s in native_only:
    assert not any(f.get("runtime") for f in s["frames"]), "Python frames on a thread without Python state"
assert py["samples_no_python_state"] >= 1, py
assert py["samples_chain_dropped"] == 0, py
print("ok %s; %d Python frames on top: %s; without Python state: %d samples" %
      (py["version"], len(pyf), " < ".join(names[:6]), py["samples_no_python_state"]))
