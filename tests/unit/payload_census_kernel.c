/* payload_census_kernel.c - the data words of epoll registrations
 * (payload/census/kernel.h): parsed from fdinfo text as the kernel writes
 * it, and read from the test's own epoll instances. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "payload/census/kernel.h"

static struct pl_kernel_words *words(void)
{
    void *p = mmap(NULL, sizeof(struct pl_kernel_words), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(p != MAP_FAILED);
    return p;
}

Test(census_kernel, parses_fdinfo_text)
{
    static const char text[] = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n"
                               "tfd:        5 events:       19 data:     7f1c2d3e4f50  pos:0 ino:41 sdev:e\n"
                               "tfd:        7 events:       19 data:                0  pos:0 ino:42 sdev:e\n"
                               "tfd:       12 events: 80000019 data: ffffffffffffffff  pos:0 ino:43 sdev:e\n";
    struct pl_kernel_words *k = words();
    pl_kernel_words_parse(k, text, sizeof(text) - 1);
    cr_assert_eq(k->n, 3);
    cr_expect_eq(k->w[0], (uintptr_t)0x7f1c2d3e4f50ull);
    cr_expect_eq(k->w[1], 0);
    cr_expect_eq(k->w[2], UINTPTR_MAX);
    munmap(k, sizeof(*k));
}

Test(census_kernel, reads_this_process_registrations)
{
    int ep = epoll_create1(EPOLL_CLOEXEC), a = eventfd(0, EFD_CLOEXEC), b = eventfd(0, EFD_CLOEXEC);
    cr_assert(ep >= 0 && a >= 0 && b >= 0);
    void *obj = malloc(64);
    struct epoll_event ev = { .events = EPOLLIN };
    ev.data.ptr = obj;
    cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, a, &ev), 0);
    ev.data.u64 = 0x1234567890ull;
    cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, b, &ev), 0);
    struct pl_kernel_words *k = words();
    char why[256];
    cr_assert_eq(pl_kernel_fds_scan(k, why, sizeof(why)), 0);
    pl_kernel_words_read(k);
    cr_assert_geq(k->epolls, 1);
    int saw_obj = 0, saw_u64 = 0;
    for (uint32_t i = 0; i < k->n; i++) {
        saw_obj |= k->w[i] == (uintptr_t)obj;
        saw_u64 |= k->w[i] == 0x1234567890ull;
    }
    cr_expect(saw_obj, "the registration holding a pointer was not read");
    cr_expect(saw_u64, "the second registration was not read");
    munmap(k, sizeof(*k));
    free(obj);
    close(ep);
    close(a);
    close(b);
}
