/* demangle.c - C++ demangling through libstdc++'s __cxa_demangle, and
 * Rust's legacy mangling (the default of stable rustc until the v0 scheme).
 *
 * Rust legacy names are Itanium-shaped (_ZN <len><ident>... E) with a last
 * component "h<16 hex digits>" (a hash) and "$..$" escapes inside the
 * identifiers ($LT$ for <, $u7b$ for {, ".." for ::). They are decoded here
 * by hand: libstdc++ would leave the hash and the escapes in place. Rust's
 * v0 names (_R..., used by the standard library) are decoded for plain
 * paths (crate roots, nested names, closures); names with generic
 * arguments, impls or back references are left as they are.
 *
 * elfutils has no public demangler (eu-stack links libstdc++ for it). The
 * cli is C and its link line carries no -lstdc++, so __cxa_demangle is a weak
 * reference: when the binary is linked with libstdc++ it is used directly,
 * otherwise libstdc++.so.6 is dlopen'ed on first need (it is on every system
 * that runs C++ programs, the only ones with mangled names). Without either,
 * names stay mangled: still correct, only less readable. */
#include "cli/symbolize/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status)
    __attribute__((weak));

static demangle_fn resolved;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    if (__cxa_demangle) {
        resolved = __cxa_demangle;
        return;
    }
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        resolved = (demangle_fn)dlsym(h, "__cxa_demangle");
    /* h stays open for the life of the process: resolved points into it. */
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Appends the identifier id[0..n) to out with Rust's legacy escapes decoded. */
static size_t rust_unescape(const char *id, size_t n, char *out)
{
    static const struct { const char *esc, *text; } table[] = {
        {"$SP$", "@"}, {"$BP$", "*"}, {"$RF$", "&"}, {"$LT$", "<"}, {"$GT$", ">"},
        {"$LP$", "("}, {"$RP$", ")"}, {"$C$", ","},
    };
    size_t o = 0, i = 0;
    if (n >= 2 && id[0] == '_' && id[1] == '$')
        i = 1; /* "_$" starts an identifier that begins with an escape */
    while (i < n) {
        if (id[i] == '.' && i + 1 < n && id[i + 1] == '.') {
            out[o++] = ':';
            out[o++] = ':';
            i += 2;
            continue;
        }
        if (id[i] == '$') {
            size_t k;
            for (k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
                size_t l = strlen(table[k].esc);
                if (i + l <= n && !memcmp(id + i, table[k].esc, l)) {
                    size_t tl = strlen(table[k].text);
                    memcpy(out + o, table[k].text, tl);
                    o += tl;
                    i += l;
                    break;
                }
            }
            if (k < sizeof(table) / sizeof(table[0]))
                continue;
            /* $uXX$: one character by its (ASCII) code */
            if (i + 5 <= n && id[i + 1] == 'u' && is_hex(id[i + 2]) && is_hex(id[i + 3]) && id[i + 4] == '$') {
                out[o++] = (char)strtol((char[]){id[i + 2], id[i + 3], 0}, NULL, 16);
                i += 5;
                continue;
            }
        }
        out[o++] = id[i++];
    }
    return o;
}

/* Rust legacy: "_ZN" (<decimal length><identifier>)+ "E" whose last
 * identifier is "h" + 16 hex digits. Returns the decoded path without the
 * hash (malloc'ed), or NULL when name is not such a name. */
static char *rust_legacy_demangle(const char *name)
{
    size_t len = strlen(name);
    if (len < 24 || strncmp(name, "_ZN", 3) || name[len - 1] != 'E')
        return NULL;
    const char *hash = name + len - 1 - 17; /* "h" + 16 hex */
    if (hash[0] != 'h' || hash[-1] != '7' || hash[-2] != '1')
        return NULL;
    for (int i = 1; i <= 16; i++)
        if (!is_hex(hash[i]))
            return NULL;
    char *out = malloc(len * 2 + 1); /* decoded text never exceeds 2x the input */
    if (!out)
        return NULL;
    size_t o = 0;
    const char *p = name + 3, *end = hash - 2; /* stop before the hash's "17" */
    while (p < end) {
        char *after;
        unsigned long n = strtoul(p, &after, 10);
        if (after == p || n == 0 || n > (unsigned long)(end - after)) {
            free(out);
            return NULL; /* not the shape we know: leave the name alone */
        }
        if (o)
            out[o++] = ':', out[o++] = ':';
        o += rust_unescape(after, n, out + o);
        p = after + n;
    }
    if (p != end || o == 0) {
        free(out);
        return NULL;
    }
    out[o] = '\0';
    return out;
}

