/*
 * test_results.c — the result table: the errno -> result mapping of every
 * family, pinned value by value.
 *
 * The mapping helpers of errors.c (zl_submit_fail and friends) are internal,
 * so this is a unit test of an internal piece (doc/testing.md); what the
 * public API reports on top of them is covered by test_errors.c and the
 * socket tests.
 */
#include "errors.h"
#include "zlink.h"
#include "zltest.h"

#include <limits.h>
#include <stdio.h>

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

typedef struct {
    const char *name;
    int err;
    int submit, recv, close, bind, connect, config;
} pinned_row_t;

#define ROW(e, su, rv, cl, bd, cn, cf) {#e, e, SU(su), RV(rv), CL(cl), BD(bd), CN(cn), CF(cf)}
#define UNLISTED(e)                                                                     \
    {#e, e, SU(INTERNAL), RV(INTERNAL), CL(INTERNAL), BD(INTERNAL), CN(INTERNAL),      \
     CF(INTERNAL)}

static const pinned_row_t pinned[] = {
    /*   errno          submit            recv              close           bind              connect           config */
    ROW(EAGAIN,         BACKPRESSURED,    NO_DATA,          INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL),
    ROW(ETIMEDOUT,      BACKPRESSURED,    NO_DATA,          INTERNAL,       INTERNAL,         INTERNAL,         INVALID_STATE),
    ROW(ENOBUFS,        BACKPRESSURED,    BUFFER_TOO_SMALL, INTERNAL,       INTERNAL,         INTERNAL,         BUFFER_TOO_SMALL),
    ROW(ENOTCONN,       NOT_CONNECTED,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INVALID_STATE),
    ROW(EHOSTUNREACH,   NOT_CONNECTED,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL),
    ROW(ENOENT,         NOT_FOUND,        INTERNAL,         INTERNAL,       INTERNAL,         NOT_FOUND,        NOT_FOUND),
    ROW(ETERM,          TERMINATED,       TERMINATED,       INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL),
    ROW(ESHUTDOWN,      TERMINATED,       INVALID_STATE,    SHUTDOWN,       INVALID_HANDLE,   BUSY,             INVALID_STATE),
    ROW(EFAULT,         INVALID_HANDLE,   INVALID_HANDLE,   INVALID_HANDLE, INVALID_HANDLE,   INVALID_HANDLE,   INVALID_HANDLE),
    ROW(EINVAL,         INVALID_ARGUMENT, INVALID_STATE,    INTERNAL,       INVALID_ARGUMENT, INVALID_ARGUMENT, INVALID_ARGUMENT),
    ROW(EMSGSIZE,       INVALID_ARGUMENT, INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INVALID_ARGUMENT),
    ROW(ENOTSUP,        NOT_SUPPORTED,    NOT_SUPPORTED,    INTERNAL,       NOT_SUPPORTED,    NOT_SUPPORTED,    NOT_SUPPORTED),
    ROW(EPROTONOSUPPORT, INTERNAL,        INTERNAL,         INTERNAL,       NOT_SUPPORTED,    NOT_SUPPORTED,    INTERNAL),
    ROW(EBUSY,          INVALID_STATE,    BUSY,             BUSY,           INTERNAL,         BUSY,             INVALID_STATE),
    ROW(ESTALE,         INVALID_STATE,    INVALID_STATE,    INVALID_HANDLE, INVALID_HANDLE,   CONFLICT,         INVALID_STATE),
    ROW(EALREADY,       INVALID_STATE,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INVALID_STATE),
    ROW(EDEADLK,        THREAD_VIOLATION, INTERNAL,         BUSY,           INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EPERM,          THREAD_VIOLATION, INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EMTHREAD,       THREAD_VIOLATION, INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL),
    ROW(ENOMEM,         OUT_OF_MEMORY,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EOVERFLOW,      SEQ_EXHAUSTED,    INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EACCES,         NOT_ADMITTED,     INTERNAL,         INTERNAL,       INTERNAL,         AUTH_FAILED,      INTERNAL),
    ROW(ECONNREFUSED,   NOT_ADMITTED,     INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EPROTOTYPE,     NOT_ADMITTED,     INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INTERNAL),
    ROW(EPROTO,         INTERNAL,         INTERNAL,         INTERNAL,       INTERNAL,         INTERNAL,         INVALID_STATE),
    ROW(EEXIST,         INTERNAL,         INTERNAL,         INTERNAL,       INTERNAL,         CONFLICT,         CONFLICT),
    ROW(ENAMETOOLONG,   INTERNAL,         INTERNAL,         INTERNAL,       INVALID_ARGUMENT, INVALID_ARGUMENT, INTERNAL),
    ROW(EADDRINUSE,     INTERNAL,         INTERNAL,         INTERNAL,       ADDR_IN_USE,      CONFLICT,         INTERNAL),
    ROW(EADDRNOTAVAIL,  INTERNAL,         INTERNAL,         INTERNAL,       ADDR_IN_USE,      INTERNAL,         INTERNAL),
    /* no row in any family: INTERNAL everywhere, errno kept */
    UNLISTED(ENOCOMPATPROTO),
    UNLISTED(EFSM),
    UNLISTED(ECANCELED),
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
    }
}

int main(void)
{
    ZT_RUN(errno_mapping_is_pinned);
    return zt_done();
}
