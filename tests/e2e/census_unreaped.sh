#!/usr/bin/env bash
# census_unreaped: a census's copy is the program's sibling (the child of
# Covers: cli/census/cost_history.c, cli/census/unreaped.c
# its parent: the program never sees it), so a parent that reaps only the
# children it started (Python's subprocess here) keeps each ended copy as
# a zombie until it exits: nobody else can reap a process. The census says
# so, naming the parent and the count; the zombies go when the parent
# exits; the program's data checks out.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/parent.py" <<'PY'
import subprocess, sys
hi, target, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
p = subprocess.Popen([target, "4", "idle"], stdout=subprocess.PIPE, text=True)
while "ready" not in p.stdout.readline():
    pass
for n in (1, 2):
    r = subprocess.run([hi, "census", "-q", "-p", str(p.pid), "-o", f"{tmp}/c{n}.txt"],
                       stderr=open(f"{tmp}/c{n}.err", "w"))
    print(f"census {n} rc={r.returncode}", flush=True)
p.send_signal(10)  # SIGUSR1: the writer checks its blocks
print(p.stdout.readline().strip(), flush=True)
print(f"parent {__import__('os').getpid()} target {p.pid}", flush=True)
sys.stdin.readline()  # until the test has looked
p.kill()
p.wait()
PY
mkfifo "$TMP/go"
python3 "$TMP/parent.py" "$HEAPINJECT" "$TARGETS/census_writer" "$TMP" <"$TMP/go" >"$TMP/parent.out" 2>&1 &
PY_PID=$!
PIDS+=("$PY_PID")
exec 3>"$TMP/go"
wait_for_line "$TMP/parent.out" "^parent " 60 || fail "parent: $(cat "$TMP/parent.out")"
grep -q "census 1 rc=0" "$TMP/parent.out" && grep -q "census 2 rc=0" "$TMP/parent.out" ||
    fail "censuses: $(cat "$TMP/parent.out") $(cat "$TMP"/c*.err)"
grep -q "verify ok" "$TMP/parent.out" || fail "target data: $(cat "$TMP/parent.out")"
grep -q "in use .* 4.0 MiB" "$TMP/c2.txt" || fail "census 2: $(head -5 "$TMP/c2.txt")"
grep -q "pid [0-9]*'s parent, pid $PY_PID (python3), has not reaped 1 ended census copy (zombie, e.g. pid [0-9]*" \
    "$TMP/c1.err" || fail "census 1 does not say its copy is left unreaped: $(cat "$TMP/c1.err")"
grep -q "has not reaped 2 ended census copies" "$TMP/c2.err" || fail "census 2: $(cat "$TMP/c2.err")"
zombies=$(ps -o pid=,stat=,comm= --ppid "$PY_PID" | awk '$2 ~ /^Z/ && $3 == "heapinject-cen" {print $1}')
[ "$(wc -w <<<"$zombies")" = 2 ] || fail "zombies of the parent: $(ps -o pid=,stat=,comm= --ppid "$PY_PID")"
exec 3>&- # the parent ends: its zombies go to a reaper that reaps them
wait "$PY_PID"
for z in $zombies; do
    for ((i = 0; i < 100; i++)); do [ -e "/proc/$z" ] || break; sleep 0.05; done
    [ -e "/proc/$z" ] && fail "copy $z is still there after its parent exited: $(cat "/proc/$z/stat")"
done
ok "a parent reaping only its own children: each census says how many copies it keeps as zombies ($(grep -o 'has not reaped [0-9]* ended census cop[a-z]*' "$TMP/c2.err")); gone with the parent"
