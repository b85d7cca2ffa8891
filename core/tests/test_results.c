/*
 * test_results.c — the result table of zlink.h (ZLINK_RESULT_FAMILIES and
 * the tables it names, ZLINK_ERRNO_TEXTS) against the enums, the library
 * and results.json:
 *  - the errno -> result mapping of every family, pinned row by row;
 *  - the table's own rules: each row is its enum constant, values distinct
 *    within a family and in the family's range, names distinct, every
 *    errno row inside its own family, every mapped errno with a text;
 *  - the library's mapping helpers, zlink_result_name and zlink_strerror
 *    give exactly the table;
 *  - results.json (//abi:results_json, its path is argv[1]) is valid JSON
 *    and says what the table and the library say.
 *
 * The mapping helpers of errors.c (zl_submit_fail and friends) are internal,
 * so part of this is a unit test of an internal piece (doc/testing.md); what
 * the public API reports on top of them is covered by test_errors.c and the
 * socket tests (test_request.c for error replies).
 */
#include "util/errors.h"
#include "zlink.h"
#include "zltest.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the errno -> result mapping, pinned
 *
 * One row per errno: what each family's helper returns for it. Written by
 * hand from doc/errors.md and the behaviour before the table existed, so a
 * changed row of the table (or of a helper) fails here. */

#define SU(x) ZLINK_SUBMIT_##x
#define RV(x) ZLINK_RECV_##x
#define CL(x) ZLINK_CLOSE_##x
#define BD(x) ZLINK_BIND_##x
#define CN(x) ZLINK_CONNECT_##x
#define CF(x) ZLINK_CONFIG_##x
#define RQ(x) ZLINK_REQUEST_##x

typedef struct {
    const char *name;
    int err;
    int submit, recv, close, bind, connect, config, request;
} pinned_row_t;

