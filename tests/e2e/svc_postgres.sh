#!/usr/bin/env bash
# svc_postgres: `heapinject -p POSTMASTER --children` on Debian's
# PostgreSQL while two backends run query loops (issue 28). One command
# profiles the postmaster, every one of its auxiliary processes (none
# refused) and both backends; each
# backend is in the report under its own pid with palloc/MemoryContextAlloc
# on its stacks; the postgres binary is symbolized once for all; afterwards
# no process is traced, the server log has no crash and no restart, both
# queries finish and the server takes a new connection.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/pg_lib.bash"

pg_find || { [ $? = 2 ] && skip "$PG_ERR"; fail "$PG_ERR"; }
trap 'pg_stop; cleanup' EXIT
pg_start "$TMP/pg" || fail "$PG_ERR"
# The auxiliary processes (checkpointer, background writer, walwriter,
# autovacuum and logical replication launchers). PostgreSQL 15 forks the
# last three inside the postmaster's signal handlers: they live above a
# signal frame, and were refused ("running a signal handler") until the
# safe point check walked through it to the select() it interrupted.
for ((i = 0; i < 600; i++)); do
    ps -o args= --ppid "$MASTER" | grep -q "logical replication launcher" && break
    sleep 0.05
done
AUX=($(ps -o pid= --ppid "$MASTER"))
[ "${#AUX[@]}" -ge 5 ] || fail "expected the server's auxiliary processes, found: $(ps -o pid=,args= --ppid "$MASTER")"
ps -o pid=,args= --ppid "$MASTER"

psql_ -q -c 'CREATE TABLE hi_stop (x int)' || fail "cannot create the stop table"
cat >"$TMP/w.sql" <<'SQL'
SELECT pg_backend_pid();
SET work_mem = '512MB';
DO $$
DECLARE t0 timestamptz := clock_timestamp(); n bigint;
BEGIN
  WHILE clock_timestamp() - t0 < interval '300 seconds' AND NOT EXISTS (SELECT 1 FROM hi_stop) LOOP
    SELECT count(*) INTO n FROM (SELECT DISTINCT md5(x::text) FROM generate_series(1, 100000) x) s;
  END LOOP;
END $$;
SELECT 'query finished';
SQL
BACKENDS=()
for i in 1 2; do
    psql_ -f "$TMP/w.sql" >"$TMP/psql$i.out" 2>"$TMP/psql$i.err" &
    PSQL[$i]=$!
    PIDS+=($!)
    wait_for_line "$TMP/psql$i.out" '^SET' 30 || fail "backend $i did not start its query: $(cat "$TMP/psql$i.err")"
    BACKENDS+=("$(head -1 "$TMP/psql$i.out")")
done
echo "postmaster $MASTER, backends ${BACKENDS[*]}"

timeout -k 5 180 "$HEAPINJECT" -p "$MASTER" --children --duration 3 --rate 64K --format json -o "$TMP/p.json" \
    2>"$TMP/p.err" || fail "the session failed: $(cat "$TMP/p.err")"
cat "$TMP/p.err"
# The processes share symbolizers (cli/session/gather.c): the postmaster,
# the backends and the older auxiliary processes have the same layout; the
# launchers map a shared memory segment where the others have our payload,
# so they may need one or two more.
layouts=$(sed -n 's/.* \([0-9]*\) code layouts\{0,1\} symbolized.*/\1/p' "$TMP/p.err")
[ -n "$layouts" ] && [ "$layouts" -le 3 ] ||
    fail "postgres was not symbolized once for most of its $((${#AUX[@]} + 3)) processes: ${layouts:-no} code layouts"
! grep -E "no safe point|signal handler" "$TMP/p.err" || fail "a process was refused (above)"
python3 - "$TMP/p.json" "$MASTER" "${AUX[*]}" "${BACKENDS[@]}" <<'PY' || fail "the service's report is wrong (above)"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
master, aux, backends = int(sys.argv[2]), [int(x) for x in sys.argv[3].split()], [int(x) for x in sys.argv[4:]]
procs = {p["pid"]: p for p in d["processes"]}
missing = [p for p in [master] + aux + backends if p not in procs]
assert not missing, ("not in the report", missing, sorted(procs))
print("attach ms: " + ", ".join("%s %s" % (procs[p]["comm"], procs[p]["attach_ms"]) for p in [master] + aux + backends))
assert all(procs[b]["ppid"] == master for b in backends), [procs[b] for b in backends]
palloc = {"palloc", "palloc0", "MemoryContextAlloc", "MemoryContextAllocExtended", "repalloc", "AllocSetAlloc"}
for b in backends:
    mine = [s for s in d["stacks"] if s["pid"] == b]
    named = [s for s in mine if palloc & {f.get("function") for f in s["frames"]}]
    assert named, ("backend %d: no palloc stack among %d" % (b, len(mine)))
print("%d processes; backends %s each with palloc stacks" % (len(procs), backends))
PY
for p in "$MASTER" "${AUX[@]}" "${BACKENDS[@]}"; do assert_not_traced "$p"; done
psql_ -q -c 'INSERT INTO hi_stop VALUES (1)' || fail "cannot stop the query loops"
for i in 1 2; do
    wait "${PSQL[$i]}" || fail "psql $i failed: $(cat "$TMP/psql$i.err")"
    grep -q '^query finished$' "$TMP/psql$i.out" || fail "backend $i did not finish its query"
done
[ "$(psql_ -c 'SELECT 6*7')" = 42 ] || fail "the server does not answer after the session"
! pg_crashed || fail "the server log shows a crash: $PG_ERR"
ok "postmaster, its ${#AUX[@]} auxiliary processes and both backends in one command: both backends' palloc stacks under their pids, no crash, queries finished"
