#!/usr/bin/env bash
# rel_footprint: detach gives back what attach took (issue 12). A target
# whose heap is already at its size makes 65,536 distinct call stacks under
# the hooks at --rate 1 (every allocation sampled: 65,536 buckets, a
# snapshot of all of them); after detach its open files are exactly those
# before attach, it has the same threads, its anonymous memory is within
# 256 KiB and its RSS within 1.5 MiB of before (the goal, 1 MiB, is printed
# as met or missed). The mappings that stay (the payload, loaded with
# nodelete so a hook still running on another thread never meets unmapped
# code) are counted and printed; the only files mapped after detach that
# were not before is libheapinject.so (issue 17: the payload brings neither
# libunwind and liblzma nor libm into any target; the test fails if a
# library comes back, e.g. libm through a -lm or a math call).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

STACKS_BITS=16
rss_kb() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
rss_kind_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
maps_n() { wc -l <"/proc/$1/maps"; }

rel_start rel_footprint "$STACKS_BITS"
line=$(rel_cmd run '^ran 1 ' 120)
grep -q 'errors=0' <<<"$line" || fail "warm-up run: $line"
# The heap has its size; the next run's RSS is the same without us.
line=$(rel_cmd run '^ran 2 ' 120)
grep -q 'errors=0' <<<"$line" || fail "second run: $line"

rss0=$(rss_kb "$TPID"); anon0=$(rss_kind_kb "$TPID" RssAnon); file0=$(rss_kind_kb "$TPID" RssFile)
threads0=$(rel_threads "$TPID"); rel_fds "$TPID" >"$TMP/fds.before"; maps0=$(maps_n "$TPID")
mapped_files() { awk '$6 ~ /^\// {print $6}' "/proc/$1/maps" | sort -u; }
mapped_files "$TPID" >"$TMP/files.before"
echo "before attach: RSS $rss0 KiB (anon $anon0, file $file0), $threads0 threads, $(wc -l <"$TMP/fds.before") fds, $maps0 mappings"

$HEAPINJECT attach -p "$TPID" --rate 1 >/dev/null 2>"$TMP/attach.err" ||
    fail "attach failed: $(cat "$TMP/attach.err")"
line=$(rel_cmd run '^ran 3 ' 300)
grep -q 'errors=0' <<<"$line" || fail "run under the hooks: $line"
$HEAPINJECT snapshot -p "$TPID" --format json -o "$TMP/snap.json" 2>"$TMP/snap.err" ||
    fail "snapshot failed: $(cat "$TMP/snap.err")"
buckets=$(python3 -c '
import hi_profile, json, sys
p = hi_profile.load(sys.argv[1])
print(sum(1 for s in p["stacks"] if any(f.get("function") == "leaf" for f in s["frames"])))
' "$TMP/snap.json") || fail "snapshot unreadable"
attached_threads=$(rel_threads "$TPID")
echo "attached: $buckets stacks through leaf() in the snapshot, $attached_threads threads"
((buckets >= (1 << STACKS_BITS) * 99 / 100)) ||
    fail "only $buckets of $((1 << STACKS_BITS)) stacks seen at --rate 1"
$HEAPINJECT detach -p "$TPID" >"$TMP/detach.out" 2>"$TMP/detach.err" ||
    fail "detach failed: $(cat "$TMP/detach.err")"
rel_untraced "$TPID"
rel_hooks_gone "$TPID"
sleep 0.3 # the agent thread's exit is asynchronous to the cli's return

rss1=$(rss_kb "$TPID"); anon1=$(rss_kind_kb "$TPID" RssAnon); file1=$(rss_kind_kb "$TPID" RssFile)
threads1=$(rel_threads "$TPID"); rel_fds "$TPID" >"$TMP/fds.after"; maps1=$(maps_n "$TPID")
echo "after detach:  RSS $rss1 KiB (anon $anon1, file $file1), $threads1 threads, $(wc -l <"$TMP/fds.after") fds, $maps1 mappings"
grep -E 'libheapinject|libunwind' "/proc/$TPID/maps" | awk '{print "  stays mapped:", $2, $6}'
mapped_files "$TPID" >"$TMP/files.after"
brought=$(comm -13 "$TMP/files.before" "$TMP/files.after" | grep -v -e '/libheapinject\.so$' || true)
[ -z "$brought" ] || fail "our load brought libraries the target did not have: $(echo $brought)"

[ "$threads1" = "$threads0" ] || fail "threads: $threads0 before attach, $threads1 after detach"
diff "$TMP/fds.before" "$TMP/fds.after" || fail "open files differ from before attach (above: < before, > after)"
delta=$((rss1 - rss0))
echo "RSS after detach - before attach: $delta KiB (anon $((anon1 - anon0)), file $((file1 - file0))); mappings +$((maps1 - maps0))"
# The goal is 1 MiB; what we own is the anonymous part (our data and bss,
# the agent's cached stack). The rest is pages of libc's code that our
# calls touched (shared with the page cache; the agent's own way out
# through libc faults some back after we drop them): 0.8-0.9 MiB here,
# so the bound on the total leaves room for a busier machine.
anon_delta=$((anon1 - anon0))
((anon_delta <= 256)) || fail "anonymous memory grew by $anon_delta KiB (ours: at most 256 KiB)"
((delta <= 1536)) || fail "RSS grew by $delta KiB (goal: within 1 MiB)"
((delta <= 1024)) && echo "goal met: RSS within 1 MiB of before attach" ||
    echo "goal missed: RSS +$delta KiB, more than 1 MiB (libc pages: $((file1 - file0)) KiB)"

# The program goes on as before.
line=$(rel_cmd run '^ran 4 ' 120)
grep -q 'errors=0' <<<"$line" || fail "run after detach: $line"
rel_quit
echo "RESULT rel_footprint stacks=$buckets rss_delta_kb=$delta anon_delta_kb=$((anon1 - anon0)) file_delta_kb=$((file1 - file0)) fds_delta=0 threads_delta=0 maps_delta=$((maps1 - maps0))"
ok "65,536 stacks at --rate 1: after detach the same fds and threads, RSS +$delta KiB"
