#!/bin/bash
# census_dontfork.sh - blocks held only from memory the census's fork does
# not copy. V8 marks its whole heap MADV_DONTFORK: a census of node called
# 1,400-3,000 live blocks unreachable (with a 20-minute-old idle node,
# 350 of 384 "unreachable" blocks were pointed to from V8's pages). The
# agent now reads such mappings (and MADV_WIPEONFORK ones, zeros in the
# copy) in the running process right after the fork, and the child marks
# from what they hold. The target (tests/targets/census_dontfork.c) holds
# 100 blocks and a 1,000-node list from a DONTFORK mapping, a block from a
# WIPEONFORK one, a block from a DONTFORK mapping with one page written,
# and leaks 10: those 10 must be the only unreachable blocks, the report
# must say what it read, and the pages never written must stay unpopulated.
# A block held only from a private writable mapping of a file (as the JVM
# maps classes.jsa: 420 of its blocks were "unreachable") must be live too,
# the mapping named as a root. So must a block whose only pointer is the
# data of an epoll registration (the kernel keeps it: /proc/PID/fdinfo).
# `status` counts resident do-not-fork memory apart (JSON mmap_dontfork_bytes)
# and says what it is. Then a real node (installed by scripts/deps.sh): its
# V8 pages must be read, and hold at least 100 blocks no other root reaches
# first; its `status` names V8's heap.
. "$(dirname "$0")/lib.sh"

start_target census_dontfork
sparse=$(sed -n 's/^ready sparse=0x\([0-9a-f]*\).*/\1/p' "$TMP/census_dontfork.out")
[ -n "$sparse" ] || fail "the target did not say where its sparse mapping is: $(cat "$TMP/census_dontfork.out")"
# Rss of the mapping that starts at $sparse, in kB.
rss_of_sparse() {
    awk -v a="$sparse" '$1 ~ /^[0-9a-f]+-/ { split($1, r, "-"); here = (r[1] == a) } here && /^Rss:/ { print $2; exit }' \
        "/proc/$TPID/smaps"
}
before=$(rss_of_sparse)
"$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/err" || fail "census: $(cat "$TMP/err")"
after=$(rss_of_sparse)
[ "$before" = "$after" ] || fail "the census populated pages of the sparse DONTFORK mapping: Rss $before kB -> $after kB"
python3 - "$TMP/c.json" <<'PY' || fail "census with uncopied memory wrong"
import json, sys
c = json.load(open(sys.argv[1]))["census"]
u = c["unreachable"]
assert u["blocks"] == 10 and u["bytes"] in (1000, 1040, 1080), \
    f"unreachable {u}: want the 10 leaked blocks only (those held from DONTFORK and WIPEONFORK memory are live)"
want = (1 << 20) + (64 << 10) + (2 << 20)
assert c["uncopied_bytes"] >= want, f"uncopied_bytes {c['uncopied_bytes']}: want at least {want}"
assert c["uncopied_unread_bytes"] == 0, f"uncopied_unread_bytes {c['uncopied_unread_bytes']}"
roots = [r for r in c["roots"] if r["kind"] == "uncopied"]
held = sum(r["retained_blocks"] for r in roots)
assert held >= 1102, f"uncopied roots hold {held} blocks, want >= 1102: {roots}"
assert all("the fork does not copy" in r["name"] for r in roots), roots
files = [r for r in c["roots"] if r["name"].startswith("private writable mapping of census_file.")]
assert files and files[0]["kind"] == "mapping" and files[0]["retained_blocks"] >= 1, \
    f"the private file mapping is not a root: {[r['name'] for r in c['roots']]}"
kern = [r for r in c["roots"] if r["kind"] == "kernel"]
assert kern and kern[0]["retained_blocks"] == 1 and kern[0]["retained_bytes"] >= 444 and \
    "epoll registrations" in kern[0]["name"], f"the epoll registration's data is not a root: {kern}"
