/*
 * manifest.c — reading and checking conformance/cases.json (manifest.h).
 *
 * Jansson parses; this file only checks what the manifest must be. Jansson
 * keeps no source positions for values, so a problem names the case (its
 * id, or its place in the array when the id itself is bad); a syntax error
 * names Jansson's line and column.
 */
#include "manifest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const conf_langs[CONF_NLANGS] = {"c", "cpp", "java", "dotnet", "node"};

bool conf_lang_known(const char *name)
{
    for (size_t i = 0; i < CONF_NLANGS; i++) {
        if (strcmp(conf_langs[i], name) == 0)
            return true;
    }
    return false;
}

void conf_report_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("ERROR ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* An id is one or more capital letters, '-', one or more digits: PL-01,
 * SC-20, X-1. */
static bool id_well_formed(const char *id)
{
    size_t i = 0;
    while (id[i] >= 'A' && id[i] <= 'Z')
        i++;
    if (i == 0 || id[i] != '-')
        return false;
    size_t d = ++i;
    while (id[i] >= '0' && id[i] <= '9')
        i++;
    return i > d && id[i] == '\0';
}

static bool nonempty_string(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) > 0;
}

/* Whether text cites a seed section: "seed", a space, three digits, a
 * space and the section sign (e.g. "seed 000 §4.1: ..."). */
static bool cites_seed(const char *text)
{
    static const char sign[] = "\xc2\xa7"; /* U+00A7, UTF-8 */
    for (const char *p = strstr(text, "seed "); p != NULL; p = strstr(p + 1, "seed ")) {
        const char *d = p + 5;
        size_t n = 0;
        while (d[n] >= '0' && d[n] <= '9')
            n++;
        if (n == 3 && d[3] == ' ' && strncmp(d + 4, sign, 2) == 0)
            return true;
    }
    return false;
}

/* Numbers are integers: a fraction or an exponent anywhere is a problem
 * (the runners of every language read the same values). where names the
 * value's place ("cases[3].params.window"). */
static int integers_only(const char *path, const json_t *v, char *where, size_t at, size_t cap)
{
    int problems = 0;
    if (json_is_real(v)) {
        conf_report_error("%s: %s is %g: the manifest takes integers only (no fraction or "
                          "exponent)",
                          path, where, json_real_value(v));
        return 1;
    }
    if (json_is_array(v)) {
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x)
        {
            snprintf(where + at, cap - at, "[%zu]", i);
            problems += integers_only(path, x, where, strlen(where), cap);
            where[at] = '\0';
        }
    } else if (json_is_object(v)) {
        const char *key;
        const json_t *x;
        json_object_foreach((json_t *)v, key, x)
        {
            snprintf(where + at, cap - at, ".%s", key);
            problems += integers_only(path, x, where, strlen(where), cap);
            where[at] = '\0';
        }
    }
    return problems;
}

/* The optional "later" member: a non-empty array of {"part": text,
 * "needs": text} objects, both non-empty, nothing else. The parts of the
 * contract case that need a later phase; the runner implements the rest. */
static int later_check(const char *path, const json_t *c, const char *id)
{
    const json_t *later = json_object_get(c, "later");
    if (later == NULL)
        return 0;
    if (!json_is_array(later) || json_array_size(later) == 0) {
        conf_report_error("%s: case %s: \"later\" must be a non-empty array", path, id);
        return 1;
    }
    int problems = 0;
    size_t i;
    const json_t *e;
    json_array_foreach(later, i, e)
    {
        bool ok = json_is_object(e) && json_object_size(e) == 2 &&
                  nonempty_string(json_object_get(e, "part")) &&
                  nonempty_string(json_object_get(e, "needs"));
        if (!ok) {
            conf_report_error("%s: case %s: \"later\" entry %zu needs exactly a non-empty "
                              "\"part\" and \"needs\"",
                              path, id, i + 1);
            problems++;
        }
    }
    return problems;
}

/* The optional "absent" member: {"<lang>": "<reason>", ...}, a non-empty
 * object whose keys are languages other than c (the C runner is the
 * reference and implements every case) and whose values cite the seed
 * section that takes the surface away from that language. */
static int absent_check(const char *path, const json_t *c, const char *id)
{
    const json_t *absent = json_object_get(c, "absent");
    if (absent == NULL)
        return 0;
    if (!json_is_object(absent) || json_object_size(absent) == 0) {
        conf_report_error("%s: case %s: \"absent\" must be a non-empty object of "
                          "\"<language>\": \"<reason>\"",
                          path, id);
        return 1;
    }
    int problems = 0;
    const char *lang;
    const json_t *why;
    json_object_foreach((json_t *)absent, lang, why)
    {
        if (strcmp(lang, "c") == 0) {
            conf_report_error("%s: case %s: \"absent\" names c: the C runner is the reference "
                              "and implements every case",
                              path, id);
            problems++;
        } else if (!conf_lang_known(lang)) {
            conf_report_error("%s: case %s: \"absent\" names an unknown language \"%s\" (one of "
                              "cpp java dotnet node)",
                              path, id, lang);
            problems++;
        } else if (!nonempty_string(why) || !cites_seed(json_string_value(why))) {
            conf_report_error("%s: case %s: \"absent\" reason for %s must be a non-empty string "
                              "citing the seed section (\"seed 000 \xc2\xa7"
                              "4.1: ...\")",
                              path, id, lang);
            problems++;
        }
    }
    return problems;
}

