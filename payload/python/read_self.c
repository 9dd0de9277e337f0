/* read_self.c - checked reads of the process's own memory (read_self.h). */
#include "payload/python/read_self.h"

#include <string.h>

#include "payload/sys/readable.h"

#define PAGE 4096u

int pl_py_read_self(void *ctx, uintptr_t addr, void *out, size_t len)
{
    struct pl_py_self_pages *c = ctx;
    if (len == 0 || addr < PAGE || addr + len < addr)
        return -1;
    for (uintptr_t page = addr & ~(uintptr_t)(PAGE - 1); page < addr + len; page += PAGE) {
        if (page == c->page[0] || page == c->page[1])
            continue;
        if (!pl_mem_readable(page))
            return -1;
        c->page[c->next++ & 1] = page;
    }
    memcpy(out, (const void *)addr, len);
    return 0;
}
