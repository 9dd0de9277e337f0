#!/usr/bin/env bash
# fork_follow_brief: a followed child that sampled nothing and lived less
# than a second leaves no last snapshot at exit() (issue 28: a server that
# forks a short-lived worker per request paid the agent's file write and
# the exiting thread's wait for it in every child: 2.7 ms of CPU per fork
# against 0.8 with _exit). `attach --follow-forks` at a rate no child
# reaches: 20 children that allocate 11 KB and call exit(0) all end with 0,
# leave no PID.last and no socket. At rate 1 (every child samples its
# allocation) each of 3 children still leaves its PID.last, as
# fork_follow_exit checks in full. Was: 20 files of empty reports.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stress/rel_lib.bash"
. "$(dirname "$0")/fork_lib.bash"

count_last() { find "$SOCKDIR" -maxdepth 1 -name '*.last' | wc -l; }

rel_start fork_server "$SOCKDIR"
"$HEAPINJECT" attach -q -p "$TPID" --rate 1T --follow-forks 2>"$TMP/attach.err" || fail "attach: $(cat "$TMP/attach.err")"
line=$(rel_cmd "forks 20 exit" '^forks 20 ')
case "$line" in *" bad=0") ;; *) fail "children failed: $line" ;; esac
echo "unsampled children: $line"
n=$(count_last)
[ "$n" = 0 ] || fail "$n last snapshots of children that sampled nothing: $(ls "$SOCKDIR")"
socks=$(find "$SOCKDIR" -maxdepth 1 -name '*.sock' ! -name "$TPID.sock" | wc -l)
[ "$socks" = 0 ] || fail "$socks sockets of exited children left: $(ls "$SOCKDIR")"
"$HEAPINJECT" detach -q -p "$TPID" 2>"$TMP/detach.err" || fail "detach: $(cat "$TMP/detach.err")"

"$HEAPINJECT" attach -q -p "$TPID" --rate 1 --follow-forks 2>"$TMP/attach.err" || fail "attach at rate 1: $(cat "$TMP/attach.err")"
line=$(rel_cmd "forks 3 exit" '^forks 3 ')
case "$line" in *" bad=0") ;; *) fail "children failed: $line" ;; esac
n=$(count_last)
[ "$n" = 3 ] || fail "$n last snapshots of 3 children that sampled, want 3: $(ls "$SOCKDIR")"
"$HEAPINJECT" detach -q -p "$TPID" 2>"$TMP/detach.err" || fail "detach: $(cat "$TMP/detach.err")"
rel_cmd check "^check errors=0" >/dev/null
ok "a followed child with nothing sampled leaves no last snapshot; one that sampled does"
