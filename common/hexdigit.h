/* hexdigit.h - the value of a lowercase hex digit as the kernel writes
 * them in /proc (maps, fdinfo) and as build ids are spelled. No libc:
 * the payload uses it inside the target. */
#ifndef HI_COMMON_HEXDIGIT_H
#define HI_COMMON_HEXDIGIT_H

/* 0-15, or -1 for anything else. */
static inline int hi_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

#endif /* HI_COMMON_HEXDIGIT_H */
