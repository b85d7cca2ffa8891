/*
 * json.c — see json.h. A recursive-descent reader over the text in memory.
 */
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CJ_MAX_DEPTH 32

typedef struct cj_reader {
    const char *s;
    size_t at;
    int line;
    size_t line_start;
    char *err;
    size_t errcap;
    int failed;
} cj_reader_t;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void cj_error(cj_reader_t *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = 1;
    int n = snprintf(r->err, r->errcap, "line %d column %zu: ", r->line,
                     r->at - r->line_start + 1);
    if (n < 0 || (size_t)n >= r->errcap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + n, r->errcap - (size_t)n, fmt, ap);
    va_end(ap);
}

static void cj_skip_ws(cj_reader_t *r)
{
    for (;;) {
        char c = r->s[r->at];
        if (c == '\n') {
            r->at++;
            r->line++;
            r->line_start = r->at;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            r->at++;
        } else {
            return;
        }
    }
}

static void *cj_grow(void *p, size_t n, size_t size)
{
    /* Capacity doubles from 4: grow when n is 0 or a power of two >= 4. */
    if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
        return p;
    size_t cap = n < 4 ? 4 : n * 2;
    return realloc(p, cap * size);
}

/* Appends the UTF-8 bytes of code point cp (< 0x10000) to buf. */
static size_t cj_utf8(char *buf, unsigned cp)
{
    if (cp < 0x80) {
        buf[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        buf[0] = (char)(0xC0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    buf[0] = (char)(0xE0 | (cp >> 12));
    buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    buf[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
}

/* Reads a string at r->at (the opening quote); returns it, malloc'ed. */
static char *cj_string(cj_reader_t *r)
{
    r->at++; /* the quote */
    size_t start = r->at;
    /* The decoded string is never longer than the text. */
    size_t end = start;
    while (r->s[end] != '\0' && r->s[end] != '"') {
        if (r->s[end] == '\\' && r->s[end + 1] != '\0')
            end++;
        end++;
    }
    char *out = malloc(end - start + 1);
    if (out == NULL) {
        cj_error(r, "out of memory");
        return NULL;
    }
    size_t k = 0;
    for (;;) {
        unsigned char c = (unsigned char)r->s[r->at];
        if (c == '\0') {
            cj_error(r, "unterminated string");
            break;
        }
        if (c == '"') {
            r->at++;
            out[k] = '\0';
            return out;
        }
        if (c < 0x20) {
            cj_error(r, "control character in a string");
            break;
        }
        if (c != '\\') {
            out[k++] = (char)c;
            r->at++;
            continue;
        }
        char e = r->s[r->at + 1];
        r->at += 2;
        switch (e) {
        case '"': out[k++] = '"'; continue;
        case '\\': out[k++] = '\\'; continue;
        case '/': out[k++] = '/'; continue;
        case 'b': out[k++] = '\b'; continue;
        case 'f': out[k++] = '\f'; continue;
        case 'n': out[k++] = '\n'; continue;
        case 'r': out[k++] = '\r'; continue;
        case 't': out[k++] = '\t'; continue;
        case 'u': {
            unsigned cp = 0;
            for (int i = 0; i < 4; i++) {
                char h = r->s[r->at + (size_t)i];
                unsigned d = h >= '0' && h <= '9'   ? (unsigned)(h - '0')
                             : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                             : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10)
                                                    : 16u;
                if (d == 16) {
                    cj_error(r, "bad \\u escape");
                    free(out);
                    return NULL;
                }
                cp = cp * 16 + d;
            }
            if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) {
                cj_error(r, "\\u%04X is not supported", cp);
                break;
            }
            r->at += 4;
            k += cj_utf8(out + k, cp);
            continue;
        }
        default:
            r->at -= 1;
            cj_error(r, "bad escape");
            break;
        }
        break;
    }
    free(out);
    return NULL;
}

static void cj_value(cj_reader_t *r, cj_value_t *v, int depth);
static void cj_free_members(cj_value_t *v);

static void cj_array(cj_reader_t *r, cj_value_t *v, int depth)
{
    v->kind = CJ_ARRAY;
    r->at++; /* [ */
    cj_skip_ws(r);
    if (r->s[r->at] == ']') {
        r->at++;
        return;
    }
    for (;;) {
        cj_value_t item;
        cj_value(r, &item, depth + 1);
        if (r->failed) {
            cj_free_members(&item);
            return;
        }
        cj_value_t *grown = cj_grow(v->items, v->n, sizeof *v->items);
        if (grown == NULL) {
            cj_free_members(&item);
            cj_error(r, "out of memory");
            return;
        }
        v->items = grown;
        v->items[v->n++] = item;
        cj_skip_ws(r);
        if (r->s[r->at] == ',') {
            r->at++;
            continue;
        }
        if (r->s[r->at] == ']') {
            r->at++;
            return;
        }
        cj_error(r, "expected ',' or ']'");
        return;
    }
}

static void cj_object(cj_reader_t *r, cj_value_t *v, int depth)
{
    v->kind = CJ_OBJECT;
    r->at++; /* { */
    cj_skip_ws(r);
    if (r->s[r->at] == '}') {
        r->at++;
        return;
    }
    for (;;) {
        cj_skip_ws(r);
        if (r->s[r->at] != '"') {
            cj_error(r, "expected a member name");
            return;
        }
        char *key = cj_string(r);
        if (key == NULL)
            return;
        for (size_t i = 0; i < v->n; i++) {
            if (strcmp(v->keys[i], key) == 0) {
                cj_error(r, "duplicate member \"%s\"", key);
                free(key);
                return;
            }
        }
        cj_skip_ws(r);
        if (r->s[r->at] != ':') {
            cj_error(r, "expected ':' after \"%s\"", key);
            free(key);
            return;
        }
        r->at++;
        cj_value_t item;
        cj_value(r, &item, depth + 1);
        cj_value_t *gi = r->failed ? NULL : cj_grow(v->items, v->n, sizeof *v->items);
        if (gi != NULL)
            v->items = gi;
        char **gk = gi == NULL ? NULL : cj_grow(v->keys, v->n, sizeof *v->keys);
        if (gk == NULL) {
            cj_error(r, "out of memory");
            cj_free_members(&item);
            free(key);
            return;
        }
        v->keys = gk;
        v->keys[v->n] = key;
        v->items[v->n++] = item;
        cj_skip_ws(r);
        if (r->s[r->at] == ',') {
            r->at++;
            continue;
        }
        if (r->s[r->at] == '}') {
            r->at++;
            return;
        }
        cj_error(r, "expected ',' or '}'");
        return;
    }
}

static void cj_number(cj_reader_t *r, cj_value_t *v)
{
    int neg = r->s[r->at] == '-';
    size_t i = r->at + (size_t)neg;
    if (r->s[i] < '0' || r->s[i] > '9') {
        cj_error(r, "bad number");
        return;
    }
    if (r->s[i] == '0' && r->s[i + 1] >= '0' && r->s[i + 1] <= '9') {
        cj_error(r, "leading zero in a number");
        return;
    }
    unsigned long long mag = 0;
    for (; r->s[i] >= '0' && r->s[i] <= '9'; i++) {
        unsigned d = (unsigned)(r->s[i] - '0');
        if (mag > (9223372036854775807ull - d) / 10) {
            cj_error(r, "number out of range");
            return;
        }
        mag = mag * 10 + d;
    }
    if (r->s[i] == '.' || r->s[i] == 'e' || r->s[i] == 'E') {
        cj_error(r, "only integers are supported");
        return;
    }
    v->kind = CJ_INT;
    v->num = neg ? -(long long)mag : (long long)mag;
    r->at = i;
}

static int cj_literal(cj_reader_t *r, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(r->s + r->at, word, n) != 0)
        return 0;
    r->at += n;
    return 1;
}

static void cj_value(cj_reader_t *r, cj_value_t *v, int depth)
{
    memset(v, 0, sizeof *v);
    cj_skip_ws(r);
    v->line = r->line;
    if (depth > CJ_MAX_DEPTH) {
        cj_error(r, "nested deeper than %d", CJ_MAX_DEPTH);
        return;
    }
    char c = r->s[r->at];
    if (c == '{') {
        cj_object(r, v, depth);
    } else if (c == '[') {
        cj_array(r, v, depth);
    } else if (c == '"') {
        v->str = cj_string(r);
        v->kind = CJ_STRING;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        cj_number(r, v);
    } else if (cj_literal(r, "true")) {
        v->kind = CJ_BOOL;
        v->num = 1;
    } else if (cj_literal(r, "false")) {
        v->kind = CJ_BOOL;
    } else if (cj_literal(r, "null")) {
        v->kind = CJ_NULL;
    } else {
        cj_error(r, c == '\0' ? "unexpected end of text" : "unexpected character '%c'", c);
    }
}

static void cj_free_members(cj_value_t *v)
{
    for (size_t i = 0; i < v->n; i++) {
        cj_free_members(&v->items[i]);
        if (v->keys != NULL)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    memset(v, 0, sizeof *v);
}

cj_value_t *cj_parse(const char *text, char *err, size_t errcap)
{
    cj_reader_t r = {text, 0, 1, 0, err, errcap, 0};
    cj_value_t *root = calloc(1, sizeof *root);
    if (root == NULL) {
        snprintf(err, errcap, "out of memory");
        return NULL;
    }
    cj_value(&r, root, 0);
    cj_skip_ws(&r);
    if (!r.failed && text[r.at] != '\0')
        cj_error(&r, "text after the value");
    if (r.failed) {
        cj_free(root);
        return NULL;
    }
    return root;
}

void cj_free(cj_value_t *root)
{
    if (root == NULL)
        return;
    cj_free_members(root);
    free(root);
}

const cj_value_t *cj_get(const cj_value_t *obj, const char *key)
{
    if (obj == NULL || obj->kind != CJ_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->n; i++) {
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    }
    return NULL;
}

const char *cj_kind_name(cj_kind_t kind)
{
    switch (kind) {
    case CJ_NULL: return "null";
    case CJ_BOOL: return "boolean";
    case CJ_INT: return "integer";
    case CJ_STRING: return "string";
    case CJ_ARRAY: return "array";
    case CJ_OBJECT: return "object";
    }
    return "?";
}
