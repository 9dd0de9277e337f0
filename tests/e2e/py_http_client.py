"""py_http_client.py - the client of tests/e2e/py_gunicorn.sh and
py_fork_server.sh: THREADS threads send GET /leak and /ok in turn, with
the request's number N in the header X-N
(one connection each, as a browser without keep-alive) to 127.0.0.1:PORT
until the file STOP exists (at least MIN requests in all), each thread
waiting PACE milliseconds after each answer (default 0), and check every
answer (status 200, the value recomputed here). Prints "serving" after its
first answers, "pid PID leak N" when a pid has answered N /leak (N a
multiple of 10), then one line "done REQUESTS bad BAD" and writes to OUT a
JSON object: for each pid that answered, how many /leak and /ok it served.
usage: py_http_client.py PORT STOP OUT MIN [THREADS [PACE]]"""
import http.client
import json
import os
import sys
import threading
import time

port, stop, out, least = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
nthreads = int(sys.argv[5]) if len(sys.argv) > 5 else 2
pace = int(sys.argv[6]) / 1000.0 if len(sys.argv) > 6 else 0
lock = threading.Lock()
served = {}
state = {"sent": 0, "bad": [], "said": False}


def ok_value(n):
    return sum(len(str(n * k)) for k in range(32))


def one(path, n):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        # n in a header: a query string would differ on every request, and
        # urllib's cache of split URLs would keep the last 128 of them live
        c.request("GET", path, headers={"X-N": str(n)})
        r = c.getresponse()
        body = r.read().decode()
    finally:
        c.close()
    words = body.split()
    if r.status != 200 or len(words) != 4 or words[0] != path[1:] or int(words[2]) != n:
        return None, "%s?n=%d: %d %r" % (path, n, r.status, body)
    if path == "/ok" and int(words[3]) != ok_value(n):
        return None, "%s?n=%d: value %s" % (path, n, words[3])
    return int(words[1]), None


def run():
    while True:
        with lock:
            if state["sent"] >= least and os.path.exists(stop) or state["bad"]:
                return
            state["sent"] += 1
            n = state["sent"]
        path = "/leak" if n % 2 else "/ok"
        try:
            pid, bad = one(path, n)
        except Exception as e:  # a refused or cut connection is a failure too
            pid, bad = None, "%s?n=%d: %r" % (path, n, e)
        with lock:
            if bad:
                state["bad"].append(bad)
                return
            d = served.setdefault(str(pid), {"/leak": 0, "/ok": 0})
            d[path] += 1
            if not state["said"]:
                state["said"] = True
                print("serving", flush=True)
            if path == "/leak" and d[path] % 10 == 0:
                print("pid %d leak %d" % (pid, d[path]), flush=True)
        if pace:
            time.sleep(pace)


threads = [threading.Thread(target=run) for _ in range(nthreads)]
for th in threads:
    th.start()
for th in threads:
    th.join()
json.dump(served, open(out, "w"))
print("done %d bad %d" % (state["sent"], len(state["bad"])), flush=True)
for b in state["bad"][:5]:
    print("BAD " + b, flush=True)
sys.exit(1 if state["bad"] else 0)