#define ROW(e, su, rv, cl, bd, cn, cf, rq) \
    {#e, e, SU(su), RV(rv), CL(cl), BD(bd), CN(cn), CF(cf), RQ(rq)}
#define UNLISTED(e)                                                                     \
    {#e, e, SU(INTERNAL), RV(INTERNAL), CL(INTERNAL), BD(INTERNAL), CN(INTERNAL),      \
     CF(INTERNAL), RQ(INTERNAL)}

static const pinned_row_t pinned[] = {
    /*   errno          submit            recv              close           bind              connect           config            request */
    ROW(EAGAIN,         BACKPRESSURED,    NO_DATA,          INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         BACKPRESSURED),
    ROW(ETIMEDOUT,      BACKPRESSURED,    NO_DATA,          INTERNAL,       INTERNAL,         INTERNAL,         INVALID_STATE,    TIMED_OUT),
    ROW(ENOBUFS,        BACKPRESSURED,    BUFFER_TOO_SMALL, INTERNAL,       INTERNAL,         INTERNAL,         BUFFER_TOO_SMALL, BACKPRESSURED),
    ROW(ENOTCONN,       NOT_CONNECTED,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INVALID_STATE,    NOT_CONNECTED),
    ROW(EHOSTUNREACH,   NOT_CONNECTED,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         NOT_CONNECTED),
    ROW(ENOENT,         NOT_FOUND,        INTERNAL,         INTERNAL,       INTERNAL,         NOT_FOUND,        NOT_FOUND,        NOT_FOUND),
    ROW(ETERM,          TERMINATED,       TERMINATED,       INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         TERMINATED),
    ROW(ESHUTDOWN,      TERMINATED,       INVALID_STATE,    SHUTDOWN,       INVALID_HANDLE,   BUSY,             INVALID_STATE,    INTERNAL),
    ROW(EFAULT,         INVALID_HANDLE,   INVALID_HANDLE,   INVALID_HANDLE, INVALID_HANDLE,   INVALID_HANDLE,   INVALID_HANDLE,   INVALID_ARGUMENT),
    ROW(EINVAL,         INVALID_ARGUMENT, INVALID_STATE,    INTERNAL,       INVALID_ARGUMENT, INVALID_ARGUMENT, INVALID_ARGUMENT, INVALID_ARGUMENT),
    ROW(EMSGSIZE,       INVALID_ARGUMENT, INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INVALID_ARGUMENT, INTERNAL),
    ROW(ENOTSUP,        NOT_SUPPORTED,    NOT_SUPPORTED,    INTERNAL,       NOT_SUPPORTED,    NOT_SUPPORTED,    NOT_SUPPORTED,    NOT_SUPPORTED),
    ROW(ENODEV,         INTERNAL,         INTERNAL,         INTERNAL,       INVALID_ARGUMENT, INVALID_ARGUMENT, INTERNAL,         INTERNAL),
    ROW(EPROTONOSUPPORT,INTERNAL,         INTERNAL,         INTERNAL,       NOT_SUPPORTED,    NOT_SUPPORTED,    INTERNAL,         INTERNAL),
    ROW(EBUSY,          INVALID_STATE,    BUSY,             BUSY,           INTERNAL,         BUSY,             INVALID_STATE,    BUSY),
    ROW(ESTALE,         INVALID_STATE,    INVALID_STATE,    INVALID_HANDLE, INVALID_HANDLE,   CONFLICT,         INVALID_STATE,    CONFLICT),
    ROW(EALREADY,       INVALID_STATE,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INVALID_STATE,    INVALID_STATE),
    ROW(EDEADLK,        THREAD_VIOLATION, INTERNAL,         BUSY,           INTERNAL,         INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EPERM,          THREAD_VIOLATION, INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EMTHREAD,       THREAD_VIOLATION, INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         INTERNAL),
    ROW(ENOMEM,         OUT_OF_MEMORY,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EOVERFLOW,      SEQ_EXHAUSTED,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EACCES,         NOT_ADMITTED,     INTERNAL,         INTERNAL,       INTERNAL,         AUTH_FAILED,      INTERNAL,         REJECTED),
    ROW(ECONNREFUSED,   NOT_ADMITTED,     INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         REJECTED),
    ROW(EPROTOTYPE,     NOT_ADMITTED,     INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EPROTO,         INTERNAL,         INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INVALID_STATE,    PROTOCOL_ERROR),
    ROW(EEXIST,         INTERNAL,         INTERNAL,         INTERNAL,       INTERNAL,         CONFLICT,         CONFLICT,         CONFLICT),
    ROW(ENAMETOOLONG,   INTERNAL,         INTERNAL,         INTERNAL,       INVALID_ARGUMENT, INVALID_ARGUMENT, INTERNAL,         INTERNAL),
    ROW(EADDRINUSE,     INTERNAL,         INTERNAL,         INTERNAL,       ADDR_IN_USE,      CONFLICT,         INTERNAL,         INTERNAL),
    ROW(EADDRNOTAVAIL,  INTERNAL,         INTERNAL,         INTERNAL,       ADDR_IN_USE,      INTERNAL,         INTERNAL,         INTERNAL),
    ROW(ENOCOMPATPROTO, INTERNAL,         INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         PROTOCOL_ERROR),
    ROW(EFSM,           INTERNAL,         INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         INVALID_STATE),
    ROW(ECANCELED,      INTERNAL,         INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL,         REJECTED),
    /* no row in any family: INTERNAL everywhere, errno kept */
    UNLISTED(EIO),
    UNLISTED(EINTR),
    UNLISTED(EMFILE),
    UNLISTED(EDOM),
    UNLISTED(ECONNRESET),
    UNLISTED(0),
    UNLISTED(-1),
    UNLISTED(9999),
    UNLISTED(ZLINK_HAUSNUMERO + 99),
    UNLISTED(INT_MIN),
    UNLISTED(INT_MAX),
};

#define N_PINNED (sizeof pinned / sizeof pinned[0])

/* Checks one helper result against the pinned row and that the helper kept
 * the errno as given. */
#define CHECK_MAPPED(call, want, row)                                                   \
    do {                                                                                \
        zl_set_errno(12345);                                                            \
        int got_ = (int)(call);                                                         \
        if (got_ != (want))                                                             \
            printf("# %s: %s gives %d, pinned %d\n", (row)->name, #call, got_, (want)); \
        ZT_EQ_INT(got_, (want));                                                        \
        ZT_EQ_INT(zlink_errno(), (row)->err);                                           \
    } while (0)

static void errno_mapping_is_pinned(void)
{
    for (size_t i = 0; i < N_PINNED; i++) {
        const pinned_row_t *r = &pinned[i];
        CHECK_MAPPED(zl_submit_fail(r->err), r->submit, r);
        CHECK_MAPPED(zl_recv_fail(r->err), r->recv, r);
        CHECK_MAPPED(zl_close_fail(r->err), r->close, r);
        CHECK_MAPPED(zl_bind_fail(r->err), r->bind, r);
        CHECK_MAPPED(zl_connect_fail(r->err), r->connect, r);
        CHECK_MAPPED(zl_config_fail(r->err), r->config, r);
        /* An error reply's errno belongs to the record, not to this thread:
         * the request mapping leaves the thread's errno alone. */
        zl_set_errno(12345);
        ZT_EQ_INT(zl_request_result_of(r->err), r->request);
        ZT_EQ_INT(zlink_errno(), 12345);
    }
}

/* ---- the table, expanded here from zlink.h */

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
    const char *fallback_name;
    int fallback;
    int named;
    size_t type_size;
    const value_row_t *values; /* ends with a NULL name */
    const errno_row_t *errnos; /* ends with a NULL errno_name */
} family_t;

/* Each row is its enum constant: the name is the constant, the value the
 * table's column, and the two agree at compile time. */
#define ROW_IS_CONSTANT(name, value) \
    _Static_assert((name) == (value), #name " is the table's value");
ZLINK_SUBMIT_RESULTS(ROW_IS_CONSTANT)
ZLINK_REQUEST_RESULTS(ROW_IS_CONSTANT)
ZLINK_RECV_RESULTS(ROW_IS_CONSTANT)
ZLINK_HANDLER_RESULTS(ROW_IS_CONSTANT)
ZLINK_CLOSE_RESULTS(ROW_IS_CONSTANT)
ZLINK_BIND_RESULTS(ROW_IS_CONSTANT)
ZLINK_CONNECT_RESULTS(ROW_IS_CONSTANT)
ZLINK_CONFIG_RESULTS(ROW_IS_CONSTANT)
ZLINK_SEND_COMPLETE_RESULTS(ROW_IS_CONSTANT)
ZLINK_FW_RESULTS(ROW_IS_CONSTANT)

#define VALUE_ROW(name, value) {#name, value},
#define ERRNO_ROW(err, result) {#err, err, (int)(result)},
#define FAMILY_ROW(family, type, results, errno_map, fallback, named)                    \
    {family, #type, #fallback, (int)(fallback), named, sizeof(type),                     \
     (const value_row_t[]){results(VALUE_ROW){NULL, 0}},                                 \
     (const errno_row_t[]){errno_map(ERRNO_ROW){NULL, 0, 0}}},

static const family_t families[] = {ZLINK_RESULT_FAMILIES(FAMILY_ROW)};
#define N_FAMILIES (sizeof families / sizeof families[0])

#define TEXT_ROW(name, text) {#name, name, text},
static const struct {
    const char *name;
    int value;
    const char *text;
} errno_texts[] = {ZLINK_ERRNO_TEXTS(TEXT_ROW)};
#define N_TEXTS (sizeof errno_texts / sizeof errno_texts[0])

static size_t count_values(const family_t *f)
{
    size_t n = 0;
    while (f->values[n].name != NULL)
        n++;
    return n;
}

static const value_row_t *value_of(const family_t *f, int value)
{
    for (const value_row_t *v = f->values; v->name != NULL; v++) {
        if (v->value == value)
            return v;
    }
    return NULL;
}

static bool has_text(int errnum)
{
    for (size_t i = 0; i < N_TEXTS; i++) {
        if (errno_texts[i].value == errnum)
            return true;
    }
    return false;
}

/* The table's own rules. */
static void table_keeps_its_rules(void)
{
    ZT_EQ_INT(N_FAMILIES, 10);
    int blocks_named[10] = {0};
    for (size_t f = 0; f < N_FAMILIES; f++) {
        const family_t *fam = &families[f];
        ZT_EQ_INT(fam->type_size, 4);
        ZT_CHECK(count_values(fam) >= 2);
        /* One success value, 0, listed first. */
        ZT_EQ_INT(fam->values[0].value, 0);
        /* The others lie in one block of 100 (base .. base + 99, never 0:
         * the framework's block starts at 800 itself, 800 + error kind). */
        int base = fam->values[1].value / 100 * 100;
        for (const value_row_t *v = fam->values + 1; v->name != NULL; v++) {
            if (!(v->value >= base && v->value < base + 100 && v->value != 0))
                ZT_FAIL("%s = %d outside %s's range", v->name, v->value, fam->family);
            ZT_CHECK(strncmp(v->name, "ZLINK_", 6) == 0);
            for (const value_row_t *w = v + 1; w->name != NULL; w++)
                ZT_CHECK(w->value != v->value);
        }
        /* Named families own their block alone; send_complete (unnamed)
         * shares 202 with recv, which is why it is unnamed. */
        if (fam->named) {
            ZT_CHECK(base / 100 < 10);
            ZT_EQ_INT(blocks_named[base / 100], 0);
            blocks_named[base / 100] = 1;
        } else {
            ZT_EQ_STR(fam->family, "send_complete");
        }
        /* The fallback is a failure value of the family. */
        const value_row_t *fb = value_of(fam, fam->fallback);
        ZT_CHECK(fb != NULL && fb->value != 0);
        ZT_EQ_STR(fb->name, fam->fallback_name);
        /* Every errno row names a failure value of its own family, no errno
         * twice, and every mapped errno has a fixed text. */
        for (const errno_row_t *e = fam->errnos; e->errno_name != NULL; e++) {
            const value_row_t *v = value_of(fam, e->result);
            if (v == NULL || v->value == 0)
                ZT_FAIL("%s row %s maps to %d, not a failure of the family", fam->family,
                        e->errno_name, e->result);
            for (const errno_row_t *d = e + 1; d->errno_name != NULL; d++)
                ZT_CHECK(d->errnum != e->errnum);
            if (!has_text(e->errnum))
                ZT_FAIL("%s has no row in ZLINK_ERRNO_TEXTS", e->errno_name);
        }
    }
    /* Names are distinct over the whole table. */
    for (size_t f = 0; f < N_FAMILIES; f++) {
        for (const value_row_t *v = families[f].values; v->name != NULL; v++) {
            for (size_t g = f; g < N_FAMILIES; g++) {
                const value_row_t *w = g == f ? v + 1 : families[g].values;
                for (; w->name != NULL; w++) {
                    if (strcmp(v->name, w->name) == 0)
                        ZT_FAIL("%s twice in the table", v->name);
                }
            }
        }
    }
}

/* The library's helper for a family, or NULL (handler, send_complete and
 * framework have none: nothing maps an errno into them). */
static int via_submit(int e) { return (int)zl_submit_fail(e); }
static int via_request(int e) { return (int)zl_request_result_of(e); }
static int via_recv(int e) { return (int)zl_recv_fail(e); }
static int via_close(int e) { return (int)zl_close_fail(e); }
static int via_bind(int e) { return (int)zl_bind_fail(e); }
static int via_connect(int e) { return (int)zl_connect_fail(e); }
static int via_config(int e) { return (int)zl_config_fail(e); }

static int (*helper_of(const char *family))(int)
{
    static const struct {
        const char *family;
        int (*fn)(int);
    } helpers[] = {
        {"submit", via_submit}, {"request", via_request}, {"recv", via_recv},
        {"close", via_close},   {"bind", via_bind},       {"connect", via_connect},
        {"config", via_config},
    };
    for (size_t i = 0; i < sizeof helpers / sizeof helpers[0]; i++) {
        if (strcmp(helpers[i].family, family) == 0)
            return helpers[i].fn;
    }
    return NULL;
}

/* Every helper gives each errno row's result, and the fallback for every
 * other errno ZLink reports and for numbers nobody uses. */
static void library_mapping_is_the_table(void)
{
    static const int others[] = {0, -1, 9999, ZLINK_HAUSNUMERO + 99, INT_MIN, INT_MAX};
    int helpers = 0;
    for (size_t f = 0; f < N_FAMILIES; f++) {
        const family_t *fam = &families[f];
        int (*map)(int) = helper_of(fam->family);
        if (map == NULL) {
            ZT_CHECK(strcmp(fam->family, "handler") == 0 ||
                     strcmp(fam->family, "send_complete") == 0 ||
                     strcmp(fam->family, "framework") == 0);
            /* Framework calls never set zlink_errno: no errno row at all. */
            if (strcmp(fam->family, "framework") == 0)
                ZT_CHECK(fam->errnos[0].errno_name == NULL);
            continue;
        }
        helpers++;
        for (const errno_row_t *e = fam->errnos; e->errno_name != NULL; e++) {
            if (map(e->errnum) != e->result)
                ZT_FAIL("%s: %s gives %d, the table says %d", fam->family, e->errno_name,
                        map(e->errnum), e->result);
        }
        for (size_t i = 0; i < N_TEXTS + sizeof others / sizeof others[0]; i++) {
            int err = i < N_TEXTS ? errno_texts[i].value : others[i - N_TEXTS];
            bool listed = false;
            for (const errno_row_t *e = fam->errnos; e->errno_name != NULL; e++)
                listed = listed || e->errnum == err;
            if (!listed && map(err) != fam->fallback)
                ZT_FAIL("%s: unmapped errno %d gives %d, not the fallback %s", fam->family,
                        err, map(err), fam->fallback_name);
        }
    }
    ZT_EQ_INT(helpers, 7);
}

/* zlink_result_name: every value's constant (named families), "OK" for 0,
 * ZLink's own errno names, "unknown result" for anything else. */
static void result_name_of_every_value(void)
{
    for (size_t f = 0; f < N_FAMILIES; f++) {
        const family_t *fam = &families[f];
        for (const value_row_t *v = fam->values; v->name != NULL; v++) {
            const char *name = zlink_result_name(v->value);
            ZT_CHECK(name != NULL);
            if (v->value == 0)
                ZT_EQ_STR(name, "OK");
            else if (fam->named)
                ZT_EQ_STR(name, v->name);
            else
                ZT_CHECK(strcmp(name, v->name) != 0);
        }
    }
    /* 202: the receive result, not the send_complete field. */
    ZT_EQ_STR(zlink_result_name(ZLINK_SEND_TERMINAL), "ZLINK_RECV_BUSY");
    ZT_EQ_STR(zlink_result_name(ZLINK_SEND_ADMITTED), "OK");
    /* ZLink's own errno numbers are named; a platform number is a result
     * value or nothing (EAGAIN is 11 on Linux, SEQ_EXHAUSTED is 11 too). */
    ZT_EQ_STR(zlink_result_name(EFSM), "EFSM");
    ZT_EQ_STR(zlink_result_name(ENOCOMPATPROTO), "ENOCOMPATPROTO");
    ZT_EQ_STR(zlink_result_name(ETERM), "ETERM");
    ZT_EQ_STR(zlink_result_name(EMTHREAD), "EMTHREAD");
    int own = 0;
    for (size_t i = 0; i < N_TEXTS; i++) {
        if (errno_texts[i].value > ZLINK_HAUSNUMERO) {
            ZT_EQ_STR(zlink_result_name(errno_texts[i].value), errno_texts[i].name);
            own++;
        }
    }
#if defined(__linux__)
    ZT_EQ_INT(own, 4); /* every standard name exists on Linux */
#endif
    static const int unknown[] = {-1,  14,  100, 114, 200, 209, 300, 307,
                                  400, 405, 506, 609, 710, 799, 813, 819,
                                  821, 829, 832, 899, 999, ZLINK_HAUSNUMERO,
                                  ZLINK_HAUSNUMERO + 25, ZLINK_HAUSNUMERO + 50,
                                  ZLINK_HAUSNUMERO + 55, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        ZT_EQ_STR(zlink_result_name(unknown[i]), "unknown result");
    /* A name is a static string: the same pointer every time. */
    ZT_CHECK(zlink_result_name(ZLINK_CONFIG_BUSY) == zlink_result_name(ZLINK_CONFIG_BUSY));
}

/* The framework family is 800 + each of the 13 error kinds of
 * ZLINK_ERROR_KINDS, under the same name (ZLINK_ERROR_X <-> ZLINK_FW_X),
 * plus CANCELLED, INVALID_ARGUMENT and INVALID_HANDLE, which are no kind;
 * ZLINK_FW_IS_KIND / ZLINK_FW_KIND_OF agree, and zlink_error_kind_name
 * gives each kind's contract name (NOT_FOUND -> "NotFound"). */
static void framework_results_are_the_kinds(void)
{
    static const struct {
        const char *name;
        int kind;
    } kinds[] = {
#define KIND_ROW(name, value) {#name, value},
        ZLINK_ERROR_KINDS(KIND_ROW)
#undef KIND_ROW
    };
    const family_t *fw = NULL;
    for (size_t f = 0; f < N_FAMILIES; f++) {
        if (strcmp(families[f].family, "framework") == 0)
            fw = &families[f];
    }
    ZT_CHECK(fw != NULL);
    ZT_EQ_STR(fw->type, "zlink_fw_result_t");
    ZT_CHECK(fw->named);
    ZT_EQ_INT(sizeof kinds / sizeof kinds[0], 13);
    ZT_EQ_INT(count_values(fw), 1 + 13 + 3);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        ZT_EQ_INT(kinds[i].kind, (int)i);
        const char *suffix = kinds[i].name + strlen("ZLINK_ERROR_");
        ZT_CHECK(strncmp(kinds[i].name, "ZLINK_ERROR_", strlen("ZLINK_ERROR_")) == 0);
        int r = ZLINK_FW_KIND_BASE + kinds[i].kind;
        const value_row_t *v = value_of(fw, r);
        if (v == NULL)
            ZT_FAIL("no framework result %d for %s", r, kinds[i].name);
        char want[64];
        snprintf(want, sizeof want, "ZLINK_FW_%s", suffix);
        ZT_EQ_STR(v->name, want);
        ZT_CHECK(ZLINK_FW_IS_KIND(r));
        ZT_EQ_INT(ZLINK_FW_KIND_OF(r), kinds[i].kind);
        /* "NOT_FOUND" -> "NotFound" */
        char camel[64];
        size_t n = 0;
        bool up = true;
        for (const char *c = suffix; *c != '\0' && n + 1 < sizeof camel; c++) {
            if (*c == '_') {
                up = true;
                continue;
            }
            camel[n++] = up ? *c : (char)(*c - 'A' + 'a');
            up = false;
        }
        camel[n] = '\0';
        ZT_EQ_STR(zlink_error_kind_name(kinds[i].kind), camel);
    }
    /* The three results that are no kind lie outside the kinds' range. */
    static const int not_kinds[] = {ZLINK_FW_OK, ZLINK_FW_CANCELLED, ZLINK_FW_INVALID_ARGUMENT,
                                    ZLINK_FW_INVALID_HANDLE, 799, 813};
    for (size_t i = 0; i < sizeof not_kinds / sizeof not_kinds[0]; i++)
        ZT_CHECK(!ZLINK_FW_IS_KIND(not_kinds[i]));
    ZT_EQ_STR(zlink_error_kind_name(-1), "unknown");
    ZT_EQ_STR(zlink_error_kind_name(13), "unknown");
    ZT_EQ_STR(zlink_error_kind_name(INT_MIN), "unknown");
    ZT_EQ_STR(zlink_error_kind_name(INT_MAX), "unknown");
    ZT_CHECK(zlink_error_kind_name(0) == zlink_error_kind_name(0)); /* static */
}

/* ZLINK_ERRNO_TEXTS: distinct names, numbers and texts, each the text
 * zlink_strerror gives. */
static void errno_texts_are_strerror(void)
{
    ZT_EQ_INT(N_TEXTS, 44);
    for (size_t i = 0; i < N_TEXTS; i++) {
        ZT_CHECK(errno_texts[i].value > 0);
        ZT_CHECK(errno_texts[i].text[0] != '\0');
        ZT_EQ_STR(zlink_strerror(errno_texts[i].value), errno_texts[i].text);
        for (size_t j = i + 1; j < N_TEXTS; j++) {
            ZT_CHECK(errno_texts[i].value != errno_texts[j].value);
            ZT_CHECK(strcmp(errno_texts[i].name, errno_texts[j].name) != 0);
            ZT_CHECK(strcmp(errno_texts[i].text, errno_texts[j].text) != 0);
        }
    }
}

/* ---- results.json
 *
 * A small strict JSON reader (RFC 8259 without fractions or exponents,
 * which the file never has; \u escapes of ASCII only). Every value is
 * heap-allocated and freed by json_free. */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } json_type_t;

typedef struct json {
    json_type_t type;
    long long num;       /* J_NUM, J_BOOL */
    char *str;           /* J_STR */
    size_t n;            /* J_ARR, J_OBJ: items */
    struct json *items;  /* J_ARR, J_OBJ */
    char **keys;         /* J_OBJ */
} json_t;

typedef struct {
    const char *p, *end;
    const char *error;
} json_reader_t;

static void json_free(json_t *v)
{
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        json_free(&v->items[i]);
        if (v->keys != NULL)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

static void json_ws(json_reader_t *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static bool json_fail(json_reader_t *r, const char *why)
{
    if (r->error == NULL)
        r->error = why;
    return false;
}

static bool json_string(json_reader_t *r, char **out)
{
    r->p++; /* the opening quote */
    size_t cap = 16, len = 0;
    char *s = malloc(cap);
    if (s == NULL)
        return json_fail(r, "out of memory");
    for (;;) {
        if (r->p >= r->end) {
            free(s);
            return json_fail(r, "unterminated string");
        }
        unsigned char c = (unsigned char)*r->p++;
        if (c == '"')
            break;
        if (c < 0x20) {
            free(s);
            return json_fail(r, "control character in a string");
        }
        if (c == '\\') {
            if (r->p >= r->end) {
                free(s);
                return json_fail(r, "unterminated escape");
            }
            char e = *r->p++;
            switch (e) {
            case '"': case '\\': case '/': c = (unsigned char)e; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                unsigned code = 0;
                for (int i = 0; i < 4; i++) {
                    char h = r->p < r->end ? *r->p++ : '\0';
                    unsigned d = h >= '0' && h <= '9'   ? (unsigned)(h - '0')
                                 : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                                 : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10)
                                                        : 16u;
                    if (d == 16u) {
                        free(s);
                        return json_fail(r, "bad \\u escape");
                    }
                    code = code * 16 + d;
                }
                if (code == 0 || code > 0x7f) {
                    free(s);
                    return json_fail(r, "\\u escape outside ASCII");
                }
                c = (unsigned char)code;
                break;
            }
            default:
                free(s);
                return json_fail(r, "unknown escape");
            }
        }
        if (len + 2 > cap) {
            char *t = realloc(s, cap * 2);
            if (t == NULL) {
                free(s);
                return json_fail(r, "out of memory");
            }
            s = t;
            cap *= 2;
        }
        s[len++] = (char)c;
    }
    s[len] = '\0';
    *out = s;
    return true;
}

static bool json_value(json_reader_t *r, json_t *v, int depth);

/* Appends one item (and its key, for objects) to v; the key is taken over. */
static json_t *json_push(json_reader_t *r, json_t *v, char *key)
{
    json_t *items = realloc(v->items, (v->n + 1) * sizeof *items);
    if (items == NULL) {
        free(key);
        json_fail(r, "out of memory");
        return NULL;
    }
    v->items = items;
    memset(&v->items[v->n], 0, sizeof v->items[v->n]);
    if (v->type == J_OBJ) {
        char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
        if (keys == NULL) {
            free(key);
            json_fail(r, "out of memory");
            return NULL;
        }
        v->keys = keys;
        v->keys[v->n] = key;
    }
    return &v->items[v->n++];
}

static bool json_container(json_reader_t *r, json_t *v, int depth)
{
    char close = v->type == J_OBJ ? '}' : ']';
    r->p++;
    json_ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return true;
    }
    for (;;) {
        char *key = NULL;
        json_ws(r);
        if (v->type == J_OBJ) {
            if (r->p >= r->end || *r->p != '"')
                return json_fail(r, "object key expected");
            if (!json_string(r, &key))
                return false;
            for (size_t i = 0; i < v->n; i++) {
                if (strcmp(v->keys[i], key) == 0) {
                    free(key);
                    return json_fail(r, "duplicate key");
                }
            }
            json_ws(r);
            if (r->p >= r->end || *r->p != ':') {
                free(key);
                return json_fail(r, "':' expected");
            }
            r->p++;
        }
        json_t *item = json_push(r, v, key);
        if (item == NULL || !json_value(r, item, depth + 1))
            return false;
        json_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return true;
        }
        return json_fail(r, "',' or end of container expected");
    }
}

