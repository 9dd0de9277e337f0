/* leave.c - what the payload's own libraries leave in the target after detach. */
#include "payload/leave.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "payload/dynelf.h"
#include "payload/got.h"

#define PL_LEAVE_MAX_MODULES 16
#define PL_LEAVE_NO_SUCH_HOW 0x7fffL /* not SIG_BLOCK, SIG_UNBLOCK nor SIG_SETMASK */

/* Load addresses of libheapinject.so and of the modules that came with
 * it; written once under the start lock (pl_leave_init). */
static uintptr_t pl_leave_bases[PL_LEAVE_MAX_MODULES];
static unsigned pl_leave_nbases;

/* libunwind's validation pipe, as it will see it: two descriptor numbers
 * that are never open. Its read from the first and close of both fail
 * with EBADF (it then asks for a new pipe: these again); its one-byte
 * write from the address it tests, to the second, is answered here. */
#define PL_UNW_FD_READ (-2)
#define PL_UNW_FD_WRITE (-3)

static int pl_unw_pipe(int fds[2], int flags)
{
    (void)flags;
    fds[0] = PL_UNW_FD_READ;
    fds[1] = PL_UNW_FD_WRITE;
    return 0;
}

/* Whether 8 bytes at addr can be read, with no descriptor: the kernel
 * copies the new signal mask from addr before it looks at `how`, so an
 * unreadable address fails with EFAULT and a readable one with EINVAL,
 * and nothing changes either way (kernel/signal.c, rt_sigprocmask).
 * libunwind only reads whole words at the addresses it tests. */
static int readable(uintptr_t addr)
{
    long r = syscall(SYS_rt_sigprocmask, PL_LEAVE_NO_SUCH_HOW, addr, 0L, 8L);
    return r < 0 && errno == EINVAL;
}

/* What the pipe write returns: 1 byte written, or -1 with EFAULT. errno
 * is left alone on success, as a successful write leaves it (libunwind
 * loops while errno is EINTR). */
static long validate(uintptr_t addr)
{
    int saved = errno;
    if (readable(addr)) {
        errno = saved;
        return 1;
    }
    errno = EFAULT;
    return -1;
}

static long pl_unw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
    /* The descriptor came through `...` as an int: only its low 32 bits
     * are defined (the kernel reads it as an int too). */
    if (nr == SYS_write && (int)a1 == PL_UNW_FD_WRITE)
        return validate((uintptr_t)a2);
    return syscall(nr, a1, a2, a3, a4, a5, a6);
}

static ssize_t pl_unw_write(int fd, const void *buf, size_t n)
{
    if (fd == PL_UNW_FD_WRITE)
        return validate((uintptr_t)buf);
    return write(fd, buf, n);
}

/* The libunwind imports replaced, and by what. */
static const struct {
    const char *name;
    void (*with)(void); /* the generic function pointer type */
} pl_unw_imports[] = {
    { "pipe2", (void (*)(void))pl_unw_pipe },
    { "pipe", (void (*)(void))pl_unw_pipe },
    { "syscall", (void (*)(void))pl_unw_syscall },
    { "write", (void (*)(void))pl_unw_write },
};

static int contains(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t s = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= s && addr < s + ph->p_memsz)
            return 1;
    }
    return 0;
}

/* Redirects libunwind's pipe2, pipe, syscall and write slots. Slots counted. */
static int quiet_pipe(struct dl_phdr_info *info)
{
    struct pl_dyn d;
    if (pl_dyn_parse(info, &d) != 0)
        return 0;
    int n = 0;
    const ElfW(Rela) *tables[2] = { d.jmprel, d.rela };
    size_t sizes[2] = { d.pltrelsz, d.relasz };
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; tables[t] && i < sizes[t] / sizeof(ElfW(Rela)); i++) {
            const ElfW(Rela) *r = &tables[t][i];
            unsigned type = ELF64_R_TYPE(r->r_info);
            if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
                continue;
            const char *name = pl_dyn_sym_name(&d, ELF64_R_SYM(r->r_info));
            uintptr_t with = 0;
            for (size_t k = 0; name && k < sizeof(pl_unw_imports) / sizeof(pl_unw_imports[0]); k++)
                if (!strcmp(name, pl_unw_imports[k].name))
                    with = (uintptr_t)pl_unw_imports[k].with;
            if (!with)
                continue;
            uintptr_t slot = d.base + r->r_offset;
            int prot, lost = 0;
            if (pl_got_read(slot) == with) {
                n++; /* a second start: done already */
                continue;
            }
            if (pl_got_prot(info, slot, &prot) == 0 && pl_got_write(slot, with, prot, &lost) == 0)
                n++;
        }
    }
    return n;
}

struct init_arg {
    int after_us;
    int quieted;
};

static int remember(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct init_arg *a = data;
    if (!a->after_us) {
        if (contains(info, (uintptr_t)&pl_leave_init)) {
            a->after_us = 1;
            pl_leave_bases[pl_leave_nbases++] = info->dlpi_addr;
        }
        return 0;
    }
    if (pl_leave_nbases < PL_LEAVE_MAX_MODULES && info->dlpi_name && info->dlpi_name[0])
        pl_leave_bases[pl_leave_nbases++] = info->dlpi_addr;
    if (contains(info, (uintptr_t)&unw_backtrace))
        a->quieted += quiet_pipe(info);
    return 0;
}

int pl_leave_init(void)
{
    if (pl_leave_nbases)
        return 0;
    struct init_arg a = { 0, 0 };
    dl_iterate_phdr(remember, &a);
    return a.quieted;
}

/* Whether the module's dynamic section asks for text relocations. */
static int has_textrel(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_DYNAMIC)
            continue;
        for (const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr); dyn->d_tag != DT_NULL; dyn++)
            if (dyn->d_tag == DT_TEXTREL || (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_TEXTREL)))
                return 1;
    }
    return 0;
}

struct release_arg {
    uintptr_t page;
    unsigned long bytes;
};

static int release(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct release_arg *a = data;
    int ours = 0;
    for (unsigned i = 0; i < pl_leave_nbases; i++)
        ours |= pl_leave_bases[i] == info->dlpi_addr;
    if (!ours || has_textrel(info))
        return 0;
    uintptr_t relro_lo = 0, relro_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            relro_lo = (info->dlpi_addr + ph->p_vaddr) & ~(a->page - 1);
            relro_hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + a->page - 1) & ~(a->page - 1);
        }
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
            continue;
        /* Whole pages inside the segment's file image only (the rest of a
         * last page may be zero-filled memory of the next mapping). */
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr + a->page - 1) & ~(a->page - 1);
        uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_filesz) & ~(a->page - 1);
        if (hi <= lo || (lo < relro_hi && relro_lo < hi))
            continue;
        if (madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0)
            a->bytes += hi - lo;
    }
    return 0;
}

unsigned long pl_leave_release_text(void)
{
    long page = sysconf(_SC_PAGESIZE);
    struct release_arg a = { page > 0 ? (uintptr_t)page : 4096u, 0 };
    if (pl_leave_nbases)
        dl_iterate_phdr(release, &a);
    return a.bytes;
}
