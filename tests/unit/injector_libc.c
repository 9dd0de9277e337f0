/* injector_libc.c - resolving dlopen & co. from a process's own libc file,
 * and the allocator's code range, checked against the live process. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "injector/elfsym.h"
#include "injector/inject.h"
#include "injector/libc.h"
#include "injector/maps.h"

static void *libc_sym(const char *name)
{
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

    cr_assert_not_null(h);
    return dlsym(h, name);
}

Test(injector_libc, resolves_the_same_addresses_as_the_loader)
{
    struct inj_maps m;
    struct inj_libc lc;
    char err[512] = "";

    cr_assert_eq(inj_maps_read(getpid(), &m), 0);
    cr_assert_eq(inj_libc_resolve(getpid(), &m, &lc, err, sizeof(err)), INJ_OK, "%s", err);
    cr_expect_eq(lc.dlopen, (uint64_t)(uintptr_t)libc_sym("dlopen"));
    cr_expect_eq(lc.dlsym, (uint64_t)(uintptr_t)libc_sym("dlsym"));
    cr_expect_eq(lc.dlerror, (uint64_t)(uintptr_t)libc_sym("dlerror"));
    cr_expect_eq(lc.mmap, (uint64_t)(uintptr_t)libc_sym("mmap"));
    cr_expect_str_eq(lc.dlopen_name, "dlopen");
    cr_expect_eq(lc.dlopen_flags, 0);
    inj_maps_free(&m);
}

Test(injector_libc, allocator_range_covers_malloc_not_others)
{
    struct inj_maps m;
    struct inj_libc lc;
    char err[512] = "";
    uint64_t a;

    cr_assert_eq(inj_maps_read(getpid(), &m), 0);
    cr_assert_eq(inj_libc_resolve(getpid(), &m, &lc, err, sizeof(err)), INJ_OK, "%s", err);
    cr_assert_lt(lc.alloc_lo, lc.alloc_hi);
    cr_expect_lt(lc.alloc_hi - lc.alloc_lo, 512 * 1024, "range is the allocator, not all of libc");
    a = (uint64_t)(uintptr_t)libc_sym("malloc");
    cr_expect(a >= lc.alloc_lo && a < lc.alloc_hi);
    a = (uint64_t)(uintptr_t)libc_sym("free");
    cr_expect(a >= lc.alloc_lo && a < lc.alloc_hi);
    a = (uint64_t)(uintptr_t)libc_sym("nanosleep");
    cr_expect(a < lc.alloc_lo || a >= lc.alloc_hi);
    a = (uint64_t)(uintptr_t)libc_sym("read");
    cr_expect(a < lc.alloc_lo || a >= lc.alloc_hi);
    inj_maps_free(&m);
}

/* With glibc's detached debug symbols installed (libc6-dbg), check that the
 * allocator's static functions fall inside the range derived from the
 * exported ones. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    char *out = data;

    (void)size;
    if (!strstr(info->dlpi_name, "libc.so"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const char *p, *end;

        if (ph->p_type != PT_NOTE)
            continue;
        p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const void *)p;
            const unsigned char *desc = (const unsigned char *)(n + 1) + ((n->n_namesz + 3) & ~3u);

            if (n->n_type == NT_GNU_BUILD_ID) {
                int k = sprintf(out, "/usr/lib/debug/.build-id/%02x/", desc[0]);

                for (unsigned j = 1; j < n->n_descsz; j++)
                    k += sprintf(out + k, "%02x", desc[j]);
                strcat(out, ".debug");
                return 1;
            }
            p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

Test(injector_libc, allocator_range_covers_static_helpers)
{
    static const char *const internal[] = {
        "_int_malloc", "_int_free", "_int_realloc", "_int_memalign", "sysmalloc",
        "malloc_consolidate", "arena_get2", "tcache_init", NULL,
    };
    char debug[512] = "";
    struct inj_maps m;
    struct inj_libc lc;
    struct inj_elf *elf;
    char err[512];
    int fd, checked = 0;

    dl_iterate_phdr(find_build_id, debug);
    fd = debug[0] ? open(debug, O_RDONLY) : -1;
    if (fd < 0)
        cr_skip_test("no libc debug symbols (libc6-dbg) to compare with");
    cr_assert_eq(inj_elf_open(fd, &elf), 0);
    cr_assert_eq(inj_maps_read(getpid(), &m), 0);
    cr_assert_eq(inj_libc_resolve(getpid(), &m, &lc, err, sizeof(err)), INJ_OK, "%s", err);
    for (int i = 0; internal[i]; i++) {
        uint64_t v, sz;

        if (inj_elf_symbol(elf, internal[i], &v, &sz))
            continue;
        cr_expect(lc.bias + v >= lc.alloc_lo && lc.bias + v + sz <= lc.alloc_hi,
                  "%s at +0x%llx is outside the allocator range +0x%llx-+0x%llx", internal[i],
                  (unsigned long long)v, (unsigned long long)(lc.alloc_lo - lc.bias),
                  (unsigned long long)(lc.alloc_hi - lc.bias));
        checked++;
    }
    cr_expect_gt(checked, 3, "debug file has the allocator's symbols");
    inj_elf_close(elf);
    inj_maps_free(&m);
}

Test(injector_libc, elf_info_of_own_executable)
{
    struct inj_elf *elf;
    struct inj_elf_info info;
    int fd = open("/proc/self/exe", O_RDONLY);

    cr_assert_geq(fd, 0);
    cr_assert_eq(inj_elf_open(fd, &elf), 0);
    cr_assert_eq(inj_elf_info(elf, &info), 0);
    cr_expect_eq(info.machine, EM_X86_64);
    cr_expect_eq(info.elf_class, ELFCLASS64);
    cr_expect(info.has_interp);
    inj_elf_close(elf);
}

Test(injector_libc, refuses_non_elf)
{
    struct inj_elf *elf;
    int fd = open("/proc/self/status", O_RDONLY);

    cr_assert_geq(fd, 0);
    cr_expect_eq(inj_elf_open(fd, &elf), -ENOEXEC);
}

/* A second process that maps the same libc file (another program, its
 * own load address) is answered from what the first walk kept
 * (inj_libc_resolve keeps one libc file's answers per command): every
 * address moves with that process's own bias, none is this process's. */