static bool json_literal(json_reader_t *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return json_fail(r, "unknown literal");
    r->p += n;
    return true;
}

static bool json_value(json_reader_t *r, json_t *v, int depth)
{
    if (depth > 16)
        return json_fail(r, "nested too deeply");
    json_ws(r);
    if (r->p >= r->end)
        return json_fail(r, "value expected");
    char c = *r->p;
    if (c == '{' || c == '[') {
        v->type = c == '{' ? J_OBJ : J_ARR;
        return json_container(r, v, depth);
    }
    if (c == '"') {
        v->type = J_STR;
        return json_string(r, &v->str);
    }
    if (c == 't' || c == 'f') {
        v->type = J_BOOL;
        v->num = c == 't';
        return json_literal(r, c == 't' ? "true" : "false");
    }
    if (c == 'n') {
        v->type = J_NULL;
        return json_literal(r, "null");
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        bool neg = c == '-';
        if (neg)
            r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return json_fail(r, "digit expected");
        if (*r->p == '0' && r->p + 1 < r->end && r->p[1] >= '0' && r->p[1] <= '9')
            return json_fail(r, "leading zero");
        long long n = 0;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
            if (n > (LLONG_MAX - 9) / 10)
                return json_fail(r, "number too large");
            n = n * 10 + (*r->p++ - '0');
        }
        if (r->p < r->end && (*r->p == '.' || *r->p == 'e' || *r->p == 'E'))
            return json_fail(r, "only integers are expected");
        v->type = J_NUM;
        v->num = neg ? -n : n;
        return true;
    }
    return json_fail(r, "unexpected character");
}

