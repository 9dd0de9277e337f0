/* debuglink.c - the debug files an ELF file names (injector/debuglink.h). */
#include "injector/debuglink.h"

#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Something other than a regular file at root + name? stat() follows
 * symbolic links (so does open()) and never blocks on a FIFO. */
static bool blocked(const char *root, const char *name)
{
    char full[PATH_MAX];
    struct stat st;

    if (snprintf(full, sizeof(full), "%s%s", root, name) >= (int)sizeof(full))
        return false; /* too long for the readers' own buffers, too */
    return stat(full, &st) == 0 && !S_ISREG(st.st_mode);
}

/* The places a debuglink name is looked for: DIR/NAME, DIR/.debug/NAME,
 * /usr/lib/debug/DIR/NAME (libunwind's elfxx.c; libdw's default
 * debuginfo path ":.debug:/usr/lib/debug" is the same three). An
 * altlink is absolute or relative to DIR. */
static bool link_blocked(const char *root, const char *dir, const char *name, bool alt)
{
    char cand[PATH_MAX];
    static const char *const fmt[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };

    if (name[0] == '/')
        return blocked(root, name);
    for (size_t i = 0; i < (alt ? 1u : sizeof(fmt) / sizeof(fmt[0])); i++)
        if (snprintf(cand, sizeof(cand), fmt[i], dir, name) < (int)sizeof(cand) && blocked(root, cand))
            return true;
    return false;
}

/* The NUL-terminated name at the start of a section, or NULL. */
static const char *section_name_at(Elf_Scn *scn)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf || !d->d_size || !memchr(d->d_buf, '\0', d->d_size))
        return NULL;
    return ((const char *)d->d_buf)[0] ? d->d_buf : NULL;
}

bool inj_debuglink_blocked(int fd, const char *path, pid_t pid)
{
    char dir[PATH_MAX], root[48];
    size_t shstrndx;
    bool bad = false;

    if (elf_version(EV_CURRENT) == EV_NONE)
        return false;
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return false;
    *slash = '\0';
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!e)
        return false;
    if (elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) < 0) {
        elf_end(e);
        return false;
    }
    for (Elf_Scn *scn = NULL; !bad && (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        const char *sname, *link;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
            !(sname = elf_strptr(e, shstrndx, sh.sh_name)))
            continue;
        bool alt = !strcmp(sname, ".gnu_debugaltlink");
        if (!alt && strcmp(sname, ".gnu_debuglink"))
            continue;
        if (!(link = section_name_at(scn)))
            continue;
        bad = link_blocked("", dir, link, alt);
        if (!bad && pid > 0) {
            snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
            bad = link_blocked(root, dir, link, alt);
        }
    }
    elf_end(e);
    return bad;
}