Test(injector_libc, another_process_of_the_same_libc_gets_its_own_addresses)
{
    struct inj_maps m, cm;
    struct inj_libc lc, cc;
    char err[512] = "";
    int ready[2];

    cr_assert_eq(pipe(ready), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        close(ready[0]);
        dup2(ready[1], 1);
        execl("/bin/sh", "sh", "-c", "echo up; exec sleep 30", (char *)NULL);
        _exit(127);
    }
    close(ready[1]);
    char up[8] = "";
    cr_assert_gt(read(ready[0], up, sizeof(up)), 0); /* sleep runs once sh has written */
    close(ready[0]);
    cr_assert_eq(inj_maps_read(getpid(), &m), 0);
    cr_assert_eq(inj_libc_resolve(getpid(), &m, &lc, err, sizeof(err)), INJ_OK, "%s", err);
    /* the child's libc is mapped once sleep has started (exec done) */
    int r = -1;
    for (int i = 0; i < 200; i++) {
        if (inj_maps_read(child, &cm) == 0) {
            if (inj_maps_find_module(&cm, inj_maps_is_libc) && strstr(cm.v[0].path, "sleep")) {
                r = 0;
                break;
            }
            inj_maps_free(&cm);
        }
        usleep(10000);
    }
    cr_assert_eq(r, 0, "the child never ran sleep with libc mapped");
    cr_assert_eq(inj_libc_resolve(child, &cm, &cc, err, sizeof(err)), INJ_OK, "%s", err);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_expect_eq(cc.dlopen - cc.bias, lc.dlopen - lc.bias);
    cr_expect_eq(cc.dlsym - cc.bias, lc.dlsym - lc.bias);
    cr_expect_eq(cc.dlerror - cc.bias, lc.dlerror - lc.bias);
    cr_expect_eq(cc.mmap - cc.bias, lc.mmap - lc.bias);
    cr_expect_eq(cc.munmap - cc.bias, lc.munmap - lc.bias);
    cr_expect_eq(cc.sigaction - cc.bias, lc.sigaction - lc.bias);
    cr_expect_eq(cc.alloc_lo - cc.bias, lc.alloc_lo - lc.bias);
    cr_expect_eq(cc.alloc_hi - cc.bias, lc.alloc_hi - lc.bias);
    cr_expect_str_eq(cc.dlopen_name, "dlopen");
    /* the child's own addresses: inside its own libc mapping */
    const struct inj_map *text = NULL;
    for (size_t i = 0; i < cm.n; i++)
        if (inj_maps_is_libc(cm.v[i].path) && cm.v[i].perms[2] == 'x')
            text = &cm.v[i];
    cr_assert_not_null(text);
    cr_expect(cc.dlopen >= text->start && cc.dlopen < text->end, "dlopen %#lx outside the child's libc text",
              (unsigned long)cc.dlopen);
    cr_expect(cc.alloc_lo >= text->start && cc.alloc_hi <= text->end);
    inj_maps_free(&cm);
    inj_maps_free(&m);
}
