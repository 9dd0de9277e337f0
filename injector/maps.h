/* maps.h - /proc/PID/maps of the target: mappings, modules, and their files. */
#ifndef HI_INJECTOR_MAPS_H
#define HI_INJECTOR_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct inj_map {
    uint64_t start, end;   /* [start, end) in the target */
    uint64_t offset;       /* file offset of start */
    uint64_t inode;        /* 0 for anonymous mappings */
    char perms[5];         /* "r-xp" */
    bool deleted;          /* the file was unlinked or replaced (" (deleted)") */
    char *path;            /* owned; "" when anonymous; without " (deleted)" */
};

struct inj_maps {
    struct inj_map *v;     /* sorted by start, as the kernel lists them */
    size_t n;
};

/* Reads /proc/PID/maps. Returns 0 or -errno; free with inj_maps_free(). */
int inj_maps_read(pid_t pid, struct inj_maps *out);

/* Parses maps text (the format of /proc/PID/maps). Returns 0 or -errno. */
int inj_maps_parse(const char *text, struct inj_maps *out);

void inj_maps_free(struct inj_maps *m);

/* The mapping that contains addr, or NULL. */
const struct inj_map *inj_maps_find_addr(const struct inj_maps *m, uint64_t addr);

/* The lowest mapping of the first file-backed module whose path satisfies
 * match(), or NULL. */
const struct inj_map *inj_maps_find_module(const struct inj_maps *m,
                                           bool (*match)(const char *path));

/* The mapping of `path` that maps file offset 0 (the ELF header), or NULL. */
const struct inj_map *inj_maps_module_head(const struct inj_maps *m, const char *path);

/* glibc's libc ("libc.so.6", "libc-2.31.so"). */
bool inj_maps_is_libc(const char *path);

/* The dynamic linker ("ld-linux-x86-64.so.2", "ld-2.31.so"). */
bool inj_maps_is_ldso(const char *path);

/* Opens the file behind a mapping as the target sees it, read-only: first
 * /proc/PID/map_files/START-END (the very inode that is mapped, even when the
 * file was replaced or lives in another mount namespace; needs
 * CAP_SYS_ADMIN), then /proc/PID/root/PATH (the target's mount namespace),
 * then PATH. Returns an fd or -errno. */
int inj_maps_open_file(pid_t pid, const struct inj_map *map);

#endif /* HI_INJECTOR_MAPS_H */
