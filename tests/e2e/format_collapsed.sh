#!/usr/bin/env bash
# format_collapsed: `--format collapsed` lines are "frame;frame;... VALUE"
# Covers: cli/profile/values.c
# with integer values, root first, leak_steady's stack the largest; --value
# switches the measure. `--format series` is a CSV of the session and the
# gnuplot script contrib/heapinject-series.gp renders it to a PNG.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

start_leaky
snapshot "$TMP/live.folded" --rate 1 --format collapsed
snapshot "$TMP/objs.folded" --rate 1 --format collapsed --value alloc_objects
cat "$TMP/live.folded"
bad=$(grep -v -E '^[^;]+(;[^;]+)* [0-9]+$' "$TMP/live.folded" "$TMP/objs.folded" | head -3)
[ -z "$bad" ] || fail "malformed collapsed lines: $bad"
grep -q ';;' "$TMP/live.folded" && fail "empty frame name"
largest=$(largest_folded "$TMP/live.folded")
case "$largest" in
    main\;*|*\;main\;*) ;;
    *) fail "stacks are not root first: $largest" ;;
esac
case "$largest" in
    *";$LEAK_FN "[0-9]*) ok "largest live stack: $largest" ;;
    *) fail "largest live stack is not $LEAK_FN: $largest" ;;
esac
# By allocation count the churn dominates: the value switch is real.
largest=$(largest_folded "$TMP/objs.folded")
case "$largest" in
    *";churn_alloc "[0-9]*) ok "largest stack by allocated objects: $largest" ;;
    *) fail "--value alloc_objects: largest stack is $largest" ;;
esac

snapshot "$TMP/series.csv" --rate 64K --format series
cat "$TMP/series.csv"
[ "$(head -1 "$TMP/series.csv")" = "t_s,live_bytes,alloc_bytes,rss_bytes" ] || fail "bad CSV header"
awk -F, 'NR > 1 {if (NF != 4 || $1 < last || $2 !~ /^[0-9]+$/ || $4 !~ /^[0-9]+$/) exit 1; last = $1; n++}
         END {exit !(n >= 3)}' "$TMP/series.csv" || fail "bad CSV rows (a 2 s session at 500 ms ticks must have at least 3)"
awk -F, 'NR > 1 {live = $2} END {exit !(live > 1000000)}' "$TMP/series.csv" || fail "no live heap growth in the CSV"
need_reader gnuplot gnuplot-nox
gnuplot -e "in='$TMP/series.csv'; out='$TMP/series.png'" "$ROOT/contrib/heapinject-series.gp" 2>"$TMP/gp.err" ||
    fail "gnuplot failed: $(cat "$TMP/gp.err")"
[ "$(head -c 8 "$TMP/series.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "no PNG written"
ok "gnuplot rendered the series ($(stat -c %s "$TMP/series.png") bytes)"
