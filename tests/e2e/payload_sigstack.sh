#!/usr/bin/env bash
# payload_sigstack: stacks sampled inside a signal handler go through the
# kernel's signal frame to the interrupted code (issue 17: the payload's own
# walker reads the registers the kernel saved; libunwind is no longer
# loaded). build/targets/pl_sigstack allocates only in a SIGALRM handler
# that runs on an alternate signal stack, interrupting a sleep in
# wait_loop, which like the allocating function is built without frame
# pointers. Every sampled stack through alloc_in_handler must read, in
# order, alloc_in_handler, on_tick, wait_loop, main.
. "$(dirname "$0")/lib.sh"

start_target pl_sigstack
"$HEAPINJECT" -p "$TPID" --rate 1 --duration 1.5 --format json -o "$TMP/sig.json" 2>"$TMP/sig.err" ||
    fail "session failed: $(cat "$TMP/sig.err")"
assert_alive "$TPID"
python3 - "$TMP/sig.json" <<'PY' || fail "stacks through the signal frame wrong (see above)"
import hi_profile, sys
d = hi_profile.load(sys.argv[1])
want = ["alloc_in_handler", "on_tick", "wait_loop", "main"]
stacks = [s for s in d["stacks"] if any(f.get("function") == "alloc_in_handler" for f in s["frames"])]
assert stacks, "no stack through alloc_in_handler: %s" % [[f.get("function") for f in s["frames"]] for s in d["stacks"]]
for s in stacks:
    names = [(f.get("function") or "?").split(".")[0] for f in s["frames"]]
    print("stack:", " <- ".join(names))
    it = iter(names)
    assert all(w in it for w in want), "expected %s in this order" % want
print("%d stacks through the handler" % len(stacks))
PY
ok "every stack sampled in the handler goes on through the signal frame to wait_loop and main"
