/* file_key.h - the same file, as a per-command cache keys it: device,
 * inode, size and modification time (a file replaced or rewritten in
 * place is another). */
#ifndef HI_CLI_UTIL_FILE_KEY_H
#define HI_CLI_UTIL_FILE_KEY_H

#include <stdbool.h>
#include <sys/stat.h>

static inline bool cli_same_file(const struct stat *x, const struct stat *y)
{
    return x->st_dev == y->st_dev && x->st_ino == y->st_ino && x->st_size == y->st_size &&
           x->st_mtim.tv_sec == y->st_mtim.tv_sec && x->st_mtim.tv_nsec == y->st_mtim.tv_nsec;
}

#endif /* HI_CLI_UTIL_FILE_KEY_H */