/* The member key of object v; fails the case when it is missing or not of
 * the given type. */
static const json_t *member(const json_t *v, const char *key, json_type_t type)
{
    ZT_EQ_INT(v->type, J_OBJ);
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->keys[i], key) == 0) {
            if (v->items[i].type != type)
                ZT_FAIL("member \"%s\" has type %d, expected %d", key, v->items[i].type, type);
            return &v->items[i];
        }
    }
    ZT_FAIL("member \"%s\" missing", key);
    return NULL;
}

static const char *json_path; /* argv[1] */

/* Reads the whole file at path (NUL-terminated); *size gets its length. */
static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        ZT_FAIL("cannot open %s", path);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ZT_CHECK(buf != NULL);
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (len + 1 < cap)
            break;
        char *t = realloc(buf, cap * 2);
        ZT_CHECK(t != NULL);
        buf = t;
        cap *= 2;
    }
    ZT_CHECK(!ferror(f));
    fclose(f);
    buf[len] = '\0';
    *size = len;
    return buf;
}

/* results.json parses, has exactly the families, values, errno lists and
 * errno texts of the table, in table order, and agrees with the library:
 * zlink_result_name for every value of a named family, zlink_strerror for
 * every errno. */
static void results_json_matches_library(void)
{
    if (json_path == NULL)
        ZT_FAIL("usage: test_results PATH/results.json (the Bazel target passes it)");
    size_t size = 0;
    char *text = read_file(json_path, &size);
    json_reader_t r = {text, text + size, NULL};
    json_t root;
    memset(&root, 0, sizeof root);
    bool ok = json_value(&r, &root, 0);
    json_ws(&r);
    if (ok && r.p != r.end)
        ok = json_fail(&r, "text after the value");
    if (!ok)
        ZT_FAIL("%s: %s at offset %ld", json_path, r.error, (long)(r.p - text));
    free(text);

    ZT_EQ_INT(root.n, 6); /* schema, source, version, hausnumero, families, errnos */
    ZT_EQ_INT(member(&root, "schema", J_NUM)->num, 1);
    ZT_EQ_STR(member(&root, "source", J_STR)->str, "abi/include/zlink.h");
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", ZLINK_VERSION_MAJOR, ZLINK_VERSION_MINOR,
             ZLINK_VERSION_PATCH);
    ZT_EQ_STR(member(&root, "version", J_STR)->str, version);
    ZT_EQ_INT(member(&root, "hausnumero", J_NUM)->num, ZLINK_HAUSNUMERO);

    const json_t *fams = member(&root, "families", J_ARR);
    ZT_EQ_INT(fams->n, N_FAMILIES);
    size_t named_values = 0;
    for (size_t f = 0; f < N_FAMILIES; f++) {
        const family_t *fam = &families[f];
        const json_t *jf = &fams->items[f];
        ZT_EQ_INT(jf->type, J_OBJ);
        ZT_EQ_INT(jf->n, 5); /* family, type, named, fallback, values */
        ZT_EQ_STR(member(jf, "family", J_STR)->str, fam->family);
        ZT_EQ_STR(member(jf, "type", J_STR)->str, fam->type);
        ZT_EQ_INT(member(jf, "named", J_BOOL)->num, fam->named);
        ZT_EQ_STR(member(jf, "fallback", J_STR)->str, fam->fallback_name);
        const json_t *vals = member(jf, "values", J_ARR);
        ZT_EQ_INT(vals->n, count_values(fam));
        for (size_t i = 0; i < vals->n; i++) {
            const value_row_t *v = &fam->values[i];
            const json_t *jv = &vals->items[i];
            ZT_EQ_INT(jv->type, J_OBJ);
            ZT_EQ_INT(jv->n, 3); /* name, value, errnos */
            const char *name = member(jv, "name", J_STR)->str;
            long long value = member(jv, "value", J_NUM)->num;
            ZT_EQ_STR(name, v->name);
            ZT_EQ_INT(value, v->value);
            if (fam->named && value != 0) {
                ZT_EQ_STR(zlink_result_name((int)value), name);
                named_values++;
            }
            /* The errnos of this value, in the order of the errno map. */
            const json_t *errs = member(jv, "errnos", J_ARR);
            size_t k = 0;
            for (const errno_row_t *e = fam->errnos; e->errno_name != NULL; e++) {
                if (e->result != v->value)
                    continue;
                if (k >= errs->n)
                    ZT_FAIL("%s: %s missing from \"errnos\"", v->name, e->errno_name);
                ZT_EQ_INT(errs->items[k].type, J_STR);
                ZT_EQ_STR(errs->items[k].str, e->errno_name);
                k++;
            }
            ZT_EQ_INT(errs->n, k);
        }
    }
    /* submit 13, request 13, recv 8, handler 6, close 4, bind 5, connect 8,
     * config 9, framework 16 */
    ZT_EQ_INT(named_values, 82);

    const json_t *errnos = member(&root, "errnos", J_ARR);
    ZT_EQ_INT(errnos->n, N_TEXTS);
    for (size_t i = 0; i < N_TEXTS; i++) {
        const json_t *je = &errnos->items[i];
        ZT_EQ_INT(je->type, J_OBJ);
        ZT_EQ_INT(je->n, 4); /* name, value, zlink_own, text */
        ZT_EQ_STR(member(je, "name", J_STR)->str, errno_texts[i].name);
        long long value = member(je, "value", J_NUM)->num;
        ZT_EQ_INT(value, errno_texts[i].value);
        ZT_EQ_INT(member(je, "zlink_own", J_BOOL)->num, value > ZLINK_HAUSNUMERO);
        ZT_EQ_STR(member(je, "text", J_STR)->str, zlink_strerror((int)value));
    }
    json_free(&root);
}

