/* read_self.c - checked reads of the process's own memory (read_self.h). */
#include "payload/python/read_self.h"

#include <string.h>

#include "payload/sys/sys.h"

#define PAGE 4096u
#define PAGES_KEPT (sizeof(((struct pl_py_self_pages *)0)->page) / sizeof(uintptr_t))

static int known(const struct pl_py_self_pages *c, uintptr_t page)
{
    for (unsigned i = 0; i < PAGES_KEPT; i++)
        if (c->page[i] == page)
            return 1;
    return 0;
}

int pl_py_read_self(void *ctx, uintptr_t addr, void *out, size_t len)
{
    struct pl_py_self_pages *c = ctx;
    if (len == 0 || addr < PAGE || addr + len < addr)
        return -1;
    for (uintptr_t page = addr & ~(uintptr_t)(PAGE - 1); page < addr + len; page += PAGE) {
        if (known(c, page))
            continue;
        if (!pl_mem_readable(page))
            return -1;
        c->page[c->next++ % PAGES_KEPT] = page;
    }
    memcpy(out, (const void *)addr, len);
    return 0;
}
