/* census_dontfork - blocks whose only pointers live in memory a fork does
 * not copy, for the census (which reads the heap in a fork):
 *   a 1 MiB mapping marked MADV_DONTFORK (as V8 marks its heap) holding the
 *   only pointers to 100 blocks of 48 bytes and to the head of a list of
 *   1,000 nodes of 32 bytes;
 *   a 64 KiB mapping marked MADV_WIPEONFORK holding the only pointer to a
 *   block of 777 bytes;
 *   a 2 MiB MADV_DONTFORK mapping with one page written, holding the only
 *   pointer to a block of 555 bytes (the other pages must stay unpopulated);
 *   a 64 KiB private writable mapping of a file (unlinked: "(deleted)"),
 *   written, holding the only pointer to a block of 333 bytes (the JVM maps
 *   its class archive so);
 *   a block of 444 bytes whose only pointer is the data of an epoll
 *   registration (an event loop's connection object), kept by the kernel;
 *   10 blocks of 100 bytes leaked.
 * Prints "ready sparse=ADDR" and waits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

struct node {
    struct node *next;
    char pad[24];
};

static void *map(size_t len, int advice)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || madvise(p, len, advice) != 0) {
        perror("mmap/madvise");
        exit(1);
    }
    return p;
}

/* The list is built here, and the stack it used is scrubbed after, so
 * that no stale copy of a node's address stays on the stack. */
static __attribute__((noinline)) struct node *build_list(int n)
{
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *x = malloc(sizeof(*x));
        x->next = head;
        memset(x->pad, 'n', sizeof(x->pad));
        head = x;
    }
    return head;
}

static __attribute__((noinline)) void scrub_stack(void)
{
    volatile char junk[16384];
    memset((char *)junk, 0, sizeof(junk));
}

int main(void)
{
    void **dc = map(1u << 20, MADV_DONTFORK);
    memset(dc, 0x5a, 1u << 20); /* every page written, words no pointers */
    for (int i = 0; i < 100; i++)
        dc[1000 + i * 7] = memset(malloc(48), 'd', 48);
    dc[(1u << 20) / sizeof(void *) - 1] = build_list(1000);
    scrub_stack();
    void **wf = map(64u << 10, MADV_WIPEONFORK);
    wf[4096] = memset(malloc(777), 'w', 777);
    char *sparse = map(2u << 20, MADV_DONTFORK);
    ((void **)(sparse + (1u << 20)))[3] = memset(malloc(555), 's', 555);
    char path[] = "/tmp/census_file.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || ftruncate(fd, 64u << 10) != 0) {
        perror("mkstemp/ftruncate");
        return 1;
    }
    void **file = mmap(NULL, 64u << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (file == MAP_FAILED)
        return 1;
    unlink(path);
    close(fd);
    file[1024] = memset(malloc(333), 'f', 333);
    int ep = epoll_create1(EPOLL_CLOEXEC), efd = eventfd(0, EFD_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN };
    ev.data.ptr = memset(malloc(444), 'e', 444);
    if (ep < 0 || efd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) != 0) {
        perror("epoll");
        return 1;
    }
    memset(&ev, 0, sizeof(ev));
    for (int i = 0; i < 10; i++)
        memset(malloc(100), 'x', 100);
    printf("ready sparse=%p\n", (void *)sparse);
    fflush(stdout);
    for (;;)
        pause();
}
