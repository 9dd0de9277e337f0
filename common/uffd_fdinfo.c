/* uffd_fdinfo.c - a userfaultfd's features from its fdinfo text (see
 * uffd_fdinfo.h). */
#include "common/uffd_fdinfo.h"

#include "common/hexdigit.h"

#include <string.h>

int64_t hi_uffd_features(const char *text)
{
    const char *api = strstr(text, "API:");
    const char *colon = api ? strchr(api + 4, ':') : NULL; /* after the API version */
    if (!colon)
        return -1;
    int64_t v = 0;
    int digits = 0;
    for (const char *q = colon + 1; hi_hexval(*q) >= 0 && digits < 16; q++, digits++)
        v = v << 4 | hi_hexval(*q);
    return digits ? v : -1;
}

int hi_uffd_is_link(const char *link)
{
    return !strcmp(link, "anon_inode:[userfaultfd]");
}
