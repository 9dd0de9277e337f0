# py_walk_target.py - a thread stops inside known Python frames (a method,
# a generator, a nested function) and prints what py_walk_dump must read
# from outside: the thread's PyThreadState, the addresses of `code`, `str`
# and _PyRuntime, and its own stack as Python sees it (qualname, file,
# line), innermost first, and (PY_WALK_SELF) the payload walker's view
# of it from inside. Then it waits on stdin, and checks and exits.
import ctypes
import os
import sys
import threading

api = ctypes.pythonapi
api.PyGILState_GetThisThreadState.restype = ctypes.c_void_p
walk_self = None
if os.environ.get("PY_WALK_SELF"):
    self_lib = ctypes.CDLL(os.environ["PY_WALK_SELF"])
    walk_self = self_lib.py_walk_self
    walk_self.restype = ctypes.c_char_p
    self_lib.py_walk_no_state.restype = ctypes.c_char_p


def describe(frame):
    out = []
    while frame is not None:
        code = frame.f_code
        name = getattr(code, "co_qualname", code.co_name)
        out.append("%s (%s:%d)" % (name, code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return out


def inner(results):
    tstate = api.PyGILState_GetThisThreadState()
    runtime = ctypes.addressof(ctypes.c_char.in_dll(api, "_PyRuntime"))
    stack = describe(sys._getframe()); mine = walk_self() if walk_self else b"-"; print("ready %#x %#x %#x %#x %d" % (tstate, id(type(inner.__code__)), id(str), runtime, sys.version_info[1]), flush=True); print("\n".join(stack), flush=True); print("self", flush=True); print(mine.decode(), flush=True); print("other thread: %s" % (self_lib.py_walk_no_state().decode() if walk_self else "-"), flush=True); print("end", flush=True); results.append(sys.stdin.readline())


def middle(results):
    yield inner(results)


class Cache:
    def grow(self, results):
        for _ in middle(results):
            pass


def run(results):
    Cache().grow(results)


def gone_check():
    """A function that is gone (its code freed, memory reused) before its
    frames are named: the payload's copies must still name it."""
    ns = {"lib": self_lib, "describe": describe, "sys": sys}
    exec(compile("def gone_soon():\n    return describe(sys._getframe()), lib.py_walk_remember()\n", "<gone>", "exec"), ns)
    want, n = ns["gone_soon"]()
    import gc
    import weakref
    code = weakref.ref(ns["gone_soon"].__code__)
    del ns
    gc.collect()
    print("gone: code %s" % ("freed" if code() is None else "alive"), flush=True)
    for i in range(2000):
        exec(compile("def f%d(): return %d" % (i, i), "<churn>", "exec"), {})
    print("gone: want", flush=True)
    print("\n".join(want[:n]), flush=True)
    print("gone: named", flush=True)
    print(self_lib.py_walk_named().decode(), flush=True)
    print("gone: end", flush=True)


if walk_self:
    self_lib.py_walk_named.restype = ctypes.c_char_p
    gone_check()

results = []
t = threading.Thread(target=run, args=(results,))
t.start()
t.join()
print("checked" if results == ["go\n"] else "wrong %r" % results, flush=True)
