/*
 * results_json.c — prints results.json, the machine-readable form of the
 * result table of zlink.h (run by the genrule //abi:results_json).
 *
 * Design notes
 *  - Everything printed comes from the header's X-macros: ZLINK_RESULT_FAMILIES
 *    (each family with its ZLINK_<F>_RESULTS and ZLINK_<F>_ERRNO_MAP tables)
 *    and ZLINK_ERRNO_TEXTS. Nothing is written by hand here, so the file can
 *    only disagree with the header if this program is wrong, and
 *    //core:test_results compares it with what the library itself says.
 *  - The language bindings generate their error types from the output; its
 *    layout is described in doc/errors.md ("results.json"). Errno numbers
 *    are those of the platform that ran the build; bindings map errno by
 *    name.
 *  - The table is checked while printing: a value twice in a family, a name
 *    twice in the table, or an errno row whose result is not a value of its
 *    own family stops the program with a message and exit status 1, which
 *    fails the build.
 *  - A plain C11 program: no library, no allocation, one thread; it includes
 *    only zlink.h and reads nothing.
 */
#include "zlink.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int value;
} value_row_t;

typedef struct {
    const char *errno_name;
    int errnum;
    int result;
} errno_row_t;

typedef struct {
    const char *family;
    const char *type;
    const char *fallback;
    int named;
    const value_row_t *values; /* ends with a NULL name */
    const errno_row_t *errnos; /* ends with a NULL errno_name */
} family_t;

#define VALUE_ROW(name, value) {#name, (int)(name)},
#define ERRNO_ROW(err, result) {#err, err, (int)(result)},
#define FAMILY_ROW(family, type, results, errno_map, fallback, named)                     \
    {family, #type, #fallback, named, (const value_row_t[]){results(VALUE_ROW){NULL, 0}}, \
     (const errno_row_t[]){errno_map(ERRNO_ROW){NULL, 0, 0}}},

static const family_t families[] = {ZLINK_RESULT_FAMILIES(FAMILY_ROW)};

#define TEXT_ROW(name, text) {#name, name, text},

static const struct {
    const char *name;
    int value;
    const char *text;
} errno_texts[] = {ZLINK_ERRNO_TEXTS(TEXT_ROW)};

#define N_FAMILIES (sizeof families / sizeof families[0])
#define N_TEXTS (sizeof errno_texts / sizeof errno_texts[0])

/* Prints s as a JSON string (quotes included). */
static void put_string(const char *s)
{
    putchar('"');
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static int fail(const char *what, const char *name)
{
    fprintf(stderr, "results_json: %s: %s\n", what, name);
    return 1;
}

/* The table's own rules (see the design notes); 0 when they hold. */
static int check_table(void)
{
    for (size_t f = 0; f < N_FAMILIES; f++) {
        const family_t *fam = &families[f];
        for (const value_row_t *v = fam->values; v->name != NULL; v++) {
            for (const value_row_t *w = v + 1; w->name != NULL; w++) {
                if (w->value == v->value)
                    return fail("value twice in one family", w->name);
            }
            for (size_t g = f; g < N_FAMILIES; g++) {
                const value_row_t *w = g == f ? v + 1 : families[g].values;
                for (; w->name != NULL; w++) {
                    if (strcmp(w->name, v->name) == 0)
                        return fail("name twice in the table", w->name);
                }
            }
        }
        int fallback_found = 0;
        for (const value_row_t *v = fam->values; v->name != NULL; v++)
            fallback_found |= strcmp(v->name, fam->fallback) == 0;
        if (!fallback_found)
            return fail("fallback is not a value of its family", fam->fallback);
        for (const errno_row_t *e = fam->errnos; e->errno_name != NULL; e++) {
            int found = 0;
            for (const value_row_t *v = fam->values; v->name != NULL; v++)
                found |= v->value == e->result && v->value != 0;
            if (!found)
                return fail("errno row maps outside its family", e->errno_name);
        }
    }
    return 0;
}

int main(void)
{
    if (check_table() != 0)
        return 1;

    printf("{\n");
    printf("  \"schema\": 1,\n");
    printf("  \"source\": \"abi/include/zlink.h\",\n");
    printf("  \"version\": \"%d.%d.%d\",\n", ZLINK_VERSION_MAJOR, ZLINK_VERSION_MINOR,
           ZLINK_VERSION_PATCH);
    printf("  \"hausnumero\": %d,\n", ZLINK_HAUSNUMERO);
    printf("  \"families\": [\n");
    for (size_t f = 0; f < N_FAMILIES; f++) {
        const family_t *fam = &families[f];
        printf("    {\n      \"family\": ");
        put_string(fam->family);
        printf(",\n      \"type\": ");
        put_string(fam->type);
        printf(",\n      \"named\": %s,\n      \"fallback\": ", fam->named ? "true" : "false");
        put_string(fam->fallback);
        printf(",\n      \"values\": [\n");
        for (const value_row_t *v = fam->values; v->name != NULL; v++) {
            printf("        {\"name\": ");
            put_string(v->name);
            printf(", \"value\": %d, \"errnos\": [", v->value);
            const char *sep = "";
            for (const errno_row_t *e = fam->errnos; e->errno_name != NULL; e++) {
                if (e->result != v->value)
                    continue;
                printf("%s", sep);
                put_string(e->errno_name);
                sep = ", ";
            }
            printf("]}%s\n", v[1].name != NULL ? "," : "");
        }
        printf("      ]\n    }%s\n", f + 1 < N_FAMILIES ? "," : "");
    }
    printf("  ],\n");
    printf("  \"errnos\": [\n");
    for (size_t i = 0; i < N_TEXTS; i++) {
        printf("    {\"name\": ");
        put_string(errno_texts[i].name);
        printf(", \"value\": %d, \"zlink_own\": %s, \"text\": ", errno_texts[i].value,
               errno_texts[i].value > ZLINK_HAUSNUMERO ? "true" : "false");
        put_string(errno_texts[i].text);
        printf("}%s\n", i + 1 < N_TEXTS ? "," : "");
    }
    printf("  ]\n}\n");
    if (fflush(stdout) != 0 || ferror(stdout))
        return fail("write failed", "stdout");
    return 0;
}
