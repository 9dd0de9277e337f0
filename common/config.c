/* config.c - parse and format the heapinject_start() settings string.
 * Runs inside the target too: no heap, no stdio, no locale. */
#include "config.h"
#include "proto.h"

#include <stddef.h>
#include <string.h>

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 19)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

static int key_is(const char *key, size_t klen, const char *name)
{
    return strlen(name) == klen && memcmp(key, name, klen) == 0;
}

int hi_config_parse(const char *text, struct hi_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->version = HI_PROTO_VERSION;
    cfg->rate = HI_DEFAULT_RATE;
    cfg->ttl_s = HI_DEFAULT_TTL_S;
    cfg->tick_ms = HI_DEFAULT_TICK_MS;
    if (!text)
        return -1;

    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *key = p;
        while (*p && *p != '=' && *p != ' ')
            p++;
        if (*p != '=')
            return -1;
        size_t klen = (size_t)(p - key);
        const char *val = ++p;
        while (*p && *p != ' ')
            p++;
        size_t vlen = (size_t)(p - val);
        uint64_t n;

        if (key_is(key, klen, "sock")) {
            if (vlen == 0 || vlen > HI_SOCK_PATH_MAX || val[0] != '/')
                return -1;
            memcpy(cfg->sock, val, vlen);
            cfg->sock[vlen] = '\0';
        } else if (key_is(key, klen, "v")) {
            if (parse_u64(val, vlen, &n) < 0 || n == 0 || n > 0xffff)
                return -1;
            cfg->version = (uint32_t)n;
        } else if (key_is(key, klen, "rate")) {
            if (parse_u64(val, vlen, &n) < 0 || !hi_rate_ok(n))
                return -1;
            cfg->rate = n;
        } else if (key_is(key, klen, "ttl")) {
            if (parse_u64(val, vlen, &n) < 0 || n > (1ull << 32))
                return -1;
            cfg->ttl_s = n;
        } else if (key_is(key, klen, "cli_pid")) {
            if (parse_u64(val, vlen, &n) < 0 || n > 0x7fffffff)
                return -1;
            cfg->cli_pid = (uint32_t)n;
        } else if (key_is(key, klen, "floor")) {
            if (parse_u64(val, vlen, &n) < 0 || n > 1)
                return -1;
            cfg->floor = (uint32_t)n;
        } else if (key_is(key, klen, "uffd")) {
            if (parse_u64(val, vlen, &n) < 0 || n > 1)
                return -1;
            cfg->uffd = (uint32_t)n;
        } else if (key_is(key, klen, "gate")) {
            if (parse_u64(val, vlen, &n) < 0 || n > 0xffffffffu)
                return -1;
            cfg->gate = (uint32_t)n;
            cfg->gate_known = 1;
        } else if (key_is(key, klen, "pymalloc")) {
            if (parse_u64(val, vlen, &n) < 0 || n > 1)
                return -1;
            cfg->pymalloc = (uint32_t)n;
        } else if (key_is(key, klen, "follow") || key_is(key, klen, "last")) {
            if (parse_u64(val, vlen, &n) < 0 || n > (key_is(key, klen, "follow") ? HI_FOLLOW_LAZY : 1))
                return -1;
            *(key_is(key, klen, "follow") ? &cfg->follow : &cfg->last) = (uint32_t)n;
        } else if (key_is(key, klen, "crash") || key_is(key, klen, "pressure")) {
            if (parse_u64(val, vlen, &n) < 0 || n > 1)
                return -1;
            *(key_is(key, klen, "crash") ? &cfg->crash : &cfg->pressure) = (uint32_t)n;
        } else if (key_is(key, klen, "tick_ms")) {
            if (parse_u64(val, vlen, &n) < 0 || n < 10 || n > 60000)
                return -1;
            cfg->tick_ms = (uint32_t)n;
        }
        /* unknown keys: ignored (forward compatibility) */
    }
    return cfg->sock[0] ? 0 : -1;
}

/* Appends "key=<u64> " at *pos. */
static int append_u64(char *buf, unsigned long len, unsigned long *pos, const char *key, uint64_t v)
{
    char digits[24];
    int nd = 0;
    do {
        digits[nd++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    size_t klen = strlen(key);
    if (*pos + klen + 1 + (unsigned long)nd + 1 >= len)
        return -1;
    memcpy(buf + *pos, key, klen);
    *pos += klen;
    buf[(*pos)++] = '=';
    while (nd)
        buf[(*pos)++] = digits[--nd];
    buf[(*pos)++] = ' ';
    buf[*pos] = '\0';
    return 0;
}

int hi_config_format(const struct hi_config *cfg, char *buf, unsigned long buflen)
{
    unsigned long pos = 0;
    if (buflen == 0)
        return -1;
    buf[0] = '\0';
    if (append_u64(buf, buflen, &pos, "v", cfg->version) < 0 ||
        append_u64(buf, buflen, &pos, "rate", cfg->rate) < 0 ||
        append_u64(buf, buflen, &pos, "ttl", cfg->ttl_s) < 0 ||
        append_u64(buf, buflen, &pos, "tick_ms", cfg->tick_ms) < 0 ||
        (cfg->cli_pid && append_u64(buf, buflen, &pos, "cli_pid", cfg->cli_pid) < 0) ||
        (cfg->crash && append_u64(buf, buflen, &pos, "crash", 1) < 0) ||
        (cfg->pressure && append_u64(buf, buflen, &pos, "pressure", 1) < 0) ||
        (cfg->follow && append_u64(buf, buflen, &pos, "follow", cfg->follow) < 0) ||
        (cfg->pymalloc && append_u64(buf, buflen, &pos, "pymalloc", 1) < 0) ||
        (cfg->last && append_u64(buf, buflen, &pos, "last", 1) < 0))
        return -1;
    size_t slen = strlen(cfg->sock);
    if (pos + 5 + slen + 1 > buflen)
        return -1;
    memcpy(buf + pos, "sock=", 5);
    memcpy(buf + pos + 5, cfg->sock, slen + 1);
    return 0;
}

const char *hi_start_strerror(int status)
{
    switch (status) {
    case HI_START_OK: return "started";
    case HI_START_EBADCONFIG: return "the payload rejected its settings (cli and payload versions differ?)";
    case HI_START_EALREADY: return "heapinject is already attached to this process";
    case HI_START_ENOSLOTS:
        return "no malloc-family GOT/PLT slot found in any module: the process uses a "
               "statically linked allocator (e.g. Rust's jemallocator, Go) that heapinject cannot hook";
    case HI_START_ESOCKET: return "the payload could not create its control socket";
    case HI_START_ETHREAD: return "the payload could not start its agent thread";
    case HI_START_ENOMEM: return "the payload could not map memory for its tables";
    case HI_START_ENOFDS:
        return "the process has fewer than the 5 free file descriptors the profiler needs (its socket, "
               "its wake-up and watch descriptors, the cli's connection, reading its own /proc files); "
               "nothing was hooked";
    default: return "unknown status";
    }
}
