/* read_jsonparse.h - JSON text into a read-only tree, for reading back
 * heapinject's JSON profiles.
 *
 * The parsing is jansson's (libjansson-dev): RFC 8259, strict (no trailing
 * text, no duplicate keys, no lone surrogates, no control characters in
 * strings, integers beyond 64 bits refused), with line and column in its
 * errors. This file only lays jansson's values out as nodes the readers
 * walk (type, children in order, members by key), and bounds the nesting.
 */
#ifndef HI_CLI_PROFILE_READ_JSONPARSE_H
#define HI_CLI_PROFILE_READ_JSONPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_JSON_MAX_DEPTH 64

enum cli_json_type { CLI_JSON_NULL, CLI_JSON_BOOL, CLI_JSON_NUMBER, CLI_JSON_STRING,
                     CLI_JSON_ARRAY, CLI_JSON_OBJECT };

struct cli_json_node {
    enum cli_json_type type;
    bool b;                     /* BOOL */
    bool is_int;                /* NUMBER: written without fraction or exponent */
    int64_t i;                  /* NUMBER, is_int */
    double f;                   /* NUMBER */
    const char *s;              /* STRING: UTF-8, NUL-terminated (the tree's) */
    const char *key;            /* object member: its key (the tree's) */
    size_t first_child;         /* ARRAY/OBJECT: node index, 0 = none */
    size_t next_sibling;        /* 0 = none */
    size_t count;               /* ARRAY/OBJECT: number of children */
};

struct cli_json_doc {
    struct cli_json_node *nodes; /* nodes[0] is the root value */
    size_t n, cap;
    void *tree;                  /* jansson's json_t: owns the strings */
};

/* Parses text into doc. 0; -EBADMSG with a reason ("JSON line 3, column
 * 5: ...") in why; -ENOMEM. Free doc with cli_json_free() in all cases. */
int cli_json_parse(const char *text, size_t len, struct cli_json_doc *doc, char *why, size_t whylen);
void cli_json_free(struct cli_json_doc *doc);

/* Member of an object by key, or NULL (also when obj is not an object). */
const struct cli_json_node *cli_json_get(const struct cli_json_doc *d, const struct cli_json_node *obj,
                                         const char *key);
/* Children of an array or object, in order: first and next. NULL at the end. */
const struct cli_json_node *cli_json_first(const struct cli_json_doc *d, const struct cli_json_node *n);
const struct cli_json_node *cli_json_next(const struct cli_json_doc *d, const struct cli_json_node *n);

/* A string node's text (NUL-terminated), or NULL for any other node. */
const char *cli_json_str(const struct cli_json_doc *d, const struct cli_json_node *n);

/* Numbers. false when n is not a number of that kind or out of range. */
bool cli_json_u64(const struct cli_json_doc *d, const struct cli_json_node *n, uint64_t *out);
bool cli_json_i64(const struct cli_json_doc *d, const struct cli_json_node *n, int64_t *out);
bool cli_json_double(const struct cli_json_doc *d, const struct cli_json_node *n, double *out);

#endif /* HI_CLI_PROFILE_READ_JSONPARSE_H */