/* Rust v0: the subset made of "C" (crate root), "N" (nested path) and
 * identifiers. Grammar from the Rust symbol-mangling RFC 2603. */
struct v0 {
    const char *p, *end;
    char *out;
    size_t o, cap;
};

static int v0_put(struct v0 *v, const char *s, size_t n)
{
    if (v->o + n + 1 > v->cap)
        return -1;
    memcpy(v->out + v->o, s, n);
    v->o += n;
    return 0;
}

/* [s <base-62>_] : a disambiguator we do not print */
static void v0_skip_disambiguator(struct v0 *v)
{
    if (v->p < v->end && *v->p == 's') {
        while (v->p < v->end && *v->p != '_')
            v->p++;
        if (v->p < v->end)
            v->p++;
    }
}

/* [u] <decimal> [_] <bytes>; punycode ("u") names are not decoded. */
static int v0_identifier(struct v0 *v, const char **id, size_t *n)
{
    v0_skip_disambiguator(v);
    if (v->p < v->end && *v->p == 'u')
        return -1;
    char *after;
    unsigned long len = strtoul(v->p, &after, 10);
    if (after == v->p)
        return -1;
    v->p = after;
    if (v->p < v->end && *v->p == '_')
        v->p++;
    if (len > (unsigned long)(v->end - v->p))
        return -1;
    *id = v->p;
    *n = len;
    v->p += len;
    return 0;
}

static int v0_path(struct v0 *v, int depth)
{
    if (v->p >= v->end || depth > 64)
        return -1;
    char tag = *v->p++;
    const char *id;
    size_t n;
    if (tag == 'C')
        return v0_identifier(v, &id, &n) < 0 ? -1 : v0_put(v, id, n);
    if (tag != 'N' || v->p >= v->end)
        return -1; /* impls, generics, back references: not decoded */
    char ns = *v->p++;
    if (v0_path(v, depth + 1) < 0 || v0_identifier(v, &id, &n) < 0 || v0_put(v, "::", 2) < 0)
        return -1;
    if (ns == 'C') /* closure */
        return v0_put(v, "{closure}", 9);
    if (ns == 'S') /* shim */
        return v0_put(v, "{shim}", 6);
    return n ? v0_put(v, id, n) : -1;
}

static char *rust_v0_demangle(const char *name)
{
    if (strncmp(name, "_R", 2))
        return NULL;
    size_t len = strlen(name);
    struct v0 v = { name + 2, name + len, malloc(len + 64), 0, len + 64 };
    if (!v.out)
        return NULL;
    while (v.p < v.end && *v.p >= '0' && *v.p <= '9')
        v.p++; /* encoding version */
    if (v0_path(&v, 0) < 0 || v.p != v.end) { /* an instantiating crate or suffix: leave it */
        free(v.out);
        return NULL;
    }
    v.out[v.o] = '\0';
    return v.out;
}

char *cli_demangle(const char *name)
{
    if (!name)
        return NULL;
    char *rust = rust_legacy_demangle(name);
    if (!rust)
        rust = rust_v0_demangle(name);
    if (rust)
        return rust;
    if (name[0] == '_' && name[1] == 'Z') {
        pthread_once(&resolve_once, resolve);
        if (resolved) {
            int status = -1;
            char *d = resolved(name, NULL, NULL, &status);
            if (d && status == 0)
                return d;
            free(d);
        }
    }
    return strdup(name);
}
