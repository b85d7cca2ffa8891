/*
 * verify.c — c_runner --verify LANG MANIFEST OUTPUT (manifest.h): another
 * language runner's CASE lines held against the manifest. The test target
 * of every language (run.sh --run) and the matrix go through this, so the
 * rules of the protocol are checked in one place, for every language:
 *
 *   - a status is pass, fail, missing or absent-by-seed;
 *   - absent-by-seed only for a case the manifest marks "absent" for LANG,
 *     with a detail (what proved the surface absent); a case so marked is
 *     never a pass (fail and missing stay possible);
 *   - one line per case, ids of the manifest only, in manifest order;
 *   - no ERROR line;
 *   - a case with no line is missing.
 *
 * A line that breaks a rule makes its case's cell "fail" and the exit
 * status 2. Lines that are neither CASE nor ERROR are ignored (the
 * protocol sends them to stderr; a stray one is not a result).
 */
#include "manifest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

enum { V_NONE = 0, V_PASS, V_FAIL, V_MISSING, V_ABSENT };

static const char *const cell_names[] = {"missing", "pass", "fail", "missing", "absent-by-seed"};

static int status_of(const char *word)
{
    if (strcmp(word, "pass") == 0)
        return V_PASS;
    if (strcmp(word, "fail") == 0)
        return V_FAIL;
    if (strcmp(word, "missing") == 0)
        return V_MISSING;
    if (strcmp(word, "absent-by-seed") == 0)
        return V_ABSENT;
    return V_NONE;
}

typedef struct verifier {
    const char *lang;
    const conf_manifest_t *m;
    int *cell;
    size_t last; /* manifest index of the last CASE line + 1 (0: none yet) */
    int problems;
} verifier_t;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void problem(verifier_t *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "verify (%s): ", v->lang);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    v->problems++;
}

/* One "CASE <id> <status> <detail>" line (the "CASE " taken off). */
static void case_line(verifier_t *v, char *rest)
{
    char *id = rest;
    char *sp = strchr(id, ' ');
    if (sp == NULL) {
        problem(v, "malformed CASE line: \"CASE %s\"", rest);
        return;
    }
    *sp = '\0';
    char *word = sp + 1;
    char *detail = strchr(word, ' ');
    if (detail != NULL)
        *detail++ = '\0';
    else
        detail = word + strlen(word);
    const conf_entry_t *e = conf_manifest_find(v->m, id);
    if (e == NULL) {
        problem(v, "CASE %s: not a case of the manifest", id);
        return;
    }
    size_t k = (size_t)(e - v->m->cases);
    if (v->cell[k] != V_NONE) {
        problem(v, "CASE %s: reported twice", id);
        v->cell[k] = V_FAIL;
        return;
    }
    if (k + 1 < v->last)
        problem(v, "CASE %s: out of manifest order (after %s)", id, v->m->cases[v->last - 1].id);
    else
        v->last = k + 1;
    int st = status_of(word);
    const char *reason = conf_absent_reason(e, v->lang);
    if (st == V_NONE) {
        problem(v, "CASE %s: unknown status \"%s\" (pass, fail, missing or absent-by-seed)", id,
                word);
        st = V_FAIL;
    } else if (st == V_ABSENT && reason == NULL) {
        problem(v, "CASE %s: absent-by-seed, but the manifest does not mark it absent for %s",
                id, v->lang);
        st = V_FAIL;
    } else if (st == V_ABSENT && detail[0] == '\0') {
        problem(v, "CASE %s: absent-by-seed without a detail (what proved the surface absent)",
                id);
        st = V_FAIL;
    } else if (st == V_PASS && reason != NULL) {
        problem(v, "CASE %s: pass, but the manifest marks it absent for %s (%s): its answer is "
                   "absent-by-seed once the surface is proved absent",
                id, v->lang, reason);
        st = V_FAIL;
    }
    v->cell[k] = st;
}

int conf_verify(const char *lang, const char *manifest_path, const char *output_path)
{
    if (!conf_lang_known(lang)) {
        fprintf(stderr, "verify: unknown language \"%s\"\n", lang);
        return 2;
    }
    conf_manifest_t m;
    if (conf_manifest_load(manifest_path, &m) != 0) {
        conf_manifest_free(&m);
        return 2;
    }
    FILE *f = fopen(output_path, "r");
    if (f == NULL) {
        fprintf(stderr, "verify (%s): cannot read %s\n", lang, output_path);
        conf_manifest_free(&m);
        return 2;
    }
    verifier_t v = {lang, &m, calloc(m.n + 1, sizeof(int)), 0, 0};
    if (v.cell == NULL) {
        fclose(f);
        conf_manifest_free(&m);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (strncmp(line, "CASE ", 5) == 0)
            case_line(&v, line + 5);
        else if (strncmp(line, "ERROR", 5) == 0 && (line[5] == ' ' || line[5] == '\0'))
            problem(&v, "the runner reported: %s", line);
    }
    free(line);
    fclose(f);
    int failing = 0;
    for (size_t k = 0; k < m.n; k++) {
        int st = v.cell[k];
        printf("%s %s\n", m.cases[k].id, cell_names[st]);
        failing += st != V_PASS && st != V_ABSENT;
    }
    free(v.cell);
    conf_manifest_free(&m);
    if (v.problems > 0)
        return 2;
    return failing > 0 ? 1 : 0;
}
