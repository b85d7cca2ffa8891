/*
 * manifest.h — conformance/cases.json as the C runner reads it
 * (doc/conformance.md "The manifest"), and the check of another
 * language runner's CASE lines against it (--verify).
 *
 * The JSON is read with Jansson (Debian's libjansson-dev). Everything the
 * manifest must be is checked here, in one place: the top level, each
 * case's members, the id form, the optional "later" and "absent" members,
 * duplicate ids and keys, and that numbers are integers. Each problem is
 * printed as an "ERROR <text>" line on stdout (the runner protocol).
 */
#ifndef CONF_MANIFEST_H
#define CONF_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The language names of the suite, in the matrix's column order. */
#define CONF_NLANGS 5
extern const char *const conf_langs[CONF_NLANGS];
/* Whether name is one of conf_langs. */
bool conf_lang_known(const char *name);

typedef struct conf_entry {
    const char *id;
    const json_t *params; /* the case's "params" object */
    const json_t *absent; /* its "absent" object, or NULL */
} conf_entry_t;

typedef struct conf_manifest {
    json_t *root;
    conf_entry_t *cases;
    size_t n;
} conf_manifest_t;

/* Reads and checks the manifest at path. Prints every problem as an ERROR
 * line and returns how many there were (0: m is usable; free it either
 * way). */
int conf_manifest_load(const char *path, conf_manifest_t *m);
void conf_manifest_free(conf_manifest_t *m);
/* The entry of id, or NULL. */
const conf_entry_t *conf_manifest_find(const conf_manifest_t *m, const char *id);
/* The reason the manifest gives for the case being absent in lang (seed
 * 000 §4.1 ...), or NULL when the case is not marked absent for lang. */
const char *conf_absent_reason(const conf_entry_t *e, const char *lang);

/* An "ERROR <text>" line on stdout. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void conf_report_error(const char *fmt, ...);

/* --verify LANG MANIFEST OUTPUT (verify.c): reads the CASE and ERROR lines
 * a run of LANG's runner over the whole manifest printed (OUTPUT, a file)
 * and prints one "<id> <status>" line per manifest case, in manifest
 * order, on stdout; problems go to stderr. Returns the exit status: 0 when
 * every case passed or is rightly absent-by-seed, 1 when one failed or is
 * missing, 2 when the lines break the protocol or the manifest is bad. */
int conf_verify(const char *lang, const char *manifest_path, const char *output_path);

#endif /* CONF_MANIFEST_H */
