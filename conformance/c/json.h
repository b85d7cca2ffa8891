/*
 * json.h — the tiny JSON reader of the C conformance runner: enough for
 * conformance/cases.json and nothing more. Objects, arrays, strings (UTF-8
 * passed through; \uXXXX escapes outside the surrogate range), integers
 * (no fractions, no exponents), true, false and null. Duplicate keys in an
 * object are an error. No external library.
 */
#ifndef CONF_JSON_H
#define CONF_JSON_H

#include <stddef.h>

typedef enum cj_kind {
    CJ_NULL,
    CJ_BOOL,
    CJ_INT,
    CJ_STRING,
    CJ_ARRAY,
    CJ_OBJECT
} cj_kind_t;

typedef struct cj_value cj_value_t;

struct cj_value {
    cj_kind_t kind;
    long long num;      /* CJ_INT; CJ_BOOL: 0 or 1 */
    char *str;          /* CJ_STRING, NUL-terminated */
    size_t n;           /* CJ_ARRAY elements, CJ_OBJECT members */
    cj_value_t *items;  /* the elements, or the members' values */
    char **keys;        /* CJ_OBJECT: the members' names */
    int line;           /* where the value starts in the text (1-based) */
};

/* Parses the whole of text. Returns the root value, or NULL with a message
 * ("line L column C: ...") in err[0..errcap). */
cj_value_t *cj_parse(const char *text, char *err, size_t errcap);

/* Frees a value returned by cj_parse (NULL is fine). */
void cj_free(cj_value_t *root);

/* The member key of an object, or NULL (also when obj is not an object). */
const cj_value_t *cj_get(const cj_value_t *obj, const char *key);

/* "object", "string" ... for messages. */
const char *cj_kind_name(cj_kind_t kind);

#endif /* CONF_JSON_H */
