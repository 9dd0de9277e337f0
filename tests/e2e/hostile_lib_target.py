# hostile_lib_target.py LIB: loads LIB (tests/e2e/hostile_lib.c, by whatever
# path it was given) and keeps allocating through it, 64 KiB a round, kept,
# so every session samples it; between rounds it spins inside the library.
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.hostile_keep.restype = ctypes.c_void_p
kept = []
print("ready", flush=True)
while True:
    for _ in range(16):
        kept.append(lib.hostile_keep(65536))
    lib.hostile_spin()
    if len(kept) > 20000:
        kept = kept[-10000:]
