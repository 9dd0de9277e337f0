"""py_gunicorn_app.py - the WSGI app of tests/e2e/py_gunicorn.sh (and the
request handlers of py_fork_server.py). GET /leak keeps about 2 KiB per
request in the module-level list LEAKED: a 1,536-byte bytes object (served
by malloc: larger than pymalloc's 512) and 16 short strings (pymalloc's
small objects), each made on its own marked line in leak_handler.
GET /ok keeps nothing. N comes in the header X-N. Each answer names the worker's pid and a value
the client recomputes. verify() checks every entry of LEAKED; the workers
call it as they exit and append "checked PID N ok allocator NAME" to
$PY_APP_LOG."""
import os

LEAKED = []


def leak_handler(n):
    blob = (b"%08d" % n) * 192  # leak: bytes
    small = []
    for i in range(16):
        small.append("%d.%d" % (n, i))  # leak: small
    LEAKED.append((n, blob, small))
    return len(LEAKED)


def ok_handler(n):
    parts = [str(n * k) for k in range(32)]
    return sum(len(p) for p in parts)


def verify():
    for n, blob, small in LEAKED:
        if blob != (b"%08d" % n) * 192 or small != ["%d.%d" % (n, i) for i in range(16)]:
            return "BAD entry %d" % n
    return "%d ok" % len(LEAKED)


def answer(path, n):
    """Returns the body for PATH and request number N, or None for an unknown path."""
    if path == "/leak":
        return "leak %d %d %d" % (os.getpid(), n, leak_handler(n))
    if path == "/ok":
        return "ok %d %d %d" % (os.getpid(), n, ok_handler(n))
    return None


def allocator():
    """Python's allocator by name (pymalloc; None while a wrapper is in front)."""
    import ctypes
    f = ctypes.pythonapi._PyMem_GetCurrentAllocatorName
    f.restype = ctypes.c_char_p
    name = f()
    return name.decode() if name else "None"


def log_checked():
    line = "checked %d %s allocator %s\n" % (os.getpid(), verify(), allocator())
    fd = os.open(os.environ["PY_APP_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, line.encode())
    os.close(fd)


def application(environ, start_response):
    body = answer(environ["PATH_INFO"], int(environ.get("HTTP_X_N", "0")))
    if body is None:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"no such path\n"]
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [body.encode() + b"\n"]
