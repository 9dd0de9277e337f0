#!/usr/bin/env bash
# payload_dlopen.sh - modules loaded after attach get patched (the agent
# watches dlpi_adds): a plain library, one with RUNPATH $ORIGIN and a
# DT_NEEDED found through it, and a bare-name dlopen from inside a library
# that only its $ORIGIN can resolve (no dlopen hook changes the caller).
# Covers: payload/interpose/modules.c
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

L="$TMP/libs"; mkdir -p "$L"
cat >"$L/plain.c" <<'C'
#include <stdlib.h>
void *plain_keep[100];
__attribute__((noinline)) void plain_alloc(void) { for (int i = 0; i < 100; i++) plain_keep[i] = malloc(1000); }
C
cat >"$L/inner.c" <<'C'
#include <stdlib.h>
void *inner_keep[300];
__attribute__((noinline)) void inner_alloc(void) { for (int i = 0; i < 300; i++) inner_keep[i] = calloc(1, 300); }
C
cat >"$L/dyn.c" <<'C'
#include <stdlib.h>
void *dyn_keep[400];
__attribute__((noinline)) void dyn_alloc(void) { for (int i = 0; i < 400; i++) dyn_keep[i] = malloc(200); }
C
cat >"$L/outer.c" <<'C'
#include <dlfcn.h>
#include <stdlib.h>
void inner_alloc(void);
static void (*dyn)(void);
void *outer_keep[200];
int outer_open(void) {
    void *h = dlopen("libdyn.so", RTLD_NOW); /* only our $ORIGIN RUNPATH finds it */
    dyn = h ? (void (*)(void))dlsym(h, "dyn_alloc") : NULL;
    return dyn ? 0 : -1;
}
__attribute__((noinline)) void outer_alloc_here(void) { for (int i = 0; i < 200; i++) outer_keep[i] = malloc(500); }
void outer_alloc(void) { outer_alloc_here(); inner_alloc(); dyn(); }
C
cc() { gcc -O1 -g -fno-omit-frame-pointer -fno-inline -shared -fPIC "$@" || fail "cannot build test library"; }
cc -o "$L/libplain.so" "$L/plain.c"
cc -o "$L/libinner.so" "$L/inner.c"
cc -o "$L/libdyn.so" "$L/dyn.c"
cc -o "$L/libouter.so" "$L/outer.c" -L"$L" -linner -ldl -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
# Full RELRO (the whole GOT read-only once relocated), made writable again
# by its own constructor for good: a RELRO page still writable tells the
# payload a module that is linked but still being relocated, which it
# leaves to a later pass; after 40 passes that waited (2 s) it patches the
# module as its page is (payload/interpose/modules.c, relocating).
cat >"$L/opengot.c" <<'C'
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
void *opengot_keep[500];
__attribute__((noinline)) void opengot_alloc(void) { for (int i = 0; i < 500; i++) opengot_keep[i] = malloc(160); }
static int open_relro(struct dl_phdr_info *info, size_t size, void *self)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (unsigned long)self < info->dlpi_addr + ph->p_vaddr ||
            (unsigned long)self >= info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
            continue;
        for (int j = 0; j < info->dlpi_phnum; j++) {
            const ElfW(Phdr) *r = &info->dlpi_phdr[j];
            if (r->p_type != PT_GNU_RELRO)
                continue;
            unsigned long lo = (info->dlpi_addr + r->p_vaddr) & ~4095ul;
            unsigned long hi = (info->dlpi_addr + r->p_vaddr + r->p_memsz + 4095) & ~4095ul;
            mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE);
        }
        return 1;
    }
    return 0;
}
__attribute__((constructor)) static void opengot_init(void) { dl_iterate_phdr(open_relro, (void *)opengot_alloc); }
C
cc -o "$L/libopengot.so" "$L/opengot.c" -Wl,-z,now,-z,relro
readelf -rW "$L/libopengot.so" | grep -q 'GLOB_DAT.*malloc\|JUMP_SLOT.*malloc' || fail "libopengot has no malloc slot"
readelf -d "$L/libouter.so" | grep -q 'RUNPATH.*\$ORIGIN' || fail "libouter has no \$ORIGIN RUNPATH"

pl_start pl_dlopen
pl_attach "$(pl_config rate=1)"
before=$($CLIENT hello "$SOCK" | python3 -c 'import json,sys; print(json.load(sys.stdin)["modules_patched"])')
pl_cmd "load $L" '^done load\|^load failed' | grep -q '^done load' || fail "dlopen failed: $(grep 'load failed' "$TOUT")"

# the agent checks for new modules every 50 ms: wait until it has patched
# 5 more (libopengot after 40 checks that waited)
for ((i = 0; i < 400; i++)); do
    now=$($CLIENT hello "$SOCK" | python3 -c 'import json,sys; print(json.load(sys.stdin)["modules_patched"])')
    [ "$now" -ge $((before + 5)) ] && break
    sleep 0.05
done
echo "modules patched: $before -> $now"
[ "$now" -ge $((before + 5)) ] || fail "new modules not patched ($before -> $now)"

pl_cmd run '^done run' >/dev/null
pl_snapshot "$TMP/s1.json"
for f in plain_alloc outer_alloc_here inner_alloc dyn_alloc opengot_alloc; do pl_expect_exact "$TMP/s1.json" "$f" --top; done
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
assert_alive "$TPID"
ok "libraries loaded after attach are profiled"
