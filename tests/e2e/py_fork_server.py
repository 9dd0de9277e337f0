"""py_fork_server.py - a pre-fork HTTP server in plain Python (os.fork, a
socket accept loop in each worker) for tests/e2e/py_fork_server.sh: the
master listens on 127.0.0.1 (a free port), forks NWORKERS workers and
prints "port PORT", "worker PID" for each and "ready". Each worker answers
GET /leak and /ok with py_gunicorn_app.answer (N in the header X-N), one
request per connection; after MAX requests (0: no limit) it exits and the
master forks another in its place ("worker PID" again). On SIGTERM the
master stops the workers; each checks what it kept (py_gunicorn_app's
log_checked) and exits 0 if it was intact; the master prints
"master ok N" when all N workers it started exited 0.
usage: py_fork_server.py NWORKERS MAX"""
import os
import signal
import socket
import sys

import py_gunicorn_app

nworkers, max_requests = int(sys.argv[1]), int(sys.argv[2])
stopping = False
live = set()  # the master's workers


def on_term(sig, frame):
    global stopping
    stopping = True
    for pid in live:  # the master's (a worker's own set is empty)
        os.kill(pid, signal.SIGTERM)


def say(line):
    os.write(1, (line + "\n").encode())


def serve_one(conn):
    data = b""
    conn.settimeout(30)
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    path = head[0].split()[1]
    n = 0
    for h in head[1:]:
        name, _, value = h.partition(":")
        if name.strip().lower() == "x-n":
            n = int(value)
    body = py_gunicorn_app.answer(path, n)
    status = "200 OK" if body is not None else "404 Not Found"
    payload = ((body if body is not None else "no such path") + "\n").encode()
    conn.sendall(("HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                  % (status, len(payload))).encode() + payload)


def worker(listener):
    live.clear()
    signal.signal(signal.SIGTERM, on_term)
    listener.settimeout(0.2)  # to see SIGTERM between accepts
    served = 0
    while not stopping and (max_requests == 0 or served < max_requests):
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        with conn:
            serve_one(conn)
        served += 1
    py_gunicorn_app.log_checked()
    os._exit(0 if py_gunicorn_app.verify().endswith(" ok") else 1)


def spawn(listener):
    pid = os.fork()
    if pid == 0:
        worker(listener)
    say("worker %d" % pid)
    return pid


def main():
    signal.signal(signal.SIGTERM, on_term)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    say("port %d" % listener.getsockname()[1])
    for _ in range(nworkers):
        live.add(spawn(listener))
    started, bad = len(live), 0
    say("ready")
    while live:
        try:
            pid, status = os.waitpid(-1, 0)  # SIGTERM's handler runs meanwhile
        except ChildProcessError:
            break
        live.discard(pid)
        if status != 0:
            bad += 1
            say("worker %d exit status %d" % (pid, status))
        if not stopping:
            live.add(spawn(listener))
            started += 1
    say("master ok %d" % started if not bad else "master BAD %d of %d" % (bad, started))


main()