/* The reader itself: what it must refuse, so a broken file cannot pass. */
static void json_reader_refuses_bad_text(void)
{
    static const char *const bad[] = {
        "",          "{",           "{\"a\":1,}",     "[1 2]",        "{\"a\" 1}",
        "\"abc",     "[01]",        "[1.5]",          "[1e3]",        "{\"a\":1,\"a\":2}",
        "[\"\\x\"]", "[\"\\u00e9\"]", "[tru]",        "{} {}",        "[\"a\nb\"]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_reader_t r = {bad[i], bad[i] + strlen(bad[i]), NULL};
        json_t v;
        memset(&v, 0, sizeof v);
        bool ok = json_value(&r, &v, 0);
        json_ws(&r);
        ok = ok && r.p == r.end;
        json_free(&v);
        if (ok)
            ZT_FAIL("accepted bad JSON: %s", bad[i]);
    }
    const char *good = " {\"a\": [1, -2, true, false, null, \"x\\\"\\u0041\"], \"b\": {}} ";
    json_reader_t r = {good, good + strlen(good), NULL};
    json_t v;
    memset(&v, 0, sizeof v);
    ZT_CHECK(json_value(&r, &v, 0));
    const json_t *a = member(&v, "a", J_ARR);
    ZT_EQ_INT(a->n, 6);
    ZT_EQ_INT(a->items[1].num, -2);
    ZT_EQ_STR(a->items[5].str, "x\"A");
    ZT_EQ_INT(member(&v, "b", J_OBJ)->n, 0);
    json_free(&v);
}

static const zt_case_t cases[] = {
    ZT_CASE(errno_mapping_is_pinned),
    ZT_CASE(table_keeps_its_rules),
    ZT_CASE(library_mapping_is_the_table),
    ZT_CASE(result_name_of_every_value),
    ZT_CASE(framework_results_are_the_kinds),
    ZT_CASE(errno_texts_are_strerror),
    ZT_CASE(json_reader_refuses_bad_text),
    ZT_CASE(results_json_matches_library),
};

/* argv[1] is the path of results.json (core/BUILD passes it); the rest
 * are the runner's case filters. */
int main(int argc, char **argv)
{
    json_path = argc > 1 ? argv[1] : NULL;
    if (argc > 1) {
        argv[1] = argv[0];
        argc--;
        argv++;
    }
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
