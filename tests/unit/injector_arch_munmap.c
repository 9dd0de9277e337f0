/* injector_arch_munmap.c - recognising glibc's munmap wrapper, whose
 * syscall instruction the rescue page's mmap starts from (so that a dead
 * injector leaves no page even from inside that mmap). */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <string.h>

#include "injector/arch.h"

/* glibc 2.36's munmap, the errno slot's displacement included. */
static const unsigned char glibc_munmap[] = {
    0xb8, 0x0b, 0x00, 0x00, 0x00,             /* mov $11,%eax */
    0x0f, 0x05,                               /* syscall */
    0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff,       /* cmp $-4095,%rax */
    0x73, 0x01,                               /* jae +1 */
    0xc3,                                     /* ret */
    0x48, 0x8b, 0x0d, 0xc9, 0x13, 0x0d, 0x00, /* mov errno@gottpoff(%rip),%rcx */
    0xf7, 0xd8,                               /* neg %eax */
    0x64, 0x89, 0x01,                         /* mov %eax,%fs:(%rcx) */
    0x48, 0x83, 0xc8, 0xff,                   /* or $-1,%rax */
    0xc3,                                     /* ret */
};

Test(injector_arch_munmap, finds_the_syscall_of_glibcs_wrapper)
{
    unsigned char code[64];

    memset(code, 0xcc, sizeof(code));
    memcpy(code, glibc_munmap, sizeof(glibc_munmap));
    cr_expect_eq(inj_arch_munmap_syscall_at(code, sizeof(code)), 5);
    /* Built with CET: endbr64 first. */
    static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
    memcpy(code, endbr64, 4);
    memcpy(code + 4, glibc_munmap, sizeof(glibc_munmap));
    cr_expect_eq(inj_arch_munmap_syscall_at(code, sizeof(code)), 9);
}

Test(injector_arch_munmap, finds_it_in_this_process_libc)
{
    /* The tests run on glibc: its munmap is the wrapper above. */
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    const unsigned char *fn;

    cr_assert_not_null(h);
    fn = dlsym(h, "munmap");
    cr_assert_not_null(fn);
    long at = inj_arch_munmap_syscall_at(fn, 64);
    cr_assert_geq(at, 5, "this libc's munmap is not the bare wrapper");
    cr_expect(fn[at] == 0x0f && fn[at + 1] == 0x05, "not a syscall at offset %ld", at);
}

/* inj_arch_munmap_syscall_at on glibc's wrapper with byte `at` set to b. */
static long with_byte(size_t at, unsigned char b)
{
    unsigned char code[64];

    memset(code, 0xcc, sizeof(code));
    memcpy(code, glibc_munmap, sizeof(glibc_munmap));
    code[at] = b;
    return inj_arch_munmap_syscall_at(code, sizeof(code));
}

Test(injector_arch_munmap, refuses_anything_else)
{
    /* Too short to hold the error path. */
    cr_expect_eq(inj_arch_munmap_syscall_at(glibc_munmap, sizeof(glibc_munmap) - 1), -1);
    cr_expect_eq(with_byte(1, 0x09), -1, "another syscall's wrapper (mmap is 9)");
    cr_expect_eq(with_byte(23, 0xe9), -1, "an error path that does more than set errno");
    cr_expect_eq(with_byte(15, 0x90), -1, "a success path that does not return at once");
    cr_expect_eq(with_byte(0, 0x55), -1, "musl's munmap is C code: a push first");
    cr_expect_eq(with_byte(20, 0x00), 5, "the errno slot's displacement is free");
}
