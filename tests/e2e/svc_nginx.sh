#!/usr/bin/env bash
# svc_nginx: a real pre-fork server, reloaded during the session (issue 28).
# nginx with 3 workers, its own config in this test's private directory
# (port: a free one). `heapinject -p MASTER --children` while requests are
# served and `nginx -s reload` replaces the workers: the 3 new workers are
# followed (started_during_session, each with allocations of its own from
# the requests it served), the 3 old ones exit and keep their last
# snapshots (exit code 0, snapshot at exit). Every request is answered;
# after the session nothing is left: no socket, no last snapshot file, no
# process still attached; nginx's error log has no alert, and it quits
# cleanly.
. "$(dirname "$0")/lib.sh"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip "nginx is not installed (tests/deps.sh installs it)"
FUID=$(id -u)
SOCKDIR=/tmp/heapinject-$FUID
[ -d /run/user/$FUID ] && SOCKDIR=/run/user/$FUID/heapinject
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
NG=$TMP/nginx
mkdir -p "$NG/logs" "$NG/tmp"
cat >"$NG/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 3;
pid $NG/nginx.pid;
error_log $NG/logs/error.log notice;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $NG/tmp/body;
    proxy_temp_path $NG/tmp/proxy;
    fastcgi_temp_path $NG/tmp/fastcgi;
    uwsgi_temp_path $NG/tmp/uwsgi;
    scgi_temp_path $NG/tmp/scgi;
    server {
        listen 127.0.0.1:$PORT;
        location / { return 200 "hello \$request_uri\n"; }
    }
}
CONF
chmod -R a+rwx "$NG/tmp"
"$NGINX" -t -p "$NG" -c "$NG/nginx.conf" >"$TMP/t.out" 2>&1 || skip "nginx refuses the test's config: $(cat "$TMP/t.out")"
"$NGINX" -p "$NG" -c "$NG/nginx.conf" >"$TMP/nginx.out" 2>&1 &
MASTER=$!
PIDS+=("$MASTER")
nginx_workers() { # the master's children that are nginx workers now (not exiting)
    local p
    for p in $(ps -o pid= --ppid "$MASTER"); do
        grep -q "worker process$" /proc/"$p"/cmdline 2>/dev/null && tr '\0' ' ' </proc/"$p"/cmdline |
            grep -qv "shutting down" && echo "$p"
    done
}
for ((i = 0; i < 200; i++)); do
    mapfile -t OLD < <(nginx_workers)
    [ "${#OLD[@]}" = 3 ] && curl -sf "http://127.0.0.1:$PORT/ready" >/dev/null && break
    sleep 0.05
done
[ "${#OLD[@]}" = 3 ] || fail "nginx did not start 3 workers: $(cat "$TMP/nginx.out" "$NG/logs/error.log")"
PIDS+=("${OLD[@]}")
# requests N TAG: N requests, each on a connection of its own and answered
# with its own path; prints how many were.
requests() {
    python3 - "$PORT" "$1" "$2" <<'PY'
import http.client, sys
port, n, tag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
good = 0
for k in range(n):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", f"/{tag}/{k}")
    r = c.getresponse()
    good += r.status == 200 and r.read() == f"hello /{tag}/{k}\n".encode()
    c.close()
print(good)
PY
}
"$HEAPINJECT" -p "$MASTER" --children --duration 150 --rate 1K --format json -o "$TMP/r.json" \
    2>"$TMP/r.err" &
H=$!
PIDS+=("$H")
wait_for_line "$TMP/r.err" "profiling for" 60 || fail "the session did not start: $(cat "$TMP/r.err")"
before=$(requests 30 before)
[ "$before" = 30 ] || fail "only $before of 30 requests were answered before the reload"
"$NGINX" -p "$NG" -c "$NG/nginx.conf" -s reload 2>"$TMP/reload.err" || fail "nginx -s reload: $(cat "$TMP/reload.err")"
for p in "${OLD[@]}"; do
    wait_for_line "$TMP/r.err" "pid $p (nginx) exited during the session" 60 ||
        fail "old worker $p did not leave the session: $(cat "$TMP/r.err")"
done
for ((i = 0; i < 400; i++)); do
    NEW=()
    for p in $(nginx_workers); do grep -q "pid $p (nginx) appeared during the session" "$TMP/r.err" && NEW+=("$p"); done
    [ "${#NEW[@]}" = 3 ] && break
    sleep 0.05
done
[ "${#NEW[@]}" = 3 ] || fail "the 3 new workers were not followed: $(cat "$TMP/r.err")"
PIDS+=("${NEW[@]}")
after=$(requests 60 after)
[ "$after" = 60 ] || fail "only $after of 60 requests were answered after the reload"
kill -INT "$H"
wait "$H" || fail "the session failed: $(cat "$TMP/r.err")"
cat "$TMP/r.err"
python3 - "$TMP/r.json" "$MASTER" "${OLD[*]}" "${NEW[*]}" <<'PY' || fail "the report does not have the service as it was (above)"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
master, old, new = int(sys.argv[2]), [int(x) for x in sys.argv[3].split()], [int(x) for x in sys.argv[4].split()]
procs = {p["pid"]: p for p in d["processes"]}
assert sorted(procs) == sorted([master] + old + new), (sorted(procs), master, old, new)
for p in old:
    x = procs[p]["exit"]
    assert x and x["exit_code"] == 0 and x["snapshot_at_exit"] is True, (p, x)
    assert procs[p]["totals"]["exact_alloc_calls"] > 0, procs[p]
for p in new:
    assert procs[p]["started_during_session"] is True and procs[p]["exit"] is None, procs[p]
    assert procs[p]["ppid"] == master, procs[p]
# The requests after the reload were served by the new workers: they allocated.
calls = sum(procs[p]["totals"]["exact_alloc_calls"] for p in new)
assert calls >= 60, calls
stack_pids = {s["pid"] for s in d["stacks"]}
assert set(new) <= stack_pids and set(old) <= stack_pids, (stack_pids, old, new)
print("old", {p: procs[p]["totals"]["exact_alloc_calls"] for p in old},
      "new", {p: procs[p]["totals"]["exact_alloc_calls"] for p in new})
PY
for p in "$MASTER" "${NEW[@]}"; do
    "$HEAPINJECT" status -p "$p" >/dev/null 2>&1; rc=$?
    [ $rc = 7 ] || fail "pid $p: status exit $rc after the session: something is left attached"
    assert_not_traced "$p"
done
left=$(ls -A "$SOCKDIR" 2>/dev/null | grep -E '\.(sock|last)' || true)
[ -z "$left" ] || fail "files left in $SOCKDIR: $left"
"$NGINX" -p "$NG" -c "$NG/nginx.conf" -s quit
for ((i = 0; i < 200; i++)); do alive "$MASTER" || break; sleep 0.05; done
alive "$MASTER" && fail "nginx did not quit"
wait "$MASTER" 2>/dev/null; rc=$?
[ $rc = 0 ] || fail "nginx exited $rc"
! grep -E "\[(alert|crit|emerg)\]|exited on signal" "$NG/logs/error.log" || fail "nginx's error log has the lines above"
ok "nginx reloaded mid-session: old workers ${OLD[*]} kept their last snapshots, new ones ${NEW[*]} followed; $before + $after requests answered"
