/*
 * errors_api.c — zlink_errno, zlink_strerror, zlink_result_name,
 * zlink_version and zlink_has.
 *
 * Design notes
 *  - zlink_errno reads the calling thread's value kept by errors.c.
 *  - zlink_strerror returns static, never-freed, immutable strings so that a
 *    pointer stays valid forever and no other call (on any thread) can
 *    change what it points to:
 *      1. errnos ZLink itself produces get fixed texts from ZLINK_ERRNO_TEXTS
 *         in zlink.h, the same on every platform (bindings may show them
 *         verbatim);
 *      2. any other errno in [0, ZL_STRERROR_SLOTS) is formatted once with
 *         strerror_r into a stack buffer, copied to the heap and published
 *         into a slot with compare-and-swap (the loser of a race frees its
 *         copy); the slot keeps it for the life of the process;
 *      3. everything else gets "Unknown error".
 *    No locks; bounded memory (at most one string per slot).
 *  - zlink_result_name looks the value up in rows generated from the result
 *    table of zlink.h (ZLINK_RESULT_FAMILIES, named families only, then
 *    ZLink's own errno numbers of ZLINK_ERRNO_TEXTS); static strings, no
 *    state, so any thread may call it.
 *  - zlink_version reads the version macros of zlink.h, the single source.
 *  - zlink_has names the transports compiled into this build.
 */
#include "util/errors.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

ZLINK_EXPORT int zlink_errno(void)
{
    return zl_get_errno();
}

/* ------------------------------------------------------------- strerror */

struct zl_errtext {
    int errnum;
    const char *text;
};

#define ZL_ERRTEXT_ROW(name, text) {name, text},

/* 0, then every errno the ZLink API reports (ZLINK_ERRNO_TEXTS, zlink.h). */
static const struct zl_errtext zl_errtexts[] = {
    {0, "Success"},
    ZLINK_ERRNO_TEXTS(ZL_ERRTEXT_ROW)
};

#define ZL_STRERROR_SLOTS 512

static _Atomic(const char *) zl_errslots[ZL_STRERROR_SLOTS];

/* strerror_r comes in an XSI flavour (int, fills buf) and a GNU flavour
 * (char *, may ignore buf); pick the right reader by the return type. */
static const char *zl_from_xsi(int rc, const char *buf)
{
    return rc == 0 ? buf : NULL;
}

static const char *zl_from_gnu(const char *text, const char *buf)
{
    (void)buf;
    return text;
}

#define ZL_STRERROR_R(e, buf, n)                                              \
    _Generic(strerror_r((e), (buf), (n)), char *: zl_from_gnu, default: zl_from_xsi)( \
        strerror_r((e), (buf), (n)), (buf))

/* Returns the interned system text for errnum (0 <= errnum < slots), or
 * NULL when none can be produced. Any thread; lock-free; the string is
 * never freed once published. */
static const char *zl_system_text(int errnum)
{
    _Atomic(const char *) *slot = &zl_errslots[errnum];
    const char *have = atomic_load_explicit(slot, memory_order_acquire);
    if (have != NULL)
        return have;

    char buf[256];
    buf[0] = '\0';
    const char *text = ZL_STRERROR_R(errnum, buf, sizeof buf);
    if (text == NULL || text[0] == '\0')
        return NULL;
    size_t len = strlen(text) + 1;
    char *copy = malloc(len);
    if (copy == NULL)
        return NULL;
    memcpy(copy, text, len);
    const char *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &expected, copy,
                                                memory_order_acq_rel,
                                                memory_order_acquire))
        return copy;
    free(copy); /* another thread published first */
    return expected;
}

ZLINK_EXPORT const char *zlink_strerror(int errnum)
{
    for (size_t i = 0; i < sizeof zl_errtexts / sizeof zl_errtexts[0]; i++) {
        if (zl_errtexts[i].errnum == errnum)
            return zl_errtexts[i].text;
    }
    if (errnum >= 0 && errnum < ZL_STRERROR_SLOTS) {
        const char *text = zl_system_text(errnum);
        if (text != NULL)
            return text;
    }
    return "Unknown error";
}

/* ---------------------------------------------------------- result names */

struct zl_result_row {
    int value;
    const char *name;
};

/* The rows of one family of ZLINK_RESULT_FAMILIES: its RESULTS table
 * expanded with ZL_RESULT_ROW1 when the family is named, with ZL_RESULT_ROW0
 * (nothing) when it is not. */
#define ZL_NAMED_FAMILY_ROWS(family, type, results, errno_map, fallback, named) \
    results(ZL_RESULT_ROW##named)
#define ZL_RESULT_ROW1(name, value) {value, #name},
#define ZL_RESULT_ROW0(name, value)

/* Every value of every named family, zeros included (skipped by lookup). */
static const struct zl_result_row zl_result_rows[] = {
    ZLINK_RESULT_FAMILIES(ZL_NAMED_FAMILY_ROWS)
};

#define ZL_OWN_ERRNO_ROW(name, text) {name, #name},

/* The errno rows of ZLINK_ERRNO_TEXTS; only ZLink's own numbers are named. */
static const struct zl_result_row zl_errno_rows[] = {
    ZLINK_ERRNO_TEXTS(ZL_OWN_ERRNO_ROW)
};

ZLINK_EXPORT const char *zlink_result_name(int value)
{
    if (value == 0)
        return "OK";
    for (size_t i = 0; i < sizeof zl_result_rows / sizeof zl_result_rows[0]; i++) {
        if (zl_result_rows[i].value == value)
            return zl_result_rows[i].name;
    }
    if (value > ZLINK_HAUSNUMERO) {
        for (size_t i = 0; i < sizeof zl_errno_rows / sizeof zl_errno_rows[0]; i++) {
            if (zl_errno_rows[i].value == value)
                return zl_errno_rows[i].name;
        }
    }
    return "unknown result";
}

/* ------------------------------------------------------- version and has */

ZLINK_EXPORT void zlink_version(int *major, int *minor, int *patch)
{
    /* NULL is undefined behaviour by contract; this build skips it. */
    if (major != NULL)
        *major = ZLINK_VERSION_MAJOR;
    if (minor != NULL)
        *minor = ZLINK_VERSION_MINOR;
    if (patch != NULL)
        *patch = ZLINK_VERSION_PATCH;
}

ZLINK_EXPORT int zlink_has(const char *what)
{
    static const char *const built[] = {"tcp", "ipc", "inproc"};
    if (what == NULL)
        return 0;
    for (size_t i = 0; i < sizeof built / sizeof built[0]; i++) {
        if (strcmp(what, built[i]) == 0)
            return 1;
    }
    return 0;
}