print("unreachable", u["blocks"], "uncopied roots", len(roots), "holding", held, "blocks; uncopied bytes", c["uncopied_bytes"])
PY
"$HEAPINJECT" census -q -p "$TPID" -o "$TMP/c.txt" 2>"$TMP/err" || fail "text census: $(cat "$TMP/err")"
grep -q "of memory the fork does not copy (MADV_DONTFORK or MADV_WIPEONFORK.*all of it" "$TMP/c.txt" ||
    fail "the text census does not say it read the uncopied memory: $(grep Notes "$TMP/c.txt")"
grep -q "mapping 0x.* the fork does not copy" "$TMP/c.txt" || fail "no uncopied mapping among the roots: $(cat "$TMP/c.txt")"
assert_alive "$TPID"
ok "blocks held only from DONTFORK and WIPEONFORK memory are live; the 10 leaked are the only unreachable; sparse pages untouched (Rss $after kB)"

# `status` (not attached) counts the resident do-not-fork memory apart:
# 1 MiB written whole and one page of the sparse mapping.
"$HEAPINJECT" status -p "$TPID" --interval 0.1 --format json >"$TMP/st.json" 2>/dev/null
python3 - "$TMP/st.json" <<'PY' || fail "status: the do-not-fork memory is not counted apart"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
d = m["mmap_dontfork_bytes"]
assert (1 << 20) + 4096 <= d <= (1 << 20) + 3 * 4096, f"mmap_dontfork_bytes {d}: want 1 MiB and a page"
assert any("MADV_DONTFORK" in n for n in m["notes"]), m["notes"]
print("status: mmap_dontfork_bytes", d)
PY

# A real V8: node churns objects and Buffers for 3 s, then idles. Its heap
# pages are MADV_DONTFORK; the blocks they hold must be reached through
# them (before: none were, and 1,400-4,400 live blocks were "unreachable").
command -v node >/dev/null || fail "node is not installed (scripts/deps.sh installs nodejs)"
cat >"$TMP/churn.js" <<'JS'
let keep = [];
const t = setInterval(() => {
  for (let i = 0; i < 2000; i++) keep.push({a: i, s: 'x'.repeat(i % 100), b: Buffer.alloc(64 + (i % 512))});
  if (keep.length > 40000) keep = keep.slice(20000);
}, 20);
setTimeout(() => { clearInterval(t); console.log('ready'); setInterval(() => {}, 1000); }, 3000);
JS
node "$TMP/churn.js" >"$TMP/node.out" 2>&1 &
NODE=$!; PIDS+=("$NODE")
wait_for_line "$TMP/node.out" ready 30 || fail "node did not get ready: $(cat "$TMP/node.out")"
"$HEAPINJECT" census -q -p "$NODE" --format json -o "$TMP/n.json" 2>"$TMP/err" || fail "census of node: $(cat "$TMP/err")"
python3 - "$TMP/n.json" <<'PY' || fail "census of node: V8's heap not read"
import json, sys
c = json.load(open(sys.argv[1]))["census"]
held = sum(r["retained_blocks"] for r in c["roots"] if r["kind"] == "uncopied")
print("node: in use", c["in_use"]["blocks"], "unreachable", c["unreachable"]["blocks"],
      "uncopied MiB", c["uncopied_bytes"] >> 20, "blocks first reached from V8's pages", held)
assert c["uncopied_bytes"] > 0, "no uncopied memory found in node"
assert c["uncopied_unread_bytes"] == 0, f"uncopied_unread_bytes {c['uncopied_unread_bytes']}"
assert held >= 100, f"V8's pages hold only {held} blocks"
PY
assert_alive "$NODE"
ok "node: blocks held from V8's MADV_DONTFORK heap reached through it"
"$HEAPINJECT" status -p "$NODE" --interval 0.1 >"$TMP/nst.txt" 2>/dev/null
grep -q "under mmap is in mappings marked MADV_DONTFORK (not copied into a child): V8's heap" "$TMP/nst.txt" ||
    fail "status of node does not name V8's heap: $(cat "$TMP/nst.txt")"
grep -q "Memory outside malloc is V8's" "$TMP/nst.txt" || fail "status of node does not say who holds the mmap part"
ok "status of node: $(grep -o '[0-9.]* [KMG]iB under mmap is in mappings marked MADV_DONTFORK' "$TMP/nst.txt")"