static const char *const case_members[] = {"id", "title", "seed", "params", "later", "absent"};

static bool case_member_known(const char *key)
{
    for (size_t i = 0; i < sizeof case_members / sizeof case_members[0]; i++) {
        if (strcmp(case_members[i], key) == 0)
            return true;
    }
    return false;
}

/* The checks of one case (index i, 0-based); returns the problems. Adds
 * the case to m when its id is usable. */
static int case_check(const char *path, conf_manifest_t *m, size_t i, const json_t *c)
{
    if (!json_is_object(c)) {
        conf_report_error("%s: case %zu is not an object", path, i + 1);
        return 1;
    }
    const json_t *idv = json_object_get(c, "id");
    if (!nonempty_string(idv) || !id_well_formed(json_string_value(idv))) {
        conf_report_error("%s: case %zu has no id of the form XX-00 (capitals, '-', digits: "
                          "PL-01, X-1)",
                          path, i + 1);
        return 1;
    }
    const char *id = json_string_value(idv);
    int problems = 0;
    if (!nonempty_string(json_object_get(c, "title")) ||
        !nonempty_string(json_object_get(c, "seed"))) {
        conf_report_error("%s: case %s needs a non-empty \"title\" and \"seed\"", path, id);
        problems++;
    }
    const json_t *params = json_object_get(c, "params");
    if (!json_is_object(params)) {
        conf_report_error("%s: case %s needs a \"params\" object", path, id);
        problems++;
    }
    problems += later_check(path, c, id);
    problems += absent_check(path, c, id);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)c, key, v)
    {
        if (!case_member_known(key)) {
            conf_report_error("%s: case %s has an unknown member \"%s\"", path, id, key);
            problems++;
        }
    }
    if (conf_manifest_find(m, id) != NULL) {
        conf_report_error("%s: duplicate case id %s", path, id);
        problems++;
    }
    const json_t *absent = json_object_get(c, "absent");
    m->cases[m->n].id = id;
    m->cases[m->n].params = params;
    m->cases[m->n].absent = json_is_object(absent) ? absent : NULL;
    m->n++;
    return problems;
}

int conf_manifest_load(const char *path, conf_manifest_t *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        conf_report_error("%s: cannot read: %s", path, strerror(errno));
        return 1;
    }
    json_error_t err;
    m->root = json_loadf(f, JSON_REJECT_DUPLICATES, &err);
    fclose(f);
    if (m->root == NULL) {
        conf_report_error("%s: line %d column %d: %s", path, err.line, err.column, err.text);
        return 1;
    }
    const json_t *root = m->root;
    const json_t *cases = json_object_get(root, "cases");
    if (!json_is_object(root) || !json_is_array(cases)) {
        conf_report_error("%s: the top level must be an object with a \"cases\" array", path);
        return 1;
    }
    int problems = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)root, key, v)
    {
        if (strcmp(key, "cases") != 0 && strcmp(key, "about") != 0) {
            conf_report_error("%s: unknown top-level member \"%s\"", path, key);
            problems++;
        } else if (strcmp(key, "about") == 0 && !json_is_string(v)) {
            conf_report_error("%s: \"about\" must be a string", path);
            problems++;
        }
    }
    char where[512] = "cases";
    problems += integers_only(path, cases, where, strlen(where), sizeof where);
    m->cases = calloc(json_array_size(cases) + 1, sizeof *m->cases);
    if (m->cases == NULL) {
        conf_report_error("out of memory");
        return problems + 1;
    }
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c)
    {
        problems += case_check(path, m, i, c);
    }
    if (m->n == 0 && problems == 0) {
        conf_report_error("%s: the manifest lists no case", path);
        problems++;
    }
    return problems;
}

void conf_manifest_free(conf_manifest_t *m)
{
    json_decref(m->root);
    free(m->cases);
    memset(m, 0, sizeof *m);
}

const conf_entry_t *conf_manifest_find(const conf_manifest_t *m, const char *id)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->cases[i].id, id) == 0)
            return &m->cases[i];
    }
    return NULL;
}

const char *conf_absent_reason(const conf_entry_t *e, const char *lang)
{
    if (e->absent == NULL)
        return NULL;
    const json_t *why = json_object_get(e->absent, lang);
    return json_is_string(why) ? json_string_value(why) : NULL;
}
