# app_default.py - keeps known amounts from five lines while 1 GiB goes
# through the allocator, for tests/e2e/py_truth_default.sh (issue 29: the
# truth at the default rate). tracemalloc, run here, is the truth. Sizes
# are chosen so that sampling at 1 in 512 KiB on average estimates each
# line within a few percent (a line of N blocks of S bytes has a relative
# standard deviation of sqrt((1-p)/(p N)), p = 1 - exp(-S / 512 KiB)):
#   keep_a 40 x 2 MiB (2%), keep_b 240 x 256 KiB (8%), keep_c 40 x 1 MiB
#   (6%), keep_d 1600 x 64 KiB (7%), keep_e 100 x 512 KiB (8%),
# so 25% is three standard deviations or more for every line. churn
# allocates and frees 1 MiB blocks until 1 GiB has been allocated in all.
# Waits for GO, prints "done", at STOP prints tracemalloc's top 5 lines as
# "tm FILE LINE BYTES", checks its data and exits.
import os
import sys
import time
import tracemalloc

go, stop = sys.argv[1], sys.argv[2]
kept = []
KiB = 1024


def keep_a():
    for i in range(40):
        kept.append(bytearray(b"a") * (2048 * KiB))  # line a


def keep_b():
    for i in range(240):
        kept.append(bytearray(b"b") * (256 * KiB))  # line b


def keep_c():
    for i in range(40):
        kept.append(bytearray(b"c") * (1024 * KiB))  # line c


def keep_d():
    for i in range(1600):
        kept.append(bytearray(b"d") * (64 * KiB))  # line d


def keep_e():
    for i in range(100):
        kept.append(bytearray(b"e") * (512 * KiB))  # line e


def churn(total):
    done = 0
    while done < total:
        b = bytearray(b"x") * (1024 * KiB)  # churn line
        done += len(b)
        del b


tracemalloc.start()
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
keep_a()
churn(150 << 20)
keep_b()
churn(150 << 20)
keep_c()
churn(150 << 20)
keep_d()
churn(150 << 20)
keep_e()
kept_bytes = sum(len(b) for b in kept)
churn((1 << 30) - kept_bytes - (600 << 20))  # 1 GiB in all
print("done", flush=True)
while not os.path.exists(stop):
    time.sleep(0.01)
for st in tracemalloc.take_snapshot().statistics("lineno")[:5]:
    fr = st.traceback[0]
    print("tm %s %d %d" % (os.path.basename(fr.filename), fr.lineno, st.size), flush=True)
ok = len(kept) == 2020 and all(b.count(b[0]) == len(b) for b in kept)
print("checked %d %s" % (len(kept), "ok" if ok else "BAD"), flush=True)
