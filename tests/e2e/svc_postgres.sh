#!/usr/bin/env bash
# svc_postgres: `heapinject -p POSTMASTER --children` on Debian's
# PostgreSQL while two backends run query loops (issue 28). One command
# profiles the postmaster, its auxiliary processes and both backends; each
# backend is in the report under its own pid with palloc/MemoryContextAlloc
# on its stacks; the postgres binary is symbolized once for all; afterwards
# no process is traced, the server log has no crash and no restart, both
# queries finish and the server takes a new connection.
. "$(dirname "$0")/lib.sh"

PGB=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "${PGB:-}/postgres" ] || skip "PostgreSQL is not installed (apt-get install postgresql)"
id postgres >/dev/null 2>&1 || skip "no postgres user (the server refuses to run as root)"
chmod 755 "$TMP"
PGDIR="$TMP/pg"
mkdir -p "$PGDIR" && chown postgres "$PGDIR"
PORT=$((20000 + $$ % 20000))
as_pg() { runuser -u postgres -- "$@"; }
pg_stop() { as_pg "$PGB/pg_ctl" -D "$PGDIR/data" -m immediate stop >/dev/null 2>&1; }
trap 'pg_stop; cleanup' EXIT
as_pg "$PGB/initdb" -D "$PGDIR/data" -A trust -U postgres >"$TMP/initdb.log" 2>&1 ||
    fail "initdb failed: $(tail -5 "$TMP/initdb.log")"
as_pg "$PGB/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w \
    -o "-k $PGDIR -p $PORT -c listen_addresses= -c jit=off" start >"$TMP/start.log" 2>&1 ||
    fail "the server did not start: $(tail -5 "$PGDIR/server.log" 2>/dev/null)"
psql_() { "$PGB/psql" -X -A -t -h "$PGDIR" -p "$PORT" -U postgres "$@"; }
MASTER=$(head -1 "$PGDIR/data/postmaster.pid")
[ -d "/proc/$MASTER" ] || fail "no postmaster pid in postmaster.pid"

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
grep -q "1 code layout symbolized" "$TMP/p.err" || fail "postgres was not symbolized once for all its processes"
python3 - "$TMP/p.json" "$MASTER" "${BACKENDS[@]}" <<'PY' || fail "the service's report is wrong (above)"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
master, backends = int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
procs = {p["pid"]: p for p in d["processes"]}
missing = [p for p in [master] + backends if p not in procs]
assert not missing, ("not in the report", missing, sorted(procs))
assert all(procs[b]["ppid"] == master for b in backends), [procs[b] for b in backends]
palloc = {"palloc", "palloc0", "MemoryContextAlloc", "MemoryContextAllocExtended", "repalloc", "AllocSetAlloc"}
for b in backends:
    mine = [s for s in d["stacks"] if s["pid"] == b]
    named = [s for s in mine if palloc & {f.get("function") for f in s["frames"]}]
    assert named, ("backend %d: no palloc stack among %d" % (b, len(mine)))
print("%d processes; backends %s each with palloc stacks" % (len(procs), backends))
PY
for p in "$MASTER" "${BACKENDS[@]}"; do assert_not_traced "$p"; done
psql_ -q -c 'INSERT INTO hi_stop VALUES (1)' || fail "cannot stop the query loops"
for i in 1 2; do
    wait "${PSQL[$i]}" || fail "psql $i failed: $(cat "$TMP/psql$i.err")"
    grep -q '^query finished$' "$TMP/psql$i.out" || fail "backend $i did not finish its query"
done
[ "$(psql_ -c 'SELECT 6*7')" = 42 ] || fail "the server does not answer after the session"
if grep -Eq "terminated by signal|was terminated|all server processes terminated|reinitializing" "$PGDIR/server.log"; then
    fail "the server log shows a crash: $(grep -E 'terminated|reinitializing' "$PGDIR/server.log")"
fi
ok "postmaster and its children in one command: both backends' palloc stacks under their pids, no crash, queries finished"
