/* read_jsonparse.c - strict, bounded JSON parsing into a node pool. */
#include "cli/profile/read_jsonparse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
    const char *s, *p, *end;
    struct cli_json_doc *doc;
    char *why;
    size_t whylen;
    int err;
};

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *ps, const char *fmt, ...)
{
    if (ps->err)
        return ps->err;
    size_t line = 1;
    for (const char *c = ps->s; c < ps->p && c < ps->end; c++)
        line += *c == '\n';
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (ps->why && ps->whylen)
        snprintf(ps->why, ps->whylen, "JSON line %zu: %s", line, msg);
    ps->err = -EBADMSG;
    return ps->err;
}

static void ws(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static long new_node(struct parser *ps, enum cli_json_type t)
{
    struct cli_json_doc *d = ps->doc;
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 1024;
        struct cli_json_node *nn = realloc(d->nodes, nc * sizeof(*nn));
        if (!nn) {
            ps->err = -ENOMEM;
            return -1;
        }
        d->nodes = nn;
        d->cap = nc;
    }
    memset(&d->nodes[d->n], 0, sizeof(d->nodes[0]));
    d->nodes[d->n].type = t;
    return (long)d->n++;
}

static int str_put(struct parser *ps, const void *data, size_t len)
{
    struct cli_json_doc *d = ps->doc;
    if (d->strs_len + len + 1 > d->strs_cap) {
        size_t nc = d->strs_cap ? d->strs_cap : 4096;
        while (nc < d->strs_len + len + 1)
            nc *= 2;
        char *ns = realloc(d->strs, nc);
        if (!ns)
            return ps->err = -ENOMEM;
        d->strs = ns;
        d->strs_cap = nc;
    }
    memcpy(d->strs + d->strs_len, data, len);
    d->strs_len += len;
    return 0;
}

static int hex4(struct parser *ps, unsigned *out)
{
    if (ps->end - ps->p < 4)
        return fail(ps, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = ps->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(ps, "bad \\u escape");
    }
    ps->p += 4;
    *out = v;
    return 0;
}

/* Parses a string at ps->p (at the opening quote) into doc->strs; returns
 * its offset in *off and length in *len. */
static int parse_string(struct parser *ps, size_t *off, size_t *len)
{
    ps->p++; /* '"' */
    *off = ps->doc->strs_len;
    for (;;) {
        const char *start = ps->p;
        while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\\' && (unsigned char)*ps->p >= 0x20)
            ps->p++;
        if (ps->p > start && str_put(ps, start, (size_t)(ps->p - start)))
            return ps->err;
        if (ps->p >= ps->end)
            return fail(ps, "unterminated string");
        char c = *ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c != '\\')
            return fail(ps, "control character in string");
        if (++ps->p >= ps->end)
            return fail(ps, "unterminated string");
        char e = *ps->p++;
        char ch;
        switch (e) {
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '/': ch = '/'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(ps, &cp))
                return ps->err;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u')
                    return fail(ps, "lone surrogate in \\u escape");
                ps->p += 2;
                if (hex4(ps, &lo))
                    return ps->err;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return fail(ps, "bad surrogate pair");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                return fail(ps, "lone surrogate in \\u escape");
            }
            if (cp == 0)
                return fail(ps, "NUL character in string");
            unsigned char u[4];
            size_t n;
            if (cp < 0x80) {
                u[0] = (unsigned char)cp, n = 1;
            } else if (cp < 0x800) {
                u[0] = (unsigned char)(0xc0 | cp >> 6), u[1] = (unsigned char)(0x80 | (cp & 0x3f)), n = 2;
            } else if (cp < 0x10000) {
                u[0] = (unsigned char)(0xe0 | cp >> 12), u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
                u[2] = (unsigned char)(0x80 | (cp & 0x3f)), n = 3;
            } else {
                u[0] = (unsigned char)(0xf0 | cp >> 18), u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
                u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f)), u[3] = (unsigned char)(0x80 | (cp & 0x3f));
                n = 4;
            }
            if (str_put(ps, u, n))
                return ps->err;
            continue;
        }
        default:
            return fail(ps, "bad escape \\%c", e);
        }
        if (str_put(ps, &ch, 1))
            return ps->err;
    }
    *len = ps->doc->strs_len - *off;
    return str_put(ps, "", 1);
}

static int parse_value(struct parser *ps, int depth, long *out);

static int parse_container(struct parser *ps, int depth, long idx, bool object)
{
    char close = object ? '}' : ']';
    size_t last = 0;
    ps->p++; /* '{' or '[' */
    ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return 0;
    }
    for (;;) {
        size_t koff = 0, klen = 0;
        if (object) {
            ws(ps);
            if (ps->p >= ps->end || *ps->p != '"')
                return fail(ps, "expected a member name");
            if (parse_string(ps, &koff, &klen))
                return ps->err;
            ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return fail(ps, "expected ':'");
            ps->p++;
        }
        long child;
        if (parse_value(ps, depth + 1, &child))
            return ps->err;
        struct cli_json_node *c = &ps->doc->nodes[child];
        c->key = koff;
        c->keylen = klen;
        if (last)
            ps->doc->nodes[last].next_sibling = (size_t)child;
        else
            ps->doc->nodes[idx].first_child = (size_t)child;
        last = (size_t)child;
        ps->doc->nodes[idx].count++;
        ws(ps);
        if (ps->p >= ps->end)
            return fail(ps, "truncated: expected ',' or '%c'", close);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return 0;
        }
        return fail(ps, "expected ',' or '%c'", close);
    }
}

