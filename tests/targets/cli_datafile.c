/* cli_datafile.c - a process that maps a data file (no ELF file: a JVM's
 * class data archive, a database's data file, a font) read-only at offset
 * 0, the way a module's first mapping looks in /proc/PID/maps, and
 * allocates in a loop. The cli's read-back of the GOT slots at detach must
 * take it for what it is (not a module), not for an unreadable module.
 *
 *   cli_datafile PATH   writes 64 KiB of text to PATH and maps it
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char block[4096];
    int fd;

    if (argc != 2)
        return 2;
    fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 1;
    memset(block, 'd', sizeof(block));
    for (int i = 0; i < 16; i++)
        if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
            return 1;
    const char *map = mmap(NULL, 16 * sizeof(block), PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 1;
    printf("ready\n");
    fflush(stdout);
    for (unsigned i = 0;; i++) {
        char *p = malloc(64 + i % 512);
        if (p)
            p[0] = map[i % 4096];
        free(p);
        if (i % 1024 == 0)
            usleep(1000);
    }
}
