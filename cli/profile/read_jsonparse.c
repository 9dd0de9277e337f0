/* read_jsonparse.c - jansson's values laid out as a read-only node tree. */
#include "cli/profile/read_jsonparse.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct builder {
    struct cli_json_doc *doc;
    char *why;
    size_t whylen;
};

static long new_node(struct builder *b)
{
    struct cli_json_doc *d = b->doc;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        struct cli_json_node *nodes = realloc(d->nodes, cap * sizeof(*nodes));
        if (!nodes)
            return -ENOMEM;
        d->nodes = nodes;
        d->cap = cap;
    }
    memset(&d->nodes[d->n], 0, sizeof(d->nodes[0]));
    return (long)d->n++;
}

/* Appends node idx as the last child of parent (which has count children,
 * the last at *last). */
static void link_child(struct cli_json_doc *d, size_t parent, size_t *last, size_t idx)
{
    if (*last)
        d->nodes[*last].next_sibling = idx;
    else
        d->nodes[parent].first_child = idx;
    *last = idx;
    d->nodes[parent].count++;
}

/* Nodes for v and everything under it; the index in *out. 0 or -errno. */
static int build(struct builder *b, json_t *v, const char *key, int depth, long *out)
{
    if (depth > CLI_JSON_MAX_DEPTH) {
        if (b->why && b->whylen)
            snprintf(b->why, b->whylen, "JSON nested deeper than %d levels", CLI_JSON_MAX_DEPTH);
        return -EBADMSG;
    }
    long idx = new_node(b);
    if (idx < 0)
        return (int)idx;
    struct cli_json_node *n = &b->doc->nodes[idx];
    n->key = key;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
    case JSON_ARRAY: {
        int object = json_is_object(v);
        b->doc->nodes[idx].type = object ? CLI_JSON_OBJECT : CLI_JSON_ARRAY;
        size_t last = 0;
        long child;
        int err;
        if (object) {
            const char *k;
            json_t *m;
            json_object_foreach(v, k, m) {
                if ((err = build(b, m, k, depth + 1, &child)) != 0)
                    return err;
                link_child(b->doc, (size_t)idx, &last, (size_t)child);
            }
        } else {
            size_t i;
            json_t *m;
            json_array_foreach(v, i, m) {
                if ((err = build(b, m, NULL, depth + 1, &child)) != 0)
                    return err;
                link_child(b->doc, (size_t)idx, &last, (size_t)child);
            }
        }
        break;
    }
    case JSON_STRING:
        n->type = CLI_JSON_STRING;
        n->s = json_string_value(v);
        break;
    case JSON_INTEGER:
        n->type = CLI_JSON_NUMBER;
        n->is_int = true;
        n->i = (int64_t)json_integer_value(v);
        n->f = (double)n->i;
        break;
    case JSON_REAL:
        n->type = CLI_JSON_NUMBER;
        n->f = json_real_value(v);
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        n->type = CLI_JSON_BOOL;
        n->b = json_is_true(v);
        break;
    case JSON_NULL:
        n->type = CLI_JSON_NULL;
        break;
    }
    *out = idx;
    return 0;
}

int cli_json_parse(const char *text, size_t len, struct cli_json_doc *doc, char *why, size_t whylen)
{
    memset(doc, 0, sizeof(*doc));
    json_error_t jerr;
    /* Any value at the top (the readers say what they expected there);
     * a key twice in one object is an error, not "the last one wins". */
    json_t *tree = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!tree) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return -ENOMEM;
        if (why && whylen)
            snprintf(why, whylen, "JSON line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
        return -EBADMSG;
    }
    doc->tree = tree;
    struct builder b = { doc, why, whylen };
    long root;
    return build(&b, tree, NULL, 0, &root);
}

void cli_json_free(struct cli_json_doc *doc)
{
    free(doc->nodes);
    if (doc->tree)
        json_decref(doc->tree);
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
    for (const struct cli_json_node *c = cli_json_first(d, obj); c; c = cli_json_next(d, c))
        if (c->key && !strcmp(c->key, key))
            return c;
    return NULL;
}

const char *cli_json_str(const struct cli_json_doc *d, const struct cli_json_node *n)
{
    (void)d;
    return n && n->type == CLI_JSON_STRING ? n->s : NULL;
}

bool cli_json_u64(const struct cli_json_doc *d, const struct cli_json_node *n, uint64_t *out)
{
    (void)d;
    if (!n || n->type != CLI_JSON_NUMBER)
        return false;
    if (n->is_int) {
        if (n->i < 0)
            return false;
        *out = (uint64_t)n->i;
        return true;
    }
    /* 1e3 or 1000.0: a whole number written another way */
    if (!(n->f >= 0) || n->f >= 18446744073709551616.0 || n->f != floor(n->f))
        return false;
    *out = (uint64_t)n->f;
    return true;
}

bool cli_json_i64(const struct cli_json_doc *d, const struct cli_json_node *n, int64_t *out)
{
    (void)d;
    if (!n || n->type != CLI_JSON_NUMBER || !n->is_int)
        return false;
    *out = n->i;
    return true;
}

bool cli_json_double(const struct cli_json_doc *d, const struct cli_json_node *n, double *out)
{
    (void)d;
    if (!n || n->type != CLI_JSON_NUMBER || !isfinite(n->f))
        return false;
    *out = n->f;
    return true;
}