static int parse_number(struct parser *ps, long idx)
{
    const char *start = ps->p;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
        return fail(ps, "bad number");
    if (*ps->p == '0')
        ps->p++;
    else
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return fail(ps, "bad number");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return fail(ps, "bad number");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->p - start > 64)
        return fail(ps, "number too long");
    ps->doc->nodes[idx].str = (size_t)(start - ps->s);
    ps->doc->nodes[idx].len = (size_t)(ps->p - start);
    return 0;
}

static bool word(struct parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n))
        return false;
    ps->p += n;
    return true;
}

static int parse_value(struct parser *ps, int depth, long *out)
{
    if (depth > CLI_JSON_MAX_DEPTH)
        return fail(ps, "nested deeper than %d", CLI_JSON_MAX_DEPTH);
    ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, "truncated: expected a value");
    char c = *ps->p;
    long idx;
    switch (c) {
    case '{':
    case '[':
        if ((idx = new_node(ps, c == '{' ? CLI_JSON_OBJECT : CLI_JSON_ARRAY)) < 0)
            return ps->err;
        *out = idx;
        return parse_container(ps, depth, idx, c == '{');
    case '"': {
        size_t off, len;
        if ((idx = new_node(ps, CLI_JSON_STRING)) < 0 || parse_string(ps, &off, &len))
            return ps->err;
        ps->doc->nodes[idx].str = off;
        ps->doc->nodes[idx].len = len;
        *out = idx;
        return 0;
    }
    case 't':
    case 'f':
    case 'n':
        if ((idx = new_node(ps, c == 'n' ? CLI_JSON_NULL : CLI_JSON_BOOL)) < 0)
            return ps->err;
        if (!word(ps, c == 't' ? "true" : c == 'f' ? "false" : "null"))
            return fail(ps, "unexpected word");
        ps->doc->nodes[idx].b = c == 't';
        *out = idx;
        return 0;
    default:
        if ((idx = new_node(ps, CLI_JSON_NUMBER)) < 0)
            return ps->err;
        *out = idx;
        return parse_number(ps, idx);
    }
}

int cli_json_parse(const char *text, size_t len, struct cli_json_doc *doc, char *why, size_t whylen)
{
    struct parser ps = { text, text, text + len, doc, why, whylen, 0 };
    long root;
    memset(doc, 0, sizeof(*doc));
    doc->text = text;
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
        ps.p += 3;
    if (parse_value(&ps, 0, &root))
        return ps.err;
    ws(&ps);
    if (ps.p != ps.end)
        return fail(&ps, "text after the end of the document");
    return 0;
}

void cli_json_free(struct cli_json_doc *doc)
{
    free(doc->nodes);
    free(doc->strs);
    memset(doc, 0, sizeof(*doc));
}

const struct cli_json_node *cli_json_first(const struct cli_json_doc *d, const struct cli_json_node *n)
{
    if (!n || (n->type != CLI_JSON_ARRAY && n->type != CLI_JSON_OBJECT) || !n->first_child)
        return NULL;
    return &d->nodes[n->first_child];
}

const struct cli_json_node *cli_json_next(const struct cli_json_doc *d, const struct cli_json_node *n)
{
    return n && n->next_sibling ? &d->nodes[n->next_sibling] : NULL;
}

const struct cli_json_node *cli_json_get(const struct cli_json_doc *d, const struct cli_json_node *obj,
                                         const char *key)
{
    if (!obj || obj->type != CLI_JSON_OBJECT)
        return NULL;
    size_t kl = strlen(key);
    for (const struct cli_json_node *c = cli_json_first(d, obj); c; c = cli_json_next(d, c))
        if (c->keylen == kl && !memcmp(d->strs + c->key, key, kl))
            return c;
    return NULL;
}

const char *cli_json_str(const struct cli_json_doc *d, const struct cli_json_node *n)
{
    return n && n->type == CLI_JSON_STRING ? d->strs + n->str : NULL;
}

/* Copies a number's text (at most 64 characters by the parser) to buf. */
static bool num_text(const struct cli_json_doc *d, const struct cli_json_node *n, char buf[80])
{
    if (!n || n->type != CLI_JSON_NUMBER)
        return false;
    memcpy(buf, d->text + n->str, n->len);
    buf[n->len] = '\0';
    return true;
}

bool cli_json_u64(const struct cli_json_doc *d, const struct cli_json_node *n, uint64_t *out)
{
    char buf[80], *end;
    if (!num_text(d, n, buf) || buf[0] == '-')
        return false;
    if (!strpbrk(buf, ".eE")) {
        errno = 0;
        unsigned long long v = strtoull(buf, &end, 10);
        if (errno || *end)
            return false;
        *out = v;
        return true;
    }
    double v = strtod(buf, &end);
    if (*end || !(v >= 0) || v >= 18446744073709551616.0 || v != floor(v))
        return false;
    *out = (uint64_t)v;
    return true;
}

bool cli_json_i64(const struct cli_json_doc *d, const struct cli_json_node *n, int64_t *out)
{
    char buf[80], *end;
    if (!num_text(d, n, buf) || strpbrk(buf, ".eE"))
        return false;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

bool cli_json_double(const struct cli_json_doc *d, const struct cli_json_node *n, double *out)
{
    char buf[80], *end;
    if (!num_text(d, n, buf))
        return false;
    double v = strtod(buf, &end);
    if (*end || !isfinite(v))
        return false;
    *out = v;
    return true;
}
